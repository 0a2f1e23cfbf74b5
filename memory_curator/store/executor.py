"""The one executor: journal a plan, apply its steps through the writer, close it.

Every change to the vault — a sweep's verdict, a person's `resolve` or `review` action,
`restore`, `undo` — is a `core.plan.Plan` applied here, so recovery (`store.recovery`) has one
kind of record to finish. The begin record is fsynced before the first step; a step that
fails closes the plan as failed and re-raises, and recovery finishes it forward.

A sweep's plans go through `execute_batch` (group commit, as a database commits a group): the
batch's begin records in one fsync; every plan's writes, in order; each written file fsynced,
then each touched folder once; only then the removes, their folders fsynced once; then the end
records in one fsync. Writes still come before removes, so recovery is the same.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path

from memory_curator.core.notes import content_hash
from memory_curator.core.plan import Plan, Step
from memory_curator.store import records, stores
from memory_curator.store.journal import Journal
from memory_curator.store.paths import relpath, safe_join
from memory_curator.store.records import EndRecord
from memory_curator.store.writer import Files, Group

_PACK = -1  # the owner of a batch's pack in its group: its failure fails every plan that kept a copy
Outcome = dict[str, str] | Exception  # a plan's `placed` (see `Executor.execute`), or why it failed

DOING = {  # a step's operation, as an error says what failed
    "keep": "keeping a copy in",
    "hold": "holding it for review in",
    "create": "writing",
    "create_unique": "writing",
    "replace": "rewriting",
    "remove": "removing",
}


@dataclass
class Executor:
    """Applies plans for one run; `held` gathers the items its plans hold for review (the
    caller saves them to the ledger once, so a sweep flagging many items writes it once)."""

    root: Path
    state: Path
    journal: Journal
    files: Files
    held: dict[str, str] = field(default_factory=dict)

    def execute(self, plan: Plan) -> dict[str, str]:
        """Apply `plan`; returns where each `create_unique` landed (planned path -> path used)."""
        self.journal.append(records.begin(plan))
        placed: dict[str, str] = {}
        made: list[str] = []
        try:
            for step in plan.steps:
                self._step(step, placed, made)
        except BaseException as exc:
            self._end(plan, ok=False, error=str(exc), made=made)
            raise
        self._end(plan, ok=True, dest=placed.get(plan.dest or ""), made=made)
        return placed

    def execute_batch(self, plans: list[Plan]) -> list[Outcome]:
        """Apply `plans` as one group commit; each plan's outcome, in order. A plan whose step
        fails (a compare-and-swap, an I/O error) fails alone: the others complete. A later plan
        may rewrite a file an earlier one wrote: steps are applied in order, so its
        compare-and-swap finds the earlier plan's bytes."""
        try:
            self.journal.append_all([records.begin(plan) for plan in plans])
        except OSError as exc:  # nothing announced, nothing done
            return [exc for _ in plans]
        run = _Batch(plans)
        try:
            self._pack(run)
            self._phase(run, Group(), first=True)
            self._phase(run, Group(), first=False)
        except BaseException as exc:
            self._end_all(run, exc)
            raise
        self._end_all(run)
        return [run.failed.get(n, run.placed[n]) for n in range(len(plans))]

    def _phase(self, run: _Batch, group: Group, first: bool) -> None:
        """The writes of every plan (`first`), or the rest (the removes); then one commit."""
        for number, plan in enumerate(run.plans):
            group.owner = number
            steps = plan.steps[: _writes_end(plan)] if first else plan.steps[_writes_end(plan) :]
            try:
                for step in steps if number not in run.failed else ():
                    if step.op == "keep":
                        self._keep(step)
                    else:
                        self._step(step, run.placed[number], run.made[number], group)
            except Exception as exc:
                run.failed[number] = exc
        for number, error in self.files.commit(group).items():
            run.failed.setdefault(number, error)

    def _step(self, step: Step, placed: dict[str, str], made: list[str], group: Group | None = None) -> None:
        """One step of a plan, noting the folders it made and where a `create_unique` landed."""
        made += self._folders_for(step, group)
        landed = self.apply(step, group)
        if landed is not None:
            placed[step.path] = landed

    def _keep(self, step: Step) -> None:
        """A kept copy into the store's own file, not fsynced: a convenience (`_pack` made the
        durable copy)."""
        self.apply(step, Group())  # a group never committed: no fsync

    def _pack(self, run: _Batch) -> None:
        """The batch's kept copies in one pack, durable (its file and folder fsynced) before any
        write that needs them: a note is never rewritten before the copy `undo` puts back is on
        disk. A pack that cannot be made durable fails every plan that keeps a copy, unwritten."""
        kept = {content_hash(data): data for plan in run.plans for data in plan.kept()}
        if not kept:
            return
        group = Group()
        group.owner = _PACK
        name = f"{run.plans[0].run}-{run.plans[0].seq}.pack"
        try:
            self.files.create_unique(self.state / stores.PACKS / name, stores.pack(kept), group)
            error: OSError | None = next(iter(self.files.commit(group).values()), None)
        except OSError as exc:
            error = exc
        if error is not None:
            error.add_note(f"{DOING['keep']} the state folder {self.state}")
            run.failed.update(dict.fromkeys(run.keepers(), error))

    def _end_all(self, run: _Batch, interrupted: BaseException | None = None) -> None:
        """The batch's end records, in one append (a lost one costs nothing: see `_end`)."""
        ends = []
        for number, plan in enumerate(run.plans):
            error = interrupted if interrupted is not None else run.failed.get(number)
            dest = run.placed[number].get(plan.dest or "")
            ends.append(_end_record(plan, error is None, str(error) if error else None, dest, run.made[number]))
        with contextlib.suppress(OSError):
            self.journal.append_all(ends)

    def _folders_for(self, step: Step, group: Group | None = None) -> list[str]:
        """The folders a create needs and this plan makes (the end record names them for undo)."""
        if step.op not in ("create", "create_unique"):
            return []
        folder = safe_join(self.root, step.path).parent
        return [relpath(self.root, made) for made in self.files.make_folders(folder, group)]

    def apply(self, step: Step, group: Group | None = None) -> str | None:
        """One step; recovery uses it too, for the steps a crash left undone. An I/O error says
        which operation on which file failed (a note on it: `core.text.describe` reads it).
        With a `group`, its fsyncs are left to the group's commit."""
        try:
            return self._apply(step, group)
        except OSError as exc:
            where = f"the state folder {self.state}" if step.op in ("keep", "hold") else step.path
            exc.add_note(f"{DOING.get(step.op, step.op)} {where}")
            raise

    def _apply(self, step: Step, group: Group | None) -> str | None:
        if step.op == "keep":
            assert step.data is not None
            stores.save_preimage(self.state, step.data, self.files, group)
            return None
        if step.op == "hold":
            assert step.expected is not None
            self.held[step.path] = step.expected
            return None
        path = safe_join(self.root, step.path)
        if step.op == "create":
            assert step.data is not None
            self.files.create(path, step.data, group)
        elif step.op == "create_unique":
            assert step.data is not None
            return relpath(self.root, self.files.create_unique(path, step.data, group))
        elif step.op == "replace":
            assert step.data is not None
            self.files.replace(path, step.data, step.expected, group)
        else:
            assert step.expected is not None
            self.files.remove(path, step.expected, group)
            for folder in step.prune:  # deepest first: stop at the first one still holding something
                if not self.files.prune(safe_join(self.root, folder)):
                    break
        return None

    def _end(
        self, plan: Plan, ok: bool, error: str | None = None, dest: str | None = None, made: list[str] | None = None
    ) -> None:
        """A lost end record costs nothing: recovery finds the plan open and checks the files
        (an undo then leaves the folders the plan made, since none is named)."""
        with contextlib.suppress(OSError):
            self.journal.append(_end_record(plan, ok, error, dest, made))


@dataclass
class _Batch:
    """A batch's plans and, per plan (by its place), what became of it so far."""

    plans: list[Plan]
    failed: dict[int, Exception] = field(default_factory=dict)
    placed: list[dict[str, str]] = field(init=False)
    made: list[list[str]] = field(init=False)

    def __post_init__(self) -> None:
        self.placed = [{} for _ in self.plans]
        self.made = [[] for _ in self.plans]

    def keepers(self) -> list[int]:
        """The plans that keep a copy (their fate is the pack's)."""
        return [n for n, plan in enumerate(self.plans) if plan.kept()]


def _writes_end(plan: Plan) -> int:
    """Where a plan's second phase begins: its first remove, or its hold for review (held only
    once its writes are durable); every step before is a write or a keep."""
    return next((n for n, step in enumerate(plan.steps) if step.op in ("remove", "hold")), len(plan.steps))


def _end_record(plan: Plan, ok: bool, error: str | None, dest: str | None, made: list[str] | None) -> EndRecord:
    record: EndRecord = {"event": "end", "run": plan.run, "seq": plan.seq, "ok": ok}
    if error:
        record["error"] = error
    if dest:
        record["dest"] = dest
    if made:
        record["made"] = made
    return record
