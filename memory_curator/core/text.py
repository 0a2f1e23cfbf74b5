"""Small text helpers every layer shares, each written once: times, durations, lists, one-line
reasons (pure)."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from memory_curator.core.errors import CuratorError
from memory_curator.core.names import printable

ERROR_CHARS = 300  # an error's one line at most, in a reason, a journal record or a result


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


def parse_day(text: str) -> str:
    """A calendar day given as YYYY-MM-DD, normalised (so the index's `day` matches): what
    `query --date` and MCP's `search_notes` both take. CuratorError in their one line."""
    try:
        return dt.date.fromisoformat(text.strip()).isoformat()
    except ValueError:
        raise CuratorError(f"{text!r}: use a date like 2026-11-01") from None


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


def one_line(what: str | BaseException, limit: int | None = None) -> str:
    """`what` on one line, as a reason, a log line or an error entry says it. A text has its runs
    of whitespace folded into single spaces (a person's reason stays theirs otherwise); an
    exception reads `ValueError: …` with every unprintable character escaped
    (`names.printable`: its message may carry an agent's bytes). Longer than `limit` (an
    exception's default: `ERROR_CHARS`), it is cut with an ellipsis."""
    if isinstance(what, BaseException):
        text, limit = printable(f"{type(what).__name__}: {what}"), limit or ERROR_CHARS
    else:
        text = " ".join(what.split())
    return text if limit is None or len(text) <= limit else text[: limit - 1] + "…"


def describe(exc: BaseException, still_there: bool = True) -> str:
    """A candidate's failure as its error entry says it: the OS's words for an I/O error, and
    where the candidate is now (still in the inbox, or gone with its destination to check)."""
    what = f"{exc.strerror} ({type(exc).__name__})" if isinstance(exc, OSError) and exc.strerror else str(exc)
    doing = getattr(exc, "__notes__", None)  # which operation on which file (`store.executor`)
    if doing:
        what = f"{doing[-1]}: {what}"
    if still_there:
        return f"{what}; left in the inbox"
    return f"{what} after the inbox file was removed; the next sweep checks its destination is durable"
