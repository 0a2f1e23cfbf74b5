"""The vault's identity as it is written in the vault (pure: text in, text out; issue 37).

The state folder (journal, index, the review note's memory) was keyed by the vault's real path,
so a vault moved to a new path, or synced to a folder of another name, got a fresh state: its
review note read as "your own lines", its ticks ignored, every item flagged again under new ids.
The key now lives in the vault, in a small markdown note beside the rules (markdown, so every
sync tool carries it, Obsidian Sync included, which skips dot-files and other types by default),
and the state folder is found by it. A vault that has none yet is keyed by its path as before,
and the first sweep writes that very key into it: no state folder moves.
"""

from __future__ import annotations

import re

ID_FILE = "_meta/curator-vault.md"
_KEY = re.compile(r"[a-z0-9][a-z0-9-]{0,59}")
_LINE = re.compile(r"^vault_id: *(\S+) *$", re.M)


def parse(text: str) -> str | None:
    """The key the note holds; None when it holds none, or one that is not a plain folder name
    (a key is a path component under the state home: never `..`, a `/` or a dot-name)."""
    found = _LINE.search(text)
    return found.group(1) if found and _KEY.fullmatch(found.group(1)) else None


def render(key: str) -> str:
    """The note that carries `key` (a valid key: `parse(render(key)) == key`)."""
    if not _KEY.fullmatch(key):
        raise ValueError(f"not a vault key: {key!r}")
    return (
        f"---\nvault_id: {key}\n---\n"
        "memory-curator finds this vault's state (its journal, index and the review note's memory)\n"
        "by this id, wherever the vault is moved or synced. Keep it. In a copy meant as a vault of\n"
        "its own, delete this note: its first sweep gives the copy an id of its own.\n"
    )
