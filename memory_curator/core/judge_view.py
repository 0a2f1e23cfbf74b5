"""What the judge is shown of a vault note, beside its text: its path-free key, and the passages
that hold a candidate's words. Pure: no I/O.

A note cut at its first 2,000 characters often lost the part that decides (issue 38): a
neighbour is found by the words it shares with the candidate, so it is shown where it holds
them. Words are compared as the similarity score compares them (`core.words`: the candidate's
language, stopwords and single characters left out, Snowball stems, `stems_alike`).
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping, Sequence
from typing import Any

from memory_curator.core.names import slugify
from memory_curator.core.rules import Rules
from memory_curator.core.surface import Surface
from memory_curator.core.words import content, language_of, starts, stems, stems_alike, tokens

HEAD = 800  # the frontmatter shown at most
BLOCK = 700  # a paragraph longer than this is shown by its lines or sentences
GAP = "[...]"
_PARAGRAPHS = re.compile(r"\n[ \t]*\n")
_PIECES = re.compile(r"(?<=[.!?:;])\s+|\n")
_FIELD = {"date": r"\d{4}-\d{2}-\d{2}", "date:%Y": r"\d{4}"}


def surface_key(rel: str, rules: Rules) -> tuple[str | None, str]:
    """The declared surface a vault path lies on and its key, without the path: `facts` and
    `entity: obsidian, predicate: file-format`; a note on no surface is keyed by its name (the
    file name a `[[link]]` resolves) and that name's slug."""
    for surface in rules.surfaces:
        found = _matched(surface, rel)
        if found is not None:
            return surface.name, ", ".join(f"{name}: {found[name]}" for name in surface.key if name in found)
    name = rel.rsplit("/", 1)[-1].removesuffix(".md")
    return None, f"name: {name} (slug {slugify(name)})"


def _matched(surface: Surface, rel: str) -> dict[str, str] | None:
    """The placeholders' values, when `rel` is a path the surface's template makes."""
    pattern, names = "", []
    for literal, field, spec, _ in _parsed(surface.path):
        pattern += re.escape(literal)
        if field:
            key = f"{field}:{spec}" if spec else field
            pattern += f"({_FIELD.get(key, '[^/]+?')})"
            names.append(field)
    found = re.fullmatch(pattern, rel)
    if found is None:
        return None
    values: dict[str, str] = {}
    for name, value in zip(names, found.groups(), strict=True):
        values.setdefault(name, value)
    return values


def _parsed(template: str) -> list[tuple[str, str | None, str | None, None]]:
    return [(lit, field, spec or None, None) for lit, field, spec, _ in string.Formatter().parse(template)]


def asked_text(frontmatter: Mapping[str, Any], body: str) -> str:
    """A candidate's words as a note is searched for them: its field values (not its keys:
    `source_url` or `confidence` say nothing of its subject) and its body."""
    values = [str(v) for v in frontmatter.values() if isinstance(v, str | int | float) and not isinstance(v, bool)]
    return "\n".join([*values, body])


def passages(text: str, asked: Sequence[str], budget: int) -> str:
    """The note as the judge is shown it: whole when it fits `budget` characters; else its
    frontmatter (at most `HEAD`) and, for each asked text, the paragraphs holding most of its
    distinct stems, up to `budget` each, in the note's order, `[...]` where text is left out.
    A note holding none of the words is shown from its beginning."""
    if len(text) <= budget:
        return text
    head, body = _split(text)
    spans = _blocks(body)
    chosen: set[int] = set()
    for words in asked:
        chosen |= _best(spans, body, words, budget)
    if not chosen:
        chosen = _first(spans, budget)
    shown = [head[:HEAD] + (f"\n{GAP}\n" if len(head) > HEAD else "")] if head else []
    last = -1
    for index in sorted(chosen):
        if index != last + 1:
            shown.append(GAP)
        start, end = spans[index]
        shown.append(body[start:end].strip("\n"))
        last = index
    if last != len(spans) - 1:
        shown.append(GAP)
    return "\n\n".join(part.strip("\n") for part in shown if part)


def _split(text: str) -> tuple[str, str]:
    if text.startswith("---\n"):
        end = text.find("\n---\n", 3)
        if end != -1:
            return text[: end + 4], text[end + 5 :]
    return "", text


def _blocks(body: str) -> list[tuple[int, int]]:
    """Paragraph spans; a long paragraph is cut into pieces of at most about `BLOCK`."""
    spans: list[tuple[int, int]] = []
    start = 0
    for found in [*_PARAGRAPHS.finditer(body), None]:
        end = found.start() if found else len(body)
        spans += _pieces(body, start, end) if end - start > BLOCK else [(start, end)] if body[start:end].strip() else []
        start = found.end() if found else end
    return spans


def _pieces(body: str, start: int, end: int) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    piece = start
    for cut in _PIECES.finditer(body, start, end):
        if cut.start() - piece >= BLOCK // 2:
            out.append((piece, cut.start()))
            piece = cut.end()
    if piece < end:
        out.append((piece, end))
    return [(a, min(b, a + BLOCK * 2)) for a, b in out]  # a run with no sentence end is cut


def _best(spans: list[tuple[int, int]], body: str, asked: str, budget: int) -> set[int]:
    """The blocks that hold most of the asked text's distinct stems, best first, within budget."""
    language = language_of(asked)
    wanted = set(stems(content(tokens(asked), language), language))
    if not wanted:
        return set()
    beginnings = starts(wanted)
    scored = []
    for index, (start, end) in enumerate(spans):
        alike = stems_alike(set(content(tokens(body[start:end]), language)), language, beginnings)
        held = len(wanted & set(alike.values()))
        if held:
            scored.append((-held, index))
    chosen: set[int] = set()
    used = 0
    for _, index in sorted(scored):
        size = spans[index][1] - spans[index][0]
        if used + size <= budget:
            chosen.add(index)
            used += size
    return chosen


def _first(spans: list[tuple[int, int]], budget: int) -> set[int]:
    chosen, used = set(), 0
    for index, (start, end) in enumerate(spans):
        if used + end - start > budget:
            break
        chosen.add(index)
        used += end - start
    return chosen
