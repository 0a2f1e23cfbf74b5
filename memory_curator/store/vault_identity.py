"""The vault's id in the vault (`core.vault_key`), read to find the state folder and written by
a sweep (issue 37): a moved vault keeps its state, a copy beside its living original does not
share it (two vaults writing one journal would undo each other's runs)."""

from __future__ import annotations

from pathlib import Path

from memory_curator.core import vault_key
from memory_curator.core.notes import content_hash
from memory_curator.core.vault_key import ID_FILE
from memory_curator.store.paths import read_capped
from memory_curator.store.writer import Files

__all__ = ["ID_FILE", "claim", "recorded"]
ROOT_FILE = "vault-root"  # in the state folder: the vault's real path it last served
_LIMIT = 4096


def recorded(root: Path) -> str | None:
    """The key the vault carries (None: none, unreadable, or not a key)."""
    try:
        raw = read_capped(root / ID_FILE, _LIMIT)
    except OSError:
        return None
    return None if raw is None else vault_key.parse(raw.decode("utf-8", "replace"))


def served_another(folder: Path, root: Path, key: str) -> bool:
    """Whether the state folder serves another vault still there carrying the same key: `root`
    is then a copy of it (a move leaves no vault at the old path)."""
    try:
        other = Path((folder / ROOT_FILE).read_text("utf-8").strip())
    except (OSError, ValueError):
        return False
    if not other.is_absolute() or other == root.resolve():
        return False
    return other.is_dir() and recorded(other) == key


def claim(root: Path, state: Path, files: Files, key: str | None) -> None:
    """After a sweep took the lock: the vault carries `key` (None: leave what it carries), and
    the state folder records the vault it serves now. A note too large to be ours is left alone."""
    if key is not None and recorded(root) != key:
        path, data = root / ID_FILE, vault_key.render(key).encode("utf-8")
        try:
            raw = read_capped(path, _LIMIT)
        except FileNotFoundError:
            files.create(path, data)
        else:
            if raw is not None:
                files.replace(path, data, content_hash(raw))
    files.write_state_file(state / ROOT_FILE, str(root.resolve()).encode("utf-8", "surrogateescape"))


def settle(root: Path, state: Path, state_home: Path, files: Files) -> list[str]:
    """`claim` for a sweep, under its lock: the key is the state folder's name when it is the
    machine's own folder for the vault (a folder given by `--state-dir` or `MEMORY_CURATOR_STATE`
    leaves the vault's note as it is). A failure costs a line, never the sweep."""
    own = state.parent == (state_home / "vaults").resolve()
    try:
        claim(root, state, files, state.name if own else None)
    except (OSError, ValueError) as exc:
        return [f"{ID_FILE}: could not record the vault's id: {getattr(exc, 'strerror', None) or exc}"]
    return []
