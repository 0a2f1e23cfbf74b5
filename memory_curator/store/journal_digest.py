"""What the review note reads of the journal, folded as the journal grows and kept in the state
directory (`journal-digest.json`), so that a run reads only the records appended since the last.

The journal only grows (one record per action, kept for `log` and `undo`); read whole on every
run, a year of a busy vault's records made each run pay for all of them (docs/review.md, "What it
reads of the journal"). The note needs few of them: the last run's id, each inbox path's latest
flag, the last sweeps' totals, and the week's drops with what restored or undid them. The digest
keeps those records (a flag's with only the fields the note reads), in journal order, so the note
reads them exactly as it read the whole journal. It still grows with every inbox path ever
flagged (a flag applies again if `undo` brings those very bytes back): a few MB a year.

A digest that cannot be read, or was folded from another journal (its first line differs, the
journal is shorter than what was folded, or no line ends where the folding stopped), is folded
again from the start. A last line without its
newline (an append under way) is read once it is whole. One that cannot be saved is folded again
from the last saved offset by the next run.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from memory_curator.core.json_types import JsonObject
from memory_curator.core.text import parse_time
from memory_curator.store.journal import Journal, action_key
from memory_curator.store.records import Record
from memory_curator.store.writer import FILES, Files

DIGEST = "journal-digest.json"
VERSION = 2
FLAG_FIELDS = ("time", "event", "run", "seq", "verdict", "inbox", "reason_code", "target", "after_hash")
RUNS_KEPT = 10  # sweeps' `run` records kept (the note shows the last 3)
WINDOW = dt.timedelta(days=8)  # the note shows a week's drops; a day more for a clock set back
WINDOWED = ("drop", "restore", "undo")  # the verdicts whose begin and end records the drops need
Kept = tuple[int, Record]  # a record and its byte offset in the journal


@dataclass
class Digest:
    """The records the review note reads, by what they serve; `records()` gives them in journal
    order. `offset`: the journal's bytes folded; `head`: the hash of its first line."""

    offset: int = 0
    head: str = ""
    last_run: str | None = None
    flags: dict[str, Kept] = field(default_factory=dict)  # inbox path -> its latest needs_review begin
    runs: list[Kept] = field(default_factory=list)  # the last sweeps that did something
    window: dict[str, Kept] = field(default_factory=dict)  # "begin|end run seq" -> drops, restores, undos

    def fold(self, offset: int, record: Record) -> None:
        """Take one record in (records come in journal order)."""
        run_id, inbox = record.get("run"), record.get("inbox")
        if isinstance(run_id, str):
            self.last_run = run_id
        event = record.get("event")
        if event == "begin" and record.get("verdict") == "needs_review" and isinstance(inbox, str):
            self.flags[inbox] = (offset, _flag_of(record))
        elif event == "run" and (record.get("processed") or record.get("errors")):
            self.runs = [*self.runs, (offset, record)][-RUNS_KEPT:]
        run, seq = action_key(record)
        key = f"{run} {seq}"
        if event == "begin" and record.get("verdict") in WINDOWED:
            self.window[f"begin {key}"] = (offset, record)
        elif event == "end" and f"begin {key}" in self.window and (f"end {key}" not in self.window or record.get("ok")):
            self.window[f"end {key}"] = (offset, record)  # the first end, or a later one that says ok: as `log`

    def prune(self, now: dt.datetime) -> None:
        """Forget the drops, restores and undos begun before the window (and their ends)."""
        old = {
            key.split(" ", 1)[1] for key, (_, r) in self.window.items() if key.startswith("begin ") and _before(r, now)
        }
        self.window = {k: v for k, v in self.window.items() if k.split(" ", 1)[1] not in old}

    def flagged(self) -> list[Record]:
        """Each inbox path's latest needs_review begin, in journal order (`review.flag_reasons`)."""
        return _ordered(self.flags.values())

    def sweeps(self) -> list[Record]:
        """The last sweeps' `run` records, in journal order."""
        return _ordered(self.runs)

    def actions(self) -> list[Record]:
        """The drops, restores and undos of the window with their end records, in journal order."""
        return _ordered(self.window.values())

    def records(self) -> list[Record]:
        """Every record kept, each once, in journal order."""
        return _ordered([*self.flags.values(), *self.runs, *self.window.values()])

    def to_json(self) -> JsonObject:
        data = {k: getattr(self, k) for k in ("offset", "head", "last_run", "flags", "runs", "window")}
        return {"version": VERSION, **data}

    @classmethod
    def from_json(cls, data: object) -> Digest:
        """The digest saved; a fresh one when it is not one this version wrote whole."""
        try:
            if not isinstance(data, dict) or data.get("version") != VERSION:
                return cls()
            return cls(
                int(data["offset"]),
                str(data["head"]),
                data["last_run"],
                {str(k): _kept(o, r) for k, (o, r) in data["flags"].items()},
                [_kept(o, r) for o, r in data["runs"]],
                {str(k): _kept(o, r) for k, (o, r) in data["window"].items()},
            )
        except (AttributeError, KeyError, TypeError, ValueError):
            return cls()


def read(journal: Journal, state: Path, now: dt.datetime, files: Files = FILES) -> Digest:
    """The digest of the journal as it is now: the one saved, with the records appended since
    folded in (saved again when there were any). Run under the sweep lock: one writer."""
    path = state / DIGEST
    try:
        digest = Digest.from_json(json.loads(path.read_bytes()))
    except (OSError, ValueError):
        digest = Digest()
    head, ends = _bounds(journal.path, digest.offset)
    if digest.head != head or not ends:
        digest = Digest(head=head)
    start = digest.offset
    for offset, after, record in journal.lines(start):
        if record is not None:
            digest.fold(offset, record)
        digest.offset = after
    if digest.offset != start:
        digest.prune(now)
        data = json.dumps(digest.to_json(), ensure_ascii=False, default=str)
        with contextlib.suppress(OSError):  # a full disk: the next run folds these records again
            files.write_state_file(path, data.encode("utf-8", "surrogatepass"))
    return digest


def _flag_of(record: Record) -> Record:
    """A flag's begin record with only the fields the note reads (`FLAG_FIELDS`)."""
    fields: dict[str, object] = dict(record)
    return cast(Record, {k: fields[k] for k in FLAG_FIELDS if k in fields})


def _kept(offset: object, record: object) -> Kept:
    """A record the digest saved, as read back (a JSON object, else not one this version wrote)."""
    if not isinstance(offset, int | str) or not isinstance(record, dict):
        raise TypeError("not a kept record")
    return int(offset), cast(Record, dict(record))


def _ordered(kept: Iterable[Kept]) -> list[Record]:
    return [record for _, record in sorted(kept, key=lambda item: item[0])]


def _bounds(path: Path, offset: int) -> tuple[str, bool]:
    """The hash of the journal's first line, and whether one of its lines ends just before
    `offset` (or it is 0): else the journal is shorter, or was written over and `offset` falls
    inside a line. One open of the journal."""
    try:
        with open(path, "rb") as handle:
            head = hashlib.sha256(handle.readline()).hexdigest()
            if offset == 0:
                return head, True
            handle.seek(offset - 1)
            return head, handle.read(1) == b"\n"
    except OSError:
        return "", offset == 0


def _before(record: Record, now: dt.datetime) -> bool:
    time = parse_time(record.get("time"))
    return time is not None and now - time > WINDOW
