"""Where the review note is (docs/review.md), for `status`, `log` and `review`: its path, the
`obsidian://` link that opens it, and its sync conflict copies."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memory_curator.core import review_note
from memory_curator.core.errors import CuratorError
from memory_curator.core.json_types import JsonObject
from memory_curator.core.rules import Rules
from memory_curator.store.paths import safe_join


@dataclass(frozen=True)
class NoteLink:
    """The review note (docs/review.md): where it is, whether it exists, the link that opens it in
    Obsidian, and its sync conflict copies (read for ticks, never deleted: a person merges them)."""

    path: str
    exists: bool
    url: str
    conflicts: tuple[str, ...] = ()

    def to_json(self) -> JsonObject:
        return {"path": self.path, "exists": self.exists, "url": self.url, "conflicts": list(self.conflicts)}


def note_link(root: Path, rules: Rules | None) -> NoteLink | None:
    """The review note's link, None when the rules turn it off (or cannot be read)."""
    rel = rules.settings.review_note if rules is not None else ""
    if not rel:
        return None
    try:
        exists = safe_join(root, rel).is_file()
    except CuratorError:
        return None
    return NoteLink(rel, exists, review_note.obsidian_url(root.name, rel), tuple(conflict_copies(root, rel)))


def conflict_copies(root: Path, note: str) -> list[str]:
    """The note's sync conflict copies beside it (`Inbox review (conflicted copy …).md`, `….sync-conflict-…`)."""
    folder, base = safe_join(root, note).parent, note.rpartition("/")[0]
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return []
    named = [(f"{base}/{p.name}" if base else p.name, p) for p in entries]
    copies = [(r, p) for r, p in named if r != note and review_note.is_note_file(r, note)]  # names first: few match
    return [r for r, p in copies if p.is_file() and not p.is_symlink()]
