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
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path

from memory_curator.core.notes import content_hash

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


# --- recovery --------------------------------------------------------------------------------
