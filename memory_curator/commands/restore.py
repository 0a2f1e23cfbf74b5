"""`restore`: put a dropped item back in the inbox for a person to decide.

The audit line comes off, `needs-review` goes into its tags (nothing else changes: the body
bytes are the original's), and the item is held for review so the rule that dropped it does
not drop it again at the next sweep. It goes back under its original inbox name (from the
journal); a file already there is never overwritten.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from memory_curator.commands.context import Context
from memory_curator.commands.desk import locked, vault_file
from memory_curator.commands.log import entries
from memory_curator.commands.planning import new_run_id, restore_plan
from memory_curator.core import compose
from memory_curator.core.errors import CuratorError
from memory_curator.core.json_types import JsonObject
from memory_curator.core.names import DROPPED, INBOX, ROOT_AGENT
from memory_curator.core.plan import by as plan_by
from memory_curator.store import journal as journal_mod
from memory_curator.store import stores, writer
from memory_curator.store.paths import read_whole, safe_join

_STAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-(.+)$")


@dataclass(frozen=True)
class Restored:
    dropped: str
    inbox_path: str
    run_id: str

    def to_json(self) -> JsonObject:
        return {"restored": self.dropped, "inbox_path": self.inbox_path, "run_id": self.run_id}


def restore(ctx: Context, dropped: str | Path, wait: bool = False, by: str | None = None) -> Restored:
    """Put `dropped` back; `by` names how the person decided when not in a terminal (the review
    note's restore box), journalled as `by` like the note's other actions."""
    rel, agent = dropped_item(ctx.root, dropped)
    now = ctx.clock.now()
    with locked(ctx, wait) as executor:
        raw = read_whole(safe_join(ctx.root, rel))
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise CuratorError(f"{rel}: not UTF-8 text; move it back by hand") from None
        target = original_name(executor.journal, rel, agent)
        dest = safe_join(ctx.root, target)
        if dest.exists() or dest.is_symlink():
            raise CuratorError(f"{target} already exists; not restored (rename or move that file first)")
        data = compose.with_review_tag(compose.strip_drop_mark(text)).encode("utf-8")
        plan = restore_plan(new_run_id(now), target, rel, raw, data, f"restored by {ctx.user}")
        plan = plan_by(plan, by)
        try:
            executor.execute(plan)
        except FileExistsError:
            raise CuratorError(f"{target} already exists; not restored (rename or move that file first)") from None
        except writer.Conflict:
            raise CuratorError(f"{rel} changed while it was being restored; check {target}") from None
        except OSError as exc:
            raise CuratorError(f"{rel}: cannot restore: {exc.strerror or exc}; check {target}") from None
        stores.hold_for_review(ctx.root, ctx.state, executor.held, ctx.files)
    return Restored(rel, target, plan.run)


def dropped_item(root: Path, path: str | Path) -> tuple[str, str]:
    """(vault-relative path, agent id) of a file in `_inbox/.dropped/<agent>/`."""
    rel, _ = vault_file(root, path)
    parts = rel.split("/")
    if len(parts) != 4 or parts[:2] != [INBOX, DROPPED] or not parts[3].endswith(".md"):
        raise CuratorError(f"{rel}: not a dropped item (those are in {INBOX}/{DROPPED}/<agent>/)")
    return rel, parts[2]


def original_name(journal: journal_mod.Journal, rel: str, agent: str) -> str:
    """Where the dropped item came from: the journal knows; otherwise its name without the
    drop time, in its agent's folder."""
    for entry in reversed(entries(journal.records())):
        if entry.verdict == "drop" and entry.dest == rel and entry.inbox and entry.inbox.startswith(f"{INBOX}/"):
            return entry.inbox
    name = Path(rel).name
    match = _STAMP.match(name)
    stem = match.group(1) if match else name
    return f"{INBOX}/{stem}" if agent == ROOT_AGENT else f"{INBOX}/{agent}/{stem}"
