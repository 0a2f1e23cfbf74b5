"""Opt-in semantic pairing (issue 20): a small static-embedding model read from a LOCAL folder,
one float32 vector per indexed note kept in the index database, and nearest neighbours by
cosine over an in-memory matrix.

Everything here is optional: it needs the `semantic` extra (`model2vec`, which brings numpy)
and a model folder in model2vec's own format (`config.json`, `tokenizer.json`,
`model.safetensors`). Neither is imported until a function needs it, so this module imports
without the extra, and `availability()` answers `doctor` without loading anything.

A sweep never downloads: `load()` refuses a folder that lacks a model file before model2vec
sees it (model2vec alone would take a missing path for a hub name and fetch it). Fetching is
`commands.semantic.fetch`, an explicit command.

The vectors live beside the notes they describe (`vectors`, keyed by the index's note id) and
the model's identity (its folder and a hash of its files) in the index's `meta` table: a
different model clears them and every note is embedded again. They are derived data, like the
rest of the index: deleting them is always safe.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import json
import re
import sqlite3
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence, Sized
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from memory_curator.core.errors import CuratorError
from memory_curator.index.progress import PROGRESS_NOTES, Progress, bar_for
from memory_curator.index.rows import unpack

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Matrix = NDArray[np.float32]

EXTRA_MISSING = "semantic pairing needs the extra: pip install 'memory-curator[semantic]'"
MODEL_FILES = ("config.json", "tokenizer.json", "model.safetensors")  # model2vec's own layout
EXTRA_FILES = ("modules.json", "README.md")  # copied by `semantic fetch` when present, never required
META_KEY = "semantic_model"
EMBED_BATCH = 512  # notes per transaction: a killed build resumes where it stopped
ENCODE_BATCH = 64  # texts per model2vec batch: it gathers (texts x tokens x dims) floats, 32 MB at 512 tokens
QUERY_BLOCK = 32  # query rows per matrix product in `nearest_many` (32 x 100,000 scores: 13 MB)
MAX_CHARS = 4096  # a note's first 4 KB say what it is about; longer texts only cost tokenizing time
MODELS_ENV = "MEMORY_CURATOR_MODELS"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?")
VECTOR_SCHEMA = (  # one statement each: `executescript` would commit a caller's transaction
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS vectors(note INTEGER PRIMARY KEY, vector BLOB NOT NULL)",
)


class SemanticUnavailable(CuratorError):
    """The extra is not installed, or the model folder is missing or unreadable: one line.
    A sweep catches it, says it once and goes on with lexical pairing only."""


class _Encoder(Protocol):  # what we use of model2vec.StaticModel
    def encode(self, sentences: Sequence[str], *, batch_size: int = ..., use_multiprocessing: bool = ...) -> Any: ...


@dataclass(frozen=True)
class Model:
    """A loaded model. `identity` changes whenever a file of the model changes."""

    path: Path
    identity: str
    dim: int
    encoder: _Encoder

    def embed(self, texts: Sequence[str]) -> Matrix:
        """One L2-normalised float32 row per text (a text without a known token: a zero row)."""
        np = _numpy()
        if not texts:
            empty: Matrix = np.zeros((0, self.dim), dtype=np.float32)
            return empty
        clipped = [text[:MAX_CHARS] for text in texts]
        raw = self.encoder.encode(clipped, batch_size=ENCODE_BATCH, use_multiprocessing=False)
        out: Matrix = np.ascontiguousarray(raw, dtype=np.float32).reshape(len(texts), self.dim)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out

    def signature(self) -> str:
        """What the index remembers of the model that made its vectors."""
        return json.dumps({"path": str(self.path), "identity": self.identity, "dim": self.dim}, sort_keys=True)


@dataclass(frozen=True)
class Availability:
    """What `doctor` says of semantic pairing: usable or not, where the model is, its size."""

    available: bool
    path: str | None
    bytes: int
    message: str  # one line


@dataclass(frozen=True)
class VectorUpdate:
    """What one update did: notes embedded, vectors removed, and whether the model changed
    (every vector was recomputed)."""

    embedded: int
    removed: int
    rebuilt: bool
    vectors: int

    def to_json(self) -> dict[str, Any]:
        return {"embedded": self.embedded, "removed": self.removed, "rebuilt": self.rebuilt, "vectors": self.vectors}


@dataclass(frozen=True)
class Pace:
    """How vectors are written: `batch` notes per transaction (a killed build resumes where it
    stopped), and the context's bar shown for more than `bar_from` notes."""

    batch: int = EMBED_BATCH
    bar_from: int = PROGRESS_NOTES


PACE = Pace()


