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

import datetime as dt
import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from memory_curator.commands.context import Context
from memory_curator.commands.desk import Desk, Done
from memory_curator.commands.log import entries
from memory_curator.commands.note_link import conflict_copies
from memory_curator.commands.restore import restore
from memory_curator.commands.review import View, evaluate, flag_of, flag_reasons, queue
from memory_curator.commands.status import InboxItem
from memory_curator.core import candidate as cand
from memory_curator.core import review_note as rn
from memory_curator.core import review_quote
from memory_curator.core.errors import CuratorError
from memory_curator.core.facts import Querier
from memory_curator.core.notes import all_tags, content_hash, parse
from memory_curator.core.privacy import privacy_tags, withheld
from memory_curator.core.reasons import CODES
from memory_curator.core.secrets import elsewhere as secret_elsewhere
from memory_curator.core.secrets import masked_text
from memory_curator.core.text import iso, one_line
from memory_curator.index.store import notes as indexed_notes
from memory_curator.store import journal_digest, recovery, writer
from memory_curator.store.journal import Journal
from memory_curator.store.paths import safe_join
from memory_curator.store.state import sweep_lock

BY = "review-note"
STATE = "review-note.json"
CACHE = "review-note-items.json"  # `ItemCache`
SWEEPS_SHOWN = 3
REVIEW_HINT = "Private items and writes into your own notes are decided only in a terminal: `memory-curator review`."


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

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "done": [d.to_json() for d in self.done],
            "restored": list(self.restored),
            "refused": [{"inbox_path": r, "why": w} for r, w in self.refused],
            "written": self.written,
            "held": self.held,
            "conflicts": list(self.conflicts),
        }


@dataclass
class Memory:
    """The state directory's record of the note: the sections of the last two writes and why a
    tick on an item was not applied (by inbox path, until the item leaves the note)."""

    current: list[rn.Section] = field(default_factory=list)
    previous: list[rn.Section] = field(default_factory=list)
    problems: dict[str, str] = field(default_factory=dict)
    written: str | None = None  # the hash of the note as the curator last wrote it (`watch`: its own write is no news)

    @classmethod
    def load(cls, state: Path) -> Memory:
        try:
            data = json.loads((state / STATE).read_bytes().decode("utf-8", "surrogatepass"))
        except (OSError, ValueError):
            return cls()
        if not isinstance(data, dict):
            return cls()

        def sections(key: str) -> list[rn.Section]:
            got = data.get(key)
            return [rn.Section.from_json(s) for s in got if isinstance(s, dict)] if isinstance(got, list) else []

        problems = data.get("problems")
        kept = {str(k): str(v) for k, v in problems.items()} if isinstance(problems, dict) else {}
        written = data.get("written") if isinstance(data.get("written"), str) else None
        return cls(sections("current"), sections("previous"), kept, written)

    def known(self) -> list[rn.Section]:
        return [*self.current, *self.previous]

    def to_bytes(self) -> bytes:
        data = {
            "current": [s.to_json() for s in self.current],
            "previous": [s.to_json() for s in self.previous],
            "problems": self.problems,
            "written": self.written,
        }
        return json.dumps(data, ensure_ascii=False, indent=1).encode("utf-8", "surrogatepass")


def note_rel(ctx: Context) -> str | None:
    """The review note's vault path, None when the rules turn it off."""
    return ctx.rules.settings.review_note or None


def stray_temps(ctx: Context) -> list[str]:
    """Remove the temp files a write of the note left when its own unlink failed: called under
    the sweep lock, as recovery removes those of the plans (no write of the note is under way)."""
    rel = note_rel(ctx)
    return [] if rel is None else recovery.remove_temps(ctx.root, ctx.files, [safe_join(ctx.root, rel).parent])


