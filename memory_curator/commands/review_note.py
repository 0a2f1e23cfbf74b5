"""The review note (`core.review_note`) on disk: its ticks applied through the desk's planners,
and the note written again from the items waiting now.

`tend` is what a sweep (and `watch`, when the note changes) calls: it leaves a note that changed
within the settle window alone (Obsidian saves while the person types), applies each section
ticked once whose candidate (and target note) still hold the bytes the section was written from
(one run, `by: review-note`: journalled, `undo`-able), restores the ticked drops, then renders
the note and writes it only when its bytes would change, by compare-and-swap on the bytes it
read (a person saving meanwhile wins; the next sweep reads their ticks). Which sections the
curator wrote, and what each task does, are kept in the state directory (`review-note.json`):
a section is read only against them. What each item's section needs is kept there too
(`review-note-items.json`, `ItemCache`), so a sweep with nothing new asks the index nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from memory_curator.commands.context import Context
from memory_curator.commands.desk import Desk, Done
from memory_curator.commands.note_link import conflict_copies
from memory_curator.commands.restore import restore
from memory_curator.commands.review_items import gather, head_of
from memory_curator.commands.review_memory import STATE, Memory, Reuse
from memory_curator.commands.review_told import decided_elsewhere
from memory_curator.core import review_bulk
from memory_curator.core import review_note as rn
from memory_curator.core.errors import CuratorError
from memory_curator.core.json_types import JsonObject
from memory_curator.core.notes import content_hash
from memory_curator.core.text import one_line
from memory_curator.store import journal_digest, records, recovery, writer
from memory_curator.store.journal import Journal
from memory_curator.store.paths import READ_LIMIT, oversize, read_capped, safe_join
from memory_curator.store.state import sweep_lock

BY = "review-note"
SAVED_JUST_NOW = "saved {seconds} s ago: its ticks are read at the next sweep (`run --settle 0` reads it now)"


@dataclass(frozen=True)
class Outcome:
    """What one `tend` did: the actions applied, the drops restored, the ticks refused (inbox path,
    why), whether the note was written, and why it was left alone (`held`)."""

    path: str
    done: tuple[Done, ...] = ()
    restored: tuple[str, ...] = ()
    refused: tuple[tuple[str, str], ...] = ()
    written: bool = False
    held: str | None = None
    conflicts: tuple[str, ...] = ()  # sync conflict copies of the note, read for ticks, never deleted
    saved_ago: int | None = None  # held because saved this many seconds ago: read at the next sweep

    def to_json(self) -> JsonObject:
        return {
            "path": self.path,
            "done": [d.to_json() for d in self.done],
            "restored": list(self.restored),
            "refused": [{"inbox_path": r, "why": w} for r, w in self.refused],
            "written": self.written,
            "held": self.held,
            "conflicts": list(self.conflicts),
        }

    def told(self) -> JsonObject | None:
        """What `run --json` says of the note when its ticks wait for the next sweep."""
        return None if self.saved_ago is None else {"left_for_next_sweep": True, "saved_seconds_ago": self.saved_ago}


def note_rel(ctx: Context) -> str | None:
    """The review note's vault path, None when the rules turn it off."""
    return ctx.rules.settings.review_note or None


def stray_temps(ctx: Context) -> list[str]:
    """Remove the temp files a write of the note left when its own unlink failed: called under
    the sweep lock, as recovery removes those of the plans (no write of the note is under way)."""
    rel = note_rel(ctx)
    return [] if rel is None else recovery.remove_temps(ctx.root, ctx.files, [safe_join(ctx.root, rel).parent])


