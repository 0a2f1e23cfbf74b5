"""Applying a plan: `install` (one plan, rolled back completely when a step fails) and
`uninstall` (exactly what install made, nothing else), each by the plan's own scheduler and
returning what it did (`Applied`)."""

from __future__ import annotations

from memory_curator.commands.schedule.job import Applied, Did, JobPlan
from memory_curator.commands.schedule.registry import get
from memory_curator.core.errors import CuratorError

__all__ = ["Applied", "Did", "install", "uninstall"]


def install(plan: JobPlan) -> Applied:
    """Idempotent: a re-install replaces this vault's job and leaves everything else alone."""
    if plan.unavailable:
        raise CuratorError(plan.unavailable)
    return get(plan.platform).install(plan)


def uninstall(plan: JobPlan) -> Applied:
    """Removes exactly what `install` made for this vault; nothing at all when nothing is there."""
    return get(plan.platform).uninstall(plan)
