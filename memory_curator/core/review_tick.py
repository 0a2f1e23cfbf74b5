"""A task line of the review note as a person, or a plugin acting for them, left it (pure): its
box's status and the words after its label (issue 37).

Obsidian's plugins write more than the box. The Tasks plugin, on by default in many vaults,
sets a done date on every completed task (`- [x] promote to … ✅ 2026-12-05 ^mc-…`), and can add
created, scheduled, start and due dates, a priority and a recurrence; Dataview can add a
`[completion:: 2026-12-05]` field. Each is appended after the label, before the block id. Those
fields are the plugin's, not the person's: a tick line is the curator's line with its box set to
any status and any number of them appended; a drop's typed reason is what is left once they are
taken off its end. A box set to anything but `x` (Tasks' `-` cancelled, `/` in progress, …) is
not a tick, and is named so the person knows why nothing happened.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

TICKED = "xX"
# the status characters Obsidian themes and the Tasks plugin name (others are shown as "status")
STATUS_NAMES = {
    "-": "cancelled",
    "/": "in progress",
    ">": "deferred",
    "<": "scheduled",
    "!": "important",
    "?": "a question",
    "*": "a star",
}
TASK = re.compile(r"^(?P<lead>\s*[-*+] \[)(?P<box>[^\]\r\n])(?P<rest>\] .*)$")
BLOCK = re.compile(r" \^mc-(?P<id>[0-9a-f]{12})-(?P<verb>[a-z]+)\s*$")
_DATE = r"\d{4}-\d{2}-\d{2}"
_EMOJI = "✅❌➕⏳🛫📅🔺⏫🔼🔽⏬🔁🆔⛔🏁"
# one field a plugin appends, at the end of what is left (fields are taken off from the end)
_FIELD = re.compile(
    r"\s*(?:"
    rf"[✅❌➕⏳🛫📅]\ufe0f?\s*{_DATE}"  # Tasks: done, cancelled, created, scheduled, start, due
    r"|[🔺⏫🔼🔽⏬]\ufe0f?"  # Tasks: priority
    rf"|🔁\ufe0f?\s*[^{_EMOJI}\[\]()]*[^{_EMOJI}\[\]()\s]"  # Tasks: recurrence (`🔁 every day`)
    r"|🆔\ufe0f?\s*[A-Za-z0-9_-]+|⛔\ufe0f?\s*[A-Za-z0-9_,-]+"  # Tasks: id, depends on
    r"|🏁\ufe0f?\s*[a-z]+"  # Tasks: on completion
    r"|\[[^\[\]:]+::[^\[\]]*\]|\([^():]+::[^()]*\)"  # Dataview inline fields (`[completion:: …]`)
    r")\s*$"
)


def without_fields(words: str) -> str:
    """`words` with the fields a plugin appended taken off its end."""
    while (found := _FIELD.search(words)) is not None and found.group(0):
        words = words[: found.start()]
    return words


def unticked(line: str) -> str:
    """The line as the curator wrote it, for a task line a box toggled and plugin fields added."""
    line = line.rstrip()
    task, block = TASK.match(line), BLOCK.search(line)
    if task is None:
        return line
    label = task.group("rest")
    if block is not None:
        label = without_fields(label[: block.start() - len(task.group("lead")) - 1]) + block.group(0).rstrip()
    return f"{task.group('lead')} {label}"


def box(mine: str, theirs: str, drop: bool) -> tuple[str, str] | None:
    """A task line of ours as the person left it: (its status character, the words they added
    after its label, which only a drop takes), or None when it is not that line with its box set
    and plugin fields appended. The one place a tick is parsed."""
    have = TASK.match(theirs)
    said = None if have is None else _said(mine, theirs, drop)
    return None if have is None or said is None else (have.group("box"), said)


def _said(mine: str, theirs: str, drop: bool) -> str | None:
    body_mine = TASK.sub(r"\g<rest>", mine)
    body_theirs = TASK.sub(r"\g<rest>", theirs)
    block = BLOCK.search(body_mine)
    if block is None:
        return "" if body_mine == body_theirs else None
    prefix, suffix = body_mine[: block.start()], body_mine[block.start() :]
    if not body_theirs.startswith(prefix):
        return None
    rest = body_theirs[len(prefix) :]
    if rest.endswith(suffix):
        added = without_fields(rest[: len(rest) - len(suffix)])
    elif rest.startswith(suffix) and drop:  # words typed after the block id
        added = rest[len(suffix) :]
    else:
        return None
    if added.strip() and not drop:
        return None
    return " ".join(added.strip(" :—-–").split())


def status_name(status: str) -> str:
    return STATUS_NAMES.get(status, "status")


def status_problem(others: Sequence[tuple[str, str]]) -> str:
    """Why boxes set to another status than `x` applied nothing, by name."""
    said = sorted({f"{status_name(s)} (`[{s}]`)" for _, s in others})
    return f"{', '.join(said)}: not applied; tick it with x"
