"""Every byte the curator writes into the vault goes through this module.

The recipe (design §5): a temp file `.<name>.mc<random>.tmp` in the target's folder,
fsync, `os.link` (create: never overwrites) or `os.replace` (replace), fsync the folder.
Replacing and removing re-check the file's hash first (compare-and-swap), so a person
saving in Obsidian between our read and our write is never overwritten. The inbox file
is removed only after its destination is durable; the journal lets the next sweep finish
or undo what a crash left half-done. docs/safety.md describes the guarantees.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory_curator.clock import Clock
from memory_curator.notes import as_list, content_hash, parse
from memory_curator.state import iso
from memory_curator.vault import relpath, safe_join

TEMP_PATTERN = re.compile(r"^\..+\.mc[A-Za-z0-9_]{8}\.tmp$", re.DOTALL)  # a name may hold a newline
MOVES = ("promote", "patch", "drop")  # verdicts whose destination must be durable before the inbox file goes
_TEMP_STEM_MAX = 100  # bytes: keeps `.<name>.mcXXXXXXXX.tmp` (116 bytes at most) under NAME_MAX (255)
_UMASK = os.umask(0o022)
os.umask(_UMASK)


class Conflict(Exception):
    """The file changed since it was read (or a create found it taken): leave it alone."""


def fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _makedirs(folder: Path) -> None:
    """mkdir -p, fsyncing each parent whose entry we added."""
    missing: list[Path] = []
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        try:
            path.mkdir()
        except FileExistsError:
            continue
        fsync_dir(path.parent)


def _write_temp(folder: Path, name: str, data: bytes, mode: int) -> Path:
    fd, temp = tempfile.mkstemp(prefix=f".{_temp_stem(name)}.mc", suffix=".tmp", dir=folder)
    try:
        try:
            os.fchmod(fd, mode)
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        _unlink_quietly(Path(temp))
        raise
    return Path(temp)


def _temp_stem(name: str) -> str:
    """The target's name cut to `_TEMP_STEM_MAX` bytes (not characters: 62 emoji are 248 bytes),
    at a character boundary; bytes that are not UTF-8 are left out (the temp's name is ours)."""
    return os.fsencode(name)[:_TEMP_STEM_MAX].decode("utf-8", "ignore")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _unlink_quietly(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def file_hash(path: Path) -> str | None:
    try:
        return content_hash(path.read_bytes())
    except (FileNotFoundError, IsADirectoryError):
        return None


def create(path: Path, data: bytes) -> None:
    """Write a new file atomically; FileExistsError (never an overwrite) if the name is taken."""
    _makedirs(path.parent)
    temp = _write_temp(path.parent, path.name, data, 0o666 & ~_UMASK)
    try:
        os.link(temp, path)
    finally:
        _unlink_quietly(temp)
    fsync_dir(path.parent)


def create_unique(path: Path, data: bytes) -> Path:
    """Create `path`, or `stem-2.md`, `stem-3.md`…: the first free name at the moment of the
    link, so a name taken by someone else meanwhile is skipped, never overwritten."""
    _makedirs(path.parent)
    temp = _write_temp(path.parent, path.name, data, 0o666 & ~_UMASK)
    try:
        for target in _family(path):
            try:
                os.link(temp, target)
            except FileExistsError:
                continue
            break
        else:
            raise Conflict(f"no free name for {path.name}")
    finally:
        _unlink_quietly(temp)
    fsync_dir(path.parent)
    return target


def replace(path: Path, data: bytes, expected: str | None) -> None:
    """Atomically replace `path`, but only if it still holds the bytes we read (`expected`)."""
    try:
        mode = os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        raise Conflict(f"{path.name} disappeared") from None
    temp = _write_temp(path.parent, path.name, data, mode)
    try:
        if file_hash(path) != expected:
            raise Conflict(f"{path.name} changed since it was read")
        os.replace(temp, path)
    except BaseException:
        _unlink_quietly(temp)
        raise
    fsync_dir(path.parent)


def remove(path: Path, expected: str) -> None:
    """Remove `path` only if it still holds the bytes we read."""
    if file_hash(path) != expected:
        raise Conflict(f"{path.name} changed since it was read")
    os.unlink(path)
    fsync_dir(path.parent)


def _family(path: Path, limit: int = 10_000) -> Iterator[Path]:
    """`path`, then `stem-2.md`, `stem-3.md`…: the names a collision moves on to."""
    yield path
    for n in range(2, limit):
        yield path.with_name(f"{path.stem}-{n}{path.suffix}")


def free_name(path: Path) -> Path:
    """The first name of `path`'s family not taken now (what a dry run reports; a real write
    uses create_unique, which decides at the moment of the link)."""
    for target in _family(path):
        if not os.path.lexists(target):
            return target
    raise Conflict(f"no free name for {path.name}")


def stray_temps(folder: Path) -> Iterator[Path]:
    """Our own temp files in `folder` (an agent's own `*.tmp` never matches the pattern)."""
    try:
        entries = list(os.scandir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return
    for entry in entries:
        if TEMP_PATTERN.match(entry.name) and entry.is_file(follow_symlinks=False):
            yield Path(entry.path)


def write_state_file(path: Path, data: bytes) -> None:
    """The same recipe for the state directory's own small files (checkpoint, review hashes)."""
    temp = _write_temp(path.parent, path.name, data, 0o600)
    try:
        os.replace(temp, path)
    except BaseException:
        _unlink_quietly(temp)
        raise
    fsync_dir(path.parent)


# --- the journal -----------------------------------------------------------------------------


@dataclass
class Journal:
    """Append-only JSONL decision log in the state directory; each line fsynced before the
    action it announces starts. Each record is stamped with `clock`'s time; a journal opened
    without one can only be read."""

    path: Path
    clock: Clock | None = None

    def append(self, record: dict[str, Any]) -> None:
        if self.clock is None:
            raise TypeError(f"{self.path}: a journal opened without a clock cannot be written")
        line = json.dumps({"time": iso(self.clock.now()), **record}, ensure_ascii=False, default=str) + "\n"
        new = not self.path.exists()
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            if _torn(fd):  # a crash or a full disk cut the last line: never glue ours onto it
                line = "\n" + line
            _write_all(fd, json_bytes(line))
            os.fsync(fd)
        finally:
            os.close(fd)
        if new:
            fsync_dir(self.path.parent)

    def entries(self, start: int = 0) -> Iterator[tuple[int, dict[str, Any]]]:
        """(byte offset, record) from `start`; a torn line (a crash mid-append) is skipped."""
        try:
            with open(self.path, "rb") as handle:
                handle.seek(start)
                offset = start
                for raw in handle:
                    here, offset = offset, offset + len(raw)
                    try:
                        record = json.loads(raw)
                    except ValueError:
                        continue
                    if isinstance(record, dict):
                        yield here, record
        except FileNotFoundError:
            return

    def records(self, start: int = 0) -> Iterator[dict[str, Any]]:
        for _, record in self.entries(start):
            yield record

    def size(self) -> int:
        try:
            return self.path.stat().st_size
        except FileNotFoundError:
            return 0

    @property
    def checkpoint_path(self) -> Path:
        return self.path.with_name("journal.checkpoint")

    def checkpoint(self) -> int:
        """Byte offset before which every action is known finished (0 when unknown)."""
        try:
            offset = int(self.checkpoint_path.read_text().strip() or 0)
        except (OSError, ValueError):
            return 0
        return offset if 0 <= offset <= self.size() else 0

    def set_checkpoint(self, offset: int) -> None:
        write_state_file(self.checkpoint_path, str(offset).encode())


def json_bytes(line: str) -> bytes:
    """A JSON text as UTF-8, lossless for file names that are not UTF-8: Python holds their
    bytes as lone surrogates, which only occur inside JSON strings, and `backslashreplace`
    writes each as the JSON escape `\\udcff` that `json.loads` turns back into the same
    name, so recovery and `undo` find the file again."""
    return line.encode("utf-8", "backslashreplace")


def _torn(fd: int) -> bool:
    size = os.fstat(fd).st_size
    return size > 0 and os.pread(fd, 1, size - 1) != b"\n"


def open_actions(entries: Iterable[tuple[int, dict[str, Any]]]) -> list[tuple[int, dict[str, Any]]]:
    """`begin` records with no `end`, or whose `end` says it failed: the actions a crash or
    an I/O error may have left half-done."""
    found: dict[tuple[str, int], tuple[int, dict[str, Any]]] = {}
    for offset, record in entries:
        key = (str(record.get("run")), _int(record.get("seq")))
        if record.get("event") == "begin":
            found[key] = (offset, record)
        elif record.get("event") == "end" and record.get("ok"):
            found.pop(key, None)
    return list(found.values())


def unfinished(journal: Journal) -> list[dict[str, Any]]:
    return [record for _, record in open_actions(journal.entries(journal.checkpoint()))]


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return -1


# --- recovery --------------------------------------------------------------------------------


@dataclass
class Recovery:
    """What the start of a sweep repaired: one line per repair, and the needs-review texts
    already on disk (so a sweep killed before saving its review hashes does not redo them)."""

    notes: list[str] = field(default_factory=list)
    reviewed: dict[str, str] = field(default_factory=dict)


def recover(root: Path, journal: Journal) -> Recovery:
    """Finish or undo what a crash (or an I/O error) left half-done; run under the lock.

    A move whose destination holds the candidate's content while the inbox file still holds
    the bytes that were decided is finished by removing the inbox file; one whose
    destination was never written is left as it was (the candidate is swept again). Our
    stray temp files in the folders it touched are removed. An I/O error here leaves the
    checkpoint before that action, so the next sweep tries again.
    """
    entries = list(journal.entries(journal.checkpoint()))
    out = Recovery(reviewed=_reviewed(root, entries))
    retry_from: int | None = None
    for offset, record in open_actions(entries):
        try:
            out.notes += _finish(root, record)
        except OSError as exc:
            out.notes.append(f"could not finish {record.get('inbox')}: {exc.strerror or exc}; will retry")
            retry_from = offset if retry_from is None else min(retry_from, offset)
            continue
        with contextlib.suppress(OSError):
            journal.append(
                {"event": "end", "run": record.get("run"), "seq": record.get("seq"), "ok": True, "recovered": True}
            )
    with contextlib.suppress(OSError):
        for temp in _state_temps(journal.path.parent):
            _unlink_quietly(temp)
        journal.set_checkpoint(journal.size() if retry_from is None else retry_from)
    return out


def _state_temps(state: Path) -> Iterator[Path]:
    """Our temp files in the state directory and its folders (pre-images for `undo`, …)."""
    yield from stray_temps(state)
    for entry in list(os.scandir(state)):
        if entry.is_dir(follow_symlinks=False):
            yield from stray_temps(Path(entry.path))


def _finish(root: Path, record: dict[str, Any]) -> list[str]:
    notes: list[str] = []
    inbox, dest = _path(root, record.get("inbox")), _path(root, record.get("dest"))
    for folder in {p.parent for p in (inbox, dest) if p is not None}:
        for temp in stray_temps(folder):
            _unlink_quietly(temp)
            notes.append(f"removed stray temp file {relpath(root, temp)}")
    if record.get("verdict") not in MOVES or inbox is None or dest is None:
        return notes
    placed = _placed(dest, record)
    if placed is not None and file_hash(inbox) == record.get("inbox_hash"):
        fsync_file(placed)  # the destination is durable before the inbox file goes
        fsync_dir(placed.parent)
        os.unlink(inbox)
        fsync_dir(inbox.parent)
        notes.append(f"finished {record['verdict']} of {record['inbox']} -> {relpath(root, placed)}")
    return notes


def _placed(dest: Path, record: dict[str, Any]) -> Path | None:
    """The file that holds this action's result: the exact bytes we wrote (a drop may have
    moved on to a suffixed name), or a note a person edited since that still records this
    candidate in its provenance."""
    family = _family(dest) if record.get("verdict") == "drop" else iter([dest])
    for path in family:
        if not os.path.lexists(path):
            break
        if file_hash(path) == record.get("after_hash"):
            return path
    if record.get("verdict") != "drop" and _records_candidate(dest, str(record.get("inbox_hash"))):
        return dest
    return None


def _records_candidate(note: Path, digest: str) -> bool:
    try:
        frontmatter = parse(note.read_bytes()).frontmatter
    except OSError:
        return False
    wanted = digest.removeprefix("sha256:")
    return any(isinstance(e, dict) and e.get("sha256") == wanted for e in as_list(frontmatter.get("curated_from")))


def _reviewed(root: Path, entries: Iterable[tuple[int, dict[str, Any]]]) -> dict[str, str]:
    """Inbox files a recent needs_review rewrote that still hold exactly that text."""
    out: dict[str, str] = {}
    for _, record in entries:
        if record.get("event") != "begin" or record.get("verdict") != "needs_review":
            continue
        path, after = _path(root, record.get("inbox")), record.get("after_hash")
        if path is not None and after and file_hash(path) == after:
            out[str(record["inbox"])] = str(after)
    return out


def _path(root: Path, rel: Any) -> Path | None:
    if not isinstance(rel, str) or not rel:
        return None
    try:
        return safe_join(root, rel)
    except Exception:
        return None
