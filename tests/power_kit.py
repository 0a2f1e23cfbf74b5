"""A simulated power cut, through `Files`: kill -9 cannot test group commit (the page cache
survives a killed process), so `PowerOS` is the writer's `os` over the real file system that
also keeps, as a disk would, what has been made durable:

- a file's data is durable as of its last fsync (per inode: a hard link or a rename carries it);
- a folder's entries are durable as of its last fsync (names -> inodes, as listed then).

Everything starts durable. At the cut (the k-th effectful call, which does not happen), every
later call raises `PowerCut`, and `cut()` puts the folders back as the disk would show them
after the reboot: entries added, renamed or removed since their folder's last fsync are
undone, and a file whose data was never fsynced comes back empty (as ext4 leaves it). Files
the model never saw written (the index, the lock, the sweep log: SQLite and the lock keep their
own guarantees) are left as they are.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

DIR = "<dir>"  # a folder entry that is a folder


class PowerCut(BaseException):
    """The power went here: nothing after it runs."""


class PowerOS:
    """`os` for `Files(os=...)`: real calls, counted; the `cut_at`-th effectful one (0: never)
    does not happen and the power goes. `hook(name, args)` runs before each effectful call."""

    EFFECTS = frozenset(
        {"open", "write", "fsync", "fdatasync", "link", "replace", "rename", "unlink", "mkdir", "rmdir"}
    )

    def __init__(self, roots: list[Path], cut_at: int = 0, skip: Callable[[Path], bool] = lambda p: False) -> None:
        self.roots, self.cut_at, self.skip = roots, cut_at, skip
        self.calls, self.dead, self.syncs = 0, False, 0
        self.hook: Callable[[str, tuple[Any, ...]], None] | None = None
        self._gen = 0
        self.gen_of: dict[int, int] = {}  # inode -> our id for the file it holds now
        self.data: dict[int, bytes] = {}  # file id -> its durable bytes
        self.entries: dict[Path, dict[str, int | str]] = {}  # folder -> durable name -> file id or DIR
        self.paths: dict[int, Path] = {}  # open descriptor -> path
        for root in roots:
            self._snapshot(root)

    # --- the model --------------------------------------------------------------------------

    def _new(self, ino: int) -> int:
        self._gen += 1
        self.gen_of[ino] = self._gen
        return self._gen

    def _snapshot(self, folder: Path) -> None:
        listing: dict[str, int | str] = {}
        for entry in os.scandir(folder):
            path = Path(entry.path)
            if self.skip(path) or entry.is_symlink():
                continue
            if entry.is_dir():
                listing[entry.name] = DIR
                self._snapshot(path)
            else:
                ident = self._new(entry.inode())
                self.data[ident] = path.read_bytes()
                listing[entry.name] = ident
        self.entries[folder] = listing

    def _listing(self, folder: Path) -> dict[str, int | str]:
        listing: dict[str, int | str] = {}
        for entry in os.scandir(folder):
            if self.skip(Path(entry.path)) or entry.is_symlink():
                continue
            if entry.is_dir():
                listing[entry.name] = DIR
            elif entry.inode() in self.gen_of:
                listing[entry.name] = self.gen_of[entry.inode()]
        return listing

    def _fsync(self, fd: int) -> None:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            self.entries[self.paths[fd]] = self._listing(self.paths[fd])
        elif info.st_ino in self.gen_of:
            self.data[self.gen_of[info.st_ino]] = os.pread(fd, info.st_size, 0)

    def cut(self) -> None:
        """The reboot: the roots as the disk holds them (see the module's docstring)."""
        self.dead = True
        for root in self.roots:
            self._restore(root)

    def _restore(self, folder: Path) -> None:
        want = self.entries.get(folder, {})
        for entry in list(os.scandir(folder)):
            path = Path(entry.path)
            if self.skip(path) or entry.is_symlink():
                continue
            if entry.is_dir():
                if want.get(entry.name) == DIR:
                    self._restore(path)
                else:
                    _remove_tree(path)
            elif entry.inode() in self.gen_of and entry.name not in want:
                os.unlink(path)
        for name, ident in want.items():
            path = folder / name
            if ident == DIR:
                if not path.is_dir():
                    path.mkdir()
                    self._restore(path)
                continue
            assert isinstance(ident, int)
            data = self.data.get(ident, b"")  # never fsynced: empty after the reboot
            if not path.exists() or self.gen_of.get(path.stat().st_ino) != ident or path.read_bytes() != data:
                path.unlink(missing_ok=True)
                path.write_bytes(data)

    # --- os ---------------------------------------------------------------------------------

    def __getattr__(self, name: str) -> Any:
        real = getattr(os, name)
        if name not in self.EFFECTS and name != "close":
            return real

        def call(*args: Any, **kwargs: Any) -> Any:
            if name == "close":
                self.paths.pop(args[0], None)
                return real(*args, **kwargs)
            if self.dead:
                raise PowerCut(name)
            self.calls += 1
            if self.calls == self.cut_at:
                self.dead = True
                raise PowerCut(name)
            if self.hook is not None:
                self.hook(name, args)
            return self._do(name, real, args, kwargs)

        return call

    def _do(self, name: str, real: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if name in ("fsync", "fdatasync"):
            self.syncs += 1
            self._fsync(args[0])
            return real(*args, **kwargs)
        if name == "open":
            path, flags = Path(args[0]), args[1]
            existed = os.path.lexists(path)
            fd = real(*args, **kwargs)
            self.paths[fd] = path
            if flags & os.O_CREAT and not existed:
                self._new(os.fstat(fd).st_ino)
            return fd
        return real(*args, **kwargs)


def _remove_tree(path: Path) -> None:
    for entry in list(os.scandir(path)):
        child = Path(entry.path)
        if entry.is_dir(follow_symlinks=False):
            _remove_tree(child)
        else:
            child.unlink()
    path.rmdir()
