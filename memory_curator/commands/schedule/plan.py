"""What `install` (and `show`) and `uninstall` do for one vault on this machine, as plans:
the scheduler chosen, the job, the notes worth a line; where no scheduler works, why, and a
unit that keeps `watch` running instead."""

from __future__ import annotations

import shlex
import shutil
import sys
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from memory_curator.commands.context import Machine
from memory_curator.commands.schedule.detect import available, choose_platform
from memory_curator.commands.schedule.intervals import parse_every
from memory_curator.commands.schedule.job import Job, JobPlan, make_job, watch_command
from memory_curator.commands.schedule.query import installed
from memory_curator.commands.schedule.registry import get, preferred, schedulers
from memory_curator.core.errors import CuratorError
from memory_curator.core.hosts import host_refusal
from memory_curator.store.rules_file import load_for_vault
from memory_curator.store.state import state_folder, vault_id


def install_plan(job: Job, where: str, machine: Machine) -> JobPlan:
    """What installing `job` with the scheduler `where` writes and runs."""
    return get(where).install_plan(job, machine)


def uninstall_plan(job_id: str, where: str, machine: Machine) -> JobPlan:
    return get(where).uninstall_plan(job_id, machine)


def plan_install(
    machine: Machine, root: Path, state_opt: str | None, every: str, forced: str | None, on_change: bool
) -> JobPlan:
    """What `install` and `show` do for this vault on this machine."""
    env, system, state_home = machine.env, machine.system, machine.state_home
    seconds = parse_every(every)
    usable = {} if forced else available(machine)
    where = choose_platform(forced, system, usable)
    if where is None:
        job = make_job(root, state_folder(root, state_opt, env, state_home).resolve(), seconds, False, sys.executable)
        line = no_scheduler(usable, job)
        return JobPlan("none", job.id, unavailable=line, fallback=watch_unit(job, machine))
    scheduler = get(where)
    if on_change and not scheduler.on_change:
        needs = " or ".join(name for name, s in schedulers().items() if s.on_change)
        raise CuratorError(f"--on-change needs {needs} (not {where}); `memory-curator watch` sweeps on change anywhere")
    job = make_job(root, state_folder(root, state_opt, env, state_home).resolve(), seconds, on_change, sys.executable)
    plan = scheduler.install_plan(job, machine)
    notes = [*plan.notes, *_host_notes(root, machine.host)]
    if forced and shutil.which(scheduler.program) is None:
        notes.insert(0, f"{scheduler.program}: not found on PATH: `install --{where}` will fail here")
    notes += scheduler.plan_notes(job, machine)
    notes.append(f"each sweep appends one JSON line to {job.log} (capped at about 2 MB)")
    return replace(plan, notes=tuple(notes), state=job.state)


def no_scheduler(usable: Mapping[str, str | None], job: Job) -> str:
    """The one line `show` and `install` print where no scheduler works."""
    why = "; ".join(reason for reason in usable.values() if reason)
    return (
        f"no scheduler works here ({why}): run `memory-curator watch --vault {shlex.quote(str(job.vault))}` "
        "instead, it sweeps as files settle (`memory-curator schedule show` prints a unit that keeps it running)"
    )


def watch_unit(job: Job, machine: Machine) -> tuple[str, ...]:
    """A ready unit that keeps `watch` running, from the first scheduler this system prefers that
    offers one (a launchd agent on macOS, else a systemd user service); a terminal otherwise."""
    units = (s.watch_unit(job, machine) for s in preferred(machine.system))
    unit = next((u for u in units if u is not None), None)
    if unit is None:
        return (f"# keep it running in a terminal (tmux, screen): {shlex.join(watch_command(job))}",)
    path, text, start = unit
    return (
        f"# to keep `watch` running, save as {path}, then: {start}",
        text,
        "",
        f"# or keep it running in a terminal (tmux, screen): {shlex.join(watch_command(job))}",
    )


def _host_notes(root: Path, host: str) -> list[str]:
    refusal = host_refusal(load_for_vault(root).settings.curator_host, host)
    return [f"scheduled sweeps here will do nothing: {refusal}"] if refusal else []


def plan_uninstall(machine: Machine, root: Path, forced: str | None) -> list[JobPlan]:
    """One plan per scheduler holding this vault's job (or just the one asked for)."""
    job_id = vault_id(root)
    wheres = [forced] if forced else [found.platform for found in installed(job_id, machine)]
    return [uninstall_plan(job_id, where, machine) for where in dict.fromkeys(wheres)]
