"""The journal: an append-only JSONL log in the state directory, each line fsynced before the
plan it announces starts; recovery and `log`, `status`, `undo` read it."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from memory_curator.core.clock import Clock
from memory_curator.core.text import iso
from memory_curator.store import records as rec
from memory_curator.store.records import Record, Written
from memory_curator.store.writer import FILES, Files


@dataclass
class Journal:
    """Append-only JSONL decision log in the state directory; each line fsynced before the
    action it announces starts. Each record is stamped with `clock`'s time; a journal opened
    without one can only be read."""

    path: Path
    clock: Clock | None = None
    files: Files = FILES

    def append(self, record: Written) -> None:
        self.append_all([record])

    def append_all(self, records: Iterable[Written]) -> None:
        """Append `records` in one write and one fsync (a batch's begin or end records)."""
        if self.clock is None:
            raise TypeError(f"{self.path}: a journal opened without a clock cannot be written")
        time = iso(self.clock.now())
        line = "".join(json.dumps({"time": time, **r}, ensure_ascii=False, default=str) + "\n" for r in records)
        if not line:
            return
        new = not self.path.exists()
        files = self.files
        fd = files.os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            if _torn(fd):  # a crash or a full disk cut the last line: never glue ours onto it
                line = "\n" + line
            files.write_all(fd, json_bytes(line))
            files.os.fsync(fd)
        finally:
            files.os.close(fd)
        if new:
            files.fsync_dir(self.path.parent)

    def entries(self, start: int = 0) -> Iterator[tuple[int, Record]]:
        """(byte offset, record) from `start`; a torn line (a crash mid-append) is skipped."""
        for here, raw in self._raw(start):
            record = _record(raw)
            if record is not None:
                yield here, record

    def lines(self, start: int = 0) -> Iterator[tuple[int, int, Record | None]]:
        """(byte offset, offset after it, record) of each whole line from `start`; the record is
        None for a torn line. A last line without its newline (an append under way, or cut by a
        crash and not yet followed by another append) is not given: it is read once it is whole."""
        for here, raw in self._raw(start):
            if not raw.endswith(b"\n"):
                return
            yield here, here + len(raw), _record(raw)

    def _raw(self, start: int) -> Iterator[tuple[int, bytes]]:
        try:
            with open(self.path, "rb") as handle:
                handle.seek(start)
                offset = start
                for raw in handle:
                    yield offset, raw
                    offset += len(raw)
        except FileNotFoundError:
            return

    def records(self, start: int = 0) -> Iterator[Record]:
        for _, record in self.entries(start):
            yield record

    def size(self) -> int:
        try:
            return self.path.stat().st_size
        except FileNotFoundError:
            return 0

    @property
    def checkpoint_path(self) -> Path:
        return self.path.with_name("journal.checkpoint")

    def checkpoint(self) -> int:
        """Byte offset before which every action is known finished (0 when unknown)."""
        try:
            offset = int(self.checkpoint_path.read_text().strip() or 0)
        except (OSError, ValueError):
            return 0
        return offset if 0 <= offset <= self.size() else 0

    def set_checkpoint(self, offset: int) -> None:
        self.files.write_state_file(self.checkpoint_path, str(offset).encode())


def json_bytes(line: str) -> bytes:
    """A JSON text as UTF-8, lossless for file names that are not UTF-8: Python holds their
    bytes as lone surrogates, which only occur inside JSON strings, and `backslashreplace`
    writes each as the JSON escape `\\udcff` that `json.loads` turns back into the same
    name, so recovery and `undo` find the file again."""
    return line.encode("utf-8", "backslashreplace")


def _record(raw: bytes) -> Record | None:
    try:
        return rec.read(json.loads(raw))
    except ValueError:
        return None


def _torn(fd: int) -> bool:
    size = os.fstat(fd).st_size
    return size > 0 and os.pread(fd, 1, size - 1) != b"\n"


def open_actions(entries: Iterable[tuple[int, Record]]) -> list[tuple[int, Record]]:
    """`begin` records with no `end`, or whose `end` says it failed: the actions a crash or
    an I/O error may have left half-done."""
    found: dict[tuple[str, int], tuple[int, Record]] = {}
    for offset, record in entries:
        key = action_key(record)
        if record.get("event") == "begin":
            found[key] = (offset, record)
        elif record.get("event") == "end" and record.get("ok"):
            found.pop(key, None)
    return list(found.values())


def action_key(record: Record) -> tuple[str, int]:
    """(run, seq): what pairs an action's begin with its end records."""
    return str(record.get("run")), seq_number(record.get("seq"))


def unfinished(journal: Journal) -> list[Record]:
    return [record for _, record in open_actions(journal.entries(journal.checkpoint()))]


def seq_number(value: object) -> int:
    """An action's `seq` as written, or -1 for one that is not a number."""
    if not isinstance(value, int | float | str):
        return -1
    try:
        return int(value)
    except (ValueError, OverflowError):  # "x", NaN; a huge number's infinity
        return -1
