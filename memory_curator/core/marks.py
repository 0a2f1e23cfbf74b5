"""The curator's own marks in a file: the uncertainty line a sweep appends to a flagged item, the
`needs-review` tag it adds, and the audit line of a dropped copy (pure). They are the curator's
words, never the candidate's content: nothing compares them (issue 28)."""

from __future__ import annotations

REVIEW_TAG = "needs-review"
DROP_MARK = "> 🗑 dropped by memory-curator: "
REVIEW_MARK = "> ⚠ curator uncertainty: "


def strip_trailing_marks(text: str, marks: tuple[str, ...] = (REVIEW_MARK, DROP_MARK)) -> str:
    """`text` without the curator's own mark lines at its very end (and the blank lines before
    them); `text` itself when it ends in none."""
    lines = text.splitlines(keepends=True)
    changed = False
    while lines and (lines[-1].startswith(marks) or (changed and not lines[-1].strip())):
        lines.pop()
        changed = True
    return "".join(lines) if changed else text


def unmarked(raw: bytes | str) -> bytes | str:
    """A candidate's text as it is read for deciding: without the marks at its end (bytes that
    are not UTF-8 are read as they are)."""
    if isinstance(raw, str):
        return strip_trailing_marks(raw)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw
    stripped = strip_trailing_marks(text)
    return raw if stripped is text else stripped
