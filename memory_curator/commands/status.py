"""`status`: how the curator is doing, gathered as data (`report.status` renders it).

The inbox counts come from the files on disk; the history (drops by rule, the last sweeps,
verdicts per day) from the journal, leaving out what `undo` took back. Nothing is written:
the index is only looked at, never refreshed.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory_curator.commands.context import Context, Machine
from memory_curator.commands.log import Entry, entries
from memory_curator.core import compose
from memory_curator.core.errors import CuratorError, RulesError
from memory_curator.core.notes import all_tags, content_hash, parse
from memory_curator.core.privacy import privacy_tags
from memory_curator.core.rules import Rules, Settings
from memory_curator.core.text import iso, parse_time
from memory_curator.store import journal as journal_mod
from memory_curator.store import stores
from memory_curator.store.paths import agent_dirs, list_candidates, oversize, read_capped
from memory_curator.store.state import lock_holder, lock_is_free

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

    @property
    def waiting_for_person(self) -> bool:
        return self.flagged or self.held or self.too_large is not None

    @property
    def contradiction(self) -> bool:
        return "contradiction" in (self.uncertainty or "").lower()


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
            on_hold = held.get(found.rel) == content_hash(raw)
            try:  # one file that cannot be read as a note is still counted; it never stops `status`
                note = parse(raw)
                why = uncertainty(note.text)
                flagged = compose.has_review_tag(note.frontmatter) or why is not None
                private = bool(privacy_tags(all_tags(note), settings.privacy_tags))
            except Exception:
                flagged, why, private = False, None, False
            items.append(InboxItem(found.rel, name, mtime, flagged, on_hold, why, private=private))
    return sorted(items, key=lambda i: (i.mtime, i.rel))


def uncertainty(text: str) -> str | None:
    """The reason in the last `curator uncertainty` line, without its time."""
    lines = [ln for ln in text.splitlines() if ln.startswith(compose.REVIEW_MARK)]
    if not lines:
        return None
    reason = lines[-1][len(compose.REVIEW_MARK) :].rstrip()
    head, _, tail = reason.rpartition(" (")
    return head if head and tail.endswith(")") and parse_time(tail[:-1]) else reason


def gather(ctx: Context, for_agent: bool = False) -> dict[str, Any]:
    """Everything `status` shows; ages, the 7-day drops and the days are counted from the clock.
    `for_agent` (MCP): no private item is named, so an agent learns nothing of one from status."""
    root, state, now = ctx.root, ctx.state, ctx.clock.now()
    journal = journal_mod.Journal(state / "journal.jsonl")
    records = list(journal.records())
    log = [e for e in entries(records) if e.undone_by is None and e.status in ("done", "recovered")]
    rules, rules_state = rules_summary(root)
    items = scan_inbox(root, state, settings=rules.settings if rules else None)
    named = [i for i in items if not i.private] if for_agent else items
    return {
        "vault": str(root),
        "state_dir": str(state),
        "inbox": inbox_summary(items),
        "needs_review": review_summary(items, now, named),
        "drops_7d": drops(log, now),
        "contradictions": contradictions(root, log, named),
        "last_sweeps": last_sweeps(records),
        "verdicts_per_day": per_day(log, now),
        "index": index_summary(root, state, now, rules),
        "schedule": schedule_summary(root, state, ctx.machine),
        "lock": {"free": lock_is_free(state), "holder": None if lock_is_free(state) else lock_holder(state)},
        "journal": {"path": str(journal.path), "bytes": journal.size(), "actions": len(log)},
        "rules": rules_state,
    }


def rules_summary(root: Path) -> tuple[Rules | None, dict[str, Any]]:
    """The vault's rules and whether a sweep can use them: an invalid file stops every sweep,
    and `status` says so with its first problem (`file:line: problem`)."""
    from memory_curator.store.rules_file import DEFAULT_RULES, load, vault_rules_file

    path = vault_rules_file(root) or DEFAULT_RULES
    try:
        rules = load(path)
    except RulesError as exc:
        return None, {"file": exc.path, "valid": False, "line": exc.line, "problem": exc.message}
    return rules, {"file": str(path), "valid": True}


_CONTRADICTION = re.compile(r"(?:^|: |\()contradiction:")  # how the curator's reasons say it


def contradictions(root: Path, log: list[Entry], items: list[InboxItem]) -> list[str]:
    """Inbox items the curator flagged as a contradiction, by its journal alone: its last
    needs-review action on the file said so, and the file still holds the bytes it wrote then.
    A curator line an agent wrote into its own candidate is only text, never listed."""
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
            raw = (root / item.rel).read_bytes()
        except OSError:
            continue
        if content_hash(raw) == flagged.record.get("after_hash"):
            out.append(item.rel)
    return sorted(out)


def recorded_contradiction(entry: Entry) -> bool:
    """The sweep's own flag; for a journal written before the flag was kept, its reason."""
    flag = entry.record.get("contradiction")
    return flag if isinstance(flag, bool) else bool(_CONTRADICTION.search(entry.reason))


