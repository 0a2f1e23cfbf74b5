"""The state directory (outside the vault) and the one-sweep-at-a-time lock.

A synced vault must never carry a SQLite file or a lock, so the index, journal, lock and
logs live in the user's state directory, in a folder keyed by the vault's real path.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from memory_curator.core.clock import Clock
from memory_curator.core.errors import CuratorError, LockBusy
from memory_curator.core.names import ascii_slug
from memory_curator.core.text import iso
from memory_curator.store import vault_identity


def vault_id(root: Path) -> str:
    """The key of a vault that carries none yet: its folder name and its real path's hash."""
    real = str(root.resolve())
    return f"{ascii_slug(root.name, 40) or 'vault'}-{hashlib.sha256(real.encode()).hexdigest()[:12]}"


def vault_key(root: Path, state_home: Path) -> str:
    """The vault's key: the one it carries (`core.vault_key`: a moved vault keeps its state),
    unless the folder of that key serves another vault still there with the same key (`root`
    is a copy beside it: its own path's key then, and its first sweep writes that into it)."""
    carried = vault_identity.recorded(root)
    if carried is None or vault_identity.served_another(state_home / "vaults" / carried, root, carried):
        return vault_id(root)
    return carried


def state_folder(root: Path, explicit: str | os.PathLike[str] | None, env: Mapping[str, str], state_home: Path) -> Path:
    """--state-dir, else MEMORY_CURATOR_STATE (in `env`), else <state_home>/vaults/<vault id>
    (`state_home`: the user's state folder, from the machine; the vault id is the one the vault
    carries: `vault_key`); nothing is created (`schedule show` changes nothing).

    An explicit folder is used as it is: it is this vault's state folder.
    """
    chosen = explicit or env.get("MEMORY_CURATOR_STATE")
    return Path(chosen).expanduser() if chosen else state_home / "vaults" / vault_key(root, state_home)


def state_dir(root: Path, explicit: str | os.PathLike[str] | None, env: Mapping[str, str], state_home: Path) -> Path:
    """`state_folder`, created (private to the user) and resolved."""
    folder = state_folder(root, explicit, env, state_home)
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        raise CuratorError(f"{folder}: cannot create the state directory: {exc.strerror}") from None
    return folder.resolve()


@contextmanager
def sweep_lock(folder: Path, clock: Clock, pid: int, host: str, wait: bool = False) -> Iterator[None]:
    """Exclusive flock; the kernel releases it on any exit, kill -9 included. Its holder (`pid`
    on `host`, the caller's machine) and `since` (from `clock`) are written into the file for
    messages and `doctor`."""
    path = folder / "lock"
    handle: IO[str] = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - held for the whole sweep
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            holder = lock_holder(folder) or "unknown holder"
            raise LockBusy(f"another sweep holds the lock ({holder})", file=path) from None
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps({"pid": pid, "host": host, "since": iso(clock.now())}))
        handle.flush()
        yield
    finally:
        handle.close()


@contextmanager
def watcher_lock(folder: Path, pid: int, host: str) -> Iterator[None]:
    """One `watch` per vault: an exclusive flock on `<state>/watch.lock`, held while the watcher
    (`pid` on `host`) runs (the kernel releases it on any exit); a second watcher gets
    `LockBusy` (exit 75)."""
    path = folder / "watch.lock"
    handle: IO[str] = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - held for the whole watch
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            handle.seek(0)
            holder = handle.read().strip() or "unknown holder"
            raise LockBusy(f"another watch of this vault is running ({holder})") from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {pid} on {host}")
        handle.flush()
        yield
    finally:
        handle.close()


def lock_holder(folder: Path) -> str | None:
    """Who holds (or last held) the lock, for messages and `doctor`."""
    try:
        info = json.loads((folder / "lock").read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        return None
    if not info:
        return None
    return f"pid {info.get('pid')} on {info.get('host')} since {info.get('since')}"


def lock_is_free(folder: Path) -> bool:
    path = folder / "lock"
    if not path.exists():
        return True
    with open(path, "a+", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False
        fcntl.flock(handle, fcntl.LOCK_UN)
        return True


STATE_FIX = "point --state-dir (or MEMORY_CURATOR_STATE) at a folder you can write"
_FULL = {errno.ENOSPC, errno.EDQUOT}


def state_problem(folder: Path, exc: OSError) -> str:
    """What a failed write into the state folder means, naming the folder (not the file in it)."""
    why = exc.strerror or type(exc).__name__
    if exc.errno in _FULL:
        return f"{folder}: the disk holding the state folder is full ({why})"
    return f"{folder}: the state folder cannot be written ({why})"


def state_fix(folder: Path, exc: OSError) -> str:
    """What to do about it: free space, or the right to write, or another folder."""
    if exc.errno in _FULL:
        return f"free space on the disk that holds {folder}, or {STATE_FIX}"
    return f"give yourself write access (chmod -R u+rwX {folder}), or {STATE_FIX}"
