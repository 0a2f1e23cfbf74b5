"""Which schedulers work here, and which one `install` uses: asked once, chosen once."""

from __future__ import annotations

from collections.abc import Mapping

from memory_curator.commands.context import Machine
from memory_curator.commands.schedule.cron import Cron
from memory_curator.commands.schedule.launchd import Launchd
from memory_curator.commands.schedule.scheduler import Scheduler
from memory_curator.commands.schedule.systemd import Systemd

_ALL: tuple[Scheduler, ...] = (Launchd(), Systemd(), Cron())  # in the order they are asked and shown
SCHEDULERS: dict[str, Scheduler] = {scheduler.name: scheduler for scheduler in _ALL}


def available(machine: Machine) -> dict[str, str | None]:
    """Each scheduler → why it does not work here, or None when it does. Asks, changes nothing."""
    return {name: scheduler.works(machine) for name, scheduler in SCHEDULERS.items()}


def choose_platform(forced: str | None, system: str, usable: Mapping[str, str | None]) -> str | None:
    """A flag forces one; else launchd on macOS, a reachable systemd user manager, then cron:
    the first that works here (`usable`: each scheduler → why it does not work, None when it
    does). None when none works."""
    if forced:
        return forced
    order = ("launchd", "cron") if system == "Darwin" else ("systemd", "cron")
    return next((name for name in order if name in usable and usable[name] is None), None)