def inbox_summary(items: list[InboxItem]) -> dict[str, Any]:
    agents: dict[str, dict[str, int]] = {}
    for item in items:
        counts = agents.setdefault(item.agent, {"candidates": 0, "needs_review": 0, "held": 0})
        counts["candidates"] += 1
        counts["needs_review"] += item.flagged
        counts["held"] += item.held and not item.flagged
    return {"candidates": len(items), "agents": agents}


def review_summary(items: list[InboxItem], now: dt.datetime, named: list[InboxItem] | None = None) -> dict[str, Any]:
    """How many wait and since when; only the items in `named` (all, unless for an agent) are named."""
    waiting = [i for i in items if i.waiting_for_person]
    oldest = waiting[0] if waiting else None
    shown = {i.rel for i in (items if named is None else named)}
    return {
        "count": len(waiting),
        "too_large": [{"path": i.rel, "reason": i.too_large} for i in waiting if i.too_large and i.rel in shown],
        "oldest_path": (oldest.rel if oldest.rel in shown else "(a private item)") if oldest else None,
        "oldest_since": iso(dt.datetime.fromtimestamp(oldest.mtime, dt.UTC)) if oldest else None,
        "oldest_age_hours": round(max(0.0, now.timestamp() - oldest.mtime) / 3600, 1) if oldest else None,
    }


def drops(log: list[Entry], now: dt.datetime) -> dict[str, Any]:
    """Drops of the last 7 days that are still in `.dropped/` (not undone, not restored)."""
    restored = {e.dest for e in log if e.verdict == "restore"}
    recent = [
        e
        for e in log
        if e.verdict == "drop" and e.time and now - e.time <= dt.timedelta(days=7) and e.dest not in restored
    ]
    by_rule = Counter(e.rule or "?" for e in recent)
    return {"total": len(recent), "by_rule": dict(by_rule.most_common())}


def last_sweeps(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    undone = {str(r.get("undoes")) for r in records if r.get("event") == "undo"}
    runs = [r for r in records if r.get("event") == "run"][-LAST_SWEEPS:]
    keys = ("run", "started", "seconds", "processed", "promoted", "patched", "dropped", "needs_review", "errors")
    return [{**{k: r.get(k) for k in keys}, "judge": r.get("judge"), "undone": r.get("run") in undone} for r in runs]


def per_day(log: list[Entry], now: dt.datetime, days: int = DAYS) -> list[dict[str, Any]]:
    """Verdicts per UTC day over the last `days` days, oldest first (zero days included)."""
    first = (now - dt.timedelta(days=days - 1)).date()
    counts = {first + dt.timedelta(days=n): dict.fromkeys(VERDICTS, 0) for n in range(days)}
    for entry in log:
        day = entry.time.astimezone(dt.UTC).date() if entry.time else None
        if day in counts and entry.verdict in VERDICTS:
            counts[day][entry.verdict] += 1
    return [{"date": day.isoformat(), **c} for day, c in counts.items()]


def index_summary(root: Path, state: Path, now: dt.datetime, rules: Rules | None) -> dict[str, Any] | None:
    """Size and freshness of the index, read without refreshing it (None: never built). With
    invalid rules (`rules` None) it is not read: `usable` is null, and `rules` says why."""
    path = state / "index.sqlite3"
    if not path.exists():
        return None
    if rules is None:
        return {"path": str(path), "usable": None, "error": "not read: the rules file is invalid"}
    try:
        from memory_curator.index.store import Index

        index = Index(root, rules, state)
        try:
            if not index.usable():
                return {"path": str(path), "usable": False, "bytes": path.stat().st_size}
            stats = index.stats()
        finally:
            index.close()
    except (ImportError, CuratorError, OSError) as exc:
        return {"path": str(path), "usable": False, "error": str(exc)}
    refreshed = parse_time(stats.get("refreshed"))
    age = round((now - refreshed).total_seconds()) if refreshed else None
    return {
        "path": str(path),
        "usable": True,
        "bytes": stats.get("bytes"),
        "notes": stats.get("notes"),
        "problems": len(stats.get("problems") or []),
        "refreshed": stats.get("refreshed"),
        "age_seconds": age,
    }


def schedule_summary(root: Path, state: Path, machine: Machine) -> dict[str, Any]:
    """The scheduled sweeps of this vault and the last one's outcome."""
    try:
        from memory_curator.commands import schedule

        return schedule.summary(root, state, machine.home, dict(machine.env))  # asks the schedulers themselves
    except (ImportError, CuratorError, OSError) as exc:
        return {"installed": False, "error": str(exc)}
