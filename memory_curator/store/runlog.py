"""The log of scheduled sweeps: one JSON line per run in the state directory, size-capped.

A scheduler runs `run --json --log-file <state>/sweeps.log`: the result (or the one-line
error) goes into the log instead of a terminal nobody reads, and `doctor` reads the last
lines back. At 1 MB the log is renamed to `sweeps.log.1` (replacing the previous one), so
it never holds more than about 2 MB however long the schedule runs.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory_curator.core.clock import Clock, SystemClock
from memory_curator.core.errors import EXIT_INTERNAL, EXIT_LOCKED, EXIT_OK, CuratorError, OtherHost
from memory_curator.core.result import SweepResult
from memory_curator.core.text import iso, parse_time

LOG_NAME = "sweeps.log"
MAX_BYTES = 1_000_000
TAIL_BYTES = 64_000


def rotate(path: Path, max_bytes: int = MAX_BYTES) -> None:
    """Keep one previous generation: `sweeps.log` → `sweeps.log.1` once it reaches the cap."""
    try:
        if path.stat().st_size >= max_bytes:
            os.replace(path, path.with_name(path.name + ".1"))
    except FileNotFoundError:
        return


def append(path: Path, record: dict[str, Any]) -> None:
    """One write on an O_APPEND descriptor: lines from overlapping runs never interleave."""
    line = json.dumps(record, ensure_ascii=False, default=str) + "\n"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode("utf-8", "backslashreplace"))  # a non-UTF-8 file name: its JSON escape
        finally:
            os.close(fd)
    except OSError as exc:
        raise CuratorError(f"{path}: cannot write the sweep log: {exc.strerror}") from None


def record_run(
    path: Path, sweep: Callable[[], SweepResult], max_bytes: int = MAX_BYTES, clock: Clock = SystemClock()
) -> int:
    """Run `sweep`, append its outcome to the log (rotated at `max_bytes`), return the exit code
    (nothing is printed)."""
    rotate(path, max_bytes)
    started, ticks = clock.now(), clock.monotonic()
    outcome: dict[str, Any]
    try:
        outcome = {"exit": EXIT_OK, "result": sweep().to_json()}
    except OtherHost as exc:
        outcome = {"exit": EXIT_OK, "idle": str(exc)}
    except CuratorError as exc:
        outcome = {"exit": exc.exit_code, "error": str(exc)}
    except Exception as exc:  # a bug: log it, then let the CLI's boundary keep the traceback
        crash = {"exit": EXIT_INTERNAL, "error": f"internal error: {type(exc).__name__}: {exc}"}
        append(path, _record(started, clock.monotonic() - ticks, crash))
        raise
    append(path, _record(started, clock.monotonic() - ticks, outcome))
    return int(outcome["exit"])


def _record(started: dt.datetime, seconds: float, outcome: dict[str, Any]) -> dict[str, Any]:
    return {"time": iso(started), "seconds": round(seconds, 3), "pid": os.getpid(), **outcome}


@dataclass(frozen=True)
class RunRecord:
    """One line of the log: a run record, or stray output (a crash before logging started)."""

    time: dt.datetime | None
    exit: int | None
    summary: str
    stray: bool = False

    @property
    def failed(self) -> bool:
        return self.stray or self.exit not in (EXIT_OK, EXIT_LOCKED)


def entries(path: Path) -> list[RunRecord]:
    """The runs in the last part of the log (the rotated generation when the log is empty)."""
    lines = _tail(path) or _tail(path.with_name(path.name + ".1"))
    return [_entry(line) for line in lines if line.strip()]


def _tail(path: Path) -> list[str]:
    try:
        with open(path, "rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - TAIL_BYTES))
            data = handle.read()
    except FileNotFoundError:
        return []
    lines = data.decode("utf-8", "replace").splitlines()
    return lines[1:] if size > TAIL_BYTES else lines  # the first line may be cut


def _entry(line: str) -> RunRecord:
    try:
        record = json.loads(line)
        when = parse_time(record["time"])
        code = int(record["exit"])
    except (ValueError, KeyError, TypeError):
        when = None
    if when is None:  # not a line this log wrote
        return RunRecord(None, None, line.strip()[:300], stray=True)
    return RunRecord(when, code, summarize(record))


def summarize(record: Mapping[str, object]) -> str:
    """A run's outcome in one line: a log line's (its `result`, or its `error`/`idle`) or a
    journal `run` record's."""
    if "error" in record:
        return str(record["error"])
    if "idle" in record:
        return str(record["idle"])
    nested = record.get("result", record)  # a log line nests the result; a journal `run` record is flat
    result = nested if isinstance(nested, Mapping) else record
    counts = ", ".join(f"{result.get(k, 0)} {k}" for k in ("promoted", "patched", "dropped", "needs_review"))
    return f"{result.get('processed', 0)} processed ({counts})"
