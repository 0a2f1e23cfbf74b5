"""Watch mode: sweep candidates the moment they settle.

A watchdog observer on `_inbox/` (recursive; never the whole vault, since inotify watches
are a per-user budget) and on the review note's folder (not recursive) reports paths. A
`Tracker` (pure: times and looks come in) decides when each file has settled: quiet for the
settle window, size and mtime the same at two looks, frontmatter closed. Settled files are
swept together, through `sweep.run` under the sweep lock, so the judge makes one call per
batch. A scan of the inbox on start (the backlog) and every `reconcile_seconds` catches what
events missed.
"""

from __future__ import annotations

import os
import queue
import signal
import stat
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from watchdog.events import (
    DirCreatedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

from memory_curator.commands import sweep
from memory_curator.commands.context import Context, KeptQuerier, kept
from memory_curator.commands.review_memory import Memory
from memory_curator.core import review_note as rn
from memory_curator.core.errors import CuratorError, OtherHost
from memory_curator.core.hosts import host_refusal
from memory_curator.core.json_types import JsonObject
from memory_curator.core.names import INBOX, is_candidate_name, nfc
from memory_curator.core.notes import parse
from memory_curator.core.result import SweepResult
from memory_curator.core.rules import Settings
from memory_curator.core.text import one_line
from memory_curator.store.bell import Bell
from memory_curator.store.paths import agent_dirs, hash_capped, list_candidates, read_whole, relpath, safe_join
from memory_curator.store.rules_file import load_for_vault
from memory_curator.store.state import lock_is_free, watcher_lock

LOOK_GAP = 0.1  # the least time between the two looks at a file
BATCH_GATHER = 0.25  # a batch collects this long after its first file settles (event delivery jitters ~0.1 s)
TICK = 0.5  # the longest the loop sleeps without checking the clock, the lock and the observer
EVENTS = [FileCreatedEvent, FileModifiedEvent, FileMovedEvent, FileClosedEvent, DirCreatedEvent, DirMovedEvent]


@dataclass(frozen=True)
class Look:
    """What one stat of a file shows; two equal looks a while apart mean it stopped changing."""

    size: int
    mtime_ns: int

    @property
    def mtime(self) -> float:
        return self.mtime_ns / 1e9


@dataclass
class Tracked:
    first_seen: float
    not_before: float
    look: Look | None
    looked: float  # when `look` was taken: a later equal look means quiet since then


class Tracker:
    """Which inbox files have settled. Pure: the caller supplies monotonic times and looks."""

    def __init__(self, settle: float, ceiling: float) -> None:
        self.settle, self.ceiling = settle, ceiling
        self.entries: dict[str, Tracked] = {}

    def seen(self, rel: str, now: float, look: Look | None, quiet_for: float = 0.0) -> None:
        """An event (quiet_for 0) or a scan (quiet_for: the file's mtime age) names `rel`."""
        wait = max(self.settle - quiet_for, LOOK_GAP)
        entry = self.entries.get(rel)
        if entry is None:
            self.entries[rel] = Tracked(now, now + wait, look, now)
            return
        # quiet time restarts with each event, but a file that never goes quiet is looked at by the ceiling
        entry.not_before = min(max(entry.not_before, now + wait), entry.first_seen + self.ceiling)
        if quiet_for == 0.0:
            entry.look, entry.looked = look, now

    def due(self, now: float) -> list[str]:
        return sorted(rel for rel, entry in self.entries.items() if entry.not_before <= now)

    def next_due(self) -> float | None:
        return min((entry.not_before for entry in self.entries.values()), default=None)

    def judge(self, rel: str, now: float, look: Look | None, mtime_age: float, arriving: bool) -> str:
        """After a look at a due file: "gone", "ready", "overdue" (swept as needs_review) or "wait".

        Quiet time is the mtime's age; an mtime in the future (a skewed clock) tells nothing,
        so then it is the time since an equal look."""
        entry = self.entries.pop(rel)
        if look is None:
            return "gone"
        same = look == entry.look
        quiet = mtime_age if mtime_age >= 0 else (now - entry.looked if same else 0.0)
        changed = not same or quiet < self.settle
        if changed and now - entry.first_seen >= self.ceiling:
            return "overdue"
        if not changed and (not arriving or quiet >= self.ceiling):
            return "ready"  # past the ceiling an unfinished file goes to the sweep, which flags it
        # changed: a full window again; quiet but not for long enough: the rest of it; unfinished: later
        wait = self.settle - quiet if same and quiet < self.settle else self.settle
        self.entries[rel] = Tracked(entry.first_seen, now + max(wait, LOOK_GAP), look, entry.looked if same else now)
        return "wait"


def arriving(path: Path) -> bool:
    """Not finished yet: empty, or the frontmatter is open (the sweep waits for these too).

    An unreadable file is not waited on: the sweep reports it (or flags it)."""
    try:
        raw = read_whole(path)  # a FIFO is never opened: the watcher never blocks
        return not raw.strip() or parse(raw).unclosed
    except Exception:  # one file's problem is never the watcher's: the sweep meets it in its boundary
        return False


def inbox_rel(root: Path, path: str) -> str | None:
    """The vault-relative path of a would-be candidate, or None for anything never swept."""
    full = Path(path)
    try:
        parts = full.relative_to(root / INBOX).parts
    except ValueError:
        return None
    if len(parts) == 2 and parts[0].startswith("."):
        return None  # .dropped/ and other dot-folders
    if len(parts) not in (1, 2) or not is_candidate_name(parts[-1]):
        return None
    return relpath(root, full)


def look_at(path: Path) -> Look | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return Look(info.st_size, info.st_mtime_ns) if stat.S_ISREG(info.st_mode) else None


@dataclass(frozen=True)
class Notice:
    """A one-line message for the log (start, stop, a failed sweep)."""

    text: str


@dataclass(frozen=True)
class Swept:
    """One sweep of files that settled together."""

    number: int
    result: SweepResult
    seconds: float

    @property
    def worth_reporting(self) -> bool:
        return bool(self.result.totals()["processed"] or self.result.errors or self.result.notes)

    def to_json(self) -> JsonObject:
        agents = tuple(a for a in self.result.agents if a.actions or a.skipped or a.errors)
        shown = replace(self.result, agents=agents, single_agent=False)
        return {"batch": self.number, "seconds": round(self.seconds, 3), **shown.to_json(), "notes": list(shown.notes)}


class _Handler(FileSystemEventHandler):
    """Runs on the observer's thread: only passes (path, is_dir) on; the loop does the rest."""

    def __init__(self, notify: Callable[[str, bool], None]) -> None:
        self.notify = notify

    def on_any_event(self, event: FileSystemEvent) -> None:
        path = event.dest_path if event.event_type == "moved" else event.src_path
        self.notify(os.fsdecode(path), event.is_directory)


class Watcher:
    """The watch loop. `run()` yields a Swept per sweep and a Notice per message until `stop` is set."""

    def __init__(
        self,
        ctx: Context,
        *,
        use_judge: bool = True,
        observer: Callable[[], BaseObserver] = Observer,
        gather: float = BATCH_GATHER,
    ) -> None:
        """`observer` makes what reports the inbox's events: the platform's own (inotify, FSEvents),
        or watchdog's polling one, which also sees a network share's files, every so often;
        `gather`, how long a batch collects after its first file settles."""
        self.make_observer = observer
        self.gather = gather
        # event paths are real paths on macOS; one index querier across sweeps, refreshed at each
        self.ctx = replace(ctx, root=ctx.root.resolve(), querier=kept(ctx.querier, every=0))
        self.root = root = self.ctx.root
        self.inbox = root / INBOX
        self.state = ctx.state
        self.clock = ctx.clock  # monotonic: the settle and reconcile timers; timestamp: mtime ages
        self.options = sweep.Options(use_judge=use_judge, wait=True)
        self.settings: Settings = load_for_vault(root).settings
        refusal = host_refusal(self.settings.curator_host, ctx.host)
        if refusal:
            raise OtherHost(refusal)  # exit 0: a service on the other machines just stays idle
        self.tracker = Tracker(self.settings.settle_seconds, self.settings.settle_ceiling_seconds)
        self.events: queue.SimpleQueue[tuple[str, bool, float]] = queue.SimpleQueue()
        self.stop = threading.Event()
        self.bell = Bell()  # closed when run() ends
        self.ready: dict[str, bool] = {}  # settled files waiting for their batch -> overdue
        self.ready_since = 0.0
        self.sweeps = 0
        self.note: Watched | None = None  # the review note, when the rules name one

    def request_stop(self) -> None:
        """Safe from a signal handler: sets the flag and wakes the loop."""
        self.stop.set()
        self.bell.ring()

    def notify(self, path: str, is_dir: bool) -> None:
        """An event names `path` (the observer's thread): queued with its time, then the loop woken."""
        self.events.put((path, is_dir, self.clock.monotonic()))
        self.bell.ring()

    def run(self) -> Iterator[Swept | Notice]:
        with watcher_lock(
            self.state, self.ctx.machine.pid, self.ctx.host
        ):  # one watcher per vault: a second one exits 75
            yield from self._run()

    def _run(self) -> Iterator[Swept | Notice]:
        self.inbox.mkdir(parents=True, exist_ok=True)
        observer = self._start_observer()
        try:
            every = self.settings.reconcile_seconds
            yield Notice(
                f"watching {self.inbox} (settle {self.settings.settle_seconds:g}s, reconcile every {every:g}s)"
            )
            self.scan()  # the backlog
            reconcile_at = self.clock.monotonic() + every
            while not self.stop.is_set():
                self._track(self._wait(reconcile_at))
                if self.clock.monotonic() >= reconcile_at:
                    self.scan()
                    reconcile_at = self.clock.monotonic() + every
                self._look()
                if self._batch_complete():
                    yield from self._sweep()
                elif self.note is not None and self.note.settled(self.clock.monotonic(), self.settings.settle_seconds):
                    yield from self._sweep(note=True)  # a sweep of nothing: the note's ticks
                if not observer.is_alive():
                    raise CuratorError(f"{self.inbox}: the file watcher stopped unexpectedly")
        finally:
            observer.stop()
            observer.join(timeout=5)
            self.bell.close()
            if isinstance(self.ctx.querier, KeptQuerier):
                self.ctx.querier.close()
        yield Notice("stopped")

    def _start_observer(self) -> BaseObserver:
        observer = self.make_observer()
        observer.schedule(_Handler(self.notify), str(self.inbox), recursive=True, event_filter=EVENTS)
        self.note = Watched.of(self.root, self.settings.review_note, self.state)
        if self.note is not None:  # the review note's folder, not recursive: a person ticking a box
            observer.schedule(_Handler(self.notify), str(self.note.folder), recursive=False, event_filter=EVENTS)
        try:
            observer.start()
        except OSError as exc:
            raise CuratorError(
                f"{self.inbox}: cannot watch: {exc.strerror or exc}"
                " (on Linux, raise fs.inotify.max_user_watches / max_user_instances)"
            ) from None
        return observer

    def scan(self, folders: list[tuple[str, Path]] | None = None, fresh: bool = False) -> None:
        """Track every candidate file of the inbox (or of `folders`) as if an event named it.

        A file's mtime age counts as quiet time, unless `fresh` (a folder that just moved in)."""
        now, wall = self.clock.monotonic(), self.clock.timestamp()
        for agent, folder in agent_dirs(self.root) if folders is None else folders:
            for item in list_candidates(folder, agent, self.root):
                look = look_at(item.path)
                if look is not None:
                    self.tracker.seen(item.rel, now, look, 0.0 if fresh else max(wall - look.mtime, 0.0))

    def _wait(self, reconcile_at: float) -> list[tuple[str, bool, float]]:
        """Sleep until an event, the next due file, the batch deadline or the reconcile."""
        times = [reconcile_at, self.clock.monotonic() + TICK]
        due = self.tracker.next_due()
        if due is not None:
            times.append(due)
        if self.ready:
            times.append(self.ready_since + self.gather)
        got = self._queued()
        if not got:  # events are queued before the bell rings: none is slept through
            self.bell.wait(min(times) - self.clock.monotonic())
            got = self._queued()
        return got

    def _queued(self) -> list[tuple[str, bool, float]]:
        got = []
        while True:
            try:
                got.append(self.events.get_nowait())
            except queue.Empty:
                return got

    def _track(self, events: list[tuple[str, bool, float]]) -> None:
        for path, is_dir, when in events:
            if is_dir:
                self._new_folder(Path(path))
                continue
            rel = inbox_rel(self.root, path)
            if rel is not None:
                self.tracker.seen(rel, when, look_at(Path(path)))
            elif self.note is not None:
                self.note.seen(self.root, path, when)

    def _new_folder(self, folder: Path) -> None:
        """An agent folder created or moved in: its files may predate the watch on it."""
        if folder.parent == self.inbox and not folder.name.startswith("."):
            self.scan([(nfc(folder.name), folder)], fresh=True)

    def _look(self) -> None:
        now, wall = self.clock.monotonic(), self.clock.timestamp()
        for rel in self.tracker.due(now):
            path = self.root / rel
            look = look_at(path)
            unfinished = look is not None and arriving(path)
            verdict = self.tracker.judge(rel, now, look, wall - look.mtime if look else 0.0, unfinished)
            if verdict in ("ready", "overdue"):
                if not self.ready:
                    self.ready_since = now
                self.ready[rel] = verdict == "overdue"

    def _batch_complete(self) -> bool:
        """Files written together settle together: gather them so the judge makes one call."""
        return bool(self.ready) and self.clock.monotonic() - self.ready_since >= self.gather

    def _sweep(self, note: bool = False) -> Iterator[Swept | Notice]:
        """Sweep the gathered batch; with `note`, only the review note's ticks (a batch still
        gathering keeps gathering: the tracker has let go of its files)."""
        batch = {} if note else self._take_batch()
        if (not batch and not note) or not self._lock_free():
            return
        options = replace(
            self.options,
            only=frozenset(batch),
            overdue=frozenset(rel for rel, overdue in batch.items() if overdue),
            observed=frozenset(rel for rel, overdue in batch.items() if not overdue),
            stop=self.stop.is_set,
        )
        started = self.clock.monotonic()
        try:
            result = sweep.run(replace(self.ctx), None, options)  # a fresh context: the rules as they are now
        except OtherHost as exc:  # the rules changed under us: this machine no longer sweeps
            yield Notice(str(exc))
            self.stop.set()
            return
        except CuratorError as exc:  # a broken rules file must not end the service: the next batch retries
            yield Notice(f"sweep failed: {exc}")
            return
        except Exception as exc:  # a bug outside every candidate (each has its own boundary): logged, and
            yield Notice(f"sweep failed: internal error: {one_line(exc)}")  # the next batch retries
            return
        self.sweeps += 1
        yield Swept(self.sweeps, result, self.clock.monotonic() - started)

    def _take_batch(self) -> dict[str, bool]:
        # a file that changed while its batch gathered waits again, unless it is overdue: those always change
        batch = {rel: overdue for rel, overdue in self.ready.items() if overdue or rel not in self.tracker.entries}
        for rel in batch:
            self.tracker.entries.pop(rel, None)  # an overdue file's ceiling starts again
        self.ready = {}
        return batch

    def _lock_free(self) -> bool:
        """Wait for a scheduled sweep to finish, but stay responsive to a stop."""
        while not lock_is_free(self.state):
            self.bell.wait(0.2)
            if self.stop.is_set():
                return False
        return True


@contextmanager
def stop_on_signals(watcher: Watcher) -> Iterator[None]:
    """SIGINT/SIGTERM ask the watcher to stop after the current candidate; a second one stops now
    (safe too: the journal completes or rolls back a half-done action on the next sweep)."""

    def handle(signum: int, frame: object) -> None:
        if watcher.stop.is_set():
            raise KeyboardInterrupt
        watcher.request_stop()

    previous = {sig: signal.signal(sig, handle) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


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
        return hash_capped(path)
    except OSError:
        return None
