"""Patch semantics, pure: the new text of a note a candidate is merged into (`merge`), from
what it adds (`comparison.compare`). Nothing here reads or writes files."""

from __future__ import annotations

import copy
import datetime as dt
import difflib
import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError

from memory_curator.core.candidate import Candidate, not_carried

# Comparison, Settle, compare and norm_text are read through `merge` too (by `facts`, the index, `desk`)
from memory_curator.core.comparison import (
    CONTESTED,
    SET_FIELDS,
    blank,
    new_items,
    norm_url,
    observed,
    settled,
    sources_of,
)
from memory_curator.core.comparison import Comparison as Comparison
from memory_curator.core.comparison import Settle as Settle
from memory_curator.core.comparison import compare as compare
from memory_curator.core.comparison import norm_text as norm_text
from memory_curator.core.compose import approval, provenance, strip_review_mark
from memory_curator.core.notes import (
    Note,
    NotEditable,
    all_tags,
    as_list,
    norm_tag,
    parse,
    plain,
    spelled,
)
from memory_curator.core.ownership import claims, marked_human
from memory_curator.core.privacy import APPROVAL
from memory_curator.core.splice import edit_frontmatter
from memory_curator.core.text import split_list

CONTESTED_TAG = "contradiction"
TIME_KEYS = ("observed_at", "captured_at")
SOURCE_KEYS = ("source_url", "sources")
VALUE_GROUP = ("value", *TIME_KEYS, "confidence", *SOURCE_KEYS)  # what travels with a value into history
MERGED_KEYS = {*VALUE_GROUP, "tags", *SET_FIELDS, "history", CONTESTED, "curated_from", "updated_at"}
# signals, authorship, derived keys: never copied nor reported (`author: user` would make a note a person's)
SIGNAL_KEYS = {
    "type",
    "source_skill",
    "source_kind",
    "author",
    "user_approved",
    "load_bearing",
    "surprise",
    "ephemeral",
    "slug",  # derived from the title: part of the path, never news
}
IDENTITY_KEYS = {"title", "name"}  # never copied into a note; shown in the update section when they differ
SINGULAR = {"participants": "participant", "aliases": "alias", "roles": "role"}


@dataclass(frozen=True)
class Merged:
    """The new note text and what changed; `refused` says why nothing was merged."""

    text: str
    summary: tuple[str, ...] = ()
    refused: str | None = None
    contradiction: bool = False

    @property
    def changed(self) -> bool:
        return bool(self.summary)


def merge(
    note_text: str, candidate: Candidate, now: dt.datetime, person: bool = False, settle: Settle | None = None
) -> Merged:
    """Merge `candidate` into any note's text (its own key path or a neighbour the judge chose).

    Adds what is new and keeps what was there: merging the same candidate twice gives the
    bytes of merging it once. Refuses (text unchanged) a note a person wrote, a note whose
    frontmatter cannot be edited safely, and a value contradiction that time cannot settle.
    Whether the note's *path* makes it the person's (`ownership.curator_owned`) is the
    caller's check.

    `person=True` is a write a person confirmed into their own note (`review`, `resolve
    --yes`): a note marked `source_skill: human` / `author: user` is not refused, and neither
    `curated_from` nor `updated_at` is added, so the note stays the person's.

    `settle` is a person's answer to a different value (`settled`); a sweep never gives one.
    """
    note = parse(note_text)
    if note.problem:
        return Merged(note_text, refused=f"the note cannot be edited safely: {note.problem}")
    fm = note.frontmatter
    if not person and marked_human(fm):
        return Merged(note_text, refused="the note is human-authored")
    if not isinstance(fm.get("history", []), list | type(None)):
        return Merged(note_text, refused="the note's history: is not a list")
    comparison = compare(fm, all_tags(note), candidate.frontmatter, candidate.tags, not_carried(candidate))
    if settle is not None:
        comparison = settled(comparison, fm, candidate.frontmatter, settle)
    if comparison.contradiction:
        why = f"contradiction: a different {' and '.join(comparison.differs)} with no newer or older observation time"
        return Merged(note_text, refused=why, contradiction=True)
    edit = _Edit(candidate, comparison, fm, _identity_keys(candidate), provenance=not person)
    section = _update_section(note, candidate, edit.reported(), now)
    try:
        text = edit_frontmatter(note_text, lambda data: edit.apply(data, now, section is not None))
    except (NotEditable, YAMLError) as exc:  # YAML that PyYAML reads and ruamel cannot round-trip
        why = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return Merged(note_text, refused=f"the note cannot be edited safely: {why}")
    if section is not None:
        text = _append_section(text, section, note.newline)
    return Merged(text, tuple(edit.summary))


def _identity_keys(candidate: Candidate) -> set[str]:
    key = set(candidate.surface.key) if candidate.surface else set()
    return key | IDENTITY_KEYS


