"""How often a job runs: only the intervals that cron and systemd's OnCalendar express exactly,
and each one's two spellings (read back from an installed job too)."""

from __future__ import annotations

from memory_curator.core.errors import CuratorError
from memory_curator.core.text import duration_seconds

MINUTES = (1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30)
HOURS = (1, 2, 3, 4, 6, 8, 12, 24)
EVERY_HELP = "minutes that divide an hour (1m 2m 3m 4m 5m 6m 10m 12m 15m 20m 30m), hours that divide a day, or 1d"


def parse_every(text: str) -> int:
    """'15m', '2h', '1d' → seconds. Only intervals that cron and OnCalendar express exactly."""
    seconds = duration_seconds(text, default_unit="m")
    if seconds is None or seconds not in _calendars():
        raise CuratorError(f"--every {text}: use {EVERY_HELP}")
    return seconds


def every_text(seconds: int) -> str:
    if seconds % 86400 == 0:
        return f"{seconds // 86400}d"
    return f"{seconds // 3600}h" if seconds % 3600 == 0 else f"{seconds // 60}m"


def _calendars() -> dict[int, tuple[str, str]]:
    """Each allowed interval → (cron's five fields, systemd's OnCalendar)."""
    out = {}
    for m in MINUTES:
        out[m * 60] = ("* * * * *" if m == 1 else f"*/{m} * * * *", f"*-*-* *:{'*' if m == 1 else f'00/{m}'}:00")
    for h in HOURS:
        if h == 24:
            out[86400] = ("0 0 * * *", "*-*-* 00:00:00")
        else:
            out[h * 3600] = ("0 * * * *" if h == 1 else f"0 */{h} * * *", f"*-*-* {'*' if h == 1 else f'00/{h}'}:00:00")
    return out


def cron_schedule(seconds: int) -> str:
    return _calendars()[seconds][0]


def on_calendar(seconds: int) -> str:
    return _calendars()[seconds][1]


def every_from(text: str, kind: int) -> int | None:
    """The interval one of our own cron schedules (kind 0) or OnCalendar values (kind 1) means."""
    return next((s for s, forms in _calendars().items() if forms[kind] == text.strip()), None)
