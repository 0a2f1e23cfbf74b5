"""What a scheduled sweep is, as data: the job (the command every scheduler runs), the plan of an
install or an uninstall (files, commands, a crontab line), and a job read back from a scheduler
with what that scheduler says of it."""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from memory_curator.core.errors import CuratorError
from memory_curator.core.names import INBOX
from memory_curator.store import runlog
from memory_curator.store.state import vault_id


@dataclass(frozen=True)
class Job:
    vault: Path
    state: Path
    python: str
    every: int
    watch: tuple[Path, ...] = ()  # launchd WatchPaths (--on-change)

    @property
    def id(self) -> str:
        return vault_id(self.vault)

    @property
    def log(self) -> Path:
        return self.state / runlog.LOG_NAME

    def command(self) -> list[str]:
        return [
            self.python,
            "-m",
            "memory_curator",
            "run",
            "--vault",
            str(self.vault),
            "--state-dir",
            str(self.state),
            "--json",
            "--log-file",
            str(self.log),
        ]


def make_job(root: Path, state: Path, every: int, on_change: bool, python: str = sys.executable) -> Job:
    """The inbox and its agent folders are watched: launchd sees changes one level deep only."""
    watch: tuple[Path, ...] = ()
    if on_change:
        inbox = root / INBOX
        agents = (
            sorted(p for p in inbox.iterdir() if p.is_dir() and not p.name.startswith(".")) if inbox.is_dir() else []
        )
        watch = (inbox, *agents)
    return Job(root, state, python, every, watch)


def watch_command(job: Job) -> list[str]:
    """What keeps this vault swept where no scheduler works: `watch`, by absolute paths too."""
    return [job.python, "-m", "memory_curator", "watch", "--vault", str(job.vault), "--state-dir", str(job.state)]


@dataclass(frozen=True)
class Command:
    argv: tuple[str, ...]
    may_fail: bool = False  # e.g. `launchctl bootout` of a job that is not loaded


@dataclass(frozen=True)
class JobPlan:
    """Steps `before` the files are written (or removed), then steps `after`; `undo` forgets a
    new job again when the install fails half-way. `unavailable`: no scheduler works here (why,
    in one line), with `fallback`, what `show` prints instead (a unit that keeps `watch` running)."""

    platform: str
    job_id: str
    files: tuple[tuple[Path, bytes], ...] = ()
    before: tuple[Command, ...] = ()
    after: tuple[Command, ...] = ()
    entry: str | None = None  # a line the scheduler keeps in its own table (cron's crontab line)
    shown: tuple[str, ...] = ()  # what `show` prints after the commands (the crontab line, with its header)
    notes: tuple[str, ...] = ()
    state: Path | None = None  # created by install: the log lives there
    undo: tuple[Command, ...] = ()
    unavailable: str | None = None
    fallback: tuple[str, ...] = ()


Did = Literal["wrote", "removed", "ran", "said"]


@dataclass(frozen=True)
class Applied:
    """What `install` or `uninstall` did, in order: ("wrote", file), ("removed", file), ("ran",
    command line), ("said", a scheduler's own line: "crontab: <the line added>"); plus the
    plan's notes. No events: there was nothing to uninstall."""

    platform: str
    events: tuple[tuple[Did, str], ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Installed:
    platform: str
    where: str
    command: tuple[str, ...]
    every: int | None
    since: float | None = None  # when the file was written (cron keeps no such time)

    def option(self, name: str) -> str | None:
        args = list(self.command)
        return args[args.index(name) + 1] if name in args[:-1] else None


@dataclass(frozen=True)
class Loaded:
    """The scheduler's answer about one job: `loaded` None when it could not be asked."""

    name: str  # what the scheduler calls it: the timer, the launchd service target, "crontab"
    loaded: bool | None
    state: str  # in its words: "enabled, active", "not loaded", "cannot ask systemd (…)"
    last_ran: str | None = None
    error: str | None = None  # why it could not be asked, in its own words


def command_words(command: str, origin: object) -> list[str]:
    """A scheduled command line read back (a unit's ExecStart, a crontab line) as its words."""
    try:
        return shlex.split(command, comments=True)
    except ValueError as exc:
        raise CuratorError(f"{origin}: cannot read the scheduled command: {exc}") from None
