"""The schedulers this package knows, each registered by its own module (`launchd`, `systemd`,
`cron`; a test may register a fake one): everything else in `commands/schedule/`, the CLI's
`--<scheduler>` flags and `doctor` iterate over this registry and name no scheduler.

A scheduler is one object meeting `Scheduler`; `scheduler.Backend` gives the usual parts (a
plan of files and commands applied with rollback, the generic doctor advice), so a module
writes only what is its own. See docs/scheduling.md, "Adding a scheduler".
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from memory_curator.commands.context import Machine
from memory_curator.commands.schedule.job import Applied, Installed, Job, JobPlan, Loaded
from memory_curator.core.errors import CuratorError


class Scheduler(Protocol):
    """Whether it works here and when `install` picks it unasked; what an install or an uninstall
    writes and runs (a plan) and how that plan is applied; how it reads back this vault's job and
    is asked whether it is loaded; what `doctor` says of it."""

    @property
    def name(self) -> str: ...  # as the flag, the plans and the JSON name it: "launchd"

    @property
    def program(self) -> str: ...  # the program it is told through: "launchctl"

    @property
    def flag_help(self) -> str: ...  # the help of its `--<name>` flag

    @property
    def rank(self) -> int: ...  # where it is listed (flags, `available`): lowest first

    @property
    def on_change(self) -> bool: ...  # whether it can also sweep when the inbox changes

    def preference(self, system: str) -> int | None:
        """Its place when `install` picks one unasked on `system` (lowest first); None: only by its flag."""
        ...

    def works(self, machine: Machine) -> str | None:
        """Why it does not work on `machine`, or None when it does. Asks, changes nothing."""
        ...

    def install_plan(self, job: Job, machine: Machine) -> JobPlan: ...

    def uninstall_plan(self, job_id: str, machine: Machine) -> JobPlan: ...

    def plan_notes(self, job: Job, machine: Machine) -> tuple[str, ...]:
        """Notes `show` and `install` add after the host's (launchd: the macOS privacy trap)."""
        ...

    def watch_unit(self, job: Job, machine: Machine) -> tuple[Path, str, str] | None:
        """A unit that keeps `watch` running (where it goes, its text, how to start it), or None."""
        ...

    def install(self, plan: JobPlan) -> Applied:
        """Carry the plan out; one that fails half-way is rolled back completely."""
        ...

    def uninstall(self, plan: JobPlan) -> Applied:
        """Remove exactly what `install` made; nothing at all when nothing is there."""
        ...

    def find(self, job_id: str, machine: Machine) -> Installed | None:
        """This vault's job as it is installed (its files, its crontab line); None: not there."""
        ...

    def ask(self, job: Installed, machine: Machine) -> Loaded:
        """What the scheduler itself says of the job: files alone schedule nothing."""
        ...

    def doctor_unasked(self, said: Loaded) -> str:
        """`doctor`'s problem when it could not be asked (`said.error`), after "<name>: "."""
        ...

    def doctor_load(self, job: Installed, said: Loaded) -> str:
        """The command that loads a job found not loaded."""
        ...

    def doctor_state(self, said: Loaded) -> str:
        """What `doctor`'s ok line adds of what it said (", enabled, active"; cron: nothing)."""
        ...

    def doctor_not_run(self, job: Installed, uid: int) -> str:
        """Where to look when its job did not run when it should have."""
        ...

    def doctor_vault(self, vault: Path, python: str, machine: Machine) -> tuple[tuple[str, str], ...]:
        """(area, warning) pairs about the vault for this scheduler (launchd: a protected folder)."""
        ...

    def doctor_failure(self, summary: str, vault: Path, python: str, machine: Machine) -> str | None:
        """The fix for a logged failure it explains (launchd: not permitted), or None."""
        ...


_REGISTERED: dict[str, Scheduler] = {}


def register(scheduler: Scheduler) -> Scheduler:
    """Make `scheduler` known (a second one of the same name replaces the first)."""
    _REGISTERED[scheduler.name] = scheduler
    return scheduler


def unregister(name: str) -> None:
    """Forget the scheduler `name` (a test's fake)."""
    _REGISTERED.pop(name, None)


def schedulers() -> dict[str, Scheduler]:
    """Every scheduler, by name, in the order they are listed (flags, `available`, `status`)."""
    return {s.name: s for s in sorted(_REGISTERED.values(), key=lambda s: s.rank)}


def get(name: str) -> Scheduler:
    try:
        return _REGISTERED[name]
    except KeyError:
        raise CuratorError(f"unknown scheduler {name!r} (one of: {', '.join(schedulers())})") from None


def preferred(system: str) -> list[Scheduler]:
    """The schedulers `install` may pick unasked on `system`, in the order it tries them."""
    ranked = [(p, s.rank, s) for s in schedulers().values() if (p := s.preference(system)) is not None]
    return [s for _, _, s in sorted(ranked, key=lambda item: item[:2])]


def flags(but: str | None = None) -> str:
    """`--cron/--launchd/--systemd`: every scheduler's flag (but one), for a message."""
    return "/".join(f"--{name}" for name in sorted(schedulers()) if name != but)
