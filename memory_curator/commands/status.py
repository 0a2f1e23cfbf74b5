"""`status`: how the curator is doing, gathered as data (`report.status` renders it).

The inbox counts come from the files on disk; the history (drops by rule, the last sweeps,
verdicts per day) from the journal, leaving out what `undo` took back. Nothing is written:
the index is only looked at, never refreshed.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory_curator.commands.context import Context, Machine
from memory_curator.commands.log import Entry, entries
from memory_curator.commands.note_link import NoteLink, note_link
from memory_curator.core import compose, marks
from memory_curator.core.errors import CuratorError, RulesError
from memory_curator.core.json_types import JsonObject
from memory_curator.core.notes import all_tags, content_hash, parse
from memory_curator.core.privacy import privacy_tags
from memory_curator.core.rules import Rules, Settings
from memory_curator.core.secrets import SECRET
from memory_curator.core.settings import MAX_CANDIDATE_BYTES
from memory_curator.core.text import iso, parse_time
from memory_curator.store import journal as journal_mod
from memory_curator.store import stores
from memory_curator.store.paths import agent_dirs, hash_capped, ignored_entries, list_candidates, oversize, read_capped
from memory_curator.store.records import Record
from memory_curator.store.state import lock_holder, lock_is_free

if TYPE_CHECKING:  # the schedulers' package is imported when `status` asks them, not before
    from memory_curator.commands.schedule import Summary

VERDICTS = ("promote", "patch", "drop", "needs_review")
DAYS = 14
LAST_SWEEPS = 5


@dataclass(frozen=True)
class InboxItem:
    """A candidate file as it is now; `flagged` when a sweep (or a restore) marked it
    needs-review, `held` when it waits for a person without the tag (after an undo)."""

    rel: str
    agent: str
    mtime: float
    flagged: bool
    held: bool
    uncertainty: str | None
    too_large: str | None = None  # `too large: 97.5 MiB > 1 MiB`: never read, never rewritten
    private: bool = False  # it carries a privacy tag: its name is never told to an agent
    digest: str | None = None  # its bytes' hash as read (None: too large to read)

    @property
    def waiting_for_person(self) -> bool:
        return self.flagged or self.held or self.too_large is not None

    @property
    def contradiction(self) -> bool:
        return "contradiction" in (self.uncertainty or "").lower()


# --- what `status` returns ---------------------------------------------------------------------


@dataclass(frozen=True)
class AgentCounts:
    candidates: int = 0
    needs_review: int = 0
    held: int = 0

    def to_json(self) -> JsonObject:
        return {"candidates": self.candidates, "needs_review": self.needs_review, "held": self.held}


@dataclass(frozen=True)
class Inbox:
    candidates: int
    agents: Mapping[str, AgentCounts]

    def to_json(self) -> JsonObject:
        return {"candidates": self.candidates, "agents": {a: c.to_json() for a, c in self.agents.items()}}


@dataclass(frozen=True)
class Waiting:
    """The items waiting for a person: how many, the too large ones, the oldest."""

    count: int
    too_large: tuple[tuple[str, str], ...] = ()  # (path, reason)
    oldest_path: str | None = None
    oldest_since: str | None = None
    oldest_age_hours: float | None = None

    def to_json(self) -> JsonObject:
        return {
            "count": self.count,
            "too_large": [{"path": path, "reason": reason} for path, reason in self.too_large],
            "oldest_path": self.oldest_path,
            "oldest_since": self.oldest_since,
            "oldest_age_hours": self.oldest_age_hours,
        }


@dataclass(frozen=True)
class Drops:
    total: int
    by_rule: Mapping[str, int]

    def to_json(self) -> JsonObject:
        return {"total": self.total, "by_rule": dict(self.by_rule)}


SWEEP_KEYS = ("run", "started", "seconds", "processed", "promoted", "patched", "dropped", "needs_review", "errors")


@dataclass(frozen=True)
class LastSweep:
    """One sweep's `run` record, as the journal holds it (its values unchecked), and whether an
    `undo` took it back."""

    record: Mapping[str, Any]
    undone: bool

    def count(self, key: str) -> object:
        return self.record.get(key)

    @property
    def tokens(self) -> int:
        judge = self.record.get("judge")
        judge = judge if isinstance(judge, Mapping) else {}
        tokens: int = (judge.get("input_tokens") or 0) + (judge.get("output_tokens") or 0)
        return tokens

    def to_json(self) -> JsonObject:
        keys = {k: self.record.get(k) for k in SWEEP_KEYS}
        return {**keys, "judge": self.record.get("judge"), "undone": self.undone}


@dataclass(frozen=True)
class Day:
    """The verdicts of one UTC day."""

    date: str
    counts: Mapping[str, int]  # one per verdict of VERDICTS

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def to_json(self) -> JsonObject:
        return {"date": self.date, **self.counts}


@dataclass(frozen=True)
class IndexState:
    """The index as it is, never refreshed: `usable` None (not read: the rules are invalid),
    False (unusable: `error`, or only its size), True (its size and freshness)."""

    path: str
    usable: bool | None
    error: str | None = None
    bytes: int | None = None
    notes: int | None = None
    problems: int = 0
    refreshed: str | None = None
    age_seconds: int | None = None

    def to_json(self) -> JsonObject:
        if self.usable is None or self.error is not None:
            return {"path": self.path, "usable": self.usable, "error": self.error}
        if not self.usable:
            return {"path": self.path, "usable": False, "bytes": self.bytes}
        return {
            "path": self.path,
            "usable": True,
            "bytes": self.bytes,
            "notes": self.notes,
            "problems": self.problems,
            "refreshed": self.refreshed,
            "age_seconds": self.age_seconds,
        }


@dataclass(frozen=True)
class RulesState:
    """The rules file and whether sweeps can use it (else its first problem)."""

    file: str
    valid: bool
    line: int | None = None
    problem: str | None = None

    def to_json(self) -> JsonObject:
        if self.valid:
            return {"file": self.file, "valid": True}
        return {"file": self.file, "valid": False, "line": self.line, "problem": self.problem}


@dataclass(frozen=True)
class Status:
    """Everything `status` shows (`schedule` is `commands.schedule.summary`'s own shape);
    `judge` only for an agent (MCP): whether the judge is on."""

    vault: str
    state_dir: str
    inbox: Inbox
    needs_review: Waiting
    drops_7d: Drops
    secret_drops: int  # dropped items that held a credential, still in `.dropped/`: their copy keeps it
    contradictions: tuple[str, ...]
    last_sweeps: tuple[LastSweep, ...]
    verdicts_per_day: tuple[Day, ...]
    index: IndexState | None
    schedule: Summary | ScheduleUnread
    lock_holder: str | None  # None: the lock is free
    lock_free: bool
    journal_path: str
    journal_bytes: int
    actions: int
    rules: RulesState
    judge: str | None = None
    ignored: tuple[tuple[str, str], ...] = ()  # inbox entries that are no candidates: (path, why)
    review_note: NoteLink | None = None

    def to_json(self) -> JsonObject:
        out: JsonObject = {
            "vault": self.vault,
            "state_dir": self.state_dir,
            "inbox": self.inbox.to_json(),
            "needs_review": self.needs_review.to_json(),
            "drops_7d": self.drops_7d.to_json(),
            "secret_drops": self.secret_drops,
            "contradictions": list(self.contradictions),
            "last_sweeps": [sweep.to_json() for sweep in self.last_sweeps],
            "verdicts_per_day": [day.to_json() for day in self.verdicts_per_day],
            "index": self.index.to_json() if self.index is not None else None,
            "schedule": self.schedule.to_json(),
            "lock": {"free": self.lock_free, "holder": self.lock_holder},
            "journal": {"path": self.journal_path, "bytes": self.journal_bytes, "actions": self.actions},
            "rules": self.rules.to_json(),
            "ignored": [{"path": path, "why": why} for path, why in self.ignored],
            "review_note": self.review_note.to_json() if self.review_note else None,
        }
        return out if self.judge is None else {**out, "judge": self.judge}


def scan_inbox(root: Path, state: Path, agent: str | None = None, settings: Settings | None = None) -> list[InboxItem]:
    """Every candidate file in the inbox (or one agent folder), oldest first; a file over the
    rules' `max_candidate_bytes` is listed by its size and never read."""
    settings = settings or Settings()
    limit = settings.max_candidate_bytes
    held = stores.load_ledger(state)
    items = []
    for name, folder in agent_dirs(root):
        if agent is not None and name != agent:
            continue
        for found in list_candidates(folder, name, root):
            try:
                stat = found.path.stat()
                raw = read_capped(found.path, limit) if stat.st_size <= limit else None
            except OSError:
                continue
            mtime = stat.st_mtime
            if raw is None:
                big = oversize(found.path, limit)
                items.append(InboxItem(found.rel, name, mtime, False, False, big, too_large=big))
                continue
            digest = content_hash(raw)
            on_hold = held.get(found.rel) == digest
            try:  # one file that cannot be read as a note is still counted; it never stops `status`
                note = parse(raw)
                why = uncertainty(note.text)
                flagged = compose.has_review_tag(note.frontmatter) or why is not None
                private = bool(privacy_tags(all_tags(note), settings.privacy_tags))
            except Exception:
                flagged, why, private = False, None, False
            items.append(InboxItem(found.rel, name, mtime, flagged, on_hold, why, private=private, digest=digest))
    return sorted(items, key=lambda i: (i.mtime, i.rel))


def uncertainty(text: str) -> str | None:
    """The reason in the last `curator uncertainty` line, without its time."""
    lines = [ln for ln in text.splitlines() if ln.startswith(marks.REVIEW_MARK)]
    if not lines:
        return None
    reason = lines[-1][len(marks.REVIEW_MARK) :].rstrip()
    head, _, tail = reason.rpartition(" (")
    return head if head and tail.endswith(")") and parse_time(tail[:-1]) else reason


def gather(ctx: Context, for_agent: bool = False) -> Status:
    """Everything `status` shows; ages, the 7-day drops and the days are counted from the clock.
    `for_agent` (MCP): no private item is named, so an agent learns nothing of one from status."""
    root, state, now = ctx.root, ctx.state, ctx.clock.now()
    journal = journal_mod.Journal(state / "journal.jsonl")
    records = list(journal.records())
    log = [e for e in entries(records) if e.undone_by is None and e.status in ("done", "recovered")]
    rules, rules_state = rules_summary(root)
    items = scan_inbox(root, state, settings=rules.settings if rules else None)
    named = [i for i in items if not i.private] if for_agent else items
    limit = (rules.settings if rules else Settings()).max_candidate_bytes
    free = lock_is_free(state)
    return Status(
        vault=str(root),
        state_dir=str(state),
        inbox=inbox_summary(items),
        needs_review=review_summary(items, now, named),
        drops_7d=drops(log, now),
        secret_drops=secret_drops(log),
        contradictions=tuple(contradictions(root, log, named, limit)),
        last_sweeps=last_sweeps(records),
        verdicts_per_day=per_day(log, now),
        index=index_summary(root, state, now, rules),
        schedule=schedule_summary(root, state, ctx.machine),
        lock_free=free,
        lock_holder=None if free else lock_holder(state),
        journal_path=str(journal.path),
        journal_bytes=journal.size(),
        actions=len(log),
        rules=rules_state,
        ignored=tuple((e.rel, e.why) for e in ignored_entries(root)),
        review_note=None if for_agent else note_link(root, rules),
    )


def rules_summary(root: Path) -> tuple[Rules | None, RulesState]:
    """The vault's rules and whether a sweep can use them: an invalid file stops every sweep,
    and `status` says so with its first problem (`file:line: problem`)."""
    from memory_curator.store.rules_file import DEFAULT_RULES, load, vault_rules_file

    path = vault_rules_file(root) or DEFAULT_RULES
    try:
        rules = load(path)
    except RulesError as exc:
        return None, RulesState(exc.path, False, exc.line, exc.message)
    return rules, RulesState(str(path), True)


_CONTRADICTION = re.compile(r"(?:^|: |\()contradiction:")  # how the curator's reasons say it


def contradictions(root: Path, log: list[Entry], items: list[InboxItem], limit: int = MAX_CANDIDATE_BYTES) -> list[str]:
    """Inbox items the curator flagged as a contradiction, by its journal alone: its last
    needs-review action on the file said so, and the file still holds the bytes it wrote then.
    A curator line an agent wrote into its own candidate is only text, never listed. A file over
    `limit` is never read (it is listed too large)."""
    last: dict[str, Entry] = {}
    for entry in log:  # journal order, undone actions already left out
        if entry.verdict == "needs_review" and entry.inbox:
            last[entry.inbox] = entry
    out = []
    for item in items:
        flagged = last.get(item.rel)
        if flagged is None or not recorded_contradiction(flagged):
            continue
        try:
            same = hash_capped(root / item.rel, limit) == flagged.record.get("after_hash")
        except OSError:  # gone, or no longer a regular file (named with the ignored entries)
            continue
        if same:
            out.append(item.rel)
    return sorted(out)


def recorded_contradiction(entry: Entry) -> bool:
    """The sweep's own flag; for a journal written before the flag was kept, its reason."""
    flag = entry.record.get("contradiction")
    return flag if isinstance(flag, bool) else bool(_CONTRADICTION.search(entry.reason))


def inbox_summary(items: list[InboxItem]) -> Inbox:
    agents: dict[str, AgentCounts] = {}
    for item in items:
        counts = agents.get(item.agent, AgentCounts())
        agents[item.agent] = AgentCounts(
            counts.candidates + 1, counts.needs_review + item.flagged, counts.held + (item.held and not item.flagged)
        )
    return Inbox(len(items), agents)


def review_summary(items: list[InboxItem], now: dt.datetime, named: list[InboxItem] | None = None) -> Waiting:
    """How many wait and since when; only the items in `named` (all, unless for an agent) are named."""
    waiting = [i for i in items if i.waiting_for_person]
    shown = {i.rel for i in (items if named is None else named)}
    too_large = tuple((i.rel, i.too_large) for i in waiting if i.too_large and i.rel in shown)
    if not waiting:
        return Waiting(0, too_large)
    oldest = waiting[0]
    return Waiting(
        len(waiting),
        too_large,
        oldest.rel if oldest.rel in shown else "(a private item)",
        iso(dt.datetime.fromtimestamp(oldest.mtime, dt.UTC)),
        round(max(0.0, now.timestamp() - oldest.mtime) / 3600, 1),
    )


def drops(log: list[Entry], now: dt.datetime) -> Drops:
    """Drops of the last 7 days that are still in `.dropped/` (not undone, not restored)."""
    restored = {e.dest for e in log if e.verdict == "restore"}
    recent = [
        e
        for e in log
        if e.verdict == "drop" and e.time and now - e.time <= dt.timedelta(days=7) and e.dest not in restored
    ]
    by_rule = Counter(e.rule or "?" for e in recent)
    return Drops(len(recent), dict(by_rule.most_common()))


def secret_drops(log: list[Entry]) -> int:
    """Drops still in `.dropped/` (not undone, not restored) of items last flagged with reason
    code `secret`: read from the journal, never by scanning the audit copies, which keep the
    candidate whole, credential included (docs/safety.md, "Secrets")."""
    restored = {e.dest for e in log if e.verdict == "restore"}
    code: dict[str, object] = {}
    count = 0
    for entry in log:
        if entry.verdict == "needs_review" and entry.inbox:
            code[entry.inbox] = entry.record.get("reason_code")
        elif entry.verdict == "drop" and entry.inbox and code.get(entry.inbox) == SECRET and entry.dest not in restored:
            count += 1
    return count


def last_sweeps(records: list[Record]) -> tuple[LastSweep, ...]:
    undone = {str(r.get("undoes")) for r in records if r.get("event") == "undo"}
    runs = [r for r in records if r.get("event") == "run"][-LAST_SWEEPS:]
    return tuple(LastSweep(r, r.get("run") in undone) for r in runs)


def per_day(log: list[Entry], now: dt.datetime, days: int = DAYS) -> tuple[Day, ...]:
    """Verdicts per UTC day over the last `days` days, oldest first (zero days included)."""
    first = (now - dt.timedelta(days=days - 1)).date()
    counts = {first + dt.timedelta(days=n): dict.fromkeys(VERDICTS, 0) for n in range(days)}
    for entry in log:
        day = entry.time.astimezone(dt.UTC).date() if entry.time else None
        if day in counts and entry.verdict in VERDICTS:
            counts[day][entry.verdict] += 1
    return tuple(Day(day.isoformat(), c) for day, c in counts.items())


def index_summary(root: Path, state: Path, now: dt.datetime, rules: Rules | None) -> IndexState | None:
    """Size and freshness of the index, read without refreshing it (None: never built). With
    invalid rules (`rules` None) it is not read: `usable` is null, and `rules` says why."""
    path = state / "index.sqlite3"
    if not path.exists():
        return None
    if rules is None:
        return IndexState(str(path), None, "not read: the rules file is invalid")
    try:
        from memory_curator.index.store import Index

        index = Index(root, rules, state)
        try:
            if not index.usable():
                return IndexState(str(path), False, bytes=path.stat().st_size)
            stats = index.stats()
        finally:
            index.close()
    except (ImportError, CuratorError, OSError) as exc:
        return IndexState(str(path), False, str(exc))
    refreshed = parse_time(stats.get("refreshed"))
    age = round((now - refreshed).total_seconds()) if refreshed else None
    return IndexState(
        str(path),
        True,
        bytes=stats.get("bytes"),
        notes=stats.get("notes"),
        problems=len(stats.get("problems") or []),
        refreshed=stats.get("refreshed"),
        age_seconds=age,
    )


@dataclass(frozen=True)
class ScheduleUnread:
    """The schedulers could not be asked: why (`status` says the schedule is unknown)."""

    error: str

    def to_json(self) -> JsonObject:
        return {"installed": False, "error": self.error}


def schedule_summary(root: Path, state: Path, machine: Machine) -> Summary | ScheduleUnread:
    """The scheduled sweeps of this vault and the last one's outcome."""
    try:
        from memory_curator.commands import schedule

        return schedule.summary(machine, root, state)  # asks the schedulers themselves
    except (ImportError, CuratorError, OSError) as exc:
        return ScheduleUnread(str(exc))