def tend(ctx: Context, wait: bool = False, reuse: Reuse | None = None, settle: float | None = None) -> Outcome | None:
    """Apply the note's settled ticks, then write it again from what waits now (None: the rules
    turn the note off). A sweep's `reuse` serves only when no tick was applied: a tick writes
    notes the sweep's querier does not hold. `settle`: `run --settle`'s window (0: the person
    says every file, the note included, is complete), else the rules'."""
    rel = note_rel(ctx)
    if rel is None:
        return None
    path = safe_join(ctx.root, rel)
    window = ctx.rules.settings.settle_seconds if settle is None else settle
    raw, held, ago = _read_note(ctx, path, window)
    if held:
        return Outcome(rel, held=held, saved_ago=ago)
    memory = Memory.load(ctx.state)
    copies = conflict_copies(ctx.root, rel)
    reading = rn.read(raw.decode("utf-8"), memory.known()) if raw is not None else None
    copied = [(c, _fresh(c, r, memory)) for c in copies if (r := _read_copy(ctx, c, memory, window)) is not None]
    ticks = _ticks(reading, copied, memory)
    memory.left = {a.section.inbox for a in ticks if a.verb == rn.LEAVE and a.section.inbox and not a.why}
    memory.deleted = _deleted(reading, memory)
    desk = Desk(ctx, wait, by=BY)
    done, refused = _apply(desk, ticks, memory)
    restored = _restore(ctx, reading, [r for _, r in copied], memory, wait)
    refused += _unrestored(reading, memory)
    for inbox, why in refused:
        memory.problems[inbox] = why
    if done or restored:
        _journal_ticks(ctx, done, restored, wait)
    reuse = None if done or restored else reuse
    written = _write(desk, path, rel, raw, reading, memory, reuse, tuple(copies), tuple(refused))
    if not written and copies:  # the copies' ticks are remembered though the note's bytes stay
        ctx.files.write_state_file(ctx.state / STATE, memory.to_bytes())
    return Outcome(rel, tuple(done), restored, tuple(refused), written, conflicts=tuple(copies))


def _journal_ticks(ctx: Context, done: list[Done], restored: tuple[str, ...], wait: bool) -> None:
    """One summary record for the ticks applied, as a sweep writes one (`status`'s and the
    note's "Last sweeps", `doctor`): a tick run is a run too, told by `by: review-note`."""
    verdicts = [d.action.verdict for d in done]
    counts = {k: verdicts.count(v) for k, v in (("promoted", "promote"), ("patched", "patch"), ("dropped", "drop"))}
    run_id = done[0].run_id if done else f"{BY}-restore"
    record = records.run(run_id, ctx.clock.now(), 0, {"processed": len(done) + len(restored), **counts}, 0, None)
    record |= {"by": BY, "restored": len(restored)}
    with sweep_lock(ctx.state, ctx.clock, ctx.machine.pid, ctx.host, wait=wait):
        Journal(ctx.state / "journal.jsonl", ctx.clock, ctx.files).append(record)


def _read_note(ctx: Context, path: Path, settle: float) -> tuple[bytes | None, str | None, int | None]:
    """(the note's bytes, None, None) — or why it is left alone this time: it changed within the
    settle window (and how many seconds ago it was saved), it is not UTF-8, too large, or not a
    regular file (never opened: a FIFO would block)."""
    try:
        stat = path.lstat()
        raw = read_capped(path, READ_LIMIT)
    except FileNotFoundError:
        return None, None, None
    except OSError as exc:  # a FIFO, a symlink: `NotRegular`, never opened
        return None, f"cannot read: {exc.strerror or exc}", None
    if raw is None:
        return None, f"{oversize(path, READ_LIMIT)}: left alone", None
    ago = ctx.clock.timestamp() - stat.st_mtime
    if ago < settle:
        return None, SAVED_JUST_NOW.format(seconds=max(0, int(ago))), max(0, int(ago))
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, "not UTF-8 text: left alone (fix or delete it)", None
    return raw, None, None


@dataclass(frozen=True)
class Ask:
    """One ticked section to apply: its section (what the curator wrote), the verb, the reason."""

    section: rn.Section
    verb: str | None
    reason: str | None
    why: str | None = None  # why nothing is applied
    copy: str | None = None  # the conflict copy the tick was read from, when the note itself has none


def _ticks(reading: rn.Reading | None, copies: list[tuple[str, rn.Reading]], memory: Memory) -> list[Ask]:
    """The sections ticked in the note and its conflict copies (as read, each by its path); a
    section ticked twice (or two different ways in two copies), or mangled, applies nothing and
    says why. A tick read only from a copy names it (journalled as `copy`, printed by `log`)."""
    named = [(None, reading), *copies] if reading is not None else copies
    source: dict[str, str | None] = {}
    sections: dict[str, rn.Section] = {}
    for known in memory.known():  # the last write's rendering first, in the note's order
        sections.setdefault(known.id, known)
    verbs: dict[str, set[str]] = {}
    reasons: dict[str, str | None] = {}
    mangled: dict[str, str] = {}
    others: dict[str, list[tuple[str, str]]] = {}
    for where, got in named:
        for sid, tick in review_bulk.spread(got.ticks, sections).items():
            if tick.mangled:  # a copy's older sections are not the person's news: only the note's own
                if got is reading:
                    mangled.setdefault(sid, tick.mangled)
            elif tick.verbs:
                if source.get(sid, "") is not None:  # the note's own tick (None) names no copy
                    source[sid] = where
                verbs.setdefault(sid, set()).update(tick.verbs)
                reasons[sid] = reasons.get(sid) or tick.reason
            others.setdefault(sid, []).extend(tick.others)
    asks = []
    for sid, section in sections.items():
        chosen = verbs.get(sid, set())
        if len(chosen) > 1:
            asks.append(
                Ask(section, None, None, f"{len(chosen)} actions ticked ({', '.join(sorted(chosen))}); tick one")
            )
        elif chosen:
            asks.append(Ask(section, chosen.pop(), reasons.get(sid), copy=source.get(sid)))
        elif sid in mangled:
            asks.append(Ask(section, None, None, mangled[sid]))
        elif others.get(sid):  # a box set to `-` or `/` is not a tick: say so, by name
            asks.append(Ask(section, None, None, rn.status_problem(others[sid])))
    return asks


