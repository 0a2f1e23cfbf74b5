"""Where the review note is (pure): its own file and its sync copies told from notes, and the
`obsidian://` link that opens it."""

from __future__ import annotations

import re
import urllib.parse

from memory_curator.core.names import CONFLICT, fold

_NUMBERED = re.compile(r" (?:\d+|\(\d+\))\.md")  # a sync tool's numbered copy: `Inbox review 1.md`


def is_note_file(rel: str, note: str | None, insensitive: bool = False) -> bool:
    """The review note or one of its sync copies (a conflict copy, a numbered `… 1.md` or
    `… (1).md`): the curator's own, never a note. Names compared as the file system compares
    them (`names.fold`: casefolded where it folds case)."""
    if not note:
        return False
    folder, _, name = fold(rel, insensitive).rpartition("/")
    want_folder, _, want = fold(note, insensitive).rpartition("/")
    stem = want.removesuffix(".md")
    if folder != want_folder or not name.startswith(stem):
        return False
    rest = name[len(stem) :]
    return name == want or bool(CONFLICT.search(rest)) or bool(_NUMBERED.fullmatch(rest))


def obsidian_url(vault_name: str, path: str) -> str:
    """`obsidian://open?vault=…&file=…`: what opens the note in Obsidian with one click."""
    target = path[:-3] if path.endswith(".md") else path
    quote = urllib.parse.quote
    return f"obsidian://open?vault={quote(vault_name, safe='')}&file={quote(target, safe='')}"
