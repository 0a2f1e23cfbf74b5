"""Every byte the curator writes into the vault goes through this module.

The recipe (design §5): a temp file `.<name>.mc<random>.tmp` in the target's folder,
fsync, `os.link` (create: never overwrites) or `os.replace` (replace), fsync the folder.
Replacing and removing re-check the file's hash first (compare-and-swap), so a person
saving in Obsidian between our read and our write is never overwritten. The inbox file
is removed only after its destination is durable; the journal lets the next sweep finish
or undo what a crash left half-done.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory_curator.notes import content_hash
from memory_curator.state import iso, utcnow
from memory_curator.vault import relpath, safe_join

TEMP_PATTERN = re.compile(r"^\..+\.mc[A-Za-z0-9_]{8}\.tmp$")
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
    fd, temp = tempfile.mkstemp(prefix=f".{name}.mc", suffix=".tmp", dir=folder)
    try:
        try:
            os.fchmod(fd, mode)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        _unlink_quietly(Path(temp))
        raise
    return Path(temp)


def _unlink_quietly(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def file_hash(path: Path) -> str | None:
    try:
        return content_hash(path.read_bytes())
    except FileNotFoundError:
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


def free_name(path: Path) -> Path:
    """`path`, or `stem-2.md`, `stem-3.md`…: the first name not taken (create() still refuses
    to overwrite if another process takes it first)."""
    for attempt in range(1, 10_000):
        target = path if attempt == 1 else path.with_name(f"{path.stem}-{attempt}{path.suffix}")
        if not os.path.lexists(target):
            return target
    raise Conflict(f"no free name for {path.name}")


def stray_temps(folder: Path) -> Iterator[Path]:
    try:
        entries = list(os.scandir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return
    for entry in entries:
        if TEMP_PATTERN.match(entry.name) and entry.is_file(follow_symlinks=False):
            yield Path(entry.path)


# --- the journal -----------------------------------------------------------------------------


@dataclass
class Journal:
    """Append-only JSONL decision log in the state directory; each line fsynced."""

    path: Path

    def append(self, record: dict[str, Any]) -> None:
        line = json.dumps({"time": iso(utcnow()), **record}, ensure_ascii=False, default=str) + "\n"
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)

    def records(self, start: int = 0) -> Iterator[dict[str, Any]]:
        """Records from byte offset `start`; a torn last line (a crash mid-append) is skipped."""
        try:
            with open(self.path, "rb") as handle:
                handle.seek(start)
                for raw in handle:
                    try:
                        yield json.loads(raw)
                    except ValueError:
                        continue
        except FileNotFoundError:
            return

    def size(self) -> int:
        try:
            return self.path.stat().st_size
        except FileNotFoundError:
            return 0

    @property
    def checkpoint_path(self) -> Path:
        return self.path.with_name("journal.checkpoint")

    def checkpoint(self) -> int:
        """Byte offset up to which every action is known finished."""
        try:
            return int(self.checkpoint_path.read_text().strip() or 0)
        except (OSError, ValueError):
            return 0

    def set_checkpoint(self, offset: int) -> None:
        temp = self.checkpoint_path.with_suffix(".tmp")
        temp.write_text(str(offset))
        os.replace(temp, self.checkpoint_path)


def unfinished(journal: Journal) -> list[dict[str, Any]]:
    """`begin` records after the checkpoint that have no matching `end`."""
    open_actions: dict[tuple[str, int], dict[str, Any]] = {}
    for record in journal.records(journal.checkpoint()):
        key = (str(record.get("run")), int(record.get("seq", -1)))
        if record.get("event") == "begin":
            open_actions[key] = record
        elif record.get("event") == "end":
            open_actions.pop(key, None)
    return list(open_actions.values())


def recover(root: Path, journal: Journal) -> list[str]:
    """Finish what a crash left half-done; returns one line per repair, for the log.

    An action whose destination is durable but whose inbox file is still there (with the
    same bytes) is finished by removing the inbox file; one whose destination was never
    written is left as it was (the candidate is simply swept again). Stray temp files of
    ours in the folders it touched are removed.
    """
    notes: list[str] = []
    for record in unfinished(journal):
        notes += _finish(root, record)
        journal.append({"event": "end", "run": record["run"], "seq": record["seq"], "ok": True, "recovered": True})
    journal.set_checkpoint(journal.size())
    return notes


def _finish(root: Path, record: dict[str, Any]) -> list[str]:
    notes: list[str] = []
    inbox_rel, dest_rel = record.get("inbox"), record.get("dest")
    folders = {p.parent for p in (_path(root, inbox_rel), _path(root, dest_rel)) if p is not None}
    for folder in folders:
        for temp in stray_temps(folder):
            _unlink_quietly(temp)
            notes.append(f"removed stray temp file {relpath(root, temp)}")
    if record.get("verdict") in ("promote", "patch", "drop") and inbox_rel and dest_rel:
        inbox, dest = _path(root, inbox_rel), _path(root, dest_rel)
        if (
            inbox
            and dest
            and file_hash(dest) == record.get("after_hash")
            and file_hash(inbox) == record.get("inbox_hash")
        ):
            os.unlink(inbox)
            fsync_dir(inbox.parent)
            notes.append(f"finished {record['verdict']} of {inbox_rel} -> {dest_rel}")
    return notes


def _path(root: Path, rel: Any) -> Path | None:
    if not isinstance(rel, str) or not rel:
        return None
    try:
        return safe_join(root, rel)
    except Exception:
        return None
