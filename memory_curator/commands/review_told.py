"""What the review note tells of a tick it could not apply to an item that no longer waits
(issue 37): the item was decided elsewhere (in `review`, by `resolve`, by a sweep) after the
note was written, and the tick is not silently lost: who decided, when, and the run to undo."""

from __future__ import annotations

from memory_curator.commands.context import Context
from memory_curator.commands.log import Entry, entries
from memory_curator.store.journal import Journal

DECISIONS = ("promote", "patch", "drop")


def decided_elsewhere(ctx: Context, inbox: str, by: str) -> str | None:
    """Why a tick on `inbox`, gone from the inbox, was not applied: its last decision, unless that
    was this note's own (`by`: a tick applied before whose write of the note was lost) or none is
    journalled (the file was moved by hand: nothing to say)."""
    found = [e for e in entries(Journal(ctx.state / "journal.jsonl").records()) if _decides(e, inbox)]
    if not found or found[-1].record.get("by") == by:
        return None
    return said(found[-1])


def _decides(entry: Entry, inbox: str) -> bool:
    return entry.inbox == inbox and entry.verdict in DECISIONS and entry.status == "done" and not entry.undone_by


def said(entry: Entry) -> str:
    """One line, with no mark the note's inert rule would strip: what, when, by whom, the run."""
    when = entry.time.strftime("%Y-%m-%d %H:%M UTC") if entry.time else "at an unknown time"
    where = f" into {entry.dest}" if entry.verdict != "drop" and entry.dest else ""
    via = entry.record.get("by")
    who = f" through {via}" if isinstance(via, str) else ""
    return (
        f"already decided elsewhere: {entry.verdict}{where} on {when}{who} ({entry.reason or 'no reason'}); "
        f"memory-curator undo {entry.run} takes it back"
    )
