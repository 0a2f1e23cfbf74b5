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
import random
import re
import string
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory_curator.store.paths import READ_LIMIT, NotRegular, hash_capped

TEMP_PATTERN = re.compile(r"^\..+\.mc[A-Za-z0-9_]{8}\.tmp$", re.DOTALL)  # a name may hold a newline
_TEMP_STEM_MAX = 100  # bytes: keeps `.<name>.mcXXXXXXXX.tmp` (116 bytes at most) under NAME_MAX (255)
_UMASK = os.umask(0o022)
UNREAD = "unread: "  # file_hash of a file it does not read (not regular, too large): equal to no sha256
os.umask(_UMASK)
_TEMP_LETTERS = string.ascii_letters + string.digits + "_"


class Conflict(Exception):
    """The file changed since it was read (or a create found it taken): leave it alone."""


def _temp_stem(name: str) -> str:
    """The target's name cut to `_TEMP_STEM_MAX` bytes (not characters: 62 emoji are 248 bytes),
    at a character boundary; bytes that are not UTF-8 are left out (the temp's name is ours)."""
    return os.fsencode(name)[:_TEMP_STEM_MAX].decode("utf-8", "ignore")


def _family(path: Path, limit: int = 10_000) -> Iterator[Path]:
    """`path`, then `stem-2.md`, `stem-3.md`…: the names a collision moves on to."""
    yield path
    for n in range(2, limit):
        yield path.with_name(f"{path.stem}-{n}{path.suffix}")


@dataclass
class Group:
    """Writes made durable together (group commit, `Executor.execute_batch`): a write given a
    group leaves its fsyncs here instead of doing them, and `Files.commit` does them once each,
    files first, then their folders. `owner` is whoever writes now (a plan's place in its
    batch), so a failed fsync fails exactly the plans whose files or folders it left unsure."""

    files: dict[Path, set[int]] = field(default_factory=dict)
    folders: dict[Path, set[int]] = field(default_factory=dict)
    owner: int = 0

    def file(self, path: Path) -> None:
        self.files.setdefault(path, set()).add(self.owner)

    def folder(self, path: Path) -> None:
        self.folders.setdefault(path, set()).add(self.owner)


