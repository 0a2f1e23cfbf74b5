"""The vault's layout: where it is, which files are candidates, and safe paths inside it."""

from __future__ import annotations

import errno
import hashlib
import itertools
import os
import stat
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from memory_curator.core.errors import UnsafePath, VaultNotFound
from memory_curator.core.names import (
    IGNORED,
    INBOX,
    ROOT_AGENT,
    RULES_PATH,
    check_component,
    ignored_kind,
    is_candidate_name,
    nfc,
)
from memory_curator.core.text import TOO_LARGE, too_large


def find_root(start: Path | None, explicit: str | os.PathLike[str] | None, env: Mapping[str, str], cwd: Path) -> Path:
    """Design §1, the one rule for every command: --vault, else MEMORY_CURATOR_VAULT (in `env`),
    else the vault around `start` (the path the command was given), else — that path lies in no
    vault, e.g. a candidate drafted in a temp folder — the vault around `cwd`."""
    chosen = explicit or env.get("MEMORY_CURATOR_VAULT")
    if chosen:
        root = Path(chosen).expanduser()
        if not root.is_dir():
            raise VaultNotFound(f"{root}: the vault folder does not exist", file=root)
        return require_vault(root.resolve())
    places = list(dict.fromkeys([(cwd / start).resolve(), cwd.resolve()] if start is not None else [cwd.resolve()]))
    for here in places:
        found = _vault_around(here)
        if found is not None:
            return found
    where = places[0] if len(places) == 1 else f"{places[0]} (nor {places[1]})"
    raise VaultNotFound(
        f"{where}: no vault found (no _inbox/ or {RULES_PATH} here or above); use --vault", file=places[0]
    )


def _vault_around(here: Path) -> Path | None:
    for folder in [here, *here.parents] if here.is_dir() else list(here.parents):
        if is_vault(folder):
            return folder
    return None


def is_vault(root: Path) -> bool:
    return (root / INBOX).is_dir() or (root / RULES_PATH).is_file()


def require_vault(root: Path) -> Path:
    """`root`, refused unless it holds `_inbox/` or the rules file: every command but `init`
    refuses a folder that is not a vault, before it creates anything (state, `_inbox/`)."""
    if not is_vault(root):
        raise VaultNotFound(
            f"not a vault: {root} has no {INBOX}/ and no {RULES_PATH} (run `memory-curator init {root}`)", file=root
        )
    return root


def safe_join(root: Path, relative: str) -> Path:
    """Join a vault-relative POSIX path, refusing anything that escapes the vault."""
    if "\x00" in relative or relative.startswith("/") or os.path.isabs(relative):
        raise UnsafePath(f"unsafe path {relative!r}")
    parts = relative.split("/")
    for part in parts:
        check_component(part)
    path = root.joinpath(*parts)
    real_root = root.resolve()
    parent = path.parent.resolve() if path.parent.exists() else _resolve_existing(path.parent)
    if parent != real_root and real_root not in parent.parents:
        raise UnsafePath(f"{relative} leaves the vault (through a symlink)")
    return path


def _resolve_existing(path: Path) -> Path:
    """Resolve the longest existing prefix (symlinks there count), then append the rest."""
    missing: list[str] = []
    while not path.exists() and path != path.parent:
        missing.append(path.name)
        path = path.parent
    return path.resolve().joinpath(*reversed(missing))


def case_insensitive(root: Path) -> bool:
    """Whether the vault's file system folds case (macOS, Windows by default): a name in the vault
    and its swapped-case spelling are one file. Creates nothing: it `lstat`s up to three entries of
    the vault's root that have letters, both ways (names inside the vault: its own file system,
    not its parent's); an empty vault, or one that cannot be listed, counts as case-sensitive."""
    try:
        with os.scandir(root) as entries:
            names = list(itertools.islice((e.name for e in entries if e.name.swapcase() != e.name), 3))
    except OSError:
        return False
    return bool(names) and all(_one_file(root / name, root / name.swapcase()) for name in names)


def _one_file(a: Path, b: Path) -> bool:
    try:
        first, second = os.lstat(a), os.lstat(b)
    except OSError:
        return False
    return (first.st_dev, first.st_ino) == (second.st_dev, second.st_ino)


def relpath(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


@dataclass(frozen=True)
class CandidateFile:
    agent: str
    path: Path
    rel: str


def agent_dirs(root: Path) -> list[tuple[str, Path]]:
    inbox = root / INBOX
    if not inbox.is_dir():
        return []
    out = [(ROOT_AGENT, inbox)]
    for entry in sorted(os.scandir(inbox), key=lambda e: e.name):
        if entry.is_dir(follow_symlinks=False) and not entry.name.startswith("."):
            out.append((nfc(entry.name), Path(entry.path)))
    return out


def scope_agents(root: Path, scope: Path | None) -> list[tuple[str, Path]]:
    """The agent folders a run covers: one agent folder, or the whole inbox."""
    inbox = (root / INBOX).resolve()
    if scope is None:
        return agent_dirs(root)
    target = scope.resolve()
    if target == inbox:
        return agent_dirs(root)
    if target.parent == inbox and target.is_dir() and not target.name.startswith("."):
        return [(nfc(target.name), target)]
    raise VaultNotFound(f"{scope}: not the inbox or an agent folder directly inside {INBOX}/")


def list_candidates(folder: Path, agent: str, root: Path) -> Iterator[CandidateFile]:
    """Markdown files directly in an agent folder, sorted by name, never following links."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: nfc(e.name))
    except FileNotFoundError:
        return
    for entry in entries:
        if is_candidate_name(entry.name) and entry.is_file(follow_symlinks=False):
            path = Path(entry.path)
            yield CandidateFile(agent, path, relpath(root, path))


class NotRegular(OSError):
    """A path that is not a regular file (a FIFO, a device, a socket, a symbolic link, a folder):
    named in one line, never opened for reading (a FIFO would block, a device never end)."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(errno.EINVAL, why, str(path))
        self.why = why

    def __str__(self) -> str:
        return f"{self.filename}: {self.why}"


_KINDS: tuple[tuple[Callable[[int], bool], str], ...] = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)
_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NOCTTY", 0)
CHUNK = 1 << 20
READ_LIMIT = 64 << 20  # the most of one file the curator reads or hashes (a note, the review note, a kept copy)


