"""What is installed for a vault and what its schedulers say of it (`schedule status`, `status`,
`doctor`, `uninstall`): read back from every scheduler, then asked of the scheduler itself."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from memory_curator.commands.context import Machine
from memory_curator.commands.schedule.detect import available, choose_platform
from memory_curator.commands.schedule.job import Installed, Loaded
from memory_curator.commands.schedule.registry import get, schedulers
from memory_curator.core.json_types import JsonObject
from memory_curator.core.text import iso
from memory_curator.store import runlog
from memory_curator.store.state import state_folder, vault_id


@dataclass(frozen=True)
class JobStatus:
    """One installed job as its scheduler sees it (`loaded` None: it could not be asked)."""

    platform: str
    where: str
    every_seconds: int | None
    loaded: bool | None
    state: str
    last_ran: str | None

    def to_json(self) -> JsonObject:
        return {
            "platform": self.platform,
            "where": self.where,
            "every_seconds": self.every_seconds,
            "loaded": self.loaded,
            "state": self.state,
            "last_ran": self.last_ran,
        }


@dataclass(frozen=True)
class LastRun:
    """The last line of the sweep log: when, its exit code, what it did or why it failed."""

    time: str | None
    exit: int | None
    summary: str

    def to_json(self) -> JsonObject:
        return {"time": self.time, "exit": self.exit, "summary": self.summary}


@dataclass(frozen=True)
class Summary:
    """This vault's scheduled sweeps and the last logged one (`status`'s `schedule`)."""

    jobs: tuple[JobStatus, ...] = ()
    last_run: LastRun | None = None  # None: no sweep logged yet

    @property
    def installed(self) -> bool:
        return bool(self.jobs)

    def to_json(self) -> JsonObject:
        out: JsonObject = {"installed": self.installed, "jobs": [job.to_json() for job in self.jobs]}
        if self.last_run is not None:
            out["last_run"] = self.last_run.to_json()
        return out


@dataclass(frozen=True)
class ScheduleStatus:
    """`schedule status`: the summary, why each scheduler does not work here (None: it does),
    and the one `install` would use (None: none works)."""

    summary: Summary
    available: Mapping[str, str | None]
    choice: str | None

    def to_json(self) -> JsonObject:
        return {**self.summary.to_json(), "available": dict(self.available), "choice": self.choice}


def installed(job_id: str, machine: Machine) -> list[Installed]:
    """Every scheduled sweep of this vault, on any scheduler."""
    found = (scheduler.find(job_id, machine) for scheduler in schedulers().values())
    return [job for job in found if job is not None]


def ask(job: Installed, machine: Machine) -> Loaded:
    """`launchctl print`, `systemctl --user is-enabled/is-active`; a cron line is loaded by being
    in `crontab -l`, which is where it was found."""
    return get(job.platform).ask(job, machine)


def summary(machine: Machine, root: Path, state: Path) -> Summary:
    """This vault's jobs, what each scheduler says of it, and the last logged sweep (`status`)."""
    jobs = []
    for job in installed(vault_id(root), machine):
        said = ask(job, machine)
        jobs.append(JobStatus(job.platform, job.where, job.every, said.loaded, said.state, said.last_ran))
    entries = runlog.entries(state / runlog.LOG_NAME)
    last = entries[-1] if entries else None
    ran = LastRun(iso(last.time) if last.time else None, last.exit, last.summary) if last else None
    return Summary(tuple(jobs), ran)


def status(machine: Machine, root: Path, state_opt: str | None) -> ScheduleStatus:
    """`schedule status`: the summary, which schedulers work here and which `install` would use."""
    state = state_folder(root, state_opt, machine.env, machine.state_home).resolve()
    usable = available(machine)
    return ScheduleStatus(summary(machine, root, state), usable, choose_platform(None, machine.system, usable))
