"""Small stores in the state directory that sweeps, `undo` and `restore` share.

- preimages: content-addressed bytes of every candidate acted on and of every note before a
  patch, so `undo` and `restore` can put exact bytes back;
- the needs-review ledger: inbox path -> the hash a sweep (or a person's restore/undo) left
  the item with; later sweeps skip an item until its bytes change;
- sightings: inbox path -> the size and mtime a sweep first saw it with, and when (by the
  sweep's clock), so a file whose mtime cannot be trusted (in the future) settles after
  `settle_seconds` of being seen unchanged.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path

from memory_curator.core.notes import content_hash
from memory_curator.store.paths import Ignored, ignored_entries, read_whole
from memory_curator.store.writer import FILES, Files, Group

LEDGER = "reviewed.json"
PACKS = "packs"  # <state>/packs/: a group commit's kept copies, one file per batch (beside preimages/)
SIGHTINGS = "sightings.json"


def save_preimage(state: Path, data: bytes, files: Files = FILES, group: Group | None = None) -> str:
    """Keep `data` at `<state>/preimages/<sha256 hex>` (atomic, never overwritten; with a
    `group`, durable at its commit); returns its hash."""
    digest = content_hash(data)
    path = state / "preimages" / digest.removeprefix("sha256:")
    if not path.exists():
        with contextlib.suppress(FileExistsError):
            files.create(path, data, group)
    return digest


def pack(kept: dict[str, bytes]) -> bytes:
    """A group commit's kept copies as one file (one fsync for the batch instead of one per
    copy): a JSON line mapping each hash to its (offset, length) after that line, then the bytes."""
    where, offset = {}, 0
    for digest, data in kept.items():
        where[digest] = [offset, len(data)]
        offset += len(data)
    return json.dumps(where).encode("ascii") + b"\n" + b"".join(kept.values())


def preimage(state: Path, digest: str) -> bytes | None:
    """Bytes from the content-addressed store (its file, else a group commit's pack), only if
    they still hash to `digest`."""
    name = digest.removeprefix("sha256:")
    if not name or "/" in name or name.startswith("."):
        return None
    try:
        data = read_whole(state / "preimages" / name)
    except OSError:
        data = None
    if data is not None and content_hash(data) == digest:
        return data
    return _from_packs(state / PACKS, digest)


def _from_packs(folder: Path, digest: str) -> bytes | None:
    """The copy a pack holds (a batch's copies are also written one by one, but only the pack
    is fsynced: after a power cut the single file may be empty)."""
    try:
        names = sorted(folder.iterdir(), reverse=True)
    except OSError:
        return None
    for path in names:
        try:
            with path.open("rb") as handle:
                where = json.loads(handle.readline()).get(digest)
                if not isinstance(where, list) or len(where) != 2:
                    continue
                start = handle.tell()
                handle.seek(start + int(where[0]))
                data = handle.read(int(where[1]))
        except (OSError, ValueError, AttributeError, TypeError):
            continue
        if content_hash(data) == digest:
            return data
    return None


def load_ledger(state: Path) -> dict[str, str]:
    try:
        data = json.loads((state / LEDGER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def save_ledger(root: Path, state: Path, reviewed: dict[str, str], files: Files = FILES) -> None:
    """Forget items that left the inbox; write the rest atomically."""
    kept = {k: v for k, v in reviewed.items() if (root / k).is_file()}
    files.write_state_file(state / LEDGER, json.dumps(kept, sort_keys=True).encode("utf-8"))


def hold_for_review(root: Path, state: Path, items: dict[str, str], files: Files = FILES) -> None:
    """Inbox items a person put back (restore, undo): later sweeps leave each one alone
    until its bytes change, like an item a sweep flagged."""
    save_ledger(root, state, {**load_ledger(state), **items}, files)


@dataclass(frozen=True)
class Sighting:
    """A file as a sweep first saw it: same size and mtime since then means unchanged since `seen`."""

    size: int
    mtime_ns: int
    seen: float  # epoch seconds by the sweep's clock

    def same(self, size: int, mtime_ns: int) -> bool:
        return (self.size, self.mtime_ns) == (size, mtime_ns)


def load_sightings(state: Path) -> dict[str, Sighting]:
    """What earlier sweeps saw; an unreadable or damaged store only restarts the observations."""
    try:
        data = json.loads((state / SIGHTINGS).read_text(encoding="utf-8"))
        return {str(k): Sighting(int(v["size"]), int(v["mtime_ns"]), float(v["seen"])) for k, v in data.items()}
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return {}


def save_sightings(root: Path, state: Path, sightings: dict[str, Sighting], files: Files = FILES) -> None:
    """Forget files that left the inbox; write atomically, and only when something changed."""
    kept = {k: v for k, v in sightings.items() if (root / k).is_file()}
    if kept == load_sightings(state):
        return
    data = {k: asdict(v) for k, v in sorted(kept.items())}
    files.write_state_file(state / SIGHTINGS, json.dumps(data).encode("utf-8"))


IGNORED_SEEN = "ignored.json"


def ignored_news(state: Path, entries: list[Ignored]) -> list[Ignored]:
    """The skipped inbox entries `run` has not named yet, or that changed since it did: `run`
    names each once (`status` and `doctor` always list them all)."""
    said = _load_ignored(state)
    return [e for e in entries if said.get(e.rel) != [e.kind, *e.signature]]


def save_ignored(state: Path, entries: list[Ignored], files: Files = FILES) -> None:
    """Remember what was named (entries gone since are forgotten); written only on a change."""
    data = {e.rel: [e.kind, *e.signature] for e in entries}
    if data != _load_ignored(state):
        files.write_state_file(state / IGNORED_SEEN, json.dumps(data, sort_keys=True).encode("utf-8"))


def _load_ignored(state: Path) -> dict[str, list[object]]:
    try:
        data = json.loads((state / IGNORED_SEEN).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): list(v) for k, v in data.items() if isinstance(v, list)} if isinstance(data, dict) else {}


def ignored_to_say(
    root: Path, state: Path, folders: set[str], files: Files = FILES, save: bool = True
) -> tuple[tuple[str, str], ...]:
    """The entries of the swept inbox `folders` that are no candidates, each said once until it
    changes (`status` and `doctor` always list them all): (path, why)."""
    entries = [e for e in ignored_entries(root) if e.rel.rstrip("/").rpartition("/")[0] in folders]
    news = ignored_news(state, entries)
    if save:
        with contextlib.suppress(OSError):  # a remark, not content: a full disk says it again next time
            save_ignored(state, entries, files)
    return tuple((e.rel, e.why) for e in news)