def _fresh(rel: str, reading: rn.Reading, memory: Memory) -> rn.Reading:
    """A conflict copy's reading without the ticks already read from it, and those it has now
    remembered (`Memory.copied`): a copy's tick is applied once, ever."""
    seen = memory.copied
    ticks = {
        sid: replace(tick, verbs=tuple(v for v in tick.verbs if (sid, v, rel) not in seen))
        for sid, tick in reading.ticks.items()
    }
    restores = tuple(d for d in reading.restores if (d, rn.RESTORE, rel) not in seen)
    memory.copied |= {(sid, v, rel) for sid, tick in ticks.items() for v in tick.verbs}
    memory.copied |= {(d, rn.RESTORE, rel) for d in restores}
    return replace(reading, ticks=ticks, restores=restores)


def _read_copy(ctx: Context, rel: str, memory: Memory, settle: float) -> rn.Reading | None:
    raw, held, _ = _read_note(ctx, safe_join(ctx.root, rel), settle)
    return rn.read(raw.decode("utf-8"), memory.known()) if raw is not None and not held else None


def _apply(desk: Desk, asks: list[Ask], memory: Memory) -> tuple[list[Done], list[tuple[str, str]]]:
    """Each ask through the desk, in one run; an item whose candidate is gone is simply settled."""
    done: list[Done] = []
    refused: list[tuple[str, str]] = []
    todo = [a for a in asks if a.section.inbox and a.verb != rn.LEAVE]
    if not todo:
        return done, refused
    with desk.session() as run:
        for ask in todo:
            inbox = ask.section.inbox or ""
            if not safe_join(desk.root, inbox).is_file():  # taken meanwhile: said, unless by this note
                if (told := decided_elsewhere(desk.ctx, inbox, BY)) is not None:
                    refused.append((inbox, told))
                continue
            if ask.why or ask.verb is None:
                refused.append((inbox, ask.why or "nothing ticked"))
                continue
            offer = ask.section.tasks.get(ask.verb)
            if offer is None:
                refused.append((inbox, f"{ask.verb} is not offered for it"))
                continue
            detail = (ask.reason or rn.DROPPED_IN_REVIEW) if ask.verb == rn.DROP else offer.target
            try:
                by = replace(desk, copy=ask.copy)  # journalled with the copy the tick was read from
                done.append(by.act(run, inbox, ask.verb, detail, ask.section.digest or "", ask.section.target_digest))
                memory.problems.pop(inbox, None)
            except CuratorError as exc:
                refused.append((inbox, one_line(str(exc))))
            except Exception as exc:  # a bug met on one item stays that item's; the others go on
                refused.append((inbox, f"internal error: {one_line(exc)}; use `memory-curator review`"))
    return done, refused


def _restore(
    ctx: Context, reading: rn.Reading | None, copies: list[rn.Reading], memory: Memory, wait: bool
) -> tuple[str, ...]:
    """The drops ticked for restore in the head (each its own run, as `restore` does, `by: review-note`)."""
    ids = set(reading.restores if reading else ())
    for got in copies:
        ids.update(got.restores)
    heads = [s for s in memory.known() if s.id == rn.HEAD]
    paths = {offer.target for head in heads for sid, offer in head.tasks.items() if sid in ids and offer.target}
    restored = []
    for dropped in sorted(paths):
        if not safe_join(ctx.root, dropped).is_file():
            continue
        try:
            restored.append(restore(ctx, ctx.root / dropped, wait, by=BY).inbox_path)
        except CuratorError:
            continue
    return tuple(restored)


def _deleted(reading: rn.Reading | None, memory: Memory) -> set[str]:
    """The inbox paths whose sections the last write put in the note and the person deleted,
    markers and all, from a note whose head is still there (a note cut short says so itself)."""
    if reading is None or rn.HEAD not in reading.order:
        return set()
    return {s.inbox for s in memory.current if s.inbox and s.id != rn.HEAD and s.id not in reading.order}


