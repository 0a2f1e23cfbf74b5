"""The derived index: one SQLite file in the state directory that answers "does the vault
already know this?" without re-reading the vault.

Disposable by design: it holds nothing the markdown does not. A missing, old-schema, foreign
or corrupt file is rebuilt, never trusted. A refresh is one stat walk; only notes whose
(size, mtime) changed are read again, and all changes land in one transaction. Notes
modified in the last two seconds by the clock (or stamped in its future) are re-read on the
next refresh too (their mtime may not have ticked yet).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sqlite3
from collections import Counter
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory_curator.core.clock import Clock, SystemClock
from memory_curator.core.errors import CuratorError
from memory_curator.core.rules import Rules
from memory_curator.core.text import iso
from memory_curator.core.words import tokens
from memory_curator.index import build, semantic
from memory_curator.index.build import read_note as read_note  # where `querier` finds it
from memory_curator.index.progress import Progress as Progress  # where the context finds it
from memory_curator.index.progress import bar_for
from memory_curator.index.rows import Layout, path_text, unpack
from memory_curator.index.walk import notes, notes_at
from memory_curator.store.state import STATE_FIX
from memory_curator.store.writer import FILES, Files

SCHEMA_VERSION = 4  # 2: body_hash, headings and Unicode slugs among the names; 3: contentless FTS5, texts, paths;
# 4: owned (whose a note is, so its namesakes are not read to learn it)
FILE_NAME = "index.sqlite3"
RACY_NS = 2_000_000_000
HASH_BYTES = 32 * 1024 * 1024  # FTS5 buffers this much before writing a segment: half the CPU of 1 MB
CRISIS_MERGE = 200  # while building: FTS5 merges only when this many segments of one size pile up
SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE notes(
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    path TEXT NOT NULL UNIQUE,
    stem TEXT NOT NULL,
    surface TEXT,
    key TEXT,
    day TEXT,
    title TEXT NOT NULL,
    frontmatter TEXT NOT NULL,
    tags TEXT NOT NULL,
    links TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    text_hash TEXT,
    body_hash TEXT,
    words INTEGER NOT NULL,
    problem TEXT,
    owned INTEGER
);
CREATE TABLE names(name TEXT NOT NULL, note INTEGER NOT NULL);
CREATE TABLE terms(term TEXT PRIMARY KEY, df INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE texts(id INTEGER PRIMARY KEY, packed BLOB NOT NULL);
CREATE VIRTUAL TABLE fts USING fts5(title, value, body, content = '', tokenize = 'unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE vocab USING fts5vocab(fts, row);
CREATE VIRTUAL TABLE paths USING fts5(
    path, content = '', detail = none, columnsize = 0, tokenize = 'unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE path_vocab USING fts5vocab(paths, row);
"""
INDEXES = """
CREATE INDEX notes_key ON notes(key) WHERE key IS NOT NULL;
CREATE INDEX notes_text_hash ON notes(text_hash) WHERE text_hash IS NOT NULL;
CREATE INDEX notes_body_hash ON notes(body_hash) WHERE body_hash IS NOT NULL;
CREATE INDEX notes_stem ON notes(stem);
CREATE INDEX notes_day ON notes(day) WHERE day IS NOT NULL;
CREATE INDEX names_name ON names(name);
CREATE INDEX names_note ON names(note);
"""
_NOTE_COLUMNS = (
    "id, path, stem, surface, key, day, title, frontmatter, tags, links, size, mtime_ns, content_hash, text_hash, "
    "body_hash, words, problem, owned"
)  # the order of `build.NoteRow`
# A whole chunk (`build.Described`) goes in with one `executemany` per table, while the workers
# describe the next chunks.
_INSERT_NOTES = f"INSERT INTO notes({_NOTE_COLUMNS}) VALUES ({', '.join('?' * 18)})"
_INSERT_FTS = "INSERT INTO fts(rowid, title, value, body) VALUES (?, ?, ?, ?)"
_INSERT_NAMES = "INSERT INTO names(name, note) VALUES (?, ?)"
_INSERT_TEXTS = "INSERT INTO texts(id, packed) VALUES (?, ?)"
_INSERT_PATHS = "INSERT INTO paths(rowid, path) VALUES (?, ?)"
# The FTS5 tables are contentless (SQLite 3.40: no `contentless_delete`): a note leaves them by
# the 'delete' command given the very values it was indexed with (`texts`, `notes.path`).
_DELETE_FTS = "INSERT INTO fts(fts, rowid, title, value, body) VALUES ('delete', ?, ?, ?, ?)"
_DELETE_PATHS = "INSERT INTO paths(paths, rowid, path) VALUES ('delete', ?, ?)"


