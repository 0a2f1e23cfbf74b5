"""Applying a plan of files and commands (what launchd and systemd install, and the state folder
every scheduler's log lives in): `install_files` (rolled back completely when a step fails) and
`uninstall_files` (exactly what install made, nothing else), each returning what it did."""

from __future__ import annotations

import contextlib
import shlex
import subprocess
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from memory_curator.commands.schedule.job import Applied, Command, Did, JobPlan
from memory_curator.commands.schedule.process import run
from memory_curator.core.errors import CuratorError
from memory_curator.core.notes import content_hash
from memory_curator.store.writer import FILES

Event = tuple[Did, str]


def install_files(plan: JobPlan, last: Callable[[], Event] | None = None, kept: str | None = None) -> Applied:
    """Idempotent: a re-install replaces this vault's job and leaves everything else alone.
    One plan: when a step fails, every file is put back as it was (a new one removed), a new
    job is forgotten by its scheduler (`undo`) or the replaced one registered again, and the
    error says so. `last`: the scheduler's own step after the files and commands (cron's
    crontab edit); `kept`: what a failure left as it was, in its words."""
    previous = {path: _read(path) for path, _ in plan.files}
    made = [f for path, _ in plan.files for f in _missing_folders(path.parent)]
    made += _missing_folders(plan.state) if plan.state else []
    events: list[Event] = []
    try:
        if plan.state:
            plan.state.mkdir(parents=True, exist_ok=True, mode=0o700)
        _steps(plan.before)  # forgetting the old job is not worth a line
        for path, data in plan.files:
            _write(path, data)
            events.append(("wrote", str(path)))
        events += _steps(plan.after)
        if last is not None:
            events.append(last())
    except (CuratorError, OSError, subprocess.SubprocessError) as exc:
        raise CuratorError(f"{exc}; {kept or _roll_back(plan, previous, made)}") from None
    return Applied(plan.platform, tuple(events), plan.notes)


def _roll_back(plan: JobPlan, previous: dict[Path, bytes | None], made: list[Path]) -> str:
    """Every file as it was, then the scheduler told: the old job again, or no job at all.
    Best effort: a scheduler that cannot be reached has registered nothing either."""
    replaced = any(old is not None for old in previous.values())
    for path, old in previous.items():
        try:
            if old is None:
                path.unlink(missing_ok=True)
            else:
                _write(path, old)
        except OSError:
            pass
    for step in plan.after if replaced else plan.undo:
        with contextlib.suppress(CuratorError, OSError, subprocess.SubprocessError):
            run(replace(step, may_fail=True))
    for folder in made:  # the folders install created (innermost first) go too, when empty
        with contextlib.suppress(OSError):
            folder.rmdir()
    return "the previous job is back" if replaced else "nothing installed (rolled back)"


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _missing_folders(folder: Path) -> list[Path]:
    """`folder` and those of its parents that do not exist yet, innermost first."""
    out = []
    while not folder.exists() and folder != folder.parent:
        out.append(folder)
        folder = folder.parent
    return out


def uninstall_files(plan: JobPlan) -> Applied:
    """Removes exactly what `install` made for this vault; nothing at all when nothing is there."""
    present = [path for path, _ in plan.files if path.exists()]
    if not present:
        return Applied(plan.platform)
    events = _steps(plan.before)
    for path in present:
        path.unlink()
        events.append(("removed", str(path)))
    return Applied(plan.platform, tuple(events + _steps(plan.after)))


def _steps(steps: tuple[Command, ...]) -> list[Event]:
    """Runs each step; a step that may fail and did is not reported as run."""
    events: list[Event] = []
    for step in steps:
        if run(step).returncode == 0:
            events.append(("ran", shlex.join(step.argv)))
    return events


def _write(path: Path, data: bytes) -> None:
    """Atomic, fsynced, and no write at all when the file already holds these bytes."""
    current = FILES.file_hash(path)
    if current is None:
        FILES.create(path, data)
    elif current != content_hash(data):
        FILES.replace(path, data, current)