def _unrestored(reading: rn.Reading | None, memory: Memory) -> list[tuple[str, str]]:
    """The head's restore boxes set to another status than `x` (Tasks' `[-]`), by the drop's
    path: told by name, as an item's box is, never silently ignored."""
    if reading is None:
        return []
    paths = {sid: o.target for h in memory.known() if h.id == rn.HEAD for sid, o in h.tasks.items() if o.target}
    return [(paths[d], f"restore: {rn.status_problem([(d, st)])}") for d, st in reading.unrestored if d in paths]


def _write(
    desk: Desk,
    path: Path,
    rel: str,
    raw: bytes | None,
    reading: rn.Reading | None,
    memory: Memory,
    reuse: Reuse | None,
    copies: tuple[str, ...] = (),
    refused: tuple[tuple[str, str], ...] = (),
) -> bool:
    """Render the note from what waits now and write it when its bytes change (compare-and-swap on
    `raw`: a note saved meanwhile is left for the next sweep)."""
    ctx = desk.ctx
    with sweep_lock(
        ctx.state, ctx.clock, ctx.machine.pid, ctx.host, wait=desk.wait
    ):  # no recovery: the note's own write
        digest = journal_digest.read(Journal(ctx.state / "journal.jsonl"), ctx.state, ctx.clock.now(), ctx.files)
        if reuse is not None and reuse.run != digest.last_run:  # another run between the sweep and the note
            reuse = None
        items = gather(desk, memory, reuse, digest.flagged())
        waiting = {item.inbox for item in items}
        told = tuple((inbox, why) for inbox, why in refused if inbox not in waiting)  # said once, in the head
        head = rn.head_section(head_of(ctx, items, digest.sweeps(), digest.actions(), copies, told))
        sections = [*review_bulk.sections(items), *(rn.item_section(item) for item in items)]
        if reading is None:
            reading = rn.Reading({}, (), ())
        text = rn.render(head, sections, reading.own, reading.newline, reading.bom, reading.order)
        memory.problems = {k: v for k, v in memory.problems.items() if k in waiting}
        data = text.encode("utf-8", "surrogateescape")
        if raw is not None and data == raw:
            return False
        kept = memory.previous, memory.current, memory.written
        memory.previous, memory.current, memory.written = memory.current, [head, *sections], content_hash(data)
        ctx.files.write_state_file(ctx.state / STATE, memory.to_bytes())  # before the note: it must know its sections
        try:
            if raw is None:
                ctx.files.create(path, data)
            else:
                ctx.files.replace(path, data, content_hash(raw))
        except (writer.Conflict, FileExistsError):  # saved meanwhile: the sections in it are still the old ones
            memory.previous, memory.current, memory.written = kept
            ctx.files.write_state_file(ctx.state / STATE, memory.to_bytes())
            return False
        return True


def after_sweep(
    ctx: Context, wait: bool = False, reuse: Reuse | None = None, settle: float | None = None
) -> tuple[list[str], tuple[str, ...], JsonObject | None, tuple[str, ...]]:
    """What a sweep says of the note once it is done (the ticks applied and refused), the inbox
    paths its ticks settled (they no longer wait) and, for `--json`, that the note was left for
    the next sweep, and the inbox paths its restore ticks put back (they wait, held); a note that
    cannot be tended never fails the sweep (the next one tries again)."""
    try:
        outcome = tend(ctx, wait, reuse, settle)
    except CuratorError as exc:
        return [f"review note: {one_line(str(exc))}"], (), None, ()
    except OSError as exc:
        return [f"review note: {exc.strerror or exc}"], (), None, ()
    except Exception as exc:  # a bug in the note never fails the sweep that is done
        return [f"review note: internal error: {one_line(exc)}"], (), None, ()
    if outcome is None:
        return [], (), None, ()
    said = []
    if outcome.saved_ago is not None:  # ticks saved just now are never lost without a word
        said.append(f"review note: {outcome.held}")
    elif outcome.held:
        said.append(f"review note: {outcome.path}: {outcome.held}")
    if outcome.done:
        said.append(f"review note: {len(outcome.done)} ticked action(s) applied (undo {outcome.done[0].run_id})")
    if outcome.restored:
        said.append(f"review note: {len(outcome.restored)} drop(s) restored")
    said += [f"review note: {inbox}: not applied: {why}" for inbox, why in outcome.refused]
    return said, tuple(done.action.inbox_path for done in outcome.done), outcome.told(), outcome.restored
