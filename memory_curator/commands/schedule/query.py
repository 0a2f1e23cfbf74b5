"""What is installed for a vault and what its schedulers say of it (`schedule status`, `status`,
`doctor`, `uninstall`): read back from every scheduler, then asked of the scheduler itself."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memory_curator.commands.context import Machine
from memory_curator.commands.schedule.detect import SCHEDULERS, available, choose_platform
from memory_curator.commands.schedule.job import Installed, Loaded
from memory_curator.core.text import iso
from memory_curator.store import runlog
from memory_curator.store.state import state_folder, vault_id


def installed(job_id: str, machine: Machine) -> list[Installed]:
    """Every scheduled sweep of this vault, on any of the three schedulers."""
    found = (scheduler.find(job_id, machine) for scheduler in SCHEDULERS.values())
    return [job for job in found if job is not None]


def ask(job: Installed, machine: Machine) -> Loaded:
    """`launchctl print`, `systemctl --user is-enabled/is-active`; a cron line is loaded by being
    in `crontab -l`, which is where it was found."""
    return SCHEDULERS[job.platform].ask(job, machine)


def summary(machine: Machine, root: Path, state: Path) -> dict[str, Any]:
    """This vault's jobs, what each scheduler says of it, and the last logged sweep (`status`)."""
    jobs = installed(vault_id(root), machine)
    out: dict[str, Any] = {"installed": bool(jobs), "jobs": []}
    for job in jobs:
        said = ask(job, machine)
        out["jobs"].append(
            {
                "platform": job.platform,
                "where": job.where,
                "every_seconds": job.every,
                "loaded": said.loaded,
                "state": said.state,
                "last_ran": said.last_ran,
            }
        )
    last = runlog.entries(state / runlog.LOG_NAME)
    if last:
        out["last_run"] = {
            "time": iso(last[-1].time) if last[-1].time else None,
            "exit": last[-1].exit,
            "summary": last[-1].summary,
        }
    return out


def status(machine: Machine, root: Path, state_opt: str | None) -> dict[str, Any]:
    """`schedule status`: the summary, which schedulers work here and which `install` would use."""
    state = state_folder(root, state_opt, machine.env).resolve()
    usable = available(machine)
    choice = choose_platform(None, machine.system, usable)
    return {**summary(machine, root, state), "available": usable, "choice": choice}
