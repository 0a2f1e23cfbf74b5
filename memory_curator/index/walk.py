"""The vault walk the index keeps up with: which files are notes it indexes, found with one stat
each (`walk`), less the review note (`notes`), or asked of one path (`notes_at`). Kept apart from
`index.store`, which keeps the SQLite file up to date with what this finds."""

from __future__ import annotations

import os
from pathlib import Path

from memory_curator.core.names import NEVER_INDEXED
from memory_curator.core.review_note import is_note_file
from memory_curator.core.rules import Rules
from memory_curator.core.vault_key import ID_FILE


def notes(root: Path, rules: Rules) -> dict[str, tuple[int, int]]:
    """What the index holds: every note of the walk but the curator's own files: the review note
    and its conflict copies (docs/review.md), and the vault's id (`core.vault_key`)."""
    note = rules.settings.review_note
    return {rel: seen for rel, seen in walk(root).items() if not is_note_file(rel, note) and rel != ID_FILE}


def notes_at(root: Path, rules: Rules, rel: str) -> set[str]:
    """{rel} when the walk would index a note there (`notes`, `walk`), else nothing."""
    parts = rel.split("/")
    hidden = any(p.startswith(".") for p in parts) or parts[0] in NEVER_INDEXED or rel[-3:].lower() != ".md"
    path = root / rel
    linked = any((root / "/".join(parts[:n])).is_symlink() for n in range(1, len(parts) + 1))
    indexable = not hidden and not linked and not is_note_file(rel, rules.settings.review_note) and rel != ID_FILE
    return {rel} if indexable and path.is_file() else set()


def walk(root: Path) -> dict[str, tuple[int, int]]:
    """Every indexable note: vault-relative POSIX path -> (size, mtime_ns). One stat each.

    Skipped: `_inbox/`, `.obsidian/`, `.trash/`, dot-files and dot-folders, symlinks, names
    that are not UTF-8."""
    found: dict[str, tuple[int, int]] = {}
    stack = [("", os.fspath(root))]
    while stack:
        prefix, folder = stack.pop()
        try:
            entries = os.scandir(folder)
        except OSError:
            continue
        with entries:
            for entry in entries:
                name = entry.name
                if name.startswith(".") or not (name.isascii() or _utf8(name)):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    if prefix or name not in NEVER_INDEXED:
                        stack.append((f"{prefix}{name}/", entry.path))
                elif name[-3:].lower() == ".md" and entry.is_file(follow_symlinks=False):
                    try:
                        stat = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    found[prefix + name] = (stat.st_size, stat.st_mtime_ns)
    return found


def _utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