@dataclass(frozen=True)
class Files:
    """The file operations, over an `os` module: the real one, or (in tests) one that fails or
    dies at a chosen call. The context carries one `Files`; everything that writes uses it."""

    os: Any = os

    def fsync_dir(self, folder: Path) -> None:
        fd = self.os.open(folder, self.os.O_RDONLY | self.os.O_DIRECTORY)
        try:
            self.os.fsync(fd)
        finally:
            self.os.close(fd)

    def fsync_file(self, path: Path) -> None:
        fd = self.os.open(path, self.os.O_RDONLY)
        try:
            self.os.fsync(fd)
        finally:
            self.os.close(fd)

    def make_folders(self, folder: Path, group: Group | None = None) -> tuple[Path, ...]:
        """mkdir -p, fsyncing each parent whose entry we added (with a `group`, once, at its
        commit). Returns the folders this call made, outermost first: the journal names them,
        so an undo removes those and no others."""
        missing: list[Path] = []
        while not folder.exists():
            missing.append(folder)
            folder = folder.parent
        made = []
        for path in reversed(missing):
            try:
                self.os.mkdir(path)
            except FileExistsError:
                continue
            self._sync_folder(path.parent, group)
            made.append(path)
        return tuple(made)

    def _sync_folder(self, folder: Path, group: Group | None) -> None:
        if group is None:
            self.fsync_dir(folder)
        else:
            group.folder(folder)

    def _open_temp(self, folder: Path, name: str) -> tuple[int, Path]:
        """A new temp file `.<name>.mc<8 random>.tmp` (O_EXCL: never someone else's)."""
        flags = self.os.O_RDWR | self.os.O_CREAT | self.os.O_EXCL | getattr(self.os, "O_CLOEXEC", 0)
        for _ in range(100):
            temp = folder / f".{_temp_stem(name)}.mc{''.join(random.choices(_TEMP_LETTERS, k=8))}.tmp"
            try:
                return self.os.open(temp, flags, 0o600), temp
            except FileExistsError:
                continue
        raise FileExistsError(f"no free temp name in {folder}")

    def _write_temp(self, folder: Path, name: str, data: bytes, mode: int, sync: bool = True) -> Path:
        """The bytes in a temp file beside the target; fsynced unless a group will fsync the
        file once it has its name."""
        fd, temp = self._open_temp(folder, name)
        try:
            try:
                self.os.fchmod(fd, mode)
                self.write_all(fd, data)
                if sync:
                    self.os.fsync(fd)
            finally:
                self.os.close(fd)
        except BaseException:
            self.unlink_quietly(temp)
            raise
        return temp

    def write_all(self, fd: int, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[self.os.write(fd, view) :]

    def unlink_quietly(self, path: Path) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.os.unlink(path)

    def file_hash(self, path: Path) -> str | None:
        """The hash of a regular file, streamed; None when there is none. A FIFO, a device or a
        symlink swapped in is never opened, and a file over `READ_LIMIT` is read no further: each
        hashes to what no plan expects (so a compare-and-swap or recovery leaves it alone)."""
        try:
            digest = hash_capped(path, READ_LIMIT)
        except FileNotFoundError:
            return None
        except NotRegular as exc:
            return None if exc.why.endswith("(a folder)") else f"{UNREAD}{exc.why}"
        return digest or f"{UNREAD}over {READ_LIMIT >> 20} MiB"

    def create(self, path: Path, data: bytes, group: Group | None = None) -> None:
        """Write a new file atomically; FileExistsError (never an overwrite) if the name is taken.
        With a `group`, the file and its folder are fsynced at the group's commit."""
        self.make_folders(path.parent, group)
        temp = self._write_temp(path.parent, path.name, data, 0o666 & ~_UMASK, sync=group is None)
        try:
            self.os.link(temp, path)
        finally:
            self.unlink_quietly(temp)
        self._durable(path, group)

    def _durable(self, path: Path, group: Group | None) -> None:
        """The file at `path` (its data already fsynced when there is no group) and its folder."""
        if group is None:
            self.fsync_dir(path.parent)
        else:
            group.file(path)
            group.folder(path.parent)

    def create_unique(self, path: Path, data: bytes, group: Group | None = None) -> Path:
        """Create `path`, or `stem-2.md`, `stem-3.md`…: the first free name at the moment of the
        link, so a name taken by someone else meanwhile is skipped, never overwritten."""
        self.make_folders(path.parent, group)
        temp = self._write_temp(path.parent, path.name, data, 0o666 & ~_UMASK, sync=group is None)
        try:
            for target in _family(path):
                try:
                    self.os.link(temp, target)
                except FileExistsError:
                    continue
                break
            else:
                raise Conflict(f"no free name for {path.name}")
        finally:
            self.unlink_quietly(temp)
        self._durable(target, group)
        return target

    def replace(self, path: Path, data: bytes, expected: str | None, group: Group | None = None) -> None:
        """Atomically replace `path`, but only if it still holds the bytes we read (`expected`)."""
        try:
            mode = self.os.stat(path).st_mode & 0o7777
        except FileNotFoundError:
            raise Conflict(f"{path.name} disappeared") from None
        temp = self._write_temp(path.parent, path.name, data, mode, sync=group is None)
        try:
            if self.file_hash(path) != expected:
                raise Conflict(f"{path.name} changed since it was read")
            self.os.replace(temp, path)
        except BaseException:
            self.unlink_quietly(temp)
            raise
        self._durable(path, group)

    def remove(self, path: Path, expected: str, group: Group | None = None) -> None:
        """Remove `path` only if it still holds the bytes we read."""
        if self.file_hash(path) != expected:
            raise Conflict(f"{path.name} changed since it was read")
        self.os.unlink(path)
        self._sync_folder(path.parent, group)

    def commit(self, group: Group) -> dict[int, OSError]:
        """Make a group's writes durable: each file fsynced once, then each folder once (a
        folder's new entries are durable only once their files are). Returns the owners a
        failed fsync leaves unsure, with its error; the group is emptied either way."""
        failed: dict[int, OSError] = {}
        for sync, items in ((self.fsync_file, group.files), (self.fsync_dir, group.folders)):
            for path, owners in items.items():
                try:
                    sync(path)
                except FileNotFoundError:  # gone since (a later write of the group replaced it): nothing to keep
                    continue
                except OSError as exc:
                    failed.update(dict.fromkeys(owners - failed.keys(), exc))
            items.clear()
        return failed

    def prune(self, folder: Path) -> bool:
        """Remove `folder` if it is empty (one a plan made, which an undo emptied), fsyncing its
        parent; False when it is left (not empty, or gone)."""
        try:
            self.os.rmdir(folder)
        except OSError:
            return False
        self.fsync_dir(folder.parent)
        return True

    def free_name(self, path: Path) -> Path:
        """The first name of `path`'s family not taken now (what a dry run reports; a real write
        uses create_unique, which decides at the moment of the link)."""
        for target in _family(path):
            if not self.os.path.lexists(target):
                return target
        raise Conflict(f"no free name for {path.name}")

    def stray_temps(self, folder: Path) -> Iterator[Path]:
        """Our own temp files in `folder` (an agent's own `*.tmp` never matches the pattern)."""
        try:
            entries = list(self.os.scandir(folder))
        except (FileNotFoundError, NotADirectoryError):
            return
        for entry in entries:
            if TEMP_PATTERN.match(entry.name) and entry.is_file(follow_symlinks=False):
                yield Path(entry.path)

    def install(self, built: Path, path: Path) -> None:
        """Put a file built elsewhere in the folder (the index, built as a whole) in place: fsynced
        first, renamed over `path`, the folder fsynced — the same recipe as every other write."""
        self.fsync_file(built)
        self.os.replace(built, path)
        self.fsync_dir(path.parent)

    def write_state_file(self, path: Path, data: bytes) -> None:
        """The same recipe for the state directory's own small files (checkpoint, review hashes)."""
        temp = self._write_temp(path.parent, path.name, data, 0o600)
        try:
            self.os.replace(temp, path)
        except BaseException:
            self.unlink_quietly(temp)
            raise
        self.fsync_dir(path.parent)


FILES = Files()  # the real file system, for what runs without a context (init, schedule files)
