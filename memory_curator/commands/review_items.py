"""What each waiting item's section of the review note shows and offers, and the note's head, as
the index, the journal and the vault say now (`commands.review_note` applies and writes)."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from memory_curator.commands.context import Context
from memory_curator.commands.desk import Desk
from memory_curator.commands.log import entries
from memory_curator.commands.review import ABOUT_A_NOTE, Flag, View, evaluate, flag_of, flag_reasons, queue
from memory_curator.commands.review_memory import ItemCache, Lazy, Memory, Reuse, hash_at
from memory_curator.commands.status import InboxItem
from memory_curator.core import candidate as cand
from memory_curator.core import review_note as rn
from memory_curator.core import review_quote
from memory_curator.core.errors import CuratorError
from memory_curator.core.notes import all_tags, parse
from memory_curator.core.privacy import privacy_tags, withheld
from memory_curator.core.reasons import CODES
from memory_curator.core.secrets import elsewhere as secret_elsewhere
from memory_curator.core.secrets import masked_text
from memory_curator.core.text import iso, one_line
from memory_curator.store.paths import read_whole, safe_join
from memory_curator.store.records import Record

SWEEPS_SHOWN = 3
LEFT = "✓ Ticked: left: it stays in the queue"
DELETED = "ℹ Its section was deleted from the note: it stays in the queue (tick drop to let it go)"
REVIEW_HINT = "Private items and writes into your own notes are decided only in a terminal: `memory-curator review`."


def gather(desk: Desk, memory: Memory, reuse: Reuse | None, flagged: list[Record]) -> list[rn.Item]:
    """The items waiting for a person, newest first, each with what it allows."""
    waiting = queue(desk)
    if not waiting:
        return []
    cache = ItemCache.load(desk, reuse.seen if reuse else None)
    flags = flag_reasons(desk, flagged, among={i.rel for i in waiting})
    querier = Lazy(desk, reuse.querier if reuse else None)
    try:
        return [_grouped(desk, querier, i, flag_of(i, flags), memory, cache) for i in reversed(waiting)]
    finally:
        querier.close()
        cache.save(desk)


def _grouped(desk: Desk, querier: Lazy, found: InboxItem, flag: Flag, memory: Memory, cache: ItemCache) -> rn.Item:
    """The item with its group as `review`'s `a` groups it (`review.alike`): agent, code, note."""
    item = _safe_item(desk, querier, found, flag.code, memory, cache)
    return replace(item, agent=found.agent, about=flag.target if item.code in ABOUT_A_NOTE else None)


def _safe_item(desk: Desk, querier: Lazy, found: InboxItem, code: str, memory: Memory, cache: ItemCache) -> rn.Item:
    """The item, or, when reading it meets a bug, the item with only `leave` and the bug named."""
    try:
        return _item(desk, querier, found, code, memory, cache)
    except Exception as exc:
        why = f"internal error: {one_line(exc)}; use `memory-curator review`"
        return rn.Item(
            found.rel, "", found.rel, code, CODES.get(code, code), offers=(rn.Offer(rn.LEAVE),), elsewhere=why
        )


def _item(desk: Desk, querier: Lazy, found: InboxItem, code: str, memory: Memory, cache: ItemCache) -> rn.Item:
    code = "too-large" if found.too_large else code
    problem = memory.problems.get(found.rel)
    said = LEFT if found.rel in memory.left else DELETED if found.rel in memory.deleted else None
    base = rn.Item(found.rel, "", found.rel.rpartition("/")[2], code, CODES.get(code, code), found.uncertainty)
    if found.too_large:
        return _with(base, offers=(rn.Offer(rn.LEAVE),), elsewhere=found.too_large, problem=problem)
    kept = cache.get(desk, ItemCache.key(desk, found.rel, found.digest or "", code))  # as the scan read it
    if kept is not None:  # not even parsed again
        return _with(kept, uncertainty=found.uncertainty, problem=problem, said=said)
    try:
        raw, candidate = desk.read(found.rel)
    except CuratorError as exc:
        return _with(base, offers=(rn.Offer(rn.LEAVE),), elsewhere=str(exc), problem=problem)
    key = ItemCache.key(desk, found.rel, candidate.digest, code)
    item, whole = _read_item(desk, querier, candidate, raw, _with(base, digest=candidate.digest))
    if whole:  # a bug met while asking the index is not kept: the next sweep asks again
        cache.put(key, item, {p: hash_at(desk, p) for p in (candidate.target, item.concerns) if p})
    return _with(item, problem=problem, said=said)


def _read_item(desk: Desk, querier: Lazy, candidate: cand.Candidate, raw: bytes, base: rn.Item) -> tuple[rn.Item, bool]:
    """What the item's section shows and offers, as the index and the vault say now, and whether
    that is all of it (False: a bug was met asking the index)."""
    shown = review_quote.title(candidate.frontmatter, candidate.agent, bool(candidate.privacy), candidate.secrets)
    base = _with(base, title=shown or base.title)
    if candidate.privacy:
        why = "private content (" + ", ".join(candidate.privacy) + "): approved only in `memory-curator review`"
        quoted = "(private content is not quoted here: the note is visible in search and synced)"
        return _with(base, quoted=quoted, offers=_closing(), elsewhere=why), True
    if candidate.secrets:  # quoted masked; only drop or leave here: approving it is a terminal act
        quoted = _quote(desk, masked_text(raw.decode("utf-8"), candidate.secrets), None)
        return _with(base, quoted=quoted, offers=_closing(), elsewhere=secret_elsewhere(candidate.secrets)), True
    try:
        view: View | None = evaluate(desk, querier.get(), candidate, for_note=True)
    except Exception:  # a bug met on one item stays that item's (the note offers no write for it)
        view = None
    offers, concerns, target_digest, elsewhere = _offers(desk, candidate, view)
    item = _with(
        base,
        concerns=concerns,
        target_digest=target_digest,
        quoted=_quote(desk, raw.decode("utf-8"), view),
        offers=(*offers, *_closing()),
        elsewhere=elsewhere,
    )
    return item, view is not None


