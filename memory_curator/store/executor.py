"""The one executor: journal a plan, apply its steps through the writer, close it.

Every change to the vault — a sweep's verdict, a person's `resolve` or `review` action,
`restore`, `undo` — is a `core.plan.Plan` applied here, so recovery (`store.recovery`) has one
kind of record to finish. The begin record is fsynced before the first step; a step that
fails closes the plan as failed and re-raises, and recovery finishes it forward.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path

from memory_curator.core.plan import Plan, Step
from memory_curator.store import stores
from memory_curator.store.journal import Journal
from memory_curator.store.paths import relpath, safe_join
from memory_curator.store.writer import Files

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
        self.journal.append(plan.begin())
        placed: dict[str, str] = {}
        made: list[str] = []
        try:
            for step in plan.steps:
                made += self._folders_for(step)
                landed = self.apply(step)
                if landed is not None:
                    placed[step.path] = landed
        except BaseException as exc:
            self._end(plan, ok=False, error=str(exc), made=made)
            raise
        self._end(plan, ok=True, dest=placed.get(plan.dest or ""), made=made)
        return placed

    def _folders_for(self, step: Step) -> list[str]:
        """The folders a create needs and this plan makes (the end record names them for undo)."""
        if step.op not in ("create", "create_unique"):
            return []
        folder = safe_join(self.root, step.path).parent
        return [relpath(self.root, made) for made in self.files.make_folders(folder)]

    def apply(self, step: Step) -> str | None:
        """One step; recovery uses it too, for the steps a crash left undone. An I/O error says
        which operation on which file failed (a note on it: `core.text.describe` reads it)."""
        try:
            return self._apply(step)
        except OSError as exc:
            where = f"the state folder {self.state}" if step.op in ("keep", "hold") else step.path
            exc.add_note(f"{DOING.get(step.op, step.op)} {where}")
            raise

    def _apply(self, step: Step) -> str | None:
        if step.op == "keep":
            assert step.data is not None
            stores.save_preimage(self.state, step.data, self.files)
            return None
        if step.op == "hold":
            assert step.expected is not None
            self.held[step.path] = step.expected
            return None
        path = safe_join(self.root, step.path)
        if step.op == "create":
            assert step.data is not None
            self.files.create(path, step.data)
        elif step.op == "create_unique":
            assert step.data is not None
            return relpath(self.root, self.files.create_unique(path, step.data))
        elif step.op == "replace":
            assert step.data is not None
            self.files.replace(path, step.data, step.expected)
        else:
            assert step.expected is not None
            self.files.remove(path, step.expected)
            for folder in step.prune:  # deepest first: stop at the first one still holding something
                if not self.files.prune(safe_join(self.root, folder)):
                    break
        return None

    def _end(
        self, plan: Plan, ok: bool, error: str | None = None, dest: str | None = None, made: list[str] | None = None
    ) -> None:
        """A lost end record costs nothing: recovery finds the plan open and checks the files
        (an undo then leaves the folders the plan made, since none is named)."""
        record: dict[str, object] = {"event": "end", "run": plan.run, "seq": plan.seq, "ok": ok}
        if error:
            record["error"] = error
        if dest:
            record["dest"] = dest
        if made:
            record["made"] = made
        with contextlib.suppress(OSError):
            self.journal.append(record)
