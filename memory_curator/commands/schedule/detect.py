"""Which schedulers work here, and which one `install` uses: asked once, chosen once, over the
registry (each scheduler says when it is preferred: `preference`)."""

from __future__ import annotations

from collections.abc import Mapping

from memory_curator.commands.context import Machine
from memory_curator.commands.schedule.registry import preferred, schedulers


def available(machine: Machine) -> dict[str, str | None]:
    """Each scheduler → why it does not work here, or None when it does. Asks, changes nothing."""
    return {name: scheduler.works(machine) for name, scheduler in schedulers().items()}


def choose_platform(forced: str | None, system: str, usable: Mapping[str, str | None]) -> str | None:
    """A flag forces one; else the first that works here in the order `system` prefers them
    (launchd on macOS, a reachable systemd user manager elsewhere, then cron; `usable`: each
    scheduler → why it does not work, None when it does). None when none works."""
    if forced:
        return forced
    return next((s.name for s in preferred(system) if s.name in usable and usable[s.name] is None), None)