class _Edit:
    """The frontmatter changes of one merge, applied to ruamel's round-trip mapping."""

    def __init__(
        self,
        candidate: Candidate,
        comparison: Comparison,
        note_fm: Mapping[str, Any],
        ids: set[str],
        provenance: bool = True,
    ):
        self.provenance = provenance  # False: a person's confirmed write leaves their note theirs
        skipped = not_carried(candidate)  # the agent's bookkeeping never reaches the note
        self.cand = {k: v for k, v in candidate.frontmatter.items() if k not in skipped}
        self.spelled = spelled(candidate.note)  # what is written: each value as the candidate spelled it
        self.candidate = candidate
        self.comparison = comparison
        self.note_fm = note_fm
        self.identity = ids
        self.summary: list[str] = []
        # a candidate speaking of another value than the current one (newer, older, or one in
        # history) keeps that value's sources and confidence with it, never on the current one
        mine, current = self.cand.get("value"), note_fm.get("value")
        self.value_moves = not blank(mine) and not blank(current) and norm_text(mine) != norm_text(current)

    def apply(self, data: CommentedMap, now: dt.datetime, body_appended: bool) -> None:
        """The changes, on `data`; run again from the start on another mapping when the splice
        hands the edit to the round trip (`splice.fast_edit`)."""
        self.summary = []
        self._value(data)
        self._claims(data)
        self._sources(data)
        self._history(data)
        self._tags(data)
        for name in SET_FIELDS:
            added = getattr(self.comparison, name)
            if added:
                _extend(data, name, list(added))
                self.summary += [f"{SINGULAR[name]} {item}" for item in added]
        self._confidence(data)
        self._fill(data)
        if approval(self.candidate) and data.get(APPROVAL) is not True:
            data[APPROVAL] = True
            self.summary.append("approved for sharing by a person")
        if body_appended:
            self.summary.append("update section appended")
        if self.summary and self.provenance:
            self._provenance(data, now)

    def _value(self, data: CommentedMap) -> None:
        cmp = self.comparison
        if not cmp.value_changed:
            return  # agreeing: the note's time stays the time its value was first observed
        new = self.spelled["value"]
        if blank(data.get("value")):
            _put(data, "value", new)
            for key, moment in _pick(self.spelled, TIME_KEYS).items():
                if blank(data.get(key)):
                    _put(data, key, moment)
            self.summary.append(f"value {new}")
        elif cmp.order == "newer":
            old = {k: data[k] for k in VALUE_GROUP if k in data}
            _add_history(data, old)
            data["value"] = new
            _replace_keys(data, TIME_KEYS, _pick(self.spelled, TIME_KEYS))
            _replace_keys(data, ("confidence",), _pick(self.spelled, ("confidence",)))
            _replace_keys(data, SOURCE_KEYS, _pick(self.spelled, SOURCE_KEYS))
            self.summary.append(f"value {old['value']} -> {new} (the old value kept in history)")
        elif cmp.order == "contested":
            _extend(data, CONTESTED, [CommentedMap(_pick(self.spelled, VALUE_GROUP))])
            if CONTESTED_TAG not in _tag_set(data.get("tags")):
                _extend(data, "tags", [CONTESTED_TAG])
            self.summary.append(f"value {new} kept beside {data['value']} as a contradiction")
        else:
            _add_history(data, _pick(self.spelled, VALUE_GROUP))
            self.summary.append(f"older value {new} kept in history")

    def _claims(self, data: CommentedMap) -> None:
        """Claims other than `value` the candidate states otherwise (`comparison.conflicts`), by
        the same time rule as a value: a newer one replaces the note's, which goes to history
        with its time; an older one goes to history only; a person's "both" keeps it beside."""
        cmp = self.comparison
        for field, old, new in cmp.conflicts:
            mine = self.spelled.get(field, self._spelled_as(field, new))
            if cmp.order == "newer":
                key = _key_in(data, field)
                _add_history(data, {field: copy.deepcopy(data[key]), **_pick(data, TIME_KEYS)})
                data[key] = mine
                self.summary.append(f"{field} {_scalar(old)} -> {_scalar(new)} (the old one kept in history)")
            elif cmp.order == "contested":
                _extend(data, CONTESTED, [CommentedMap({field: mine, **_pick(self.spelled, TIME_KEYS)})])
                self.summary.append(f"{field} {_scalar(new)} kept beside {_scalar(old)} as a contradiction")
            else:
                _add_history(data, {field: mine, **_pick(self.spelled, TIME_KEYS)})
                self.summary.append(f"older {field} {_scalar(new)} kept in history")

    def _spelled_as(self, field: str, default: Any) -> Any:
        """The candidate's own text of a field the note spells in another case (`Status`)."""
        return next((v for k, v in self.spelled.items() if str(k).casefold() == field.casefold()), default)

    def _sources(self, data: CommentedMap) -> None:
        new = list(self.comparison.sources)
        if not new or (self.value_moves and self.comparison.value_changed):
            return  # a newer value brought its own sources; an older one took them to history
        if self.value_moves:
            self._past_sources(data, new)
            return
        if "sources" in data or "source_url" in data:
            _extend(data, "sources", new, after="source_url")
        elif len(new) == 1:
            data["source_url"] = new[0]
        else:
            data["sources"] = CommentedSeq(new)
        self.summary += [f"source {s}" for s in new]

    def _past_sources(self, data: CommentedMap, new: list[str]) -> None:
        """New sources for a value already in history join that value's entry."""
        wanted = norm_text(self.cand["value"])
        for entry in as_list(data.get("history")):
            if isinstance(entry, CommentedMap) and norm_text(entry.get("value")) == wanted:
                _extend(entry, "sources", new, after="source_url")
                self.summary += [f"source {s} (for the earlier value {entry['value']})" for s in new]
                return

    def _history(self, data: CommentedMap) -> None:
        """History a candidate carries (a note copied back into the inbox) is unioned in."""
        for entry in as_list(self.spelled.get("history")):
            if not isinstance(entry, Mapping) or blank(entry.get("value")):
                continue
            if not blank(data.get("value")) and norm_text(entry["value"]) == norm_text(data["value"]):
                target: CommentedMap | None = data
            else:
                target = _same_entry(data.get("history"), entry)
            if target is None:
                _add_history(data, entry)
                self.summary.append(f"older value {entry['value']} kept in history")
                continue
            new = new_items(sources_of(entry), {norm_url(s) for s in sources_of(target)}, norm_url)
            if new:
                _extend(target, "sources", list(new), after="source_url")
                self.summary += [f"source {s} (for the value {entry['value']})" for s in new]

    def _tags(self, data: CommentedMap) -> None:
        if self.comparison.tags:
            _extend(data, "tags", list(self.comparison.tags))
            self.summary += [f"tag {t}" for t in self.comparison.tags]

    def _confidence(self, data: CommentedMap) -> None:
        if self.value_moves:
            return
        mine, theirs = self.cand.get("confidence"), plain(data.get("confidence"))
        if not _number(mine) or (theirs is not None and not _number(theirs)):
            return
        if theirs is None or mine > theirs:
            _put(data, "confidence", self.spelled.get("confidence", mine))
            self.summary.append(f"confidence {theirs} -> {mine}" if theirs is not None else f"confidence {mine}")

    def _fill(self, data: CommentedMap) -> None:
        """Fields the note lacks are added (a key the note spells in another case is the note's:
        never a second `Status` beside `status`); identity and decision signals never are."""
        held = {str(k).casefold() for k in data}
        for key, value in self.cand.items():
            taken = str(key).casefold() in held or key in MERGED_KEYS or key in SIGNAL_KEYS or key in self.identity
            if taken or _key_in(data, key) in data:  # the cheap checks first: `_key_in` may read YAML
                continue
            if blank(value):
                continue
            _put(data, key, self.spelled.get(key, value))
            self.summary.append(f"field {key}")

    def reported(self) -> list[str]:
        """Candidate fields that differ from the note but merge into no field: kept as text."""
        out = []
        claimed = {field.casefold() for field, _, _ in self.comparison.conflicts}  # written or refused, never text
        note = {str(k).casefold(): v for k, v in self.note_fm.items()}
        for key, value in self.cand.items():
            folded = str(key).casefold()
            if key in MERGED_KEYS or key in SIGNAL_KEYS or blank(value) or folded in claimed:
                continue
            if key in self.identity or folded in note:
                if folded in note and norm_text(note[folded]) == norm_text(value):
                    continue
                out.append(f"`{key}: {_scalar(value)}`")
        return out

    def _provenance(self, data: CommentedMap, now: dt.datetime) -> None:
        entry = provenance(self.candidate, now)
        known = [e for e in as_list(data.get("curated_from")) if isinstance(e, Mapping)]
        if not any(str(e.get("sha256")) == entry["sha256"] for e in known):
            _extend(data, "curated_from", [entry])
        _put(data, "updated_at", now)


