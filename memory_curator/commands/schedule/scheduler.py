"""The usual parts of a scheduler (`registry.Scheduler`), for its module to inherit: its plan
applied as files and commands with rollback (`files`), no notes, no `watch` unit, and the
generic words `doctor` uses. A scheduler's module writes what is its own, then registers one
instance (`registry.register`)."""

from __future__ import annotations

from pathlib import Path

from memory_curator.commands.context import Machine
from memory_curator.commands.schedule.files import install_files, uninstall_files
from memory_curator.commands.schedule.job import Applied, Installed, Job, JobPlan, Loaded


class Backend:
    """Everything but `name`, `program`, `flag_help`, `rank`, `preference`, `works`, the two
    plans, `find` and `ask`, which each scheduler says itself."""

    name: str
    program: str
    flag_help: str
    rank: int = 100
    on_change = False

    def plan_notes(self, job: Job, machine: Machine) -> tuple[str, ...]:
        return ()

    def watch_unit(self, job: Job, machine: Machine) -> tuple[Path, str, str] | None:
        return None

    def install(self, plan: JobPlan) -> Applied:
        return install_files(plan)

    def uninstall(self, plan: JobPlan) -> Applied:
        return uninstall_files(plan)

    def doctor_unasked(self, said: Loaded) -> str:
        return f"cannot ask {self.program} whether the job is loaded ({said.error})"

    def doctor_load(self, job: Installed, said: Loaded) -> str:
        return f"load {said.name} with {self.program}"

    def doctor_state(self, said: Loaded) -> str:
        return f", {said.state}"

    def doctor_not_run(self, job: Installed, uid: int) -> str:
        return f"ask {self.program} why it did not run {job.where}"

    def doctor_vault(self, vault: Path, python: str, machine: Machine) -> tuple[tuple[str, str], ...]:
        return ()

    def doctor_failure(self, summary: str, vault: Path, python: str, machine: Machine) -> str | None:
        return None