class IndexUnavailable(CuratorError):
    """The index file cannot be used or rebuilt (e.g. the state directory is not writable)."""


@dataclass(frozen=True)
class Refresh:
    """What one refresh did."""

    rebuilt: bool
    added: int
    changed: int
    removed: int
    notes: int
    seconds: float
    seen: dict[str, tuple[int, int]] = field(default_factory=dict, repr=False, compare=False)  # the walk's notes

    def take_walk(self) -> dict[str, tuple[int, int]]:
        """The walk's notes, handed over and let go here (about 26 MB at 100,000 notes): taken
        once by the sweep that refreshed (`commands.sweep`), or dropped by a long-lived process
        between its refreshes; empty once taken."""
        seen = dict(self.seen)
        self.seen.clear()  # a frozen record: its dict emptied in place
        return seen

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("rebuilt", "added", "changed", "removed", "notes", "seconds")}


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


def _last_id(conn: sqlite3.Connection) -> int:
    """The highest note id this index has given, a removed note's too (the vectors of
    `semantic.sync` are keyed by it, and a new id is how it tells a changed or new note):
    SQLite's AUTOINCREMENT keeps it in `sqlite_sequence`, whoever chose the id."""
    found = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'notes'").fetchone()
    return int(found[0]) if found else 0


def _remove_database(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{path}{suffix}")


class Index:
    """The SQLite file and its upkeep. `refresh()` before asking; `IndexQuerier` asks."""

    def __init__(
        self,
        root: Path,
        rules: Rules,
        state: Path,
        clock: Clock = SystemClock(),
        files: Files = FILES,
        progress: Progress | None = None,
        workers: build.Workers = build.WORKERS,
    ) -> None:
        self.root = root.resolve()
        self.files = files  # the writer's recipe for the rebuilt file
        self.progress = progress  # a bar for a build or refresh that reads many notes (a terminal only)
        self.workers = workers  # from how many notes to read, and how, worker processes describe them
        self.clock = clock  # the `built`/`refreshed` stamps, durations, and which mtimes are too recent
        self.layout = Layout(rules)
        self.rules = rules
        self.state = state
        self.path = state / FILE_NAME
        self.conn = self._connect()

    # --- opening and validating ----------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            why = f"{self.path}: cannot open the index: {exc}"
            raise IndexUnavailable(f"{why}; the index is rebuilt from the notes: {STATE_FIX}") from None
        conn.execute("PRAGMA busy_timeout = 30000")
        with contextlib.suppress(sqlite3.DatabaseError):  # a corrupt file: usable() says so
            conn.execute("PRAGMA synchronous = NORMAL")  # WAL: a crash may lose the last refresh, not corrupt
        self._file = _identity(self.path)
        return conn

    def _reopen_if_replaced(self) -> None:
        """Another process may have rebuilt the file (a new inode) since we opened it."""
        if _identity(self.path) != self._file:
            self.conn.close()
            self.conn = self._connect()

    def usable(self) -> bool:
        """A complete index of this vault, with this schema and these surfaces."""
        try:
            if self.conn.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
                return False
            meta = dict(self.conn.execute("SELECT key, value FROM meta"))
        except sqlite3.DatabaseError:
            return False
        return meta.get("root") == str(self.root) and meta.get("layout") == self.layout.signature

    def close(self) -> None:
        self.conn.close()

    # --- refreshing ------------------------------------------------------------------------

    def writing(self) -> contextlib.AbstractContextManager[None]:
        """The index's write lock, for a writer of derived tables besides the refresh (the
        semantic vectors, `index.semantic`)."""
        return self._writing()

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """One writer at a time (a sweep, `check`, `query`, `index rebuild`)."""
        if build.starting_worker():  # it would wait forever for the lock its parent holds
            raise IndexUnavailable(
                "the index was asked for while a worker process of an index build was starting: a script "
                'that uses memory_curator needs `if __name__ == "__main__":` around its top-level code'
            )
        with open(self.state / "index.lock", "a+b") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            yield

    def refresh(self) -> Refresh:
        """Bring the index up to date with the vault; rebuild it when it cannot be trusted."""
        with self._writing():
            self._reopen_if_replaced()
            if not self.usable():
                return self._rebuild()
            try:
                return self._incremental()
            except sqlite3.DatabaseError:
                return self._rebuild()

    def rebuild(self) -> Refresh:
        with self._writing():
            return self._rebuild()

    def _rebuild(self) -> Refresh:
        """Build a new file beside the old one and rename it into place: a build that is
        killed half-way leaves only a stray temp file, never a half-built index."""
        started = self.clock.monotonic()
        for stray in self.path.parent.glob(f"{FILE_NAME}.building-*"):  # builders that died (we hold the lock)
            _remove_database(stray)
        temp = self.path.with_name(f"{FILE_NAME}.building-{os.getpid()}")
        conn = sqlite3.connect(temp, isolation_level=None, check_same_thread=False)
        try:
            files = self._build(conn)
            conn.execute("PRAGMA journal_mode = WAL")
        except BaseException:
            conn.close()
            _remove_database(temp)
            raise
        conn.close()
        self.conn.close()
        for suffix in ("-wal", "-shm", "-journal"):  # the old file's: never replayed into the new one
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{self.path}{suffix}")
        self.files.install(temp, self.path)  # fsynced before the rename: a power cut cannot leave holes
        self.conn = self._connect()
        return Refresh(True, len(files), 0, 0, len(files), round(self.clock.monotonic() - started, 3), files)

    def _build(self, conn: sqlite3.Connection) -> dict[str, tuple[int, int]]:
        conn.execute("PRAGMA journal_mode = OFF")  # a fresh file nobody else sees yet
        conn.execute("PRAGMA synchronous = OFF")
        conn.execute("PRAGMA cache_size = -32768")
        conn.executescript(SCHEMA)
        conn.execute("INSERT INTO fts(fts, rank) VALUES ('hashsize', ?)", (HASH_BYTES,))
        # No merging while the build inserts: the `optimize` at the end merges every segment once,
        # which incremental merges would only have done in part, several times over. The two
        # settings are removed once built, so that refreshes merge by FTS5's defaults.
        conn.execute("INSERT INTO fts(fts, rank) VALUES ('automerge', 0)")
        conn.execute("INSERT INTO fts(fts, rank) VALUES ('crisismerge', ?)", (CRISIS_MERGE,))
        conn.execute("BEGIN")
        files = self._notes()
        self._insert(conn, files, 1, count_terms=False)
        for statement in INDEXES.strip().splitlines():
            conn.execute(statement)
        conn.execute("INSERT INTO fts(fts) VALUES ('optimize')")
        conn.execute("INSERT INTO paths(paths) VALUES ('optimize')")
        conn.execute("INSERT INTO terms SELECT term, doc FROM vocab")  # after `optimize`: one segment to read
        conn.execute("DELETE FROM fts_config WHERE k IN ('automerge', 'crisismerge')")
        self._set_meta(conn, built=iso(self.clock.now()))
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
        return files

    def _notes(self) -> dict[str, tuple[int, int]]:
        return notes(self.root, self.rules)

    def _incremental(self) -> Refresh:
        started = self.clock.monotonic()
        conn = self.conn
        conn.execute("PRAGMA journal_mode = WAL")
        files = self._notes()
        known = {path: (ident, size, mtime) for ident, path, size, mtime in conn.execute(
            "SELECT id, path, size, mtime_ns FROM notes")}  # fmt: skip
        gone = [ident for path, (ident, _, _) in known.items() if path not in files]
        stale = {p: v for p, v in files.items() if p not in known or known[p][1:] != v}
        if not gone and not stale:
            with contextlib.suppress(sqlite3.OperationalError):  # only the freshness stamp
                stamp = iso(self.clock.now())
                conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('refreshed', ?)", (stamp,))
            return Refresh(False, 0, 0, 0, len(files), round(self.clock.monotonic() - started, 3), files)
        changed = [known[p][0] for p in stale if p in known]
        self._rewrite(conn, gone + changed, stale, stamp=True)
        added = len(stale) - len(changed)
        seconds = round(self.clock.monotonic() - started, 3)
        return Refresh(False, added, len(changed), len(gone), len(files), seconds, files)

    def reindex(self, rels: Collection[str]) -> None:
        """These notes alone brought up to date, no walk (a sweep's group commit wrote them:
        `Overlay.settle`); one not on disk, or not a note the index holds, is taken out."""
        with self._writing():
            self._reopen_if_replaced()
            conn, marks = self.conn, ",".join("?" * len(rels))
            known = {path: (ident, size, mtime) for ident, path, size, mtime in conn.execute(
                f"SELECT id, path, size, mtime_ns FROM notes WHERE path IN ({marks})", list(rels))}  # fmt: skip
            files = {rel: seen for rel in rels if (seen := self._stat(rel)) is not None}
            gone = [ident for path, (ident, _, _) in known.items() if path not in files]
            stale = {p: v for p, v in files.items() if p not in known or known[p][1:] != v}
            changed = [known[p][0] for p in stale if p in known]
            self._rewrite(conn, gone + changed, stale, stamp=False)

    def _rewrite(
        self, conn: sqlite3.Connection, forget: list[int], stale: dict[str, tuple[int, int]], stamp: bool
    ) -> None:
        """The rows `forget` out and the notes `stale` in, with their terms, in one transaction;
        `stamp`: a refresh's meta too (a sweep's `reindex` is no refresh)."""
        conn.execute("BEGIN IMMEDIATE")
        try:
            delta = self._forget(conn, forget)
            delta.update(self._insert(conn, stale, _last_id(conn) + 1, count_terms=True))  # no id given twice
            self._apply_terms(conn, delta)
            if stamp:
                self._set_meta(conn)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _stat(self, rel: str) -> tuple[int, int] | None:
        """(size, mtime_ns) of a note the walk would find at `rel`; None: none there."""
        if rel not in notes_at(self.root, self.rules, rel):
            return None
        stat = (self.root / rel).lstat()
        return stat.st_size, stat.st_mtime_ns

    def _set_meta(self, conn: sqlite3.Connection, **extra: str) -> None:
        values = {"root": str(self.root), "layout": self.layout.signature, "refreshed": iso(self.clock.now()), **extra}
        conn.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", values.items())

    def _forget(self, conn: sqlite3.Connection, ids: list[int]) -> Counter[str]:
        """Delete these notes; the document frequencies they took away."""
        delta: Counter[str] = Counter()
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            indexed = []
            for ident, packed in conn.execute(f"SELECT id, packed FROM texts WHERE id IN ({marks})", chunk):
                title, value, body = unpack(packed)
                delta.subtract(set(tokens(f"{title} {value} {body}")))
                indexed.append((ident, title, value, body))
            conn.executemany(_DELETE_FTS, indexed)
            paths = conn.execute(f"SELECT id, path FROM notes WHERE id IN ({marks})", chunk).fetchall()
            conn.executemany(_DELETE_PATHS, [(ident, path_text(path)) for ident, path in paths])
            for table, column in (("texts", "id"), ("names", "note"), ("notes", "id")):
                conn.execute(f"DELETE FROM {table} WHERE {column} IN ({marks})", chunk)
        return delta

    def _insert(
        self, conn: sqlite3.Connection, files: dict[str, tuple[int, int]], first_id: int, count_terms: bool
    ) -> Counter[str]:
        """Read, describe and insert these notes (ids from `first_id`, in `files`' order); the
        document frequencies they add. Many notes: described in worker processes (`build`)
        while this process inserts. More than `PROGRESS_NOTES`: the context's bar (if any)
        advances chunk by chunk, unreadable notes included."""
        delta: Counter[str] = Counter()
        bar = bar_for(self.progress, len(files))
        racy = int(self.clock.timestamp() * 1e9) - RACY_NS
        with (
            bar(len(files)) as advance,
            build.described(self.root, self.layout, list(files), first_id, racy, count_terms, self.workers) as chunks,
        ):
            for chunk in chunks:
                conn.executemany(_INSERT_NOTES, chunk.notes)
                conn.executemany(_INSERT_FTS, chunk.fts)
                conn.executemany(_INSERT_NAMES, chunk.names)
                conn.executemany(_INSERT_TEXTS, chunk.texts)
                conn.executemany(_INSERT_PATHS, chunk.path_words)
                if chunk.delta is not None:
                    delta.update(chunk.delta)
                advance(chunk.paths)
        return delta

    def _apply_terms(self, conn: sqlite3.Connection, delta: Counter[str]) -> None:
        changes = [(term, count) for term, count in delta.items() if count]
        conn.executemany(
            "INSERT INTO terms(term, df) VALUES (?, ?) ON CONFLICT(term) DO UPDATE SET df = df + excluded.df", changes
        )
        conn.execute("DELETE FROM terms WHERE df <= 0")

    # --- reading ---------------------------------------------------------------------------

    def count(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM notes").fetchone()[0])

    def sizes(self) -> list[tuple[str, int]]:
        """Every indexed note's path and size in bytes, by path (`doctor`'s secrets check)."""
        return [(str(p), int(n)) for p, n in self.conn.execute("SELECT path, size FROM notes ORDER BY path")]

    def problems(self) -> list[tuple[str, str]]:
        """Notes indexed by their body only, and why (for `status`)."""
        return list(self.conn.execute("SELECT path, problem FROM notes WHERE problem IS NOT NULL ORDER BY path"))

    def stats(self) -> dict[str, Any]:
        """Where the index lives, how big and how fresh it is."""
        conn = self.conn
        meta = dict(conn.execute("SELECT key, value FROM meta"))
        surfaces = dict(conn.execute("SELECT coalesce(surface, '-'), count(*) FROM notes GROUP BY 1 ORDER BY 1"))
        size = sum(os.path.getsize(f"{self.path}{s}") for s in ("", "-wal") if os.path.exists(f"{self.path}{s}"))
        return {
            "path": str(self.path),
            "schema": SCHEMA_VERSION,
            "bytes": size,
            "notes": sum(surfaces.values()),
            "surfaces": surfaces,
            "terms": conn.execute("SELECT count(*) FROM terms").fetchone()[0],
            "problems": [{"path": p, "problem": why} for p, why in self.problems()],
            "built": meta.get("built"),
            "refreshed": meta.get("refreshed") or meta.get("built"),
            "vectors": self._vector_stats(meta),
        }

    def _vector_stats(self, meta: dict[str, str]) -> dict[str, Any] | None:
        """The semantic vectors' count, size and model, when semantic pairing ever stored any."""
        if not conn_has(self.conn, "vectors"):
            return None
        count = int(self.conn.execute("SELECT count(*) FROM vectors").fetchone()[0])
        try:
            model = json.loads(meta.get(semantic.META_KEY, "{}")).get("path")
        except (ValueError, AttributeError):
            model = None
        return {"count": count, "bytes": semantic.index_bytes(self.conn), "model": model}


def conn_has(conn: sqlite3.Connection, table: str) -> bool:
    """Whether the index file holds this table."""
    return (
        conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone() is not None
    )


def current_stats(root: Path, rules: Rules, state: Path, clock: Clock = SystemClock()) -> dict[str, Any]:
    """The index's stats as it is, without refreshing it."""
    path = state / FILE_NAME
    if not path.exists():
        raise CuratorError(f"{path}: no index yet (the next sweep builds it, or `memory-curator index rebuild`)")
    index = Index(root, rules, state, clock)
    try:
        if not index.usable():
            raise CuratorError(f"{path}: the index is unusable; the next sweep rebuilds it")
        return index.stats()
    finally:
        index.close()
