"""`undo`: take back one run (a sweep, or a person's resolve/restore) from its journal.

A promoted or patched candidate goes back to the inbox with its original bytes, a patched
note gets its pre-image back, a dropped one leaves `.dropped/`, a needs-review rewrite is
reverted — but only where the vault still holds exactly what that run wrote (the journal's
`after_hash`). Anything changed since is left alone and listed. The bytes come from the
content-addressed store in the state directory (`<state>/preimages/<sha256 hex>`).

Candidates put back in the inbox are held for review, so the next sweep does not simply
redo what a person just took back; they show up in `review`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory_curator.commands import sweep
from memory_curator.commands.desk import journalled, locked, person
from memory_curator.commands.log import Entry, entries
from memory_curator.core import compose
from memory_curator.core.clock import Clock, SystemClock
from memory_curator.core.errors import CuratorError
from memory_curator.core.names import DROPPED, INBOX
from memory_curator.core.notes import content_hash
from memory_curator.store import journal as journal_mod
from memory_curator.store import stores, writer
from memory_curator.store.paths import safe_join
from memory_curator.store.state import state_dir

UNDOABLE = ("promote", "patch", "drop", "needs_review", "restore")
BACK_IN_INBOX = ("promote", "patch", "drop")  # held for review once undone


@dataclass(frozen=True)
class Step:
    """One file operation of an undo; creates come first, so nothing is ever only in the store."""

    op: str  # create / replace / remove
    rel: str
    data: bytes | None = None
    expected: str | None = None  # the hash the file must still hold


@dataclass(frozen=True)
class Outcome:
    verdict: str
    inbox_path: str | None
    path: str | None
    left: str | None = None  # why it was left alone; None when undone

    def to_json(self) -> dict[str, Any]:
        out = {"verdict": self.verdict, "inbox_path": self.inbox_path, "path": self.path}
        return {**out, "reason": self.left} if self.left else out


@dataclass(frozen=True)
class UndoResult:
    run_id: str  # the run taken back
    undo_run: str  # the undo's own run id in the journal
    outcomes: tuple[Outcome, ...]

    @property
    def undone(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.left is None]

    @property
    def left(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.left is not None]

    def to_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "undo_run": self.undo_run,
            "undone": [o.to_json() for o in self.undone],
            "left": [o.to_json() for o in self.left],
        }


def undo(
    root: Path,
    run_id: str | None,
    explicit_state: str | None = None,
    user: str | None = None,
    wait: bool = False,
    clock: Clock = SystemClock(),
) -> UndoResult:
    """Undo `run_id`, or (None) the latest run not yet undone."""
    state = state_dir(root, explicit_state)
    now = clock.now()
    with locked(root, state, clock, wait) as journal:
        records = list(journal.records())
        log = entries(records)
        target = run_id or last_run(log, records)
        if target is None:
            raise CuratorError("nothing to undo: no run in the journal changed the vault")
        actions = _actions(log, target)
        own = sweep.new_run_id(now)
        who = person(user)
        outcomes = []
        for seq, entry in enumerate(actions, start=1):
            outcomes.append(_undo_one(root, state, journal, entry, own, seq, who))
        held = {o.inbox_path: h for o, h in _held(root, outcomes) if o.inbox_path}
        if held:
            stores.hold_for_review(root, state, held)
        journal.append(
            {"event": "undo", "run": own, "undoes": target, "undone": sum(1 for o in outcomes if not o.left)}
        )
    return UndoResult(target, own, tuple(outcomes))


def last_run(log: list[Entry], records: list[dict[str, Any]]) -> str | None:
    """The most recent run with an action an undo can take back, not undone already."""
    tried = {str(r.get("undoes")) for r in records if r.get("event") == "undo"}
    undo_runs = {e.run for e in log if e.verdict == "undo"}
    for entry in reversed(log):
        if entry.run in tried or entry.run in undo_runs:
            continue
        if _undoable(entry):
            return entry.run
    return None


def _undoable(entry: Entry) -> bool:
    return entry.verdict in UNDOABLE and entry.status in ("done", "recovered") and entry.undone_by is None


def _actions(log: list[Entry], run_id: str) -> list[Entry]:
    mine = [e for e in log if e.run == run_id]
    if not mine:
        raise CuratorError(f"no run {run_id!r} in the journal (see `memory-curator log`)")
    if any(e.verdict == "undo" for e in mine):
        raise CuratorError(f"{run_id} is itself an undo; it cannot be undone")
    return sorted((e for e in mine if _undoable(e)), key=lambda e: e.seq, reverse=True)


def _undo_one(
    root: Path, state: Path, journal: journal_mod.Journal, entry: Entry, own: str, seq: int, who: str
) -> Outcome:
    steps = plan(entry, lambda digest: preimage(state, digest), lambda rel: _read(root, rel))
    if isinstance(steps, str):
        return Outcome(entry.verdict, entry.inbox, entry.dest, steps)
    try:
        why = next((w for w in (_blocked(root, s) for s in steps) if w), None)
    except CuratorError as exc:  # a journal path that is no longer safe to follow
        why = str(exc)
    if why:
        return Outcome(entry.verdict, entry.inbox, entry.dest, why)
    record = {
        "run": own,
        "seq": seq,
        "verdict": "undo",
        "undoes": [entry.run, entry.seq],
        "inbox": entry.inbox,
        "dest": entry.dest,
        "reason": f"undo of {entry.verdict} (by {who})",
        "steps": [{"op": s.op, "path": s.rel, "hash": content_hash(s.data) if s.data else None} for s in steps],
    }
    try:
        journalled(journal, record, lambda: [_apply(root, s) for s in steps])
    except writer.Conflict as exc:
        return Outcome(entry.verdict, entry.inbox, entry.dest, f"changed while undoing ({exc})")
    except FileExistsError as exc:
        return Outcome(entry.verdict, entry.inbox, entry.dest, f"{exc.filename} appeared while undoing")
    except OSError as exc:  # the returning file is written first: at worst both files exist now
        return Outcome(entry.verdict, entry.inbox, entry.dest, f"write failed ({exc.strerror or exc}); check both")
    return Outcome(entry.verdict, entry.inbox, entry.dest)


def plan(entry: Entry, load: Callable[[str], bytes | None], read: Callable[[str], bytes | None]) -> list[Step] | str:
    """The file operations that take `entry` back, or why they cannot. Pure, given `load`
    (bytes from the store, by hash) and `read` (a vault file's bytes, by path)."""
    rec = entry.record
    after, inbox, dest = rec.get("after_hash"), entry.inbox, entry.dest
    if not inbox or not dest or not after:
        return "the journal does not say enough to undo this"
    if entry.verdict == "restore":
        dropped = load(str(rec.get("before_hash")))
        return (
            "the dropped copy's bytes were not kept"
            if dropped is None
            else [
                Step("create", dest, dropped),
                Step("remove", inbox, expected=after),
            ]
        )
    original = load(str(rec.get("inbox_hash")))
    if original is None and entry.verdict == "drop":
        original = from_dropped(read(dest), str(rec.get("inbox_hash")))
    if original is None:
        return "the candidate's original bytes were not kept"
    if entry.verdict == "needs_review":
        return [Step("replace", inbox, original, expected=after)]
    if entry.verdict == "patch":
        before = load(str(rec.get("before_hash")))
        if before is None:
            return "the note's pre-image was not kept"
        return [Step("create", inbox, original), Step("replace", dest, before, expected=after)]
    return [Step("create", inbox, original), Step("remove", dest, expected=after)]


def from_dropped(copy: bytes | None, digest: str) -> bytes | None:
    """A drop's audit copy is the original bytes plus a blank line and the audit line: cut
    there (with or without the newline the drop may have added) and check the hash."""
    if copy is None:
        return None
    for newline in (b"\r\n", b"\n"):
        cut = copy.rfind(newline + compose.DROP_MARK.encode("utf-8"))
        if cut < 0:
            continue
        for end in (cut, cut - len(newline)):
            if end >= 0 and content_hash(copy[:end]) == digest:
                return copy[:end]
    return None


def _blocked(root: Path, step: Step) -> str | None:
    path = safe_join(root, step.rel)
    if step.op == "create":
        return f"{step.rel} exists now (not overwritten)" if os.path.lexists(path) else None
    current = writer.file_hash(path)
    if current is None:
        return f"{step.rel} is gone"
    return None if current == step.expected else f"{step.rel} changed since (left as it is)"


def _apply(root: Path, step: Step) -> None:
    path = safe_join(root, step.rel)
    if step.op == "create":
        assert step.data is not None
        writer.create(path, step.data)
    elif step.op == "replace":
        assert step.data is not None
        writer.replace(path, step.data, step.expected)
    else:
        assert step.expected is not None
        writer.remove(path, step.expected)
        _drop_empty_folder(path.parent, step.rel)


def _drop_empty_folder(folder: Path, rel: str) -> None:
    """A folder the run created for the file (`facts/<entity>/`, `.dropped/<agent>/`) goes
    too once empty; top-level folders and agent folders (an agent may write there) stay."""
    parent = rel.rsplit("/", 1)[0]
    inbox_side = parent.startswith(f"{INBOX}/") and not parent.startswith(f"{INBOX}/{DROPPED}/")
    if "/" in parent and not inbox_side:
        with contextlib.suppress(OSError):
            folder.rmdir()


def _held(root: Path, outcomes: list[Outcome]) -> list[tuple[Outcome, str]]:
    out = []
    for outcome in outcomes:
        if outcome.left is None and outcome.verdict in BACK_IN_INBOX and outcome.inbox_path:
            digest = writer.file_hash(safe_join(root, outcome.inbox_path))
            if digest:
                out.append((outcome, digest))
    return out


def _read(root: Path, rel: str) -> bytes | None:
    try:
        return safe_join(root, rel).read_bytes()
    except (OSError, CuratorError):
        return None


def preimage(state: Path, digest: str) -> bytes | None:
    """Bytes from the content-addressed store, only if they still hash to `digest`."""
    name = digest.removeprefix("sha256:")
    if not name or "/" in name or name.startswith("."):
        return None
    try:
        data = (state / "preimages" / name).read_bytes()
    except OSError:
        return None
    return data if content_hash(data) == digest else None
