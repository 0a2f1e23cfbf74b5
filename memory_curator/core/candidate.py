"""What a candidate is: its parsed note, its surface, its identity key and target path.

Pure: built from bytes and the rules, so `check` and a sweep see exactly the same thing.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ruamel.yaml.comments import CommentedMap

from memory_curator.core.conditions import is_present
from memory_curator.core.marks import REVIEW_TAG, unmarked
from memory_curator.core.names import slugify
from memory_curator.core.notes import Note, NotEditable, all_tags, content_hash, edit_frontmatter, parse
from memory_curator.core.ownership import never_owned
from memory_curator.core.privacy import privacy_tags
from memory_curator.core.rules import Rules
from memory_curator.core.secrets import Finding, scan
from memory_curator.core.settings import PERSON_ONLY
from memory_curator.core.surface import BOOKKEEPING, Surface

_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_URL = re.compile(r"^https?://\S+$", re.IGNORECASE)
NEAR_MISS = 0.8  # difflib ratio from which an unknown key is named as a likely typo


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
    near_misses: tuple[tuple[str, str], ...] = ()  # (key as written, the field it is close to)
    person_only: frozenset[str] = frozenset(PERSON_ONLY)  # its keys a person alone sets: claims, never read
    privacy: tuple[str, ...] = ()  # its privacy tags (`Settings.privacy_tags`): only a person lets it out
    approved: bool = False  # a person decided it in `review`/`resolve`: privacy content approved for sharing
    secrets: tuple[Finding, ...] = ()  # the credentials in its text (`core.secrets`): it never becomes a note

    @property
    def frontmatter(self) -> Mapping[str, Any]:
        return self.note.frontmatter

    @property
    def tags(self) -> list[str]:
        return [t for t in all_tags(self.note) if t != REVIEW_TAG]


def build(raw: bytes | str, inbox_path: str, agent: str, rules: Rules) -> Candidate:
    """The candidate as a sweep decides it: its own text, read past the curator's marks (an
    earlier sweep's uncertainty line and `needs-review` tag), so flagging it changes no verdict."""
    note = parse(unmarked(raw))
    digest = content_hash(raw)
    near: tuple[tuple[str, str], ...] = ()
    if not note.problem:
        note = canonical_keys(note, rules.field_names)
        near = near_misses(note.frontmatter, rules.field_names)
    surface = None if note.problem else infer_surface(note.frontmatter, rules)
    target, problem = (None, None)
    if surface is not None:
        target, problem = target_path(surface, note.frontmatter)
    missing = tuple(f for f in surface.required if not is_present(note.frontmatter.get(f))) if surface else ()
    data = raw if isinstance(raw, bytes) else raw.encode("utf-8")
    settings = rules.settings
    private = privacy_tags(all_tags(note), settings.privacy_tags)
    only = frozenset(settings.person_only)
    found = credentials(data.decode("utf-8", errors="replace"), rules)
    return Candidate(
        inbox_path, agent, note, digest, surface, target, problem, missing, data, near, only, private, False, found
    )


def credentials(text: str, rules: Rules) -> tuple[Finding, ...]:
    """The credentials in a text, as the rules' `secrets` setting has the scan (on, less `allow`)."""
    wanted = rules.settings.secrets
    return scan(text, wanted.allow) if wanted.scan else ()


def canonical_keys(note: Note, names: tuple[str, ...]) -> Note:
    """The note with each key that differs from a field the rules name only in case (`Type`,
    `Source_URL`) spelled as the rules spell it, in its place, its value as written. A key
    whose canonical spelling is also present is left alone. What a promote writes is this
    text; the inbox file itself (`Candidate.raw`) is never rewritten."""
    known = set(names)
    by_lower: dict[str, str] = {}
    for name in names:
        by_lower.setdefault(name.lower(), name)
    renames: dict[str, str] = {}
    for key in note.frontmatter:
        canonical = by_lower.get(key.strip().lower())
        if key in known or canonical is None or canonical in note.frontmatter or canonical in renames.values():
            continue
        renames[key] = canonical
    if not renames:
        return note

    def rename(data: CommentedMap) -> None:
        for key in list(data):
            if str(key) in renames:
                data.insert(list(data).index(key), renames[str(key)], data.pop(key))

    try:
        renamed = parse(edit_frontmatter(note.text, rename))
    except NotEditable:  # ruamel cannot write it back: the keys are matched, the text kept
        renamed = note
    if renamed.problem or any(k in renamed.frontmatter for k in renames):
        renamed = note
    frontmatter = {renames.get(k, k): v for k, v in renamed.frontmatter.items()}
    return dataclasses.replace(renamed, frontmatter=frontmatter)


