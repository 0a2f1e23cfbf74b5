"""The review note: the waiting items as a note of task lists a person ticks in Obsidian, and the
ticks read back (pure: text in, text and data out; `commands.review_note` does the files).

The note is made of generated sections, each between two marker lines (Obsidian comments, hidden
when the note is read), and of the person's own lines between them, kept verbatim. A section is
trusted only when its lines are exactly those the curator wrote (`Section.lines`, which the
command keeps in the state directory), but for the boxes of its task lines and the words a
person may add to a `drop` line. So an agent's text, quoted in a fence longer than any fence in
it, is only ever compared, never read: a `- [x]` or a `^mc-` id inside it is not a tick, and a
section it or anyone else changed (a line of it changed or lost, a half-saved note) is `mangled`,
and nothing of it is applied.

Every string an agent wrote enters the note through `core.review_quote`'s one quoting rule. A
tick is read only from the curator's own task lines (`_task_lines`): never from a quote.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memory_curator.core.review_note_name import is_note_file, obsidian_url
from memory_curator.core.review_quote import FENCE, code, fenced, inert, link
from memory_curator.core.review_tick import BLOCK as _BLOCK
from memory_curator.core.review_tick import TASK as _TASK
from memory_curator.core.review_tick import TICKED, box, status_problem, unticked

__all__ = ["is_note_file", "obsidian_url", "status_problem"]  # re-exported where they were

DEFAULT_PATH = "_meta/Inbox review.md"
BEGIN = "%% mc:begin {id} %%"
END = "%% mc:end {id} %%"
HEAD = "head"
LEAVE = "leave"
DROP = "drop"
RESTORE = "restore"
# verb -> the words of its task line; a patch's settle choices are verbs of their own
VERBS: Mapping[str, str] = {
    "promote": "promote to",
    "patch": "patch into",
    "new": "take the new value into",
    "old": "keep the old value of",
    "both": "keep both values in",
    DROP: "drop",
    LEAVE: "leave",
    RESTORE: "restore",
}
DROPPED_IN_REVIEW = "dropped in review"
BOUND = ("inbox", "digest", "target_digest")  # what a section was written from
_MARKER = re.compile(r"%% mc:begin ([0-9a-f]{12}|head) %%")


def item_id(*parts: str | None) -> str:
    """The stable id of a section: its inbox path and hash (and, for a patch, the target's hash).
    A changed candidate or target is another id, so a tick on the old one is stale."""
    return hashlib.sha256("\0".join(p or "" for p in parts).encode("utf-8", "surrogatepass")).hexdigest()[:12]


@dataclass(frozen=True)
class Offer:
    """One action an item allows: its verb (`VERBS`) and, for promote and patch, the note."""

    verb: str
    target: str | None = None

    def line(self, section: str) -> str:
        """The task line; a note that does not exist yet (a promote's) is named, never linked: a
        click on an unresolved link would create it, and the promote would then find it taken."""
        shown = "" if not self.target else f" {code(self.target) if self.verb == 'promote' else link(self.target)}"
        words = VERBS[self.verb] + shown
        return f"- [ ] {words} ^mc-{section}-{self.verb}"


@dataclass(frozen=True)
class Item:
    """One waiting item as the note shows it."""

    inbox: str
    digest: str
    title: str
    code: str  # `core.reasons.CODES`
    words: str  # the code's words
    uncertainty: str | None = None
    concerns: str | None = None  # the note it concerns
    target_digest: str | None = None  # that note's hash, when a patch is offered
    quoted: str = ""  # the agent's text (and old beside new), quoted inert
    offers: tuple[Offer, ...] = ()
    elsewhere: str | None = None  # why the note offers no write (privacy, the person's note): use review
    problem: str | None = None  # why the last tick on it was not applied
    said: str | None = None  # what the last tick on it did (a `leave`), or its deleted section: said once
    agent: str = ""  # its agent and the note its reason is about: with `code`, its group (`core.review_bulk`)
    about: str | None = None

    @property
    def id(self) -> str:
        return item_id(self.inbox, self.digest, self.target_digest)


@dataclass(frozen=True)
class Dropped:
    """A drop of the last 7 days the head offers to restore."""

    path: str
    rule: str
    day: str

    @property
    def id(self) -> str:
        return item_id(RESTORE, self.path)


@dataclass(frozen=True)
class Head:
    counts: tuple[tuple[str, int], ...]  # (reason code, items)
    sweeps: tuple[str, ...]  # one line each, newest first
    drops: tuple[Dropped, ...]
    review_hint: str  # what to run for what the note never offers
    copies: tuple[str, ...] = ()  # the note's sync conflict copies: each named, to merge and delete
    told: tuple[tuple[str, str], ...] = ()  # (inbox path, why) of ticks not applied on items gone: said once


@dataclass(frozen=True)
class Section:
    """A generated section: its id, its lines (markers included), what each task line does (by
    verb; in the head, by the drop's id) and what it was written from (the candidate's path and
    hash, the target note's hash): a tick is applied only while they still hold."""

    id: str
    lines: tuple[str, ...]
    tasks: Mapping[str, Offer]
    inbox: str | None = None
    digest: str | None = None
    target_digest: str | None = None
    members: tuple[str, ...] = ()  # a bulk line's: the ids of its group's item sections (`core.review_bulk`)

    def to_json(self) -> dict[str, object]:
        tasks = {key: [offer.verb, offer.target] for key, offer in self.tasks.items()}
        bound = {key: getattr(self, key) for key in BOUND}
        return {"id": self.id, "lines": list(self.lines), "tasks": tasks, **bound, "members": list(self.members)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Section:
        """A section as the state directory kept it; anything malformed reads as no task."""
        tasks = data.get("tasks") if isinstance(data.get("tasks"), dict) else {}
        offers = {
            str(key): Offer(str(v[0]), v[1] if isinstance(v[1], str) else None)
            for key, v in (tasks or {}).items()
            if isinstance(v, list) and len(v) == 2
        }
        lines = data.get("lines") if isinstance(data.get("lines"), list) else []
        inbox, digest, target = (data.get(k) if isinstance(data.get(k), str) else None for k in BOUND)
        members = data.get("members") if isinstance(data.get("members"), list) else []
        lines_ = tuple(str(x) for x in lines or ())
        return cls(str(data.get("id")), lines_, offers, inbox, digest, target, tuple(map(str, members or ())))


def head_section(head: Head) -> Section:
    lines = [BEGIN.format(id=HEAD), "", "# Inbox review", ""]
    total = sum(n for _, n in head.counts)
    if total:
        lines.append(f"{total} waiting: " + ", ".join(f"{n} {inert(why)}" for why, n in head.counts) + ".")
    else:
        lines.append("Nothing waits for you.")
    lines += ["", "Tick one box per item: the next sweep applies it (a tick is as trusted as write access)."]
    lines += ["`leave` changes nothing: the item stays in the queue, and the note says it saw the tick."]
    lines += ["Your own lines outside the `mc:` sections are kept. " + head.review_hint, ""]
    for copy in head.copies:
        lines += [
            f"⚠ Sync conflict copy {code(copy)}: merge it into this note and delete it (its ticks are read once).",
            "",
        ]
    for inbox, why in head.told:
        lines += [f"⚠ Not applied: {code(inbox)}: {inert(why, 300)}.", ""]
    if head.sweeps:
        lines += ["Last sweeps:", *(f"- {s}" for s in head.sweeps), ""]
    tasks: dict[str, Offer] = {}
    if head.drops:
        lines += ["## Dropped in the last 7 days", ""]
        for drop in head.drops:
            lines.append(f"- [ ] restore {code(drop.path)} ({inert(drop.rule)}, {drop.day}) ^mc-{drop.id}-{RESTORE}")
            tasks[drop.id] = Offer(RESTORE, drop.path)
        lines.append("")
    lines += [END.format(id=HEAD), ""]
    return Section(HEAD, tuple(lines), tasks)


def heading(item: Item) -> str:
    """The item's title, then its inbox path as code: named, never linked. The path vanishes once
    the item is settled, and a stale link to it, clicked (a phone's copy of the note not synced
    yet, a conflict copy), would make Obsidian create an empty file there that the next sweep
    flags as `empty`. The path also tells two items of one title apart."""
    return f"{inert(item.title) or inert(item.inbox.rpartition('/')[2]) or 'untitled'} · {code(item.inbox)}"


def item_section(item: Item) -> Section:
    sid = item.id
    lines = [BEGIN.format(id=sid), "", f"## {heading(item)}", ""]
    lines.append(f"Waits: **{inert(item.code)}**: {inert(item.words)}.")
    if item.uncertainty and item.code != "private":  # a private item's reason is its code's words
        lines.append(f"Curator: {inert(item.uncertainty, 400)}.")
    if item.concerns:
        lines.append(f"Concerns: {link(item.concerns)}")
    if item.elsewhere:
        lines.append(f"Only in a terminal: {inert(item.elsewhere, 300)}")
    if item.problem:
        lines.append(f"⚠ Not applied: {inert(item.problem, 300)}")
    if item.said:
        lines.append(f"{inert(item.said)}.")  # what the last look at the note saw, said once
    lines += ["", *fenced(item.quoted), ""]
    lines += [offer.line(sid) for offer in item.offers]
    lines += ["", END.format(id=sid), ""]
    return Section(sid, tuple(lines), {o.verb: o for o in item.offers}, item.inbox, item.digest, item.target_digest)


@dataclass(frozen=True)
class Tick:
    """What a section's boxes say: `verbs` ticked (exactly one is a decision), `reason` typed on
    a ticked drop line, boxes set to another status (`others`: (verb, status), not ticks), or
    why the section cannot be read (`mangled`)."""

    id: str
    verbs: tuple[str, ...] = ()
    reason: str | None = None
    mangled: str | None = None
    others: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Reading:
    """A note read against the sections the curator wrote: the ticks per section, the person's
    own lines (anchored after the section they follow; "" for the top), and the note's form."""

    ticks: Mapping[str, Tick]
    restores: tuple[str, ...]  # the ids of the drops ticked for restore
    own: tuple[tuple[str, tuple[str, ...]], ...]  # (anchor id, lines)
    newline: str = "\n"
    bom: bool = False
    order: tuple[str, ...] = ()  # the sections' ids in the note's order (where a gone one's lines go)
    unrestored: tuple[tuple[str, str], ...] = ()  # (drop id, status) of restore boxes set to another status


def lines_of(text: str) -> tuple[list[str], str, bool]:
    """The note's lines, its newline (`\\r\\n` as a phone may write) and whether it had a BOM."""
    bom = text.startswith("\ufeff")
    text = text.removeprefix("\ufeff")
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = text.replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines, newline, bom


def read(text: str, known: Iterable[Section]) -> Reading:
    """The ticks in `text`, for the sections the curator wrote (`known`: an id may have more than
    one rendering, those of the last two writes). A section is read only where its lines are a
    known rendering but for boxes and a drop's words, once: a copy quoted inside another intact
    section (an agent's text) is text; two copies, or none intact where its marker is, apply
    nothing (`mangled`), and only the lines of a mangled section that are the curator's are taken.
    Lines a person typed into a section, its own all there, are theirs (`_with_lines_typed_in`)."""
    lines, newline, bom = lines_of(text)
    by_id: dict[str, list[Section]] = {}
    for section in known:
        by_id.setdefault(section.id, []).append(section)
    starts = _starts(lines)
    matches = [m for sid, where in starts.items() for n in where if (m := _match(sid, n, lines, by_id))]
    typed_in, typed = _with_lines_typed_in(starts, lines, by_id, matches)
    matches += typed_in
    outer = [m for m in matches if not any(o is not m and o[2] <= m[2] and m[3] <= o[3] for o in matches)]
    taken = [False] * len(lines)
    for _, _, first, last in outer:
        taken[first : last + 1] = [n not in typed for n in range(first, last + 1)]
    inside = {n for _, _, first, last in outer for n in range(first, last + 1)}
    ticks: dict[str, Tick] = {}
    for sid, where in starts.items():
        mine = [m for m in outer if m[0].id == sid]
        free = [n for n in where if n not in inside]
        if len(mine) == 1:
            ticks[sid] = mine[0][1]
        elif free or mine:
            _take_ours(sid, free, lines, by_id.get(sid, []), taken, by_id)
            if sid in by_id:
                twice = "its section appears more than once in the note"
                cut = "its section was changed or cut (a half-saved note?); nothing of it was read"
                ticks[sid] = Tick(sid, mangled=twice if len(mine) > 1 else cut)
    anchors: dict[str, list[int]] = {}
    for section, _, first, _ in outer:
        anchors.setdefault(section.id, []).append(first)
    for sid, where in starts.items():
        if sid in by_id:  # a marker of no section the curator wrote is text
            anchors.setdefault(sid, []).extend(n for n in where if n not in inside)
    own = _own_lines(lines, taken, anchors)
    order = tuple(sid for _, sid in sorted((n, sid) for sid, where in anchors.items() for n in where))
    head = ticks.pop(HEAD, None)
    intact = head is not None and not head.mangled
    return Reading(
        ticks, head.verbs if head and intact else (), own, newline, bom, order, head.others if head and intact else ()
    )


def _starts(lines: Sequence[str]) -> dict[str, list[int]]:
    """section id -> the lines its begin marker is on."""
    starts: dict[str, list[int]] = {}
    for n, line in enumerate(lines):
        match = _MARKER.fullmatch(line.strip())
        if match:
            starts.setdefault(match.group(1), []).append(n)
    return starts


def _match(
    sid: str, start: int, lines: Sequence[str], by_id: Mapping[str, list[Section]]
) -> tuple[Section, Tick, int, int] | None:
    """(the rendering, its ticks, first line, last line) of the section begun at `start`, if its
    lines are one of its renderings but for boxes and a drop's words."""
    for section in by_id.get(sid, []):
        tick = _compare(section, lines[start : start + len(section.lines)])
        if tick is not None:
            return section, tick, start, start + len(section.lines) - 1
    return None


def _with_lines_typed_in(
    starts: Mapping[str, list[int]],
    lines: Sequence[str],
    by_id: Mapping[str, list[Section]],
    exact: Sequence[tuple[Section, Tick, int, int]],
) -> tuple[list[tuple[Section, Tick, int, int]], set[int]]:
    """The sections a person typed lines into (a comment under an item: Reading view hides a
    section's bounds), and those lines: its own lines all there, in order, boxes aside, between
    its markers, with no marker among the typed ones. Their ticks are read; the typed lines are
    kept below it. Looked for only where no section matched, never inside one matched before."""
    found: list[tuple[Section, Tick, int, int]] = []
    typed: set[int] = set()
    for start, sid in sorted((n, sid) for sid, where in starts.items() for n in where):
        if any(first <= start <= last for _, _, first, last in [*exact, *found]):
            continue
        end = next((n for n in range(start + 1, len(lines)) if lines[n].strip() == END.format(id=sid)), None)
        if end is None or any(_MARKER.fullmatch(lines[n].strip()) for n in range(start + 1, end)):
            continue
        for section in by_id.get(sid, []):
            bound = section.lines.index(END.format(id=sid)) + 1
            extra = _typed_in(section, section.lines[:bound], lines[start : end + 1])
            if extra is None:
                continue
            got = [line for n, line in enumerate(lines[start : end + 1]) if n not in extra]
            tick = _compare(section, [*got, *section.lines[bound:]])
            if tick is not None:
                tail = [line.rstrip() for line in section.lines[bound:]]
                after = [line.rstrip() for line in lines[end + 1 : end + 1 + len(tail)]]
                found.append((section, tick, start, end + (len(tail) if after == tail else 0)))
                typed |= {start + n for n in extra}
                break
    return found, typed


def _typed_in(section: Section, want: Sequence[str], window: Sequence[str]) -> set[int] | None:
    """The lines of `window` that are not among `want` (the section's lines through its end
    marker) when each of those is in it, in order, as written or, for a task line, with its box
    set; None when one is missing or changed."""
    tasks = _task_lines(section)
    mine = 0
    typed: set[int] = set()
    for n, line in enumerate(window):
        task = tasks.get(mine)
        expected = want[mine].rstrip() if mine < len(want) else None
        if expected is not None and (
            line.rstrip() == expected or (task is not None and box(expected, line.rstrip(), task[1] == DROP))
        ):
            mine += 1
        else:
            typed.add(n)
    return typed if mine == len(want) else None


def _take_ours(
    sid: str, where: list[int], lines: list[str], renderings: list[Section], taken: list[bool], known: Iterable[str]
) -> None:
    """Mark the lines of a mangled section that are the curator's (its markers, and lines any of
    its renderings holds, boxes aside), from each begin marker to its end marker or the next."""
    end = END.format(id=sid)
    ours = {unticked(line) for section in renderings for line in section.lines} | {BEGIN.format(id=sid), end}
    for start in where:
        for n in range(start, len(lines)):
            marker = _MARKER.fullmatch(lines[n].strip())
            if n > start and marker and marker.group(1) in known:
                break
            if unticked(lines[n]) in ours and not taken[n]:
                taken[n] = True
            if lines[n].strip() == end:
                break


def _compare(section: Section, got: Sequence[str]) -> Tick | None:
    """The ticks of `got` if it is `section` but for the boxes of its own task lines (and the
    words after a drop's verb); any other line changed, a quoted one included, and it is not."""
    if len(got) != len(section.lines):
        return None
    tasks = _task_lines(section)
    ticked: list[str] = []
    others: list[tuple[str, str]] = []
    reason: str | None = None
    for n, (mine, theirs) in enumerate(zip(section.lines, got, strict=True)):
        if mine.rstrip() == theirs.rstrip():
            continue
        task = tasks.get(n)
        status = None if task is None else box(mine, theirs.rstrip(), task[1] == DROP)
        if task is None or status is None:
            return None
        if status[0] in TICKED:
            ticked.append(task[0])
            reason = (status[1] or None) if task[1] == DROP else reason
        elif status[0] != " ":
            others.append((task[0], status[0]))
    return Tick(section.id, tuple(ticked), reason, others=tuple(others))


def _task_lines(section: Section) -> dict[int, tuple[str, str]]:
    """line -> (what a tick on it says: the verb, in the head the drop's id; the verb) for the
    curator's own task lines: outside every fence of the section (the quote of an agent's text),
    a task line whose block id is one the section offers at that place."""
    tasks: dict[int, tuple[str, str]] = {}
    fence: str | None = None
    for n, line in enumerate(section.lines):
        opened = FENCE.match(line)
        if fence is None and opened:
            fence = opened.group(1)
            continue
        if fence is not None:
            if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                fence = None
            continue
        block, task = _BLOCK.search(line), _TASK.match(line)
        if block is None or task is None:
            continue
        sid, verb = block.group("id"), block.group("verb")
        key = sid if section.id == HEAD and verb == RESTORE else verb if sid == section.id else None
        if key is not None and key in section.tasks:
            tasks[n] = (key, verb)
    return tasks


def _own_lines(
    lines: list[str], taken: list[bool], starts: Mapping[str, list[int]]
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The lines no section holds, in runs, each anchored to the section begun before it."""
    begin_at = {n: sid for sid, where in starts.items() for n in where}
    anchor, run, out = "", list[str](), list[tuple[str, tuple[str, ...]]]()
    for n, line in enumerate(lines):
        if n in begin_at:
            if run:
                out.append((anchor, tuple(run)))
                run = []
            anchor = begin_at[n]
        if not taken[n]:
            run.append(line)
    if run:
        out.append((anchor, tuple(run)))
    return tuple(out)


def render(
    head: Section,
    items: Sequence[Section],
    own: Sequence[tuple[str, Sequence[str]]] = (),
    newline: str = "\n",
    bom: bool = False,
    order: Sequence[str] = (),
) -> str:
    """The note: the person's top lines, the head, then each item (newest first), each followed
    by the person's lines anchored to it. Lines whose section left follow the nearest section
    before it (in the old note's `order`) that is still there, so their order is kept."""
    placed = {head.id, *(s.id for s in items)}
    anchored: dict[str, list[str]] = {}
    for anchor, chunk in own:
        anchored.setdefault(_still_there(anchor, placed, order), []).extend(chunk)
    out: list[str] = list(anchored.get("", []))
    for section in (head, *items):
        out.extend(section.lines)
        out.extend(anchored.get(section.id, []))
    return ("\ufeff" if bom else "") + newline.join(out) + newline


def _still_there(anchor: str, placed: set[str], order: Sequence[str]) -> str:
    """`anchor`, or the nearest section before it in `order` still placed ("" for the top)."""
    if anchor == "" or anchor in placed:
        return anchor
    before = list(order[: order.index(anchor)]) if anchor in order else []
    return next((sid for sid in reversed(before) if sid in placed), HEAD if HEAD in placed else "")
