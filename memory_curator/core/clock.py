"""The one clock. Every "now" the curator uses comes from a `Clock` passed down from the entry
point (the CLI builds one), never from the system clock directly.

So tests fix the date instead of depending on the day they run, and calendar time (journal
and log stamps, drop names, `--since`, doctor's staleness) stays apart from file age, which
compares a file's mtime with the clock but never trusts an mtime in the future. This is the
only module that reads the system clock (a test greps the others).
"""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass
from typing import Protocol


class Clock(Protocol):
    def now(self) -> dt.datetime:
        """Calendar time: aware UTC, whole seconds (what stamps and names show)."""
        ...

    def timestamp(self) -> float:
        """Calendar time in epoch seconds, unrounded: to compare with file mtimes."""
        ...

    def monotonic(self) -> float:
        """Seconds that only go forward: durations and waits, immune to clock changes."""
        ...


@dataclass(frozen=True)
class SystemClock:
    """The machine's clock."""

    def now(self) -> dt.datetime:
        return dt.datetime.now(dt.UTC).replace(microsecond=0)

    def timestamp(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()


@dataclass
class FixedClock:
    """A clock that moves only when told (tests): `advance` moves both its times together."""

    at: dt.datetime
    ticks: float = 0.0

    def __post_init__(self) -> None:
        if self.at.tzinfo is None:
            raise ValueError("FixedClock needs an aware datetime")

    def now(self) -> dt.datetime:
        return self.at.astimezone(dt.UTC).replace(microsecond=0)

    def timestamp(self) -> float:
        return self.at.timestamp()

    def monotonic(self) -> float:
        return self.ticks

    def advance(self, seconds: float) -> None:
        self.at += dt.timedelta(seconds=seconds)
        self.ticks += seconds