@dataclass(frozen=True)
class Vectors:
    """Every note's vector, loaded once per sweep: row i of `matrix` is note `ids[i]`."""

    ids: NDArray[np.int64]
    matrix: Matrix

    def __len__(self) -> int:
        return len(self.ids)


# --- the extra and the model ---------------------------------------------------------------------


def _numpy() -> Any:
    try:
        return importlib.import_module("numpy")
    except ImportError:
        raise SemanticUnavailable(EXTRA_MISSING) from None


def _model2vec() -> Any:
    try:
        return importlib.import_module("model2vec")
    except ImportError:
        raise SemanticUnavailable(EXTRA_MISSING) from None


def extra_installed() -> bool:
    """Whether the `semantic` extra is importable, without importing it."""
    try:
        return all(importlib.util.find_spec(name) is not None for name in ("model2vec", "numpy"))
    except (ImportError, ValueError):
        return False


def models_dir(env: Mapping[str, str], data_home: Path | None = None) -> Path:
    """Where `semantic fetch NAME` puts a model by default: `MEMORY_CURATOR_MODELS`, else
    `models/` in the user's data folder (`data_home`, from the context's machine: shared by every
    vault of this user). The querier is given the folder in its `env` (`context.index_env`)."""
    chosen = env.get(MODELS_ENV)
    if chosen:
        return Path(chosen).expanduser()
    if data_home is None:
        raise SemanticUnavailable(f"no models folder: {MODELS_ENV} is not set")
    return data_home / "models"


def model_path(setting: str, models: Path) -> Path:
    """The folder a `semantic.model` setting names: a path (absolute, `~`, `./` or `../`) as it
    is; a model name (`minishlab/potion-base-8M`) under `models`."""
    if names_folder(setting):
        return Path(setting).expanduser()
    if not _NAME.fullmatch(setting) or ".." in setting.split("/"):
        raise SemanticUnavailable(f"semantic model {setting!r}: not a model name (owner/name) nor a folder path")
    return models / setting


def names_folder(setting: str) -> bool:
    """Whether a `semantic.model` setting is a folder (absolute, `~`, `./` or `../`), not a name."""
    return setting.startswith(("/", "~", "./", "../")) or setting in (".", "..")


def folder_for(setting: str, root: Path, env: Mapping[str, str], data_home: Path | None = None) -> Path:
    """The model folder a vault's `semantic.model` setting names: `model_path`, with a relative
    folder (`./models/x`) taken beside the vault, never beside wherever the command ran."""
    if names_folder(setting):
        path = Path(setting).expanduser()
        beside = setting.startswith(("./", "../")) or setting in (".", "..")
        return root / path if beside else path
    model_path(setting, Path())  # a model name, never a traversal: refused before any folder is asked for
    return model_path(setting, models_dir(env, data_home))


def not_found(path: Path) -> str:
    return f"semantic model not found at {path} (fetch it with `memory-curator semantic fetch`)"


def missing_files(path: Path) -> list[str]:
    return [name for name in MODEL_FILES if not (path / name).is_file()]


def identity(path: Path) -> str:
    """A hash of the model's files (names and bytes): another model, or the same one changed,
    is another identity."""
    digest = hashlib.sha256()
    for name in MODEL_FILES:
        digest.update(name.encode())
        with open(path / name, "rb") as handle:
            digest.update(hashlib.file_digest(handle, "sha256").digest())
    return digest.hexdigest()


def load(path: Path) -> Model:
    """The model in this LOCAL folder. Never downloads: a folder without every model file is
    refused before model2vec is asked (it would take a missing path for a hub name)."""
    module = _model2vec()
    _numpy()
    path = path.expanduser().resolve()
    if missing_files(path):
        raise SemanticUnavailable(not_found(path), file=path)
    try:
        encoder = module.StaticModel.from_pretrained(path, force_download=False, normalize=True)
        ident = identity(path)
        dim = int(encoder.dim)
    except Exception as exc:  # safetensors, tokenizers and json raise their own kinds
        message = " ".join(str(exc).split())[:200] or type(exc).__name__
        raise SemanticUnavailable(f"semantic model at {path} cannot be read: {message}", file=path) from None
    return Model(path, ident, dim, encoder)


def availability(path: Path | None) -> Availability:
    """For `doctor`: whether semantic pairing can run, where its model lives and how big it
    is; nothing is loaded (`path` None: no model configured)."""
    if not extra_installed():
        return Availability(False, None if path is None else str(path), 0, EXTRA_MISSING)
    if path is None:
        return Availability(False, None, 0, "no semantic model configured (semantic: {model: …} in the rules)")
    path = path.expanduser()
    if missing_files(path):
        return Availability(False, str(path), 0, not_found(path))
    size = sum((path / name).stat().st_size for name in MODEL_FILES)
    return Availability(True, str(path), size, f"semantic model at {path} ({size / 1e6:.1f} MB)")


