"""Reading and describing notes for the index, chunk by chunk, for the one process that writes.

A chunk is up to `CHUNK` consecutive paths of the walk with their row ids; it comes back as the
rows of each table (`Described`), ready for the writer's `executemany`. Many notes (a first
build, a vault synced in): worker processes describe the chunks — describing is Python, so
threads would share one core — while the writer inserts the chunks already described, in order.
Few notes, or one core: described here, chunk by chunk (starting workers costs more than it
saves).

Workers are spawned, not forked (the caller may hold threads, and their locks): like every
spawned process, each imports the caller's main module again, so a script that builds an index
of many notes needs the usual `if __name__ == "__main__":` guard (without it, the worker refuses
to open the index and its chunks are described here instead).

Both ways run the same `describe_chunk`, so they give the same rows. A note that cannot be read
is skipped and a note that cannot be parsed is a problem note, as `rows.describe` decides; a
chunk whose worker fails (a crash, a pool that cannot start) is described again here.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import signal
from collections import Counter, deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from memory_curator.core.words import tokens
from memory_curator.index.rows import Layout, describe, pack, path_text

CHUNK = 500  # notes per chunk: one `executemany` per table
PARALLEL_NOTES = 2000  # at least this many notes to read: worker processes (each starts in ~0.1 s)
MAX_WORKERS = 8
NoteRow = tuple[int, str, str, str | None, str | None, str | None, str, str, str, str, int, int, str, str | None,
                str | None, int, str | None, bool | None]  # fmt: skip
FtsRow = tuple[int, str, str, str]  # rowid, title, value, body
NameRow = tuple[str, int]  # name, note id
TextRow = tuple[int, bytes]  # note id, its indexed text compressed (`rows.pack`)
PathRow = tuple[int, str]  # note id, its path without `.md` (the words of its folders and file name)


@dataclass(frozen=True)
class Described:
    """One chunk, ready to insert: the rows of `notes` (in `NOTE_COLUMNS` order), `fts`, `names`,
    `texts` and `paths`; how many paths the chunk held (read or not: the bar's step); the document
    frequencies it adds, when asked."""

    notes: list[NoteRow]
    fts: list[FtsRow]
    names: list[NameRow]
    paths: int
    delta: Counter[str] | None
    texts: list[TextRow]
    path_words: list[PathRow]


@dataclass(frozen=True)
class _Chunk:
    rels: tuple[str, ...]
    first_id: int


def read_note(root: Path, rel: str) -> tuple[bytes, int, int] | None:
    """The bytes of a note and the (size, mtime) of what was read; None when it vanished."""
    try:
        fd = os.open(root / rel, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        stat = os.fstat(fd)
        chunks = []
        while chunk := os.read(fd, max(stat.st_size, 65536)):
            chunks.append(chunk)
        return b"".join(chunks), stat.st_size, stat.st_mtime_ns
    except OSError:
        return None
    finally:
        os.close(fd)


def describe_chunk(
    root: Path, layout: Layout, rels: Sequence[str], first_id: int, racy_ns: int, count_terms: bool
) -> Described:
    """Read and describe these notes (ids from `first_id`, one per path); an mtime at or after
    `racy_ns` is stored as -1 so that the next refresh reads the note again."""
    notes: list[NoteRow] = []
    fts: list[FtsRow] = []
    names: list[NameRow] = []
    texts: list[TextRow] = []
    path_words: list[PathRow] = []
    delta: Counter[str] | None = Counter() if count_terms else None
    for ident, rel in enumerate(rels, first_id):
        read = read_note(root, rel)
        if read is None:
            continue
        raw, size, mtime = read
        r = describe(rel, raw, layout)
        notes.append(
            (ident, r.path, r.stem, r.surface, r.key, r.day, r.title, r.frontmatter, json.dumps(r.tags),
             json.dumps(r.links), size, mtime if mtime < racy_ns else -1, r.content_hash, r.text_hash, r.body_hash,
             r.words, r.problem, r.owned)
        )  # fmt: skip
        fts.append((ident, r.title, r.value, r.body))
        texts.append((ident, pack(r.title, r.value, r.body)))
        path_words.append((ident, path_text(r.path)))
        names.extend((name, ident) for name in r.names)
        if delta is not None:
            delta.update(set(tokens(f"{r.title} {r.value} {r.body}")))
    return Described(notes, fts, names, len(rels), delta, texts, path_words)


def starting_worker() -> bool:
    """Whether this is a worker process still importing its parent's main module: with spawn, a
    script without a `__main__` guard runs its top level again in every worker."""
    return bool(getattr(multiprocessing.current_process(), "_inheriting", False))


_WORKER: tuple[Path, Layout] | None = None


def _start_worker(root: Path, layout: Layout) -> None:
    global _WORKER
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the writer's to handle: it stops the pool
    _WORKER = (root, layout)


def _work(rels: tuple[str, ...], first_id: int, racy_ns: int, count_terms: bool) -> Described:
    assert _WORKER is not None, "a worker started without _start_worker"
    root, layout = _WORKER
    return describe_chunk(root, layout, rels, first_id, racy_ns, count_terms)


def cores() -> int:
    """The cores this process may use (at most `MAX_WORKERS`)."""
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # macOS
        usable = os.cpu_count() or 1
    return max(1, min(usable, MAX_WORKERS))


def spawn_pool(count: int, root: Path, layout: Layout) -> Executor:
    """`count` worker processes, spawned, not forked: the caller may hold threads (a progress
    bar, a watcher) and their locks."""
    context = multiprocessing.get_context("spawn")
    return ProcessPoolExecutor(count, context, initializer=_start_worker, initargs=(root, layout))


@dataclass(frozen=True)
class Workers:
    """How a build spreads its reading: worker processes from `from_notes` notes on, `count`
    of them (None: one per core), chunks of `chunk` notes; the pool they run in, what each
    runs on a chunk (`work`) and how this process describes a chunk itself (`here`). A test
    passes small chunks, a pool that cannot start, a worker that dies."""

    from_notes: int = PARALLEL_NOTES
    chunk: int = CHUNK
    count: int | None = None
    pool: Callable[[int, Path, Layout], Executor] = spawn_pool
    work: Callable[[tuple[str, ...], int, int, bool], Described] = _work
    here: Callable[[Path, Layout, Sequence[str], int, int, bool], Described] = describe_chunk


WORKERS = Workers()


@contextlib.contextmanager
def described(
    root: Path,
    layout: Layout,
    rels: Sequence[str],
    first_id: int,
    racy_ns: int,
    count_terms: bool,
    spread: Workers = WORKERS,
) -> Iterator[Iterator[Described]]:
    """The notes at `rels` (ids from `first_id`), described chunk by chunk, in order. Worker
    processes when there are at least `spread.from_notes` of them and more than one core."""
    size = spread.chunk
    chunks = [_Chunk(tuple(rels[at : at + size]), first_id + at) for at in range(0, len(rels), size)]

    def here(chunk: _Chunk) -> Described:
        return spread.here(root, layout, chunk.rels, chunk.first_id, racy_ns, count_terms)

    count = spread.count or cores()
    if len(rels) >= spread.from_notes and count > 1:
        with _in_processes(spread, root, layout, chunks, here, racy_ns, count_terms, count) as out:
            yield out
    else:
        yield (here(chunk) for chunk in chunks)


@contextlib.contextmanager
def _in_processes(
    spread: Workers,
    root: Path,
    layout: Layout,
    chunks: list[_Chunk],
    here: Callable[[_Chunk], Described],
    racy_ns: int,
    count_terms: bool,
    count: int,
) -> Iterator[Iterator[Described]]:
    """Worker processes describe up to two chunks each ahead of the caller, who gets them in
    order. A chunk a worker could not describe (it died, the pool would not start, the rules
    would not pickle) is described here instead: slower, never different."""
    try:
        pool: Executor | None = spread.pool(count, root, layout)
    except Exception:  # e.g. no semaphores in a sandbox
        pool = None

    def submit(chunk: _Chunk) -> Future[Described] | None:
        if pool is None:
            return None
        try:
            return pool.submit(spread.work, chunk.rels, chunk.first_id, racy_ns, count_terms)
        except Exception:  # a broken pool: this chunk and the next are described here
            return None

    def results() -> Iterator[Described]:
        ahead: deque[tuple[_Chunk, Future[Described] | None]] = deque()
        left = iter(chunks)
        while True:
            while len(ahead) < 2 * count + 1 and (chunk := next(left, None)) is not None:
                ahead.append((chunk, submit(chunk)))
            if not ahead:
                return
            chunk, future = ahead.popleft()
            result: Described | None = None
            if future is not None:
                with contextlib.suppress(Exception):
                    result = future.result()
            yield result if result is not None else here(chunk)

    try:
        yield results()
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
