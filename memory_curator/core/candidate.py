"""What a candidate is: its parsed note, its surface, its identity key and target path.

Pure: built from bytes and the rules, so `check` and a sweep see exactly the same thing.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memory_curator.core.conditions import is_present
from memory_curator.core.names import slugify
from memory_curator.core.notes import Note, all_tags, content_hash, parse
from memory_curator.core.ownership import never_owned
from memory_curator.core.rules import Rules, Surface

_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclass(frozen=True)
class Candidate:
    inbox_path: str
    agent: str
    note: Note
    digest: str
    surface: Surface | None
    target: str | None
    key_problem: str | None
    missing: tuple[str, ...]
    raw: bytes = b""  # the file's bytes as read: what a drop keeps and a review appends to

    @property
    def frontmatter(self) -> Mapping[str, Any]:
        return self.note.frontmatter

    @property
    def tags(self) -> list[str]:
        return all_tags(self.note)


def build(raw: bytes | str, inbox_path: str, agent: str, rules: Rules) -> Candidate:
    note = parse(raw)
    digest = content_hash(raw)
    surface = None if note.problem else infer_surface(note.frontmatter, rules)
    target, problem = (None, None)
    if surface is not None:
        target, problem = target_path(surface, note.frontmatter)
    missing = tuple(f for f in surface.required if not is_present(note.frontmatter.get(f))) if surface else ()
    data = raw if isinstance(raw, bytes) else raw.encode("utf-8")
    return Candidate(inbox_path, agent, note, digest, surface, target, problem, missing, data)


def infer_surface(frontmatter: Mapping[str, Any], rules: Rules) -> Surface | None:
    """The surface named by `type`; without one, a fact when entity and predicate are given."""
    kind = frontmatter.get("type")
    if is_present(kind) and isinstance(kind, str):
        return rules.surface_for_type(kind)
    if is_present(frontmatter.get("entity")) and is_present(frontmatter.get("predicate")):
        return rules.surface_for_type("fact")
    return None


def target_path(surface: Surface, frontmatter: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """Fill the surface's path template; (None, why) when a key field is missing or unsafe."""
    values: dict[str, Any] = {}
    for name, _spec in surface.placeholders():
        value, problem = _placeholder(name, frontmatter)
        if problem:
            return None, problem
        values[name] = value
    path = surface.path.format(**values)
    if never_owned(path):  # `{entity}/x.md` with entity `digests`: rules check cannot see it coming
        return None, f"{path} is in a folder the curator never writes"
    return path, None


def _placeholder(name: str, frontmatter: Mapping[str, Any]) -> tuple[Any, str | None]:
    if name == "date":
        return _day(frontmatter.get("date"))
    raw = frontmatter.get(name)
    if name == "slug" and not is_present(raw):
        raw = frontmatter.get("title") or frontmatter.get("name")
    if not is_present(raw):
        return None, f"missing {name}"
    text = str(raw)
    if "\x00" in text or text.startswith("/") or ".." in text.split("/") or ("/" in text and name == "slug"):
        return None, f"unsafe {name} {text!r}"
    slug = slugify(text)
    return (slug, None) if slug else (None, f"{name} {text!r} has no usable characters")


def _day(value: Any) -> tuple[Any, str | None]:
    if isinstance(value, dt.datetime):
        return value.date(), None
    if isinstance(value, dt.date):
        return value, None
    if isinstance(value, str) and _DAY.match(value.strip()):
        try:
            return dt.date.fromisoformat(value.strip()), None
        except ValueError:
            pass
    return None, "missing date" if not is_present(value) else f"date {value!r} is not YYYY-MM-DD"
