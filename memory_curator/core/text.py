"""Small text helpers every layer shares, each written once: times, durations, lists, one-line
reasons (pure)."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any


def iso(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(value: Any) -> dt.datetime | None:
    """A time as the curator writes or reads one: an ISO 8601 text (`Z` for UTC, surrounding
    spaces ignored), a datetime, or a date (its midnight). Always aware: a time that names no
    zone is UTC. None when `value` is none of these."""
    if isinstance(value, dt.datetime):
        moment = value
    elif isinstance(value, dt.date):
        moment = dt.datetime(value.year, value.month, value.day)
    elif isinstance(value, str) and value.strip():
        try:
            moment = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
    else:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


_DURATION = re.compile(r"(\d+)\s*(s|min|m|h|d|w)?")
_UNIT_SECONDS = {"s": 1, "min": 60, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def duration_seconds(text: str, default_unit: str | None = None) -> int | None:
    """`30s`, `15m` (or `15min`), `12h`, `7d`, `2w` → seconds; case and spaces do not matter.
    A bare number counts in `default_unit` (None: a unit is required). None when `text` is
    not a duration."""
    match = _DURATION.fullmatch(text.strip().lower())
    unit = (match.group(2) or default_unit) if match else None
    if match is None or unit is None:
        return None
    return int(match.group(1)) * _UNIT_SECONDS[unit]


def split_list(value: Any) -> list[str]:
    """A list written as one text (`tags: a, b c`): its items, split at commas and spaces."""
    return str(value).replace(",", " ").split()


def size_text(size: int) -> str:
    """`97.5 MiB`, `1 MiB`, `512 KiB`, `900 bytes`: a file size as a person reads it."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.1f}".removesuffix(".0") + f" {unit}"
    return f"{size} bytes"


TOO_LARGE = "too large"  # how the reason of an over-size candidate begins (`reasons`, `status`)


def too_large(size: int, limit: int) -> str | None:
    """`too large: 97.5 MiB > 1 MiB` (the rules' `max_candidate_bytes`); None within the limit."""
    return f"{TOO_LARGE}: {size_text(size)} > {size_text(limit)}" if size > limit else None
