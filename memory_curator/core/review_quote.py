"""What the review note quotes of an item (pure): its title and its text, with the values of the
note it contradicts or would patch beside its own. The note is a file of the vault, visible in
search and synced, so a private item's title and a private note's values never enter it; how
what does enter is shown inert is `core.review_note`'s quoting rule (`agent_text`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

QUOTE_CHARS = 4000
PRIVATE_NOTE = "a private note"
NOT_QUOTED = "(not quoted)"


def title(frontmatter: Mapping[str, Any], agent: str, private: bool) -> str | None:
    """The item's title as the note shows it: a private item's says only whose it is (its own
    title may hold what the privacy tag guards)."""
    if private:
        return f"a private item from {agent}"
    for key in ("title", "name"):
        if isinstance(frontmatter.get(key), str) and frontmatter[key].strip():
            return str(frontmatter[key])
    if frontmatter.get("entity") and frontmatter.get("predicate"):
        return f"{frontmatter['entity']} {frontmatter['predicate']}"
    return None


def quote(text: str, note: str | None, rows: Sequence[tuple[str, str, str]], private: bool) -> str:
    """The candidate's text and, for a patch or contradiction with `note`, the note's values
    (`rows`: field, the note's, the item's) beside its own; a `private` note is named "a private
    note" and none of its values (nor its sources: an intranet URL) is shown."""
    parts = []
    if note is not None:
        parts.append(f"field | {PRIVATE_NOTE if private else note} | this item")
        parts += [f"{name} | {NOT_QUOTED if private else old} | {new}" for name, old, new in rows]
        parts.append("")
    body = text if len(text) <= QUOTE_CHARS else text[:QUOTE_CHARS] + "\n… (cut: open the file for the rest)"
    parts.append(body)
    return "\n".join(parts)