def near_misses(frontmatter: Mapping[str, Any], names: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """Keys that are no field the rules name but close to one that is missing (`sorce_url`,
    `entitiy`): a likely typo, named in the reason ("did you mean"), never corrected."""
    by_lower = {name.lower(): name for name in reversed(names)}
    out = []
    for key in frontmatter:
        if key in names or key.lower() in by_lower:
            continue
        close = difflib.get_close_matches(key.lower(), list(by_lower), n=1, cutoff=NEAR_MISS)
        meant = _meant(key, by_lower[close[0]], frontmatter) if close else None
        if meant is not None and meant not in frontmatter:
            out.append((key, meant))
    return tuple(out)


def _meant(key: str, close: str, frontmatter: Mapping[str, Any]) -> str | None:
    """The field a near-miss key was meant as. The singular of a field that unions (`role` of
    `roles`) is a field of its own: a claim the merge compares with the note's (docs/merge.md),
    no typo. `source` is the vault's provenance prose (`claude-code-session`), no source, unless
    it holds an address: then it meant `source_url`, unless a source is given."""
    if key.lower() + "s" != close.lower():
        return close
    if key.lower() != "source" or not _URL.match(str(frontmatter.get(key) or "").strip()):
        return None
    return None if "sources" in frontmatter else "source_url"


def hints(candidate: Candidate) -> str:
    """One "`sorce_url`: did you mean `source_url`?" for each near miss ('' for none)."""
    return "; ".join(f"`{key}`: did you mean `{meant}`?" for key, meant in candidate.near_misses)


def with_hints(text: str, candidate: Candidate) -> str:
    """A reason with the candidate's near misses named after it."""
    said = hints(candidate)
    return f"{text} ({said})" if said else text


def placement_problem(candidate: Candidate, rules: Rules) -> str | None:
    """What keeps this candidate from having a durable note's path, in the one wording `run`,
    `check`, `submit` and `review` use; None when it has one. A missing required field is
    named before the key it leaves empty (`title`, not `slug`)."""
    surface = candidate.surface
    if surface is None:
        kind = candidate.frontmatter.get("type")
        what = f"unknown type {kind!r}" if is_present(kind) else "no type"
        fits = fitting_types(candidate.frontmatter, rules)
        if fits:
            how = f"set `type` to {' or '.join(fits)} (its fields fit {'that' if len(fits) == 1 else 'those'})"
        else:
            how = f"set `type` to one of {', '.join(s.type for s in rules.surfaces)}"
        return f"the surface cannot be inferred: {what}: {how}"
    if candidate.missing:
        return f"missing required fields for {surface.name}: {', '.join(candidate.missing)}"
    if candidate.key_problem:
        return f"no path for {surface.name}: {candidate.key_problem}"
    return None


def fitting_types(frontmatter: Mapping[str, Any], rules: Rules) -> list[str]:
    """The surfaces whose every required field the candidate carries: what its `type` could be
    (a `name` fits a person or a project, never "give entity and predicate for a fact")."""
    return [s.type for s in rules.surfaces if s.required and all(is_present(frontmatter.get(f)) for f in s.required)]


def not_carried(candidate: Candidate) -> frozenset[str]:
    """The agent's bookkeeping keys its surface leaves out of a durable note (`model`,
    `task_id`…), and the person-only keys it claims (`user_approved`): the candidate's
    original, kept in the content store and its audit copy, still holds them."""
    bookkeeping = candidate.surface.not_carried if candidate.surface else BOOKKEEPING
    return frozenset(bookkeeping) | candidate.person_only | person_only_keys(candidate)


def person_only_keys(candidate: Candidate) -> frozenset[str]:
    """The candidate's keys that name a person-only field in another spelling (`Approved_By`,
    `REVIEWED`, `user-approved`): a claim like the field itself, never read, never carried."""
    wanted = {_folded(name) for name in candidate.person_only}
    return frozenset(key for key in candidate.frontmatter if _folded(key) in wanted)


def _folded(key: str) -> str:
    return str(key).strip().casefold().replace("-", "_")


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
    titled = name == "slug" and not is_present(raw)  # a title is prose: its `/` (RDL 15/2025) is slugged
    if titled:
        raw = frontmatter.get("title") or frontmatter.get("name")
    if not is_present(raw):
        return None, f"missing {name}"
    text = str(raw)
    if not titled and _unsafe(text, name):
        return None, f"unsafe {name} {text!r}"
    slug = slugify(text)
    return (slug, None) if slug else (None, f"{name} {text!r} has no usable characters")


def _unsafe(text: str, name: str) -> bool:
    """A key field written as a path (`../x`, `/etc`; a `slug` naming a folder): an agent asking
    for a place, refused rather than guessed. `slugify` would make any text safe; a title, which
    names no place, is slugged whatever it holds."""
    return "\x00" in text or text.startswith("/") or ".." in text.split("/") or ("/" in text and name == "slug")


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