# --- vectors in the index --------------------------------------------------------------------------


def prepare(conn: sqlite3.Connection, model: Model) -> bool:
    """Make the vector table ready for this model; True when it was made by another model (or
    none) and has been emptied, so every note must be embedded again."""
    for statement in VECTOR_SCHEMA:
        conn.execute(statement)
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (META_KEY,)).fetchone()
    if row is not None and row[0] == model.signature():
        return False
    with _transaction(conn):
        conn.execute("DELETE FROM vectors")
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (META_KEY, model.signature()))
    return True


def update(
    conn: sqlite3.Connection,
    model: Model,
    changed: Iterable[tuple[int, str]],
    removed: Iterable[int],
    progress: Progress | None = None,
    pace: Pace = PACE,
) -> VectorUpdate:
    """Embed the changed notes (note id, text) and forget the removed ones, in batches of
    `pace.batch`, each its own transaction unless the caller holds one. When the vectors were
    made by another model (or none), every note of the index is embedded instead, its text
    read back from the index's FTS table."""
    if prepare(conn, model):
        return _everything(conn, model, progress, pace)
    gone = list(removed)
    with _transaction(conn):
        for start in range(0, len(gone), 500):
            chunk = gone[start : start + 500]
            conn.execute(f"DELETE FROM vectors WHERE note IN ({','.join('?' * len(chunk))})", chunk)
    total = len(changed) if isinstance(changed, Sized) else None
    embedded = _embed_all(conn, model, changed, total, progress, pace)
    return VectorUpdate(embedded, len(gone), False, _count(conn))


def sync(conn: sqlite3.Connection, model: Model, progress: Progress | None = None, pace: Pace = PACE) -> VectorUpdate:
    """Bring the vectors in step with the index's notes, whatever happened since: a refresh
    (a changed note gets a new id), a rebuild, semantic pairing just turned on, a build that
    was killed half-way, another model. One call after every refresh is enough."""
    if prepare(conn, model):
        return _everything(conn, model, progress, pace)
    notes = {ident for (ident,) in conn.execute("SELECT id FROM notes")}
    have = {ident for (ident,) in conn.execute("SELECT note FROM vectors")}
    new = sorted(notes - have)
    return update(conn, model, _Sized(texts(conn, new), len(new)), sorted(have - notes), progress, pace)


def _everything(conn: sqlite3.Connection, model: Model, progress: Progress | None, pace: Pace) -> VectorUpdate:
    ids = [ident for (ident,) in conn.execute("SELECT id FROM notes ORDER BY id")]
    embedded = _embed_all(conn, model, texts(conn, ids), len(ids), progress, pace)
    return VectorUpdate(embedded, 0, True, _count(conn))


def _count(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM vectors").fetchone()[0])


def texts(conn: sqlite3.Connection, ids: Sequence[int]) -> Iterator[tuple[int, str]]:
    """(note id, the text to embed) read back from the index's stored texts: title, value, body."""
    for start in range(0, len(ids), 500):
        chunk = list(ids[start : start + 500])
        marks = ",".join("?" * len(chunk))
        for ident, packed in conn.execute(f"SELECT id, packed FROM texts WHERE id IN ({marks}) ORDER BY id", chunk):
            yield int(ident), note_text(*unpack(packed))


def note_text(title: str | None, value: str | None, body: str | None) -> str:
    """What a note's vector is made of (a candidate's too): its title, value and body."""
    return "\n".join(part for part in (title, value, body) if part)


def _embed_all(
    conn: sqlite3.Connection,
    model: Model,
    todo: Iterable[tuple[int, str]],
    total: int | None,
    progress: Progress | None,
    pace: Pace,
) -> int:
    bar = bar_for(progress, total or 0, pace.bar_from)
    done = 0
    with bar(total or 0) as advance:
        for batch in _batches(todo, pace.batch):
            matrix = model.embed([text for _, text in batch])
            rows = [(ident, matrix[i].tobytes()) for i, (ident, _) in enumerate(batch)]
            with _transaction(conn):
                conn.executemany("INSERT OR REPLACE INTO vectors(note, vector) VALUES (?, ?)", rows)
            done += len(batch)
            advance(len(batch))
    return done


def load_vectors(conn: sqlite3.Connection, model: Model) -> Vectors:
    """Every stored vector as one matrix (100,000 notes × 256 dims: 100 MB), once per sweep.
    Vectors of another model are never returned: `sync` first."""
    np = _numpy()
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (META_KEY,)).fetchone()
    if row is None or row[0] != model.signature():
        return Vectors(np.zeros(0, dtype=np.int64), np.zeros((0, model.dim), dtype=np.float32))
    count = int(conn.execute("SELECT count(*) FROM vectors").fetchone()[0])
    ids = np.empty(count, dtype=np.int64)
    matrix = np.empty((count, model.dim), dtype=np.float32)
    filled = 0
    for ident, blob in conn.execute("SELECT note, vector FROM vectors ORDER BY note"):
        if filled == count or len(blob) != model.dim * 4:
            continue
        ids[filled] = ident
        matrix[filled] = np.frombuffer(blob, dtype=np.float32)
        filled += 1
    return Vectors(ids[:filled], matrix[:filled])


