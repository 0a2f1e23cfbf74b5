"""Whose note is it (design §3): the curator's or the person's. Pure: no I/O.

A note is *curator-owned* when it carries `curated_from:` provenance or lies in the folder of
a surface the rules hand over to the curator (`curated: true`; by default facts, events,
persons, projects and research), and is not itself marked as a person's
(`source_skill: human`, `author: user`). Nothing under `_meta/` (the rules file among it),
`_inbox/`, `digests/` or a dot-folder (`.obsidian/`, `.trash/`) is ever curator-owned.
Every other note is the person's: a sweep and the judge never change it, and only a person
who sees the diff and confirms it writes into it.

The judge reaches less still: it may patch only a curator-owned note on a declared surface
(`judge_may_change`); a duplicate it finds of any other vault note drops the candidate and
changes no note (`judge.prompt`).

An inbox candidate cannot make itself the person's: its own `source_skill: human` /
`author: user` is hidden from the rules' conditions and kept in its `curated_from` entry
(`claims`), never in the note.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from memory_curator.core.names import nfc
from memory_curator.core.rules import Rules
from memory_curator.core.surface import NEVER_OWNED, Surface, surface_folder

HUMAN_MARKS = (("source_skill", "human"), ("author", "user"))  # a note marked as a person's


def _parts(rel: str) -> list[str]:
    return nfc(rel).removeprefix("./").split("/")


def never_owned(rel: str) -> bool:
    """Under `_meta/`, `_inbox/`, `digests/` or any dot-folder (or an unsafe path): never the
    curator's. Folder names compare case-insensitively (a case-insensitive disk is one folder)."""
    parts = _parts(rel)
    if any(not p or p in (".", "..") or p.startswith(".") or "\x00" in p for p in parts):
        return True
    return len(parts) > 1 and parts[0].casefold() in NEVER_OWNED


def _says(value: Any, word: str) -> bool:
    items = value if isinstance(value, list) else [value]
    return any(isinstance(v, str | int | float) and str(v).strip().casefold() == word for v in items)


def marked_human(frontmatter: Mapping[str, Any]) -> bool:
    """`source_skill: human` or `author: user` (text case-insensitive; a list when any item is)."""
    return any(_says(frontmatter.get(key), word) for key, word in HUMAN_MARKS)


def claims(frontmatter: Mapping[str, Any]) -> dict[str, Any]:
    """The keys with which a candidate claims to be a person's: hidden from the conditions,
    kept in its `curated_from` entry, never in the note."""
    return {key: frontmatter[key] for key, word in HUMAN_MARKS if _says(frontmatter.get(key), word)}


def on_surface(rel: str, surfaces: Iterable[Surface], curated_only: bool = False) -> bool:
    """`rel` lies in the fixed folder of a declared surface (of one handed over, if asked)."""
    for surface in surfaces:
        folder = surface_folder(surface.path)
        if folder and rel.startswith(folder) and (surface.curated or not curated_only):
            return True
    return False


def curator_owned(rel: str, frontmatter: Mapping[str, Any], rules: Rules) -> bool:
    """The curator's note: a sweep may patch it. Everything else is the person's."""
    if never_owned(rel) or marked_human(frontmatter):
        return False
    if frontmatter.get("curated_from"):
        return True
    return on_surface(rel, rules.surfaces, curated_only=True)


def judge_may_change(rel: str, frontmatter: Mapping[str, Any], rules: Rules) -> bool:
    """A note the judge may patch (or cite a drop rule against): curator-owned and on a declared surface."""
    return curator_owned(rel, frontmatter, rules) and on_surface(rel, rules.surfaces)


NOT_ITS_NOTE = "is not one of the notes it may change"  # the judge's refusal, in every message