def not_regular(mode: int) -> str | None:
    """Why a file of this `st_mode` is never read, or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    kind = next((name for test, name in _KINDS if test(mode)), "something else")
    return f"not a regular file ({kind})"


def open_regular(path: Path) -> int:
    """A read-only descriptor of `path`, only if it is a regular file: looked at with `lstat`
    first (a FIFO or a device is never opened), then opened without following a link and
    without blocking, and checked again with `fstat` (it may have been swapped in between)."""
    why = not_regular(os.lstat(path).st_mode)
    if why is not None:
        raise NotRegular(path, why)
    try:
        fd = os.open(path, _READ_FLAGS | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise NotRegular(path, "a symbolic link") from None
        raise
    why = not_regular(os.fstat(fd).st_mode)
    if why is not None:
        os.close(fd)
        raise NotRegular(path, why)
    return fd


def read_capped(path: Path, limit: int) -> bytes | None:
    """The file's bytes, or None when it holds more than `limit`: never more than `limit` + 1 bytes
    are read, so an agent's 2 GB file costs no memory (a file that grew after a stat is caught too).
    Only a regular file is read (`NotRegular` otherwise, an OSError)."""
    with os.fdopen(open_regular(path), "rb") as handle:
        data = handle.read(limit + 1)
    return None if len(data) > limit else data


class TooLarge(OSError):
    """A file over the limit a reader was given: read no further than the limit."""


def read_whole(path: Path, limit: int = READ_LIMIT) -> bytes:
    """`read_capped` for a file that must be read whole (a note, a dropped copy): one over
    `limit` raises `TooLarge` (an OSError, like a file that cannot be read)."""
    data = read_capped(path, limit)
    if data is None:
        raise TooLarge(errno.EFBIG, oversize(path, limit), str(path))
    return data


def hash_capped(path: Path, limit: int | None = None) -> str | None:
    """The `content_hash` of a regular file, read in chunks of 1 MiB (memory stays bounded
    whatever its size); None when it holds more than `limit` bytes (read no further)."""
    digest, seen = hashlib.sha256(), 0
    with os.fdopen(open_regular(path), "rb") as handle:
        while chunk := handle.read(CHUNK):
            seen += len(chunk)
            if limit is not None and seen > limit:
                return None
            digest.update(chunk)
    return "sha256:" + digest.hexdigest()


def oversize(path: Path, limit: int) -> str:
    """`too large: 97.5 MiB > 1 MiB` for a file `read_capped` refused (by its size now, at least
    one byte over: it may have grown or shrunk since)."""
    try:
        size = path.stat().st_size
    except OSError:
        size = 0
    return too_large(max(size, limit + 1), limit) or TOO_LARGE


@dataclass(frozen=True)
class Ignored:
    """An inbox entry that is not a candidate, and why (`names.IGNORED`)."""

    rel: str  # vault-relative; a folder ends in `/`
    kind: str
    signature: tuple[int, int]  # (size, mtime_ns) of the entry itself: a change is news again

    @property
    def why(self) -> str:
        return IGNORED[self.kind]


def ignored_entries(root: Path) -> list[Ignored]:
    """Every entry of `_inbox/` and its agent folders that a sweep skips and a person should hear
    of (symlinks, FIFOs, nested folders, conflict copies…), sorted; never follows a link."""
    inbox = root / INBOX
    out = _ignored_in(root, inbox, in_agent_folder=False)
    for _name, folder in agent_dirs(root)[1:]:
        out += _ignored_in(root, folder, in_agent_folder=True)
    return sorted(out, key=lambda i: i.rel)


def _ignored_in(root: Path, folder: Path, in_agent_folder: bool) -> list[Ignored]:
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    out = []
    for entry in entries:
        try:
            kind = _kind(entry)
            stat = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        why = ignored_kind(entry.name, kind, in_agent_folder)
        if why is not None:
            rel = relpath(root, Path(entry.path)) + ("/" if kind == "dir" else "")
            out.append(Ignored(nfc(rel), why, (stat.st_size if kind != "dir" else 0, stat.st_mtime_ns)))
    return out


def _kind(entry: os.DirEntry[str]) -> str:
    if entry.is_symlink():
        return "symlink"
    if entry.is_dir(follow_symlinks=False):
        return "dir"
    return "file" if entry.is_file(follow_symlinks=False) else "other"
