"""What a candidate is about, as names to look up anywhere in the vault (issue 16). Pure.

A person keeps `People/kepano.md` or `Plugins/obsidian-git.md`, not `persons/kepano.md`: the
candidate's own identity key finds nothing there, its names do. The querier looks each name up
among every note's title, aliases, H1, `slug` and file stem, folded alike (`names.slugify`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from memory_curator.core.candidate import Candidate
from memory_curator.core.names import slugify
from memory_curator.core.notes import as_list, wikilinks

_H1 = re.compile(r"^# +(.+?)\s*#*\s*$", re.MULTILINE)
_WORD = re.compile(r"[^\W_]+")
STEM = 5  # a predicate's word matches a note's word that starts alike (`maintainers`, `maintained`)


def stem(word: str) -> str:
    """What a word is matched by: its first five letters; a word with a digit (`em0030`) whole,
    as `em0031` is another thing."""
    return word[:STEM] if word.isalpha() else word


@dataclass(frozen=True)
class Ask:
    """The names to look up, and for a fact the words its predicate needs in the note."""

    names: tuple[str, ...]
    predicate: tuple[str, ...] = ()
    entity: tuple[str, ...] = ()  # a fact's entity as words, looked for in paths too
    day: str | None = None  # an event's day: an event note of another day is another event


def first_heading(body: str) -> str:
    match = _H1.search(body)
    return match.group(1).strip() if match else ""


def ask(candidate: Candidate) -> Ask:
    """A fact is about its entity, and only where the entity's note speaks of its predicate;
    anything else is about its title, name, aliases, slug or H1 (its `[[links]]` when it names
    nothing itself)."""
    fm = candidate.frontmatter
    if candidate.surface is not None and "entity" in candidate.surface.key and fm.get("entity"):
        return Ask(_slugs([fm["entity"]]), _words(fm.get("predicate")), _words(fm["entity"]))
    own = [fm.get(k) for k in ("title", "name", "slug")] + as_list(fm.get("aliases"))
    own.append(first_heading(candidate.note.body))
    names = _slugs(own) or _slugs(wikilinks(candidate.note.body))
    day = str(fm.get("date"))[:10] if candidate.surface is not None and candidate.surface.type == "event" else None
    return Ask(names, day=day)


def _words(value: object) -> tuple[str, ...]:
    """Words of 3 letters or more, and numbers (`widget-7` -> widget, 7), as paths are read."""
    folded = unicodedata.normalize("NFKD", str(value or "").lower())
    plain = "".join(c for c in folded if not unicodedata.combining(c))
    words = (w for w in _WORD.findall(plain) if len(w) >= 3 or any(c.isdigit() for c in w))
    return tuple(dict.fromkeys(words))


def _slugs(values: Iterable[object]) -> tuple[str, ...]:
    out = (slugify(v) for v in values if isinstance(v, str | int | float) and str(v).strip())
    return tuple(dict.fromkeys(s for s in out if s))


def speaks_of(words: tuple[str, ...], text: str, share: float = 0.5) -> bool:
    """At least `share` of the words (a predicate's `max-file-size`) are in the note: each word,
    or a word starting alike (`stem`; a shorter word as a whole prefix: `max` in `maximum`)."""
    if not words:
        return True
    held = set(_WORD.findall(text.lower()))
    starts = {h[:n] for h in held if h.isalpha() for n in (3, 4, STEM)}
    found = sum(1 for w in words if w in held or ((stem(w) != w or len(w) < STEM) and stem(w) in starts))
    return found >= share * len(words)
