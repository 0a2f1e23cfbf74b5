"""The decision log, read back from the journal: one entry per action (a sweep's verdict, a
person's resolve, a restore, an undo), so any note's history can be traced.

Pure over journal records: `entries` pairs each `begin` with its `end` (a drop's end record
names the file it really used) and marks what a later `undo` took back.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory_curator.commands.context import Context
from memory_curator.commands.note_link import NoteLink, note_link
from memory_curator.core.errors import CuratorError
from memory_curator.core.json_types import JsonObject
from memory_curator.core.text import duration_seconds, iso, parse_time
from memory_curator.store.journal import Journal, action_key, seq_number
from memory_curator.store.records import Record


@dataclass(frozen=True)
class Entry:
    """One journalled action. `inbox` is the candidate's inbox path; `dest` the other file
    involved (the durable note, the `.dropped/` copy, or the inbox file itself)."""

    time: dt.datetime | None
    run: str
    seq: int
    verdict: str
    inbox: str | None
    dest: str | None
    reason: str
    rule: str | None
    status: str  # done / failed / open (no end yet: a crash) / recovered (finished by the next sweep's
    # recovery) / "closed: no effect", "closed: taken back" (recovery closed it; it changed nothing)
    error: str | None
    record: Record  # its begin record
    undone_by: str | None = None
    made: tuple[str, ...] = ()  # the folders the plan made (its end record): what an undo may remove

    @property
    def undoes(self) -> tuple[str, int] | None:
        target = self.record.get("undoes")
        if isinstance(target, list | tuple) and len(target) == 2:
            return str(target[0]), seq_number(target[1])
        return None

    def touches(self, path: str) -> bool:
        return path in (self.inbox, self.dest)

    def to_json(self) -> JsonObject:
        out: JsonObject = {
            "time": _iso(self.time),
            "run": self.run,
            "seq": self.seq,
            "verdict": self.verdict,
            "inbox_path": self.inbox,
            "path": self.dest,
            "reason": self.reason,
            "rule": self.rule,
            "status": self.status,
            "undone_by": self.undone_by,
        }
        if self.error:
            out["error"] = self.error
        if isinstance(self.record.get("by"), str):  # how a person decided, when not at a terminal
            out["by"] = self.record["by"]
        if isinstance(self.record.get("copy"), str):  # the review note's conflict copy it was ticked in
            out["copy"] = self.record["copy"]
        if self.undoes:
            out["undoes"] = {"run": self.undoes[0], "seq": self.undoes[1]}
        return out


def entries(records: Iterable[Record]) -> list[Entry]:
    """Every action in journal order, with its outcome and whether it was undone."""
    begins: dict[tuple[str, int], Record] = {}
    ends: dict[tuple[str, int], Record] = {}
    for record in records:
        key = action_key(record)
        if record.get("event") == "begin":
            begins[key] = record
        elif record.get("event") == "end" and (key not in ends or record.get("ok")):
            ends[key] = record
    out = [_entry(begin, ends.get(key)) for key, begin in begins.items()]
    undone = {e.undoes: e.run for e in out if e.verdict == "undo" and e.status == "done" and e.undoes}
    return [_with_undo(e, undone.get((e.run, e.seq))) for e in out]


def _entry(begin: Record, end: Record | None) -> Entry:
    status = "open" if end is None else "failed" if not end.get("ok") else "done"
    if end is not None and end.get("ok") and end.get("recovered"):
        status = f"closed: {end['closed']}" if isinstance(end.get("closed"), str) else "recovered"
    dest = (end or {}).get("dest") or begin.get("dest")
    return Entry(
        time=parse_time(begin.get("time")),
        run=str(begin.get("run")),
        seq=seq_number(begin.get("seq")),
        verdict=str(begin.get("verdict")),
        inbox=_str(begin.get("inbox")),
        dest=_str(dest),
        reason=str(begin.get("reason") or ""),
        rule=_str(begin.get("rule")),
        status=status,
        error=_str((end or {}).get("error")),
        record=begin,
        made=_made(end),
    )


def _made(end: Record | None) -> tuple[str, ...]:
    made = (end or {}).get("made")
    return tuple(str(folder) for folder in made) if isinstance(made, list) else ()


def _with_undo(entry: Entry, by: str | None) -> Entry:
    if by is None:
        return entry
    return Entry(**{**entry.__dict__, "undone_by": by})


@dataclass(frozen=True)
class Log:
    """The entries `log` shows, in journal order."""

    entries: tuple[Entry, ...]
    note: NoteLink | None = None  # the review note, whose link the printed log ends with

    def to_json(self) -> JsonObject:
        return {"count": len(self.entries), "entries": [entry.to_json() for entry in self.entries]}


def read(ctx: Context, since_text: str | None, file: str | None) -> Log:
    """The journal's entries, narrowed to one note's history and/or a time window (`--since
    7d` counts back from `clock`)."""
    found = entries(Journal(ctx.state / "journal.jsonl").records())
    if file:
        found = trace(found, vault_path(ctx.root, file))
    if since_text:
        found = since(found, parse_since(since_text, ctx.clock.now()))
    try:
        rules = ctx.rules
    except CuratorError:  # the log is read whatever the rules file says
        rules = None
    return Log(tuple(found), note_link(ctx.root, rules))


def vault_path(root: Path, given: str) -> str:
    """A vault-relative POSIX path from what a person typed (the file may be long gone)."""
    path = Path(given)
    if path.is_absolute():
        try:
            return path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            raise CuratorError(f"{given}: not inside the vault {root}") from None
    return path.as_posix().removeprefix("./")


def trace(all_entries: list[Entry], path: str) -> list[Entry]:
    """A note's history: every action on `path`, and for each candidate that went into it,
    that candidate's earlier actions (the needs-review flags before a person decided)."""
    direct = [e for e in all_entries if e.touches(path)]
    feeders = {(e.inbox, e.time) for e in direct if e.dest == path and e.inbox and e.inbox != path}
    earlier = [
        e
        for e in all_entries
        if e not in direct and e.verdict == "needs_review" and any(e.inbox == i and _before(e, t) for i, t in feeders)
    ]
    chosen = {id(e) for e in [*direct, *earlier]}
    return [e for e in all_entries if id(e) in chosen]


def _before(entry: Entry, moment: dt.datetime | None) -> bool:
    return entry.time is None or moment is None or entry.time <= moment


def since(all_entries: list[Entry], moment: dt.datetime) -> list[Entry]:
    return [e for e in all_entries if e.time is not None and e.time >= moment]


def parse_since(text: str, now: dt.datetime) -> dt.datetime:
    """`30m`, `12h`, `7d`, `2w`, or an ISO date/time (UTC when no zone is given)."""
    seconds = duration_seconds(text)
    if seconds is not None:
        return now - dt.timedelta(seconds=seconds)
    moment = parse_time(text)
    if moment is None:
        raise CuratorError(f"--since {text!r}: use 30m, 12h, 7d, 2w, or a date like 2026-11-01")
    return moment


def _iso(moment: dt.datetime | None) -> str | None:
    return iso(moment) if moment else None


def _str(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None