def nearest(vectors: Vectors, vector: Matrix, k: int, skip: Collection[int] = ()) -> list[tuple[int, float]]:
    """The `k` notes whose vectors are closest to `vector` (cosine, highest first; ties by
    note id), leaving out the notes in `skip` (e.g. the ones the sweep's overlay replaced)."""
    np = _numpy()
    count = len(vectors)
    if k <= 0 or count == 0:
        return []
    scores = vectors.matrix @ np.asarray(vector, dtype=np.float32)
    take = min(count, k + len(skip))
    top = np.arange(count) if take == count else np.argpartition(scores, count - take)[count - take :]
    order = top[np.lexsort((vectors.ids[top], -scores[top]))]
    found = [(int(vectors.ids[i]), float(scores[i])) for i in order]
    return [(ident, score) for ident, score in found if ident not in skip][:k]


def nearest_many(vectors: Vectors, queries: Matrix, k: int, block: int = QUERY_BLOCK) -> list[list[tuple[int, float]]]:
    """`nearest` for many query rows at once: one matrix product per `block` rows (what a
    sweep of many candidates can ask in one go)."""
    np = _numpy()
    count = len(vectors)
    if k <= 0 or count == 0:
        return [[] for _ in range(len(queries))]
    take = min(count, k)
    out = []
    queries = np.asarray(queries, dtype=np.float32)
    for start in range(0, len(queries), block):
        for row in queries[start : start + block] @ vectors.matrix.T:
            top = np.arange(count) if take == count else np.argpartition(row, count - take)[count - take :]
            order = top[np.lexsort((vectors.ids[top], -row[top]))]
            out.append([(int(vectors.ids[i]), float(row[i])) for i in order])
    return out


def index_bytes(conn: sqlite3.Connection) -> int:
    """The bytes the vectors take in the index file (the `dbstat` table when SQLite has it,
    else an estimate from the blobs)."""
    with contextlib.suppress(sqlite3.OperationalError):
        row = conn.execute("SELECT sum(pgsize) FROM dbstat WHERE name = 'vectors'").fetchone()
        if row is not None and row[0] is not None:
            return int(row[0])
    row = conn.execute("SELECT coalesce(sum(length(vector)) + 16 * count(*), 0) FROM vectors").fetchone()
    return int(row[0])


# --- one sweep's pairing ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Pairing:
    """What a sweep asks semantically: the model and every note's vector, loaded once."""

    model: Model
    vectors: Vectors

    def similar(self, text: str, k: int, skip: Collection[int] = ()) -> list[tuple[int, float]]:
        """The `k` notes closest to this text: (note id, cosine), best first."""
        return nearest(self.vectors, self.model.embed([text])[0], k, skip)


def open_pairing(conn: sqlite3.Connection, path: Path, progress: Progress | None = None) -> Pairing:
    """Load the model at `path`, bring the vectors in step with the index (`sync`: a no-op when
    nothing changed) and load them. Raises `SemanticUnavailable` (one line) when the extra or
    the model is missing: the caller says it once and pairs lexically."""
    return paired(conn, load(path), progress)


def paired(conn: sqlite3.Connection, model: Model, progress: Progress | None = None) -> Pairing:
    """The vectors brought in step with the index for a model already loaded, and loaded."""
    sync(conn, model, progress)
    return Pairing(model, load_vectors(conn, model))


# --- helpers -----------------------------------------------------------------------------------------


@contextlib.contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """Its own transaction, unless the caller already holds one (a refresh's)."""
    if conn.in_transaction:
        yield
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _batches(items: Iterable[tuple[int, str]], size: int) -> Iterator[list[tuple[int, str]]]:
    batch: list[tuple[int, str]] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


class _Sized:
    """An iterator that knows its length, so that `update` can size the progress bar."""

    def __init__(self, items: Iterator[tuple[int, str]], length: int) -> None:
        self.items, self.length = items, length

    def __iter__(self) -> Iterator[tuple[int, str]]:
        return self.items

    def __len__(self) -> int:
        return self.length
