"""What one scheduler is to the rest of the package (`launchd`, `systemd`, `cron` each give one)."""

from __future__ import annotations

from typing import Protocol

from memory_curator.commands.context import Machine
from memory_curator.commands.schedule.job import Installed, Job, JobPlan, Loaded


class Scheduler(Protocol):
    """Whether it works here, what an install or an uninstall writes and runs (as a plan), how it
    reads back this vault's job, and how it is asked whether that job is loaded."""

    @property
    def name(self) -> str: ...  # as the flags, the plans and the JSON name it: "launchd"

    @property
    def program(self) -> str: ...  # the program it is told through: "launchctl"

    def works(self, machine: Machine) -> str | None:
        """Why it does not work on `machine`, or None when it does. Asks, changes nothing."""
        ...

    def install_plan(self, job: Job, machine: Machine) -> JobPlan: ...

    def uninstall_plan(self, job_id: str, machine: Machine) -> JobPlan: ...

    def find(self, job_id: str, machine: Machine) -> Installed | None:
        """This vault's job as it is installed (its files, its crontab line); None: not there."""
        ...

    def ask(self, job: Installed, machine: Machine) -> Loaded:
        """What the scheduler itself says of the job: files alone schedule nothing."""
        ...