def _with(item: rn.Item, **changes: Any) -> rn.Item:
    return replace(item, **changes)


def _closing() -> tuple[rn.Offer, ...]:
    return rn.Offer(rn.DROP), rn.Offer(rn.LEAVE)


def _offers(
    desk: Desk, candidate: cand.Candidate, view: View | None
) -> tuple[tuple[rn.Offer, ...], str | None, str | None, str | None]:
    """(the offers, the note it concerns, that note's hash, why a write is left to `review`)."""
    offers: list[rn.Offer] = []
    target = candidate.target
    problem = candidate.note.problem or cand.placement_problem(candidate, desk.rules)
    if target and not problem and not safe_join(desk.root, target).exists():
        offers.append(rn.Offer("promote", target))
    if view is None:
        return tuple(offers), None, None, None
    concerns = view.patch_target or view.default_target
    if view.persons and view.patch_target:
        why = f"it concerns your own note {view.patch_target}: only `memory-curator review` writes into it"
        return tuple(offers), view.patch_target, None, why
    note = view.own  # never a note only like it: a careful person would not take that offer
    if note is None:
        return tuple(offers), concerns, None, None
    differs = view.side is not None and view.side.differs and view.side.note == note
    verbs = ("new", "old", "both") if differs else ("patch",)
    settles: tuple[Any, ...] = tuple(None if verb == "patch" else verb for verb in verbs)
    try:
        digest = desk.patchable(candidate.inbox_path, note, settles, candidate)  # the item as `_item` read it
    except (CuratorError, OSError):
        return tuple(offers), note, None, None
    return (*offers, *(rn.Offer(v, note) for v in verbs)), note, digest, None


def _quote(desk: Desk, text: str, view: View | None) -> str:
    """The candidate's text and the values of the note beside it, unless that note is private."""
    side = view.side if view is not None else None
    if side is None:
        return review_quote.quote(text, None, (), False)
    try:
        private = withheld(parse(read_whole(safe_join(desk.root, side.note))), desk.rules.settings.privacy_tags)
    except (OSError, CuratorError):
        private = "unreadable"  # read as private: nothing of it is quoted
    return review_quote.quote(text, side.note, side.rows, private is not None)


def head_of(
    ctx: Context,
    items: Iterable[rn.Item],
    sweeps: list[Record],
    actions: list[Record],
    copies: tuple[str, ...] = (),
    told: tuple[tuple[str, str], ...] = (),
) -> rn.Head:
    """The note's head: its items by code, the last sweeps (`run` records), the week's drops
    (from the journal's actions: drops, restores, undos and their ends) and the note's conflict copies."""
    counts = Counter(item.code for item in items)
    return rn.Head(tuple(sorted(counts.items())), _sweeps(sweeps), _drops(ctx, actions), REVIEW_HINT, copies, told)


def _sweeps(records: list[Record]) -> tuple[str, ...]:
    """The last sweeps that changed something, newest first (a sweep with nothing to do leaves
    the note as it was)."""
    runs = [r for r in records if r.get("event") == "run" and (r.get("processed") or r.get("errors"))]
    out = []
    for r in reversed(runs[-SWEEPS_SHOWN:]):
        counts = ", ".join(f"{r.get(k) or 0} {k}" for k in ("promoted", "patched", "dropped", "needs_review"))
        by = f" (ticked in this note{', ' + str(r.get('restored')) + ' restored' if r.get('restored') else ''})"
        counts += by if r.get("by") == "review-note" else ""
        out.append(f"{str(r.get('started') or r.get('time'))[:16].replace('T', ' ')}: {counts}")
    return tuple(out)


def _drops(ctx: Context, records: list[Record]) -> tuple[rn.Dropped, ...]:
    """Drops of the last 7 days still in `.dropped/`, but not privacy content (a restore from the
    phone would bring it back where an agent's sync may read it)."""
    now = ctx.clock.now()
    log = [e for e in entries(records) if e.undone_by is None and e.status in ("done", "recovered")]
    restored = {e.dest for e in log if e.verdict == "restore"}
    out = []
    for e in reversed(log):
        if e.verdict != "drop" or not e.dest or e.dest in restored or not e.time:
            continue
        if now - e.time > dt.timedelta(days=7):
            continue
        try:
            note = parse(read_whole(safe_join(ctx.root, e.dest)))
        except (OSError, CuratorError):
            continue
        if privacy_tags(all_tags(note), ctx.rules.settings.privacy_tags):
            continue
        out.append(rn.Dropped(e.dest, e.rule or "?", iso(e.time)[:10]))
    return tuple(out)
