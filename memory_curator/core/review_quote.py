"""What the review note quotes of an item, and how (pure).

Every string an agent wrote (a body, a value, a title, a file or folder name, a reason) enters
the note through one quoting rule (`agent_text`), then in one of four forms: `fenced` (a body, a
value), `inert` (a title, a reason), `code` (a name), `link` (a name Obsidian can link). So no
agent byte becomes a task, an embed, a link, a heading, HTML or a comment in the note, whatever
line break Obsidian honours (docs/review.md). The note is a file of the vault, visible in search
and synced, so a private item's title and a private note's values never enter it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from memory_curator.core.names import printable, printable_block
from memory_curator.core.secrets import Finding, masked_text

QUOTE_CHARS = 4000
PRIVATE_NOTE = "a private note"
NOT_QUOTED = "(not quoted)"
# what a wikilink's target cannot hold, or what would be read as markup inside one
_LINK_UNSAFE = re.compile(r"[\[\]|#^<>`\\%$]")
# what Markdown or Obsidian act on inline (a `\\` too: `inert` takes it before `agent_text` adds its escapes)
_INERT = re.compile(r"[\[\]<>!|^%`$*_~=#&{}\\]")
# every line break Obsidian (CodeMirror) or CommonMark may honour: CRLF, CR, NEL, LS, PS, VT, FF
_BREAKS = re.compile("\r\n|[\r\x0b\x0c\x85\u2028\u2029]")
_COMMENT = re.compile("%(?=%)")  # each `%` of a `%%` (an Obsidian comment's bound)
_TICKS = re.compile("`+")
FENCE = re.compile(r"^\s*(`{3,}|~{3,})", re.M)  # a fence, as any reader may open or close one


def agent_text(text: str, block: bool = False) -> str:
    """The quoting rule every string an agent wrote goes through before it enters the note. A
    `block` (a body, a value) keeps its lines, every line break Obsidian or CommonMark may honour
    (CR, CRLF, NEL, LS, PS, VT, FF) made the `\\n` the note's reader splits on, so that what
    fences it sees every line it holds; a name or a title (not `block`) shows each break as an
    escape (`\\r`), on one line. Every other unprintable character is an escape too
    (`names.printable`: a name's bytes that are not UTF-8 are `\\xff`, so the note stays UTF-8),
    and a `%%` (an Obsidian comment's bound) holds a zero-width space."""
    text = printable_block(_BREAKS.sub("\n", text)) if block else printable(text)
    return _COMMENT.sub("%\u200b", text)


def inert(text: str, limit: int = 200) -> str:
    """Text an agent controls (a title, a reason) on one line with nothing Obsidian would act on:
    no link, embed, HTML, comment, tag, math or emphasis characters; line breaks are spaces."""
    line = " ".join(agent_text(" ".join(_INERT.sub(" ", text).split())).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def link(path: str, label: str | None = None) -> str:
    """A `[[wikilink]]` to a vault file (a note without its `.md`), or the name as `code` when it
    holds what a wikilink cannot (or what the quoting rule changes)."""
    if _LINK_UNSAFE.search(path) or agent_text(path) != path:
        return f"{code(path)} (no link: its name holds what a link cannot)"
    target = path[:-3] if path.endswith(".md") else path
    return f"[[{target}|{inert(label)}]]" if label and inert(label) else f"[[{target}]]"


def code(name: str) -> str:
    """A name (a path, a folder) as inline code no character of it can end: on one line
    (`agent_text`), between backtick runs longer than any in it."""
    shown = agent_text(name)
    ticks = "`" * (1 + max((len(run) for run in _TICKS.findall(shown)), default=0))
    pad = " " if shown.startswith(("`", " ")) or shown.endswith(("`", " ")) else ""
    return f"{ticks}{pad}{shown}{pad}{ticks}"


def fenced(text: str) -> list[str]:
    """`text` (`agent_text`, a block) as a code block no line of it can close: the fence is longer
    than any in it once every line break is one, and tagged `text`, so nothing in it runs
    (dataview, HTML, embeds) or is read as a task."""
    body = agent_text(text, block=True).rstrip("\n")
    longest = max((len(m.group(1)) for m in FENCE.finditer(body)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}text", *body.split("\n"), fence]


def title(frontmatter: Mapping[str, Any], agent: str, private: bool, secrets: tuple[Finding, ...] = ()) -> str | None:
    """The item's title as the note shows it: a private item's says only whose it is (its own
    title may hold what the privacy tag guards); a credential in it is masked (`secrets`, the
    item's findings), as in its quoted text."""
    if private:
        return f"a private item from {agent}"
    for key in ("title", "name"):
        if isinstance(frontmatter.get(key), str) and frontmatter[key].strip():
            return masked_text(str(frontmatter[key]), secrets, anywhere=True)
    if frontmatter.get("entity") and frontmatter.get("predicate"):
        return masked_text(f"{frontmatter['entity']} {frontmatter['predicate']}", secrets, anywhere=True)
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
