"""What a candidate is about, as names to look up anywhere in the vault (issue 16). Pure.

A person keeps `People/kepano.md` or `Plugins/obsidian-git.md`, not `persons/kepano.md`: the
candidate's own identity key finds nothing there, its names do. The querier looks each name up
among every note's title, aliases, H1, `slug` and file stem, folded alike (`names.slugify`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from memory_curator.core import words
from memory_curator.core.candidate import Candidate
from memory_curator.core.names import nfc, slugify
from memory_curator.core.notes import as_list, wikilinks
from memory_curator.core.ownership import on_surface

_H1 = re.compile(r"^# +(.+?)\s*#*\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Ask:
    """The names to look up, and for a fact the words its predicate needs in the note."""

    names: tuple[str, ...]
    predicate: tuple[str, ...] = ()
    entity: tuple[str, ...] = ()  # a fact's entity as words, looked for in paths too
    day: str | None = None  # an event's day: an event note of another day is another event
    language: str = words.FALLBACK  # the candidate's: what its words are stemmed in (`words.stem`)


def first_heading(body: str) -> str:
    match = _H1.search(body)
    return match.group(1).strip() if match else ""


def ask(candidate: Candidate, language: str = words.AUTO) -> Ask:
    """A fact is about its entity, and only where the entity's note speaks of its predicate;
    anything else is about its title, name, aliases, slug or H1 (its `[[links]]` when it names
    nothing itself). `language`: the rules' (`auto`: the candidate's own, detected)."""
    fm = candidate.frontmatter
    if candidate.surface is not None and "entity" in candidate.surface.key and fm.get("entity"):
        spoken = words.language_of(f"{fm.get('value') or ''} {candidate.note.body}", language)
        return Ask(_slugs([fm["entity"]]), _words(fm.get("predicate")), _words(fm["entity"]), language=spoken)
    own = [fm.get(k) for k in ("title", "name", "slug")] + as_list(fm.get("aliases"))
    own.append(first_heading(candidate.note.body))
    names = _slugs(own) or _slugs(wikilinks(candidate.note.body))
    day = str(fm.get("date"))[:10] if candidate.surface is not None and candidate.surface.type == "event" else None
    return Ask(names, day=day)


def _words(value: object) -> tuple[str, ...]:
    """Words of 3 letters or more, and numbers (`widget-7` -> widget, 7), as paths are read."""
    found = (w for w in words.tokens(str(value or "")) if len(w) >= 3 or any(c.isdigit() for c in w))
    return tuple(dict.fromkeys(found))


def _slugs(values: Iterable[object]) -> tuple[str, ...]:
    out = (slugify(v) for v in values if isinstance(v, str | int | float) and str(v).strip())
    return tuple(dict.fromkeys(s for s in out if s))


def speaks_of(wanted: tuple[str, ...], text: str, language: str = words.FALLBACK, share: float = 0.5) -> bool:
    """At least `share` of the words (a predicate's `max-file-size`) are in the note: each word,
    or a word with its stem in `language` (`maintainers` in "maintained by"; not `properties`
    in "proper", nor `commercial` in "comment")."""
    if not wanted:
        return True
    held = set(words.tokens(text))
    stems = {words.stem(w, language) for w in wanted}
    held_stems = set(words.stems_alike(held, language, words.starts(stems)).values())
    found = sum(1 for w in wanted if w in held or words.stem(w, language) in held_stems)
    return found >= share * len(wanted)


def link_name(rel: str) -> str:
    """A note's name as Obsidian resolves a `[[link]]` to it: its file name without `.md`,
    NFC, case folded (`Themes.md` and `facts/logseq/themes.md` answer the same `[[themes]]`)."""
    return nfc(rel.rsplit("/", 1)[-1].removesuffix(".md")).casefold()


def names_alike(candidate: Candidate, path: str, curator_owned: bool) -> bool:
    """Whether promoting the candidate would give the note at `path` a namesake: an ambiguous
    `[[link]]` where there was one note (issue 38). Notes of the candidate's own surface that
    the curator owns are no clash: its path template names them so by design
    (`facts/*/size.md`, told apart by their folder, the rest of their key)."""
    target = candidate.target
    if not target or path == target or link_name(path) != link_name(target):
        return False
    return not (curator_owned and candidate.surface is not None and on_surface(path, [candidate.surface]))