def _tag_set(tags: Any) -> set[str]:
    items = tags if isinstance(tags, list) else split_list(tags) if not blank(tags) else []
    return {norm_tag(str(t)) for t in items}


def _put(data: CommentedMap, key: str, value: Any) -> None:
    data[key] = copy.deepcopy(value)


def _pick(fm: Mapping[str, Any], keys: Iterable[str]) -> dict[str, Any]:
    return {k: fm[k] for k in keys if not blank(fm.get(k))}


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _scalar(value: Any) -> str:
    if isinstance(value, dt.datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(plain(value)).replace("\n", " ")


def _replace_keys(data: CommentedMap, old: Iterable[str], new: Mapping[str, Any]) -> bool:
    """Swap a group of keys for another at the group's place (or at the end); False if equal."""
    keys = list(data)
    present = [k for k in old if k in data]
    if {k: plain(data[k]) for k in present} == {k: plain(v) for k, v in new.items()} and list(new) == present:
        return False
    position = min((keys.index(k) for k in present), default=len(keys))
    for key in present:
        del data[key]
    for offset, (key, value) in enumerate(new.items()):
        data.insert(position + offset, key, copy.deepcopy(value))
    return True


def _extend(data: CommentedMap, key: str, items: list[Any], after: str | None = None) -> None:
    """Append to a list field in its own style; a string field becomes a list; a new field
    is a block list (placed right after `after` when given)."""
    items = [copy.deepcopy(i) for i in items]
    current = data.get(key)
    if isinstance(current, list):
        current.extend(items)
        return
    if not blank(current):
        parts = split_list(current) if key == "tags" else [current]
        data[key] = CommentedSeq([*parts, *items])
        return
    seq = CommentedSeq(items)
    if key in data:
        data[key] = seq
    elif after is not None and after in data:
        data.insert(list(data).index(after) + 1, key, seq)
    else:
        data[key] = seq


def _same_entry(history: Any, entry: Mapping[str, Any]) -> CommentedMap | None:
    for other in as_list(history):
        if not isinstance(other, CommentedMap):
            continue
        if norm_text(other.get("value")) == norm_text(entry["value"]) and observed(other) == observed(entry):
            return other
    return None


def _add_history(data: CommentedMap, entry: Mapping[str, Any]) -> None:
    """History stays ordered by observation time, oldest first."""
    record = CommentedMap((k, copy.deepcopy(v)) for k, v in entry.items())
    history = data.get("history")
    if not isinstance(history, list):
        data["history"] = CommentedSeq([record])
        return
    moment = observed(record)
    for index, existing in enumerate(history):
        other = observed(existing) if isinstance(existing, Mapping) else None
        if moment is not None and other is not None and other > moment:
            history.insert(index, record)
            return
    history.append(record)


# --- the update section ----------------------------------------------------------------------


def _update_section(note: Note, candidate: Candidate, reported: list[str], now: dt.datetime) -> str | None:
    """The candidate's body (and fields no key could hold) as a dated section; None when the
    note already holds it."""
    body = strip_review_mark(candidate.note.body).replace("\r\n", "\n").strip("\n")
    payload = "\n\n".join(p for p in ("Also reported: " + ", ".join(reported) + "." if reported else "", body) if p)
    if not payload.strip() or _holds(note.body, payload):
        return None
    fm = candidate.frontmatter
    claimed = claims(fm)  # an inbox file's "a person wrote me" is kept in curated_from only
    keys = [k for k in ("source_skill", "captured_at") if k not in claimed]
    details = [f"{key} {_scalar(fm[key])}" for key in keys if not blank(fm.get(key))]
    heading = f"## Update {now.astimezone(dt.UTC).date().isoformat()} (from {candidate.agent})"
    origin = f"*From `{candidate.inbox_path}`" + (f" ({', '.join(details)})" if details else "") + ".*"
    return f"{heading}\n\n{origin}\n\n{payload}\n"


def _holds(body: str, payload: str) -> bool:
    return payload in body.replace("\r\n", "\n")


def _append_section(text: str, section: str, newline: str) -> str:
    """After the note's own bytes (untouched), one blank line, then the section."""
    if text and not text.endswith("\n"):
        text += newline
    return text + newline + section.replace("\n", newline)


def note_diff(path: str, old: str, new: str) -> str:
    """A unified diff of a note, for `run --dry-run` (newline style is not shown)."""
    lines = difflib.unified_diff(old.splitlines(), new.splitlines(), f"a/{path}", f"b/{path}", lineterm="")
    return "".join(line + "\n" for line in lines)


def _key_in(data: CommentedMap, field: str) -> Any:
    """The key of the round trip's map that the comparison names by its written text: ruamel
    reads `true:`, `null:` and `1:` as a boolean, None and a number, the comparison (as Obsidian)
    as the text "true", "null", "1"."""
    if field in data or all(isinstance(k, str) for k in data):
        return field
    resolved = _resolved(field)
    return next((k for k in data if k == resolved and type(k) is type(resolved)), field)


@functools.cache
def _resolved(field: str) -> Any:
    """The key ruamel's round trip reads from this written text (`true` -> True); a text YAML
    does not read as one plain key (`#c`, `[x`, `a: b`) is its own key."""
    try:
        loaded = YAML().load(f"{field}: 0")
    except YAMLError:
        return field
    return next(iter(loaded), field) if isinstance(loaded, dict) and len(loaded) == 1 else field