@dataclass(frozen=True)
class Reuse:
    """What a sweep hands the review note it writes next (issue 29): its querier, the index it
    refreshed with every note it wrote laid over it (the note opens no second index and walks no
    second time); and the vault's notes as the run's one walk found them, those the sweep wrote
    stat'ed again (`seen`, the item cache's stamp; None: walk again). A note a person saves
    during the run is seen by the next run's walk, which then asks every item again."""

    querier: Querier
    seen: Mapping[str, tuple[int, int]] | None = None
    run: str | None = None  # the sweep's run id: the journal's last run, or another changed the vault since


def tend(ctx: Context, wait: bool = False, reuse: Reuse | None = None) -> Outcome | None:
    """Apply the note's settled ticks, then write it again from what waits now (None: the rules
    turn the note off). A sweep's `reuse` serves only when no tick was applied: a tick writes
    notes the sweep's querier does not hold."""
    rel = note_rel(ctx)
    if rel is None:
        return None
    path = safe_join(ctx.root, rel)
    raw, held = _read_note(ctx, path)
    if held:
        return Outcome(rel, held=held)
    memory = Memory.load(ctx.state)
    copies = conflict_copies(ctx.root, rel)
    reading = rn.read(raw.decode("utf-8"), memory.known()) if raw is not None else None
    copied = [r for r in (_read_copy(ctx, c, memory) for c in copies) if r is not None]  # each copy read once
    ticks = _ticks(reading, copied, memory)
    desk = Desk(ctx, wait, by=BY)
    done, refused = _apply(desk, ticks, memory)
    restored = _restore(ctx, reading, copied, memory, wait)
    for inbox, why in refused:
        memory.problems[inbox] = why
    written = _write(desk, path, rel, raw, reading, memory, None if done or restored else reuse)
    return Outcome(rel, tuple(done), restored, tuple(refused), written, conflicts=tuple(copies))


def _read_note(ctx: Context, path: Path) -> tuple[bytes | None, str | None]:
    """(the note's bytes, None) — or why it is left alone this time: it changed within the settle
    window, it is not UTF-8, or it is not a plain file."""
    if path.is_symlink() or (path.exists() and not path.is_file()):
        return None, "not a plain file (a symlink or a folder): left alone"
    try:
        stat = path.stat()
        raw = path.read_bytes()
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"cannot read: {exc.strerror or exc}"
    if ctx.clock.timestamp() - stat.st_mtime < ctx.rules.settings.settle_seconds:
        return None, "changed within the settle window: read at the next sweep"
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, "not UTF-8 text: left alone (fix or delete it)"
    return raw, None


@dataclass(frozen=True)
class Ask:
    """One ticked section to apply: its section (what the curator wrote), the verb, the reason."""

    section: rn.Section
    verb: str | None
    reason: str | None
    why: str | None = None  # why nothing is applied


def _ticks(reading: rn.Reading | None, copies: list[rn.Reading], memory: Memory) -> list[Ask]:
    """The sections ticked in the note and its conflict copies (as read); a section ticked twice
    (or two different ways in two copies), or mangled, applies nothing and says why."""
    readings = [r for r in [reading, *copies] if r is not None]
    sections: dict[str, rn.Section] = {}
    for known in memory.known():  # the last write's rendering first, in the note's order
        sections.setdefault(known.id, known)
    verbs: dict[str, set[str]] = {}
    reasons: dict[str, str | None] = {}
    mangled: dict[str, str] = {}
    for got in readings:
        for sid, tick in got.ticks.items():
            if tick.mangled:  # a copy's older sections are not the person's news: only the note's own
                if got is reading:
                    mangled.setdefault(sid, tick.mangled)
            elif tick.verbs:
                verbs.setdefault(sid, set()).update(tick.verbs)
                reasons[sid] = reasons.get(sid) or tick.reason
    asks = []
    for sid, section in sections.items():
        chosen = verbs.get(sid, set())
        if len(chosen) > 1:
            asks.append(
                Ask(section, None, None, f"{len(chosen)} actions ticked ({', '.join(sorted(chosen))}); tick one")
            )
        elif chosen:
            asks.append(Ask(section, chosen.pop(), reasons.get(sid)))
        elif sid in mangled:
            asks.append(Ask(section, None, None, mangled[sid]))
    return asks


