"""`review` and `resolve`: what a person decides about the items waiting for them.

The logic only: which items a `review PATH` covers and in what order, what the curator would
decide about one now (with what a patch would change), and the rule that a person's own note
is patched only once the person confirmed the diff. The interactive queue itself (keys,
prompts, rich panels) is `cli/review.py`; every choice is applied through `desk.Desk`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory_curator.commands.desk import PERSONS_NOTE, Desk, Done, Preview, inbox_item
from memory_curator.commands.status import InboxItem, scan_inbox
from memory_curator.core import candidate as cand
from memory_curator.core import merge
from memory_curator.core.comparison import blank, norm_text, sources_of
from memory_curator.core.decide import Decision, decide
from memory_curator.core.errors import CuratorError
from memory_curator.core.facts import ExistingNote, Neighbour, Querier, gather_facts, own_note
from memory_curator.core.json_types import JsonObject
from memory_curator.core.notes import parse, plain
from memory_curator.core.ownership import curator_owned, never_owned
from memory_curator.core.reasons import CODES, recorded_code
from memory_curator.store.journal import Journal
from memory_curator.store.paths import hash_capped, read_whole, safe_join, scope_agents
from memory_curator.store.records import Record

SIDE_KEYS = ("value", "observed_at", "captured_at", "confidence", "sources")


@dataclass(frozen=True)
class Side:
    """The note with the item's key beside the item: each value with its sources and times,
    so a person sees which is which before settling a different value."""

    note: str
    rows: tuple[tuple[str, str, str], ...]  # (field, the note's, the item's)
    differs: bool  # the values differ: take the new, keep the old, or keep both


@dataclass(frozen=True)
class View:
    """What the curator would decide about the item now, and what a patch would change."""

    decision: Decision
    neighbours: tuple[Neighbour, ...]
    patch_target: str | None
    diff: str | None
    persons: bool = False  # the patch target is the person's note: writing it needs a second key
    side: Side | None = None
    default_target: str | None = None  # what `m` offers: never a person's note, never the rules file
    own: str | None = None  # what the review note offers a patch into: its key's or subject's note (`own_note`)


class Declined(CuratorError):
    """The person said no to the diff they were shown: nothing written, and not an error."""


@dataclass(frozen=True)
class Flag:
    """Why an item waits, as its latest flag in the journal said (while its bytes are the same)."""

    code: str
    target: str | None = None


@dataclass(frozen=True)
class Tally:
    """What one `review` session did; `left` is what nobody decided (skipped ones included)."""

    done: tuple[Done, ...] = ()
    skipped: int = 0
    edited: int = 0
    left: int = 0  # neither decided nor skipped when the session ended (the one on screen included)
    quit: bool = False
    runs: tuple[str, ...] = field(default=())  # the journal's runs of this session (`undo RUN`)
    gone: int = 0  # taken meanwhile by a sweep or another person
    interrupted: bool = False  # Ctrl-C: what was decided stays decided

    def counts(self) -> dict[str, int]:
        counts = {"promote": 0, "patch": 0, "drop": 0}
        for item in self.done:
            counts[item.action.verdict] += 1
        return counts

    def to_json(self) -> JsonObject:
        return {
            "done": [item.to_json() for item in self.done],
            **{k: getattr(self, k) for k in ("skipped", "edited", "left", "gone", "quit", "interrupted")},
            "runs": list(self.runs),
        }


def scope(root: Path, path: str | None) -> tuple[set[str] | None, str | None]:
    """(agent folders, single item) that `review PATH` covers: the whole inbox, one agent
    folder, or one file."""
    if path is None:
        return None, None
    given = Path(path)
    if given.is_file() or (not given.is_absolute() and (root / given).is_file()):
        return None, inbox_item(root, path)[0]
    folder = given if given.exists() or given.is_absolute() else root / given
    return {name for name, _ in scope_agents(root, folder)}, None


def wanted(root: Path, path: str | None, agents: tuple[str, ...]) -> tuple[set[str] | None, str | None]:
    """(agent folders, single item) a review walks: PATH's (`scope`), narrowed to the `--agent`s
    given; None for every agent."""
    scoped, only = scope(root, path)
    chosen = set(agents) if agents else None
    if chosen is not None and scoped is not None:
        chosen &= scoped
    return (chosen if chosen is not None else scoped), only


def queue(
    desk: Desk,
    agents: set[str] | None = None,
    only: str | None = None,
    reason: str | None = None,
    flags: Mapping[str, Flag] | None = None,
) -> list[InboxItem]:
    """The items waiting for a person (or just `only`), oldest first; `reason` keeps those
    whose flag has that code (`core.reasons.CODES`)."""
    if reason is not None and reason not in CODES:
        raise CuratorError(f"unknown reason {reason!r} (one of: {', '.join(CODES)})")
    items = scan_inbox(desk.root, desk.state, settings=desk.rules.settings)
    if only is not None:
        return [i for i in items if i.rel == only]
    waiting = [i for i in items if i.waiting_for_person and (agents is None or i.agent in agents)]
    if reason is None:
        return waiting
    known = flags if flags is not None else flag_reasons(desk)
    return [i for i in waiting if flag_of(i, known).code == reason]


def flag_reasons(
    desk: Desk, records: Iterable[Record] | None = None, among: Collection[str] | None = None
) -> dict[str, Flag]:
    """inbox path -> its latest flag (code and target), for the bytes it holds now. One read of
    the journal (or its `records`, read already): what `review --reason` and "the items like
    this one" group by. `among`: only these paths are read (the items waiting), not every path
    ever flagged."""
    latest: dict[str, tuple[str | None, Flag]] = {}
    if records is None:
        records = Journal(desk.state / "journal.jsonl", desk.clock, desk.ctx.files).records()
    for record in records:
        if record.get("event") != "begin" or record.get("verdict") != "needs_review":
            continue
        inbox, target = record.get("inbox"), record.get("target")
        if isinstance(inbox, str) and (among is None or inbox in among):
            flag = Flag(recorded_code(record), target if isinstance(target, str) else None)
            latest[inbox] = (record.get("after_hash") if isinstance(record.get("after_hash"), str) else None, flag)
    out: dict[str, Flag] = {}
    limit = desk.rules.settings.max_candidate_bytes  # a larger item is listed too large, never read
    for inbox, (after, flag) in latest.items():
        try:
            same = after is not None and hash_capped(desk.root / inbox, limit) == after
        except OSError:
            continue
        if same:
            out[inbox] = flag
    return out


def flag_of(item: InboxItem, flags: Mapping[str, Flag]) -> Flag:
    """An item's flag; one put back by undo or restore (held, with no flag journalled: a restore
    tags it `needs-review`, yet no sweep flagged it) is `held`."""
    if item.rel in flags:
        return flags[item.rel]
    return Flag("held" if item.held else "other")


ABOUT_A_NOTE = frozenset({"contradiction", "persons-note", "exists", "cannot-write"})  # the target is another note


def alike(items: list[InboxItem], item: InboxItem, flags: Mapping[str, Flag]) -> list[InboxItem]:
    """The other items like `item`: the same agent and reason code, and, when the reason is
    about one note (a contradiction of it, a person's note it matches), the same note."""
    mine = _group(flag_of(item, flags))
    return [i for i in items if i.rel != item.rel and i.agent == item.agent and _group(flag_of(i, flags)) == mine]


def _group(flag: Flag) -> tuple[str, str | None]:
    return flag.code, flag.target if flag.code in ABOUT_A_NOTE else None


def patch_confirmed(
    desk: Desk,
    rel: str,
    target: str,
    confirm: Callable[[Preview], bool] | None,
    yes: bool = False,
    settle: merge.Settle | None = None,
) -> Done:
    """Patch into `target` (`settle`: how a contradiction is settled). A person's note is
    written only once the person confirms the diff: `yes` (`resolve --yes`), or
    `confirm(preview)` saying so (the terminal asks); without `confirm` (no one to ask) it is
    refused, unchanged."""
    if yes:
        return desk.patch(rel, target, confirmed=True, settle=settle)
    preview = desk.preview(rel, target, settle)
    if not preview.persons:  # the curator's note: no confirmation needed
        return desk.patch(rel, target, settle=settle)
    if confirm is None:
        raise CuratorError(f"{preview.target}: {PERSONS_NOTE}")
    if not confirm(preview):
        raise Declined(f"{preview.target}: left as it was")
    return desk.patch(rel, preview.target, confirmed=True, seen=preview.seen, settle=settle)


def resolve(
    desk: Desk,
    rel: str,
    surface: str | None = None,
    patch_into: str | None = None,
    drop_reason: str | None = None,
    confirm: Callable[[Preview], bool] | None = None,
    yes: bool = False,
    settle: merge.Settle | None = None,
) -> Done:
    """`resolve`: one item decided without the queue: patched into `patch_into` (a person's
    note only once confirmed: `patch_confirmed`), dropped for `drop_reason`, else promoted
    (as `surface`, or as its own)."""
    if patch_into is not None:
        return patch_confirmed(desk, rel, patch_into, confirm, yes, settle)
    if drop_reason is not None:
        return desk.drop(rel, drop_reason)
    return desk.promote(rel, surface)


def evaluate(desk: Desk, querier: Querier, candidate: cand.Candidate, for_note: bool = False) -> View:
    """What the screen shows of one item: the verdict it would get now, its neighbours, what a
    patch into the note with its key would change, and that note's values beside its own.
    `for_note`: what the review note reads of it, no more (no neighbours asked when a note has
    the item's key: it offers that note or nothing; no patch diff: its offers merge themselves)."""
    facts = gather_facts(candidate, querier, desk.rules.settings)
    decision = decide(candidate, desk.rules, facts)
    try:
        asked = not for_note or facts.existing is None
        neighbours = tuple(querier.neighbours(candidate, desk.rules.settings.neighbours)) if asked else ()
    except CuratorError:
        neighbours = ()
    existing = facts.existing
    fallback = _default_target(desk, None, neighbours)
    if existing is None:
        return View(decision, neighbours, None, None, default_target=fallback, own=own_note(None, facts.subjects))
    person = not existing.curator_owned  # shown as the person would write it: their note stays theirs
    diff = None if for_note else _patch_diff(desk, existing, candidate, person)
    side = side_by_side(existing, candidate)
    default = _default_target(desk, existing, neighbours)
    return View(decision, neighbours, existing.path, diff, person, side, default, own_note(existing, ()))


def _patch_diff(desk: Desk, existing: ExistingNote, candidate: cand.Candidate, person: bool) -> str | None:
    merged = merge.merge(existing.text, candidate, desk.clock.now(), person=person)
    return merge.note_diff(existing.path, existing.text, merged.text) if merged.changed else None


def side_by_side(existing: ExistingNote, candidate: cand.Candidate) -> Side | None:
    """The note's value group beside the item's; None when neither has a value."""
    note_fm, mine = existing.note.frontmatter, candidate.frontmatter
    if blank(note_fm.get("value")) and blank(mine.get("value")):
        return None
    rows = tuple((key, _shown(note_fm, key), _shown(mine, key)) for key in SIDE_KEYS)
    old, new = note_fm.get("value"), mine.get("value")
    differs = not blank(old) and not blank(new) and norm_text(old) != norm_text(new)
    return Side(existing.path, tuple(r for r in rows if r[1] or r[2]), differs)


def _shown(frontmatter: Mapping[str, Any], key: str) -> str:
    if key == "sources":
        return ", ".join(sources_of(frontmatter))
    value = plain(frontmatter.get(key))
    return "" if value is None else str(value)


def _default_target(desk: Desk, existing: ExistingNote | None, neighbours: tuple[Neighbour, ...]) -> str | None:
    """The note `m` offers: the note with the item's key, else the nearest neighbour, whichever
    is the curator's. A person's note or the rules file is never offered (the person may still
    type one, and then confirms its diff)."""
    if existing is not None and existing.curator_owned:
        return existing.path
    for near in neighbours:
        if never_owned(near.path):
            continue
        try:
            text = near.text or read_whole(safe_join(desk.root, near.path)).decode("utf-8", "replace")
        except (OSError, CuratorError):
            continue
        if curator_owned(near.path, parse(text).frontmatter, desk.rules):
            return near.path
    return None
