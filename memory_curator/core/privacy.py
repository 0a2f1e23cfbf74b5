"""Privacy content: what carries a privacy tag, and when it may leave the machine (pure).

A privacy tag (`Settings.privacy_tags`: `do-not-share`, `private`, `secret` by default) marks
content only a person may let out. A sweep never promotes or patches it, the judge never sees
it, and no agent is served it (MCP `read_note`, `search_notes`, `curator_status`), unless a
person approved it: `user_approved: true`, which only `review`/`resolve` write into a note
(docs/safety.md, "What an agent cannot make the curator do").
"""

from __future__ import annotations

from memory_curator.core.notes import Note, all_tags

APPROVAL = "user_approved"


def privacy_tags(tags: list[str], privacy: tuple[str, ...]) -> tuple[str, ...]:
    """The privacy tags among `tags` (case-insensitive; a nested `private/x` counts as `private`)."""
    wanted = {t.casefold() for t in privacy}
    return tuple(dict.fromkeys(t for t in tags if t.casefold() in wanted or t.casefold().split("/")[0] in wanted))


def withheld(note: Note, privacy: tuple[str, ...], dropped: bool = False) -> str | None:
    """Why a note is never shown to an agent or the judge (None: it may be): it carries a privacy
    tag and is a dropped item, or a note no person approved for sharing (`user_approved: true`,
    written by `review`/`resolve`, or by the person in their own note)."""
    tags = privacy_tags(all_tags(note), privacy)
    if not tags or (not dropped and note.frontmatter.get(APPROVAL) is True):
        return None
    return f"private content ({', '.join('#' + t for t in tags)}): not served to agents"