def _read_copy(ctx: Context, rel: str, memory: Memory) -> rn.Reading | None:
    raw, held = _read_note(ctx, safe_join(ctx.root, rel))
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
            if not safe_join(desk.root, inbox).is_file():
                continue  # taken meanwhile (a sweep, review, this note before): nothing to do
            if ask.why or ask.verb is None:
                refused.append((inbox, ask.why or "nothing ticked"))
                continue
            offer = ask.section.tasks.get(ask.verb)
            if offer is None:
                refused.append((inbox, f"{ask.verb} is not offered for it"))
                continue
            detail = (ask.reason or rn.DROPPED_IN_REVIEW) if ask.verb == rn.DROP else offer.target
            try:
                done.append(desk.act(run, inbox, ask.verb, detail, ask.section.digest or "", ask.section.target_digest))
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


def _write(
    desk: Desk, path: Path, rel: str, raw: bytes | None, reading: rn.Reading | None, memory: Memory, reuse: Reuse | None
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
        head = rn.head_section(head_of(ctx, items, digest.sweeps(), digest.actions()))
        sections = [rn.item_section(item) for item in items]
        if reading is None:
            reading = rn.Reading({}, (), ())
        text = rn.render(head, sections, reading.own, reading.newline, reading.bom, reading.order)
        waiting = {item.inbox for item in items}
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


def gather(desk: Desk, memory: Memory, reuse: Reuse | None, flagged: list[dict[str, Any]]) -> list[rn.Item]:
    """The items waiting for a person, newest first, each with what it allows."""
    waiting = queue(desk)
    if not waiting:
        return []
    cache = ItemCache.load(desk, reuse.seen if reuse else None)
    flags = flag_reasons(desk, flagged, among={i.rel for i in waiting})
    querier = Lazy(desk, reuse.querier if reuse else None)
    try:
        return [_safe_item(desk, querier, i, flag_of(i, flags).code, memory, cache) for i in reversed(waiting)]
    finally:
        querier.close()
        cache.save(desk)


class Lazy:
    """The desk's querier, opened only when an item is not in the cache (a sweep with nothing new
    never opens the index for the note); or the sweep's, given, which it does not close."""

    def __init__(self, desk: Desk, given: Querier | None = None) -> None:
        self.desk = desk
        self.opened: Querier | None = given
        self.owned = given is None

    def get(self) -> Querier:
        if self.opened is None:
            self.opened = self.desk.querier()
        return self.opened

    def close(self) -> None:
        close = getattr(self.opened, "close", None) if self.owned else None
        if callable(close):
            close()


class ItemCache:
    """What each waiting item's section needs (`rn.Item`), kept in the state directory while the
    vault's notes stay as they were (`notes_seen`), by (inbox path, candidate hash, reason code,
    rules hash), with the hash of each note it was read against (its promote target and the note
    it concerns; None: absent). Asking the index about every item is most of what rendering
    costs, and a sweep with nothing new would ask it all again for the same answers; a note
    written, added or removed anywhere makes every item be asked again. An entry is kept only
    while its item waits; what a tick does is checked again when it is applied (`Desk.act`)."""

    def __init__(self, seen: str, old: dict[str, Any], kept: bool) -> None:
        self.seen, self.old, self.kept, self.new = seen, old, kept, dict[str, Any]()

    @classmethod
    def load(cls, desk: Desk, notes: Mapping[str, tuple[int, int]] | None = None) -> ItemCache:
        """The cache, for the vault's notes as `notes` has them (None: as a walk finds them now)."""
        seen = fingerprint(notes) if notes is not None else notes_seen(desk)
        try:
            data = json.loads((desk.state / CACHE).read_bytes().decode("utf-8", "surrogatepass"))
        except (OSError, ValueError):
            return cls(seen, {}, False)
        same = isinstance(data, dict) and data.get("notes") == seen and isinstance(data.get("items"), dict)
        return cls(seen, data["items"] if same else {}, same)

    @staticmethod
    def key(desk: Desk, rel: str, digest: str, code: str) -> str:
        return "\0".join((rel, digest, code, desk.rules.digest))

    def get(self, desk: Desk, key: str) -> rn.Item | None:
        entry: Any = self.old.get(key)
        try:
            deps = entry["deps"] if isinstance(entry, dict) else None
            if not isinstance(deps, dict) or any(_hash_at(desk, p) != h for p, h in deps.items()):
                return None
            item = _item_from_json(entry["item"])
        except (KeyError, TypeError, ValueError, CuratorError):
            return None
        self.new[key] = entry
        return item

    def put(self, key: str, item: rn.Item, deps: dict[str, str | None]) -> None:
        self.new[key] = {"item": _item_to_json(item), "deps": deps}

    def save(self, desk: Desk) -> None:
        if self.new != self.old or not self.kept:
            data = json.dumps({"notes": self.seen, "items": self.new}, ensure_ascii=False)
            desk.ctx.files.write_state_file(desk.state / CACHE, data.encode("utf-8", "surrogatepass"))


def notes_seen(desk: Desk) -> str:
    """The vault's notes as the index sees them (path, size, mtime; one stat each), the review
    note and its copies aside: while this holds, the index answers as it did."""
    return fingerprint(indexed_notes(desk.root, desk.rules))


def fingerprint(notes: Mapping[str, tuple[int, int]]) -> str:
    """One hash of the notes' (path, size, mtime)."""
    seen = sorted((rel, *stat) for rel, stat in notes.items())
    return hashlib.sha256(json.dumps(seen).encode("utf-8", "surrogatepass")).hexdigest()


def _hash_at(desk: Desk, rel: str) -> str | None:
    """A note's hash as a cache entry is bound to it (None: no such file)."""
    try:
        return content_hash(safe_join(desk.root, rel).read_bytes())
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:  # a folder, no permission: its own state, re-read when it changes
        return f"unreadable: {exc.errno}"


def _item_to_json(item: rn.Item) -> dict[str, Any]:
    data = asdict(item)
    data["offers"] = [[o.verb, o.target] for o in item.offers]
    return data


def _item_from_json(data: dict[str, Any]) -> rn.Item:
    offers = tuple(rn.Offer(str(verb), target) for verb, target in data.pop("offers"))
    return rn.Item(**data, offers=offers)


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
    base = rn.Item(found.rel, "", found.rel.rpartition("/")[2], code, CODES.get(code, code), found.uncertainty)
    if found.too_large:
        return _with(base, offers=(rn.Offer(rn.LEAVE),), elsewhere=found.too_large, problem=problem)
    kept = cache.get(desk, ItemCache.key(desk, found.rel, found.digest or "", code))  # as the scan read it
    if kept is not None:  # not even parsed again
        return _with(kept, uncertainty=found.uncertainty, problem=problem)
    try:
        raw, candidate = desk.read(found.rel)
    except CuratorError as exc:
        return _with(base, offers=(rn.Offer(rn.LEAVE),), elsewhere=str(exc), problem=problem)
    key = ItemCache.key(desk, found.rel, candidate.digest, code)
    item, whole = _read_item(desk, querier, candidate, raw, _with(base, digest=candidate.digest))
    if whole:  # a bug met while asking the index is not kept: the next sweep asks again
        cache.put(key, item, {p: _hash_at(desk, p) for p in (candidate.target, item.concerns) if p})
    return _with(item, problem=problem)


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
    note = view.default_target
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
        private = withheld(parse(safe_join(desk.root, side.note).read_bytes()), desk.rules.settings.privacy_tags)
    except (OSError, CuratorError):
        private = "unreadable"  # read as private: nothing of it is quoted
    return review_quote.quote(text, side.note, side.rows, private is not None)


def head_of(
    ctx: Context, items: Iterable[rn.Item], sweeps: list[dict[str, Any]], actions: list[dict[str, Any]]
) -> rn.Head:
    """The note's head: its items by code, the last sweeps (`run` records) and the week's drops
    (from the journal's actions: drops, restores, undos and their ends)."""
    counts = Counter(item.code for item in items)
    return rn.Head(tuple(sorted(counts.items())), _sweeps(sweeps), _drops(ctx, actions), REVIEW_HINT)


def _sweeps(records: list[dict[str, Any]]) -> tuple[str, ...]:
    """The last sweeps that changed something, newest first (a sweep with nothing to do leaves
    the note as it was)."""
    runs = [r for r in records if r.get("event") == "run" and (r.get("processed") or r.get("errors"))]
    out = []
    for r in reversed(runs[-SWEEPS_SHOWN:]):
        counts = ", ".join(f"{r.get(k) or 0} {k}" for k in ("promoted", "patched", "dropped", "needs_review"))
        out.append(f"{str(r.get('started') or r.get('time'))[:16].replace('T', ' ')}: {counts}")
    return tuple(out)


def _drops(ctx: Context, records: list[dict[str, Any]]) -> tuple[rn.Dropped, ...]:
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
            note = parse(safe_join(ctx.root, e.dest).read_bytes())
        except (OSError, CuratorError):
            continue
        if privacy_tags(all_tags(note), ctx.rules.settings.privacy_tags):
            continue
        out.append(rn.Dropped(e.dest, e.rule or "?", iso(e.time)[:10]))
    return tuple(out)


def after_sweep(ctx: Context, wait: bool = False, reuse: Reuse | None = None) -> tuple[list[str], tuple[str, ...]]:
    """What a sweep says of the note once it is done (the ticks applied and refused), and the
    inbox paths its ticks settled (they no longer wait); a note that cannot be tended never fails
    the sweep (the next one tries again)."""
    try:
        outcome = tend(ctx, wait, reuse)
    except CuratorError as exc:
        return [f"review note: {one_line(str(exc))}"], ()
    except OSError as exc:
        return [f"review note: {exc.strerror or exc}"], ()
    except Exception as exc:  # a bug in the note never fails the sweep that is done
        return [f"review note: internal error: {one_line(exc)}"], ()
    if outcome is None:
        return [], ()
    said = []
    if outcome.held and not outcome.held.startswith("changed within"):  # typing is no news
        said.append(f"review note: {outcome.path}: {outcome.held}")
    if outcome.done:
        said.append(f"review note: {len(outcome.done)} ticked action(s) applied (undo {outcome.done[0].run_id})")
    if outcome.restored:
        said.append(f"review note: {len(outcome.restored)} drop(s) restored")
    said += [f"review note: {inbox}: not applied: {why}" for inbox, why in outcome.refused]
    return said, tuple(done.action.inbox_path for done in outcome.done)


@dataclass
class Watched:
    """The review note as `watch` follows it: a change to it (or to a conflict copy) sweeps once
    the note has been quiet for the settle window (Obsidian saves while the person types); the
    curator's own write of it (the bytes `Memory.written` names) does not."""

    folder: Path
    rel: str
    state: Path
    changed: float | None = None  # monotonic time of the last event on it
    copy: bool = False  # the event was on a conflict copy

    @classmethod
    def of(cls, root: Path, rel: str, state: Path) -> Watched | None:
        if not rel:
            return None
        folder = safe_join(root, rel).parent
        return cls(folder, rel, state) if folder.is_dir() else None

    def seen(self, root: Path, path: str, when: float) -> None:
        try:
            rel = Path(path).resolve().relative_to(root).as_posix()
        except (ValueError, OSError):
            return
        if rn.is_note_file(rel, self.rel) and not Path(path).name.startswith("."):
            self.changed, self.copy = when, self.copy or rel != self.rel

    def settled(self, now: float, settle: float) -> bool:
        """Quiet long enough, and not the curator's own write: due once."""
        if self.changed is None or now - self.changed < settle:
            return False
        news = self.copy or _hash(self.folder / self.rel.rpartition("/")[2]) != Memory.load(self.state).written
        self.changed, self.copy = None, False
        return news


def _hash(path: Path) -> str | None:
    try:
        return content_hash(path.read_bytes())
    except OSError:
        return None
