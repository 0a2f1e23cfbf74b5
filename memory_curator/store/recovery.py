"""Recovery: finish what a crash or an I/O error left half-done, at the start of every run that
takes the lock (a sweep, and each of a person's commands).

One rule for every plan (`core.plan`), whatever made it: a plan none of whose writes took
effect is closed as not done (its candidate is swept again, its action was refused); a plan
with a write in place is finished forward, step by step, with the bytes from the record's
hashes (the state directory's store keeps what a second write needs). A file a person changed
since is never touched: a sweep's plan is left, and said so (the inbox file an agent rewrote
is a new candidate); a person's `undo` or `restore` is taken back (the file it was moving
content out of still holds it), as if it had been refused, unless that file shows the move took
effect (`_moved_out`). Our stray temp files in the folders a
plan touched are removed. An I/O error here leaves the checkpoint before that plan, so the
next run tries again.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast, get_args

from memory_curator.core.notes import as_list, parse
from memory_curator.core.plan import WRITES, Op, Step, legacy_steps
from memory_curator.store import stores
from memory_curator.store.executor import Executor
from memory_curator.store.journal import Journal, open_actions
from memory_curator.store.paths import READ_LIMIT, read_capped, relpath, safe_join
from memory_curator.store.records import EndRecord, Record, StepRecord
from memory_curator.store.writer import Conflict, Files, _family

DONE, TODO = "done", "todo"  # a step's state; anything else is why it cannot go on
TAKEN_BACK = ("undo", "restore")  # moves a person asked for: taken back when they cannot finish
OPS: tuple[Op, ...] = get_args(Op)
NO_EFFECT, TAKEN_BACK_NOTE = "no effect", "taken back"  # an end record's `closed`: the plan left the vault as it was


@dataclass
class Recovery:
    """What recovery repaired: one line per repair, and the items held for review (so a run
    killed before saving its ledger does not flag them again)."""

    notes: list[str] = field(default_factory=list)
    reviewed: dict[str, str] = field(default_factory=dict)


def recover(root: Path, state: Path, journal: Journal, files: Files) -> Recovery:
    """Finish forward every plan the journal shows open; run under the lock."""
    entries = list(journal.entries(journal.checkpoint()))
    out = Recovery(reviewed=_held(root, entries, files))
    executor = Executor(root, state, journal, files)
    retry_from: int | None = None
    for offset, record in open_actions(entries):
        try:
            notes, closed = _finish(root, executor, record)
        except OSError as exc:
            out.notes.append(f"could not finish {record.get('inbox')}: {exc.strerror or exc}; will retry")
            retry_from = offset if retry_from is None else min(retry_from, offset)
            continue
        out.notes += notes
        end: EndRecord = {
            "event": "end",
            "run": record.get("run"),
            "seq": record.get("seq"),
            "ok": True,
            "recovered": True,
        }
        if closed:
            end["closed"] = closed
        with contextlib.suppress(OSError):
            journal.append(end)
    out.reviewed.update(executor.held)
    with contextlib.suppress(OSError):
        _save_holds(root, state, out.reviewed, files)
        for temp in _state_temps(state, files):
            files.unlink_quietly(temp)
        journal.set_checkpoint(journal.size() if retry_from is None else retry_from)
    return out


def _save_holds(root: Path, state: Path, held: dict[str, str], files: Files) -> None:
    """Holds the journal shows but the ledger lacks (a run died before saving it) are saved now:
    the checkpoint moves past their records."""
    ledger = stores.load_ledger(state)
    missing = {k: v for k, v in held.items() if ledger.get(k) != v}
    if missing:
        stores.hold_for_review(root, state, missing, files)


def _state_temps(state: Path, files: Files) -> Iterator[Path]:
    """Our temp files in the state directory and its folders (the store, …)."""
    yield from files.stray_temps(state)
    for entry in list(os.scandir(state)):
        if entry.is_dir(follow_symlinks=False):
            yield from files.stray_temps(Path(entry.path))


def steps_of(record: Record) -> list[StepRecord]:
    """A begin record's steps; an older version's begin record, without them: `legacy_steps`."""
    steps = record.get("steps")
    if isinstance(steps, list):
        return [s for s in steps if isinstance(s, dict)]
    return [cast(StepRecord, step) for step in legacy_steps(record)]


def _finish(root: Path, executor: Executor, record: Record) -> tuple[list[str], str | None]:
    """What recovery did to one open plan, and how it closed one that left no effect on the vault
    (`NO_EFFECT`, `TAKEN_BACK_NOTE`; None when it finished or left it): the end record says so, and
    `log` and `undo` never take such a plan for one that wrote something."""
    notes = _sweep_temps(root, executor.files, steps_of(record))
    steps = [s for s in steps_of(record) if _path(root, s.get("path")) is not None or s.get("op") == "keep"]
    what = f"{record.get('verdict')} of {record.get('inbox') or record.get('dest')}"
    if not any(_state(root, executor.files, s) == DONE for s in steps if s.get("op") in WRITES):
        return notes, NO_EFFECT  # nothing took effect: closed as not done
    landed = str(record.get("dest"))
    for number, step in enumerate(steps):
        state = _state(root, executor.files, step)
        if state == TODO:
            state = _redo(executor, step)
        if state not in (DONE, TODO) and record.get("verdict") in TAKEN_BACK:
            if _moved_out(root, step, steps[:number]):
                continue  # done before the crash, edited by a person after: the copy we made is the content
            _take_back(executor, steps[:number])
            return [*notes, f"took back the unfinished {what}: {state}"], TAKEN_BACK_NOTE
        if state not in (DONE, TODO):
            return [*notes, f"left {what} half-done: {state}; check both files"], None
        if step.get("op") in WRITES:
            landed = _durable(root, executor.files, step)
        if step.get("op") == "hold":
            executor.held[str(step["path"])] = str(step.get("expected"))
    return [*notes, f"finished {what} -> {landed}"], None


def _moved_out(root: Path, step: StepRecord, done: list[StepRecord]) -> bool:
    """Whether the changed note of an undo's `replace` no longer records the candidate the undo put
    back: the replace took effect before the crash and a person typed into the note since. Taking
    the undo back would then remove the only copy of the candidate (the stateful test found it)."""
    path = _path(root, step.get("path"))
    created = [str(s.get("hash")) for s in done if s.get("op") in ("create", "create_unique") and s.get("hash")]
    if step.get("op") != "replace" or path is None or not created or not os.path.lexists(path):
        return False
    return not any(_records(path, proof) for proof in created)


def _take_back(executor: Executor, done: list[StepRecord]) -> None:
    """Undo the writes of a person's `undo` or `restore` that cannot finish because the file it
    was moving content out of changed since: that file still holds the content (and the
    change), so the copy we wrote goes, only while it holds exactly our bytes."""
    for step in reversed(done):
        path = _path(executor.root, step.get("path"))
        if path is None or executor.files.file_hash(path) != step.get("hash"):
            continue
        if step.get("op") == "create":
            executor.files.remove(path, str(step["hash"]))
        elif step.get("op") == "replace":
            before = stores.preimage(executor.state, str(step.get("expected")))
            if before is not None:
                executor.files.replace(path, before, str(step["hash"]))


def _sweep_temps(root: Path, files: Files, steps: list[StepRecord]) -> list[str]:
    return remove_temps(root, files, {p.parent for p in (_path(root, s.get("path")) for s in steps) if p is not None})


def remove_temps(root: Path, files: Files, folders: Iterable[Path]) -> list[str]:
    """Remove our temp files in these folders (a write a crash or a failed unlink left; only under
    the sweep lock, when no write is under way), saying each one."""
    notes = []
    for folder in sorted(folders):
        for temp in files.stray_temps(folder):
            files.unlink_quietly(temp)
            notes.append(f"removed stray temp file {relpath(root, temp)}")
    return notes


def _state(root: Path, files: Files, step: StepRecord) -> str:
    """done, todo, or why the step can neither be taken as done nor done now."""
    op, path = step.get("op"), _path(root, step.get("path"))
    if op in ("keep", "hold") or path is None:
        return DONE
    if op == "create_unique":
        return DONE if _found(files, path, step) is not None else TODO
    current = files.file_hash(path)
    if op == "remove":
        if current is None:
            return DONE
        return TODO if current == step.get("expected") else f"{step['path']} changed since"
    if current is not None and (current == step.get("hash") or _records(path, step.get("proof"))):
        return DONE
    if op == "create":
        return TODO if current is None and not os.path.lexists(path) else f"{step['path']} holds other bytes"
    if current is None:
        return f"{step['path']} is gone"
    return TODO if current == step.get("expected") else f"{step['path']} changed since"


def _redo(executor: Executor, step: StepRecord) -> str:
    """A step a crash left undone, done now: a write with the stored bytes of its hash. A step
    whose operation this version does not know is never guessed at (it was taken for a remove)."""
    op = next((known for known in OPS if known == step.get("op")), None)
    if op is None:
        return f"{step.get('path')}: unknown step {step.get('op')!r}"
    data = None
    if op in WRITES:
        data = stores.preimage(executor.state, str(step.get("hash")))
        if data is None:
            return f"the bytes for {step['path']} were not kept"
    try:
        prune = step.get("prune")  # folders; an older journal's `true` names none: left as they are
        folders = tuple(str(f) for f in prune) if isinstance(prune, list) else ()
        executor.apply(Step(op, str(step["path"]), data, step.get("expected"), prune=folders))
    except (Conflict, FileExistsError) as exc:
        return f"{step['path']} changed meanwhile ({exc})"
    return DONE


def _durable(root: Path, files: Files, step: StepRecord) -> str:
    """A written file is made durable before any later remove: fsync it and its folder."""
    path = _path(root, step.get("path"))
    assert path is not None
    if step.get("op") == "create_unique":
        path = _found(files, path, step) or path
    if os.path.lexists(path):
        files.fsync_file(path)
        files.fsync_dir(path.parent)
    return relpath(root, path)


def _found(files: Files, path: Path, step: StepRecord) -> Path | None:
    """Where a create_unique landed: the first of the family holding exactly its bytes."""
    for candidate in _family(path):
        if not os.path.lexists(candidate):
            return None
        if files.file_hash(candidate) == step.get("hash"):
            return candidate
    return None


def _records(note: Path, proof: object) -> bool:
    """The note a person edited since we wrote it still records this candidate (`curated_from`)."""
    if not isinstance(proof, str) or not proof:
        return False
    try:
        raw = read_capped(note, READ_LIMIT)
    except OSError:  # gone, or not a regular file: not the note we wrote
        return False
    if raw is None:
        return False
    frontmatter = parse(raw).frontmatter
    wanted = proof.removeprefix("sha256:")
    return any(isinstance(e, dict) and e.get("sha256") == wanted for e in as_list(frontmatter.get("curated_from")))


def _held(root: Path, entries: Iterable[tuple[int, Record]], files: Files) -> dict[str, str]:
    """Items recent plans held for review that still hold exactly that text."""
    out: dict[str, str] = {}
    for _, record in entries:
        if record.get("event") != "begin":
            continue
        for step in steps_of(record):
            path, expected = _path(root, step.get("path")), step.get("expected")
            if step.get("op") == "hold" and path is not None and expected and files.file_hash(path) == expected:
                out[str(step["path"])] = str(expected)
    return out


def _path(root: Path, rel: object) -> Path | None:
    if not isinstance(rel, str) or not rel:
        return None
    try:
        return safe_join(root, rel)
    except Exception:
        return None
