"""launchd (macOS): a plist in ~/Library/LaunchAgents, told with `launchctl bootout`, `enable`
and `bootstrap` in the user's gui domain (not the deprecated load/unload), asked with
`launchctl print`; and the macOS privacy trap (a vault in a protected folder)."""

from __future__ import annotations

import os
import plistlib
import re
import shlex
import shutil
from pathlib import Path
from xml.parsers.expat import ExpatError

from memory_curator.commands.context import Machine
from memory_curator.commands.schedule.job import Command, Installed, Job, JobPlan, Loaded, watch_command
from memory_curator.commands.schedule.process import ask_program
from memory_curator.commands.schedule.registry import register
from memory_curator.commands.schedule.scheduler import Backend
from memory_curator.core.errors import CuratorError

LABEL_PREFIX = "org.memory-curator.sweep."


def label(job_id: str) -> str:
    return LABEL_PREFIX + job_id


def plist_path(home: Path, job_id: str) -> Path:
    return home / "Library" / "LaunchAgents" / f"{label(job_id)}.plist"


def plist(job: Job) -> dict[str, object]:
    data: dict[str, object] = {
        "Label": label(job.id),
        "ProgramArguments": job.command(),
        "StartInterval": job.every,
        "RunAtLoad": True,
        "ProcessType": "Background",
        "StandardOutPath": str(job.log),
        "StandardErrorPath": str(job.log),
    }
    if job.watch:
        data["WatchPaths"] = [str(p) for p in job.watch]
    return data


class Launchd(Backend):
    name = "launchd"
    program = "launchctl"
    flag_help = "launchd (default on macOS)."
    rank = 1
    on_change = True  # WatchPaths

    def preference(self, system: str) -> int | None:
        return 0 if system == "Darwin" else None

    def works(self, machine: Machine) -> str | None:
        if machine.system != "Darwin":
            return "launchd is macOS only"
        return None if shutil.which("launchctl") else "no launchctl on PATH"

    def install_plan(self, job: Job, machine: Machine) -> JobPlan:
        domain, target = f"gui/{machine.uid}", f"gui/{machine.uid}/{label(job.id)}"
        path = plist_path(machine.home, job.id)
        before = (Command(("launchctl", "bootout", target), may_fail=True),)  # forget the old job first
        after = (Command(("launchctl", "enable", target)), Command(("launchctl", "bootstrap", domain, str(path))))
        return JobPlan(self.name, job.id, ((path, plistlib.dumps(plist(job))),), before, after, undo=before)

    def uninstall_plan(self, job_id: str, machine: Machine) -> JobPlan:
        bootout = Command(("launchctl", "bootout", f"gui/{machine.uid}/{label(job_id)}"), may_fail=True)
        return JobPlan(self.name, job_id, ((plist_path(machine.home, job_id), b""),), (bootout,))

    def find(self, job_id: str, machine: Machine) -> Installed | None:
        path = plist_path(machine.home, job_id)
        return _from_plist(path) if path.exists() else None

    def ask(self, job: Installed, machine: Machine) -> Loaded:
        """`launchctl print` shows a loaded job (its state, runs, last exit code); 113: not loaded."""
        target = f"gui/{machine.uid}/{Path(job.where).stem}"
        code, out, err = ask_program(("launchctl", "print", target))
        if code == 0:
            fields = dict(re.findall(r"^\s*(state|runs|last exit code) = (.+)$", out, re.MULTILINE))
            detail = ", ".join(f"{k} = {v}" for k, v in fields.items())
            return Loaded(target, True, "loaded" + (f" ({detail})" if detail else ""))
        if code == 113 or "could not find" in err.lower():
            return Loaded(target, False, "not loaded")
        error = err or f"exit {code}"
        return Loaded(target, None, f"cannot ask launchd ({error})", error=error)

    def plan_notes(self, job: Job, machine: Machine) -> tuple[str, ...]:
        note = fda_note(job.vault, job.python, machine.home, machine.system)
        return (note,) if note else ()

    def watch_unit(self, job: Job, machine: Machine) -> tuple[Path, str, str] | None:
        return watch_agent(job, machine)

    def doctor_unasked(self, said: Loaded) -> str:
        return f"cannot ask launchctl whether the job is loaded ({said.error})"

    def doctor_load(self, job: Installed, said: Loaded) -> str:
        return f"launchctl bootstrap {said.name.rsplit('/', 1)[0]} {job.where}"

    def doctor_not_run(self, job: Installed, uid: int) -> str:
        return f"launchctl print gui/{uid}/{Path(job.where).stem} shows why launchd did not run it"

    def doctor_vault(self, vault: Path, python: str, machine: Machine) -> tuple[tuple[str, str], ...]:
        note = fda_note(vault, python, machine.home, machine.system)
        return (("macOS", note),) if note else ()

    def doctor_failure(self, summary: str, vault: Path, python: str, machine: Machine) -> str | None:
        if "not permitted" in summary.lower() and protected_location(vault, machine.home, machine.system):
            return fda_fix(python)
        return None


def _from_plist(path: Path) -> Installed:
    try:
        data = plistlib.loads(path.read_bytes())
    except (OSError, ValueError, ExpatError) as exc:  # InvalidFileException is a ValueError
        raise CuratorError(f"{path}: unreadable plist: {exc}") from None
    if not isinstance(data, dict):
        raise CuratorError(f"{path}: unreadable plist: not a dictionary")
    every = data.get("StartInterval")
    args = tuple(str(a) for a in data.get("ProgramArguments", []))
    return Installed("launchd", str(path), args, every if isinstance(every, int) else None, path.stat().st_mtime)


def watch_agent(job: Job, machine: Machine) -> tuple[Path, str, str]:
    """A launchd agent that keeps `watch` running (KeepAlive): where it goes, its text, how to start it."""
    name = f"org.memory-curator.watch.{job.id}"
    path = machine.home / "Library" / "LaunchAgents" / f"{name}.plist"
    data = {"Label": name, "ProgramArguments": watch_command(job), "RunAtLoad": True, "KeepAlive": True}
    text = plistlib.dumps(data).decode().rstrip("\n")
    return path, text, f"launchctl bootstrap gui/{machine.uid} {shlex.quote(str(path))}"


# --- the macOS privacy trap -------------------------------------------------------------------------

PROTECTED = {
    "Documents": "~/Documents",
    "Desktop": "~/Desktop",
    "Downloads": "~/Downloads",
    "Library/Mobile Documents": "iCloud Drive",
    "Library/CloudStorage": "a cloud-storage folder (~/Library/CloudStorage)",
}


def protected_location(vault: Path, home: Path, system: str) -> str | None:
    """On macOS, the privacy-protected place a vault sits in (launchd jobs need Full Disk Access)."""
    if system != "Darwin":
        return None
    for relative, name in PROTECTED.items():
        area = home / relative
        if vault == area or area in vault.parents:
            return name
    return None


def fda_note(vault: Path, python: str, home: Path, system: str) -> str | None:
    place = protected_location(vault, home, system)
    if place is None:
        return None
    return f"the vault is in {place}: macOS lets a launchd job read it only with Full Disk Access; {fda_fix(python)}"


def fda_fix(python: str) -> str:
    """Privacy permissions attach to the real binary, not to a venv's symlink."""
    return f"System Settings > Privacy & Security > Full Disk Access: add {os.path.realpath(python)}"


register(Launchd())
