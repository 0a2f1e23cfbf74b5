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

import os
from dataclasses import dataclass
from pathlib import Path

from memory_curator.commands.context import Context
from memory_curator.commands.desk import locked
from memory_curator.commands.log import Entry, entries
from memory_curator.commands.planning import new_run_id, undo_plan, undo_steps
from memory_curator.core.errors import CuratorError
from memory_curator.core.json_types import JsonObject
from memory_curator.core.plan import Step
from memory_curator.store import stores, writer
from memory_curator.store.executor import Executor
from memory_curator.store.paths import READ_LIMIT, read_capped, safe_join
from memory_curator.store.records import Record
from memory_curator.store.writer import Files

UNDOABLE = ("promote", "patch", "drop", "needs_review", "restore")


@dataclass(frozen=True)
class Outcome:
    verdict: str
    inbox_path: str | None
    path: str | None
    left: str | None = None  # why it was left alone; None when undone

    def to_json(self) -> JsonObject:
        out: JsonObject = {"verdict": self.verdict, "inbox_path": self.inbox_path, "path": self.path}
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

    def to_json(self) -> JsonObject:
        return {
            "run_id": self.run_id,
            "undo_run": self.undo_run,
            "undone": [o.to_json() for o in self.undone],
            "left": [o.to_json() for o in self.left],
        }


def undo(ctx: Context, run_id: str | None, wait: bool = False) -> UndoResult:
    """Undo `run_id`, or (None) the latest run not yet undone."""
    now = ctx.clock.now()
    with locked(ctx, wait) as executor:
        records = list(executor.journal.records())
        log = entries(records)
        target = run_id or last_run(log, records)
        if target is None:
            raise CuratorError("nothing to undo: no run in the journal changed the vault")
        actions = _actions(log, target)
        own = new_run_id(now)
        outcomes = [_undo_one(ctx, executor, entry, own, seq) for seq, entry in enumerate(actions, start=1)]
        if executor.held:
            stores.hold_for_review(ctx.root, ctx.state, executor.held, ctx.files)
        executor.journal.append(
            {"event": "undo", "run": own, "undoes": target, "undone": sum(1 for o in outcomes if not o.left)}
        )
    return UndoResult(target, own, tuple(outcomes))


def last_run(log: list[Entry], records: list[Record]) -> str | None:
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


def _undo_one(ctx: Context, executor: Executor, entry: Entry, own: str, seq: int) -> Outcome:
    steps = undo_steps(entry, lambda digest: stores.preimage(ctx.state, digest), lambda rel: _read(ctx.root, rel))
    if isinstance(steps, str):
        return Outcome(entry.verdict, entry.inbox, entry.dest, steps)
    try:
        why = next((w for w in (_blocked(ctx.root, ctx.files, s) for s in steps) if w), None)
    except CuratorError as exc:  # a journal path that is no longer safe to follow
        why = str(exc)
    if why:
        return Outcome(entry.verdict, entry.inbox, entry.dest, why)
    try:
        executor.execute(undo_plan(own, seq, entry, steps, ctx.user))
    except writer.Conflict as exc:
        return Outcome(entry.verdict, entry.inbox, entry.dest, f"changed while undoing ({exc})")
    except FileExistsError as exc:
        return Outcome(entry.verdict, entry.inbox, entry.dest, f"{exc.filename} appeared while undoing")
    except OSError as exc:  # the returning file is written first: the next run finishes the rest
        return Outcome(entry.verdict, entry.inbox, entry.dest, f"write failed ({exc.strerror or exc}); check both")
    return Outcome(entry.verdict, entry.inbox, entry.dest)


def _blocked(root: Path, files: Files, step: Step) -> str | None:
    if step.op in ("keep", "hold"):
        return None
    path = safe_join(root, step.path)
    if step.op == "create":
        return f"{step.path} exists now (not overwritten)" if os.path.lexists(path) else None
    current = files.file_hash(path)
    if current is None:
        return f"{step.path} is gone"
    return None if current == step.expected else f"{step.path} changed since (left as it is)"


def _read(root: Path, rel: str) -> bytes | None:
    try:
        return read_capped(safe_join(root, rel), READ_LIMIT)
    except (OSError, CuratorError):
        return None
