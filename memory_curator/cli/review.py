"""`review`'s terminal: the interactive queue of items waiting for a person.

Oldest first, each item is one screen: a header that stays (where it is, why it waits, what
the curator would do now), a pane with the rest (the note with its key beside the item, the
item itself, the criteria, its neighbours, the diff a patch would make) that scrolls on a
terminal, and the keys. One key decides, with no Enter (`cli.keys`); text (a reason, a note,
a surface) is typed on a line. Every choice is applied at once through `desk.Desk` (lock,
executor, journal), so quitting midway loses nothing; a write into a person's note, and any
settling of a contradiction, is shown as a diff first and needs a second key.
What to show and what a choice does is `commands/review.py`; this module only talks.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import click
from rich.console import Console
from rich.progress import Progress

from memory_curator.cli.keys import Keys
from memory_curator.cli.output import diff_view, make_console, shown
from memory_curator.cli.render import STYLE
from memory_curator.cli.render_status import note_line
from memory_curator.cli.review_screen import SETTLE_KEYS, choices, details, header, screen
from memory_curator.commands.desk import Choice, Desk, Done, Preview
from memory_curator.commands.note_link import note_link
from memory_curator.commands.review import (
    ABOUT_A_NOTE,
    Declined,
    Flag,
    Tally,
    View,
    alike,
    evaluate,
    flag_of,
    flag_reasons,
    patch_confirmed,
    queue,
)
from memory_curator.commands.status import InboxItem
from memory_curator.core import candidate as cand
from memory_curator.core.errors import CuratorError
from memory_curator.core.facts import Querier
from memory_curator.core.merge import Settle

KEYS = {
    "p": "promote",
    "o": "promote as another surface",
    "m": "merge (patch) into a note",
    "d": "drop",
    "e": "edit",
    "s": "skip",
    "q": "quit",
}
BULK_MIN_BAR = 2  # a bulk choice over more items than this shows a bar (stderr, terminal only)


class _EndOfInput(Exception):
    """Input ended while a line was being typed: the session ends as if `q` was pressed."""


@dataclass
class _Session:
    """One walk of the queue: who answers, what is left, and the exact tally so far."""

    desk: Desk
    console: Console
    keys: Keys
    querier: Querier
    flags: dict[str, Flag]
    pending: list[InboxItem]
    total: int
    done: list[Done] = field(default_factory=list)
    runs: list[str] = field(default_factory=list)
    skipped: int = 0
    edited: int = 0
    gone: int = 0
    reached: int = 0
    last: str | None = None  # what the previous choice did: the next screen says it first

    def tally(self, interrupted: bool = False) -> Tally:
        left = len(self.pending)
        return Tally(
            tuple(self.done),
            self.skipped,
            self.edited,
            left,
            quit=left > 0,
            runs=tuple(self.runs),
            gone=self.gone,
            interrupted=interrupted,
        )


def review(
    desk: Desk,
    console: Console,
    keys: Keys,
    agents: set[str] | None = None,
    only: str | None = None,
    reason: str | None = None,
) -> Tally:
    """Walk the queue until it is empty, the person quits, or input ends; Ctrl-C ends it too
    (the tally says so: `cli` prints it, then exits 130). What was decided stays decided."""
    flags = flag_reasons(desk)
    items = queue(desk, agents, only, reason, flags)
    note_line(console, note_link(desk.root, desk.rules))  # the same queue, ticked in Obsidian
    if not items:
        console.print("nothing waits for review" + (f" with the reason {shown(reason)}" if reason else ""))
        return Tally()
    session = _Session(desk, console, keys, desk.querier(), flags, list(items), len(items))
    while session.pending:
        item = session.pending[0]  # it stays in `pending` until decided, skipped or gone
        session.reached += 1
        try:
            outcome = _one(session, item)
        except KeyboardInterrupt:
            return session.tally(interrupted=True)
        if outcome == "quit":
            break
        if session.pending and session.pending[0] is item:
            session.pending.pop(0)
    return session.tally()


def _one(session: _Session, item: InboxItem) -> str:
    """Show one item and act on keys until it is decided, skipped, or the session ends."""
    desk, console = session.desk, session.console
    if item.too_large:  # never read: nothing to show or decide here
        console.print(f"{shown(item.rel)}: {shown(item.too_large)} (never read; split it or move it by hand)")
        session.skipped += 1
        return "skip"
    while True:
        try:
            _, candidate = desk.read(str(desk.root / item.rel))
        except CuratorError as exc:  # gone (a sweep or another person took it), or unreadable
            console.print(f"[dim]skipped: {shown(exc)}[/]")
            session.gone += 1
            return "gone"
        view = evaluate(desk, session.querier, candidate)
        others = alike(session.pending, item, session.flags)
        flag = flag_of(item, session.flags)
        head = header(item, view, flag, f"{session.reached}/{session.total}", desk.clock.timestamp())
        if session.last and _redrawn(session):  # the screen is cleared: say it again
            head.insert(0, session.last)
        session.last = None
        key = screen(console, session.keys, head, details(candidate, view), choices(view, len(others)))
        if key is None or key == "q":
            return "quit"
        if key == "s":
            session.skipped += 1
            return "skip"
        if key == "e":
            _edit(desk, item, console)
            session.edited += 1
            continue
        try:
            outcome = _decide(session, key, item, candidate, view, others)
        except _EndOfInput:
            return "quit"
        if outcome is not None:
            return outcome


def _decide(
    session: _Session, key: str, item: InboxItem, candidate: cand.Candidate, view: View, others: list[InboxItem]
) -> str | None:
    """Apply one choice; None when nothing was decided (the item is shown again)."""
    console = session.console
    if key == "a" and others:
        return _bulk(session, item, view, others)
    if key not in KEYS and not (key in SETTLE_KEYS and view.side and view.side.differs):
        _say_before_the_item(session, f"[dim]no choice on {shown(repr(key))}; the keys are listed at the bottom[/]")
        return None
    try:
        done = act(session.desk, key, candidate, view, session.keys, console)
    except Declined as exc:
        console.print(shown(exc))
        return None
    except CuratorError as exc:
        console.print(f"[red]not done:[/] {shown(exc)}")
        _pause(session)
        return None
    if done is None:
        return None
    session.done.append(done)
    session.runs.append(done.run_id)
    session.last = f"[dim]done:[/] {_said(console, done)}"
    return done.action.verdict


def act(desk: Desk, key: str, candidate: cand.Candidate, view: View, keys: Keys, console: Console) -> Done | None:
    """Apply the person's choice, asking for what it needs; None when the person said no to
    the diff they were shown."""
    rel = str(desk.root / candidate.inbox_path)  # absolute: never another vault's file under the cwd
    if key == "p" and candidate.surface is not None:
        return desk.promote(rel)
    if key in ("p", "o"):
        return desk.promote(rel, _surface(desk, candidate, keys))
    if key == "m":
        target = _typed(keys, "Patch into (vault path)", view.default_target)
        if not target:
            raise CuratorError("no note named; nothing done")
        return patch_confirmed(desk, rel, target, asker(console, keys))
    if key in SETTLE_KEYS and view.side is not None:
        return _settle(desk, rel, view.side.note, SETTLE_KEYS[key][0], keys, console)
    return desk.drop(rel, _typed(keys, "Reason for the drop") or "")


def _settle(desk: Desk, rel: str, note: str, how: Settle, keys: Keys, console: Console) -> Done | None:
    """A contradiction settled by the person: the plan's diff first, then a second key."""
    preview = desk.preview(rel, note, how)
    mine = " (your note)" if preview.persons else ""
    console.print(f"{SETTLE_KEYS[_key_of(how)][1]}: {shown(preview.target)}{mine} would change:")
    console.print(diff_view(preview.diff))
    if not _yes(keys, console, "Write this? y = yes, any other key = no"):
        console.print("left as it was")
        return None
    return desk.patch(rel, preview.target, confirmed=preview.persons, seen=preview.seen, settle=how)


def _key_of(how: Settle) -> str:
    return next(k for k, (h, _) in SETTLE_KEYS.items() if h == how)


def _bulk(session: _Session, item: InboxItem, view: View, others: list[InboxItem]) -> str | None:
    """One choice for this item and the others like it: one run, one plan per item."""
    console, keys, desk = session.console, session.keys, session.desk
    flag = flag_of(item, session.flags)
    where = f", about {shown(flag.target)}" if flag.target and flag.code in ABOUT_A_NOTE else ""
    console.print(f"this item and the {len(others)} others like it ({shown(item.agent)}, {shown(flag.code)}{where}):")
    console.print(
        "[b]p[/] promote  [b]o[/] as another surface  [b]m[/] merge into a note  [b]d[/] drop  any other key: back"
    )
    key = keys.key()
    if key is None:
        raise _EndOfInput
    choice = _bulk_choice(key, keys, desk, view)
    if choice is None:
        return None
    rels = [item.rel, *(o.rel for o in others)]
    if not _yes(keys, console, f"{choice[0]} {len(rels)} items? y = yes, any other key = no"):
        return None
    try:
        with bulk_progress(len(rels)) as tick:
            result = desk.bulk([str(desk.root / r) for r in rels], choice, tick)
    except CuratorError as exc:
        console.print(f"[red]not done:[/] {shown(exc)}")
        return None
    session.done.extend(result.done)
    session.runs.append(result.run_id)
    decided = {d.action.inbox_path for d in result.done}
    session.pending[:] = [p for p in session.pending if p.rel not in decided or p is item]
    session.last = (
        f"{choice[0]}: {len(result.done)} items in run {result.run_id} "
        f"(`memory-curator undo {result.run_id}` takes all of them back)"
    )
    console.print(session.last)
    session.last = f"[dim]done:[/] {shown(session.last)}"
    for rel, why in result.refused:
        console.print(f"[red]not done:[/] {shown(rel)}: {shown(why)}")
    if result.refused:
        with contextlib.suppress(_EndOfInput):  # the choice is applied: the next key ends the session
            _pause(session)
    if item.rel not in decided:
        return None  # refused: it is shown again at once, as it was
    return "bulk"


def _bulk_choice(key: str, keys: Keys, desk: Desk, view: View) -> Choice | None:
    if key == "p":
        return ("promote", None)
    if key == "o":
        names = ", ".join(s.name for s in desk.rules.surfaces)
        return ("promote", _typed(keys, f"Surface ({names})") or None)
    if key == "m":
        return ("patch", _typed(keys, "Patch into (vault path)", view.default_target) or "")
    if key == "d":
        return ("drop", _typed(keys, "Reason for the drop") or "")
    return None


@contextlib.contextmanager
def bulk_progress(total: int) -> Iterator[Callable[[], None]]:
    """A transient bar on stderr while a bulk choice is applied, on a terminal only (so a
    transcript or a pipe gets none)."""
    if total <= BULK_MIN_BAR or not sys.stderr.isatty():
        yield lambda: None
        return
    with Progress(console=make_console(stderr=True), transient=True) as bar:
        task = bar.add_task("applying", total=total)
        yield lambda: bar.advance(task)


def _surface(desk: Desk, candidate: cand.Candidate, keys: Keys) -> str:
    names = ", ".join(s.name for s in desk.rules.surfaces)
    default = candidate.surface.name if candidate.surface else None
    return _typed(keys, f"Surface ({names})", default) or ""


def _typed(keys: Keys, prompt: str, default: str | None = None) -> str | None:
    text = keys.line(prompt, default)
    if text is None:
        raise _EndOfInput
    return text


def _yes(keys: Keys, console: Console, question: str) -> bool:
    console.print(question)
    key = keys.key()
    if key is None:
        raise _EndOfInput
    return key == "y"


def _redrawn(session: _Session) -> bool:
    """A terminal reading raw keys: each screen is cleared and drawn whole (`review_screen`)."""
    return session.keys.raw and session.console.is_terminal


def _say_before_the_item(session: _Session, line: str) -> None:
    """A line about a key that left the item undecided, said once: the redrawn screen heads with
    it on a terminal (printed now as well, it showed twice); elsewhere it is printed now."""
    session.last = line
    if not _redrawn(session):
        session.console.print(line)


def _pause(session: _Session) -> None:
    """On a terminal the screen is redrawn next: keep a refusal readable until a key."""
    if _redrawn(session):
        session.console.print("[dim](any key)[/]")
        if session.keys.key() is None:
            raise _EndOfInput


def _said(console: Console, done: Done) -> str:
    """Say what a choice did; the same words head the next screen on a terminal."""
    action = done.action
    where = action.moved_to or action.target_path or ""
    line = f"[{STYLE[action.verdict]}]{action.verdict}[/] {shown(action.inbox_path)} -> {shown(where)}"
    console.print(line)
    return line


def asker(console: Console | None = None, keys: Keys | None = None) -> Callable[[Preview], bool]:
    """Show a patch into the person's own note and ask for a second key (`keys`; without them,
    a prompt on stderr, as `resolve` asks). The diff and the question go to `console`
    (default: stderr, so `--json` stays clean)."""
    out = console or make_console(stderr=True)

    def confirm(preview: Preview) -> bool:
        out.print(f"[yellow]{shown(preview.target)} is your note[/] (not the curator's); the patch would change:")
        out.print(diff_view(preview.diff))
        if keys is not None:
            return _yes(keys, out, "Write this into your note? y = yes, any other key = no")
        answer = click.prompt(
            "Write this into your note? [y]es, [n]o",
            type=click.Choice(["y", "n"]),
            show_choices=False,
            default="n",
            err=out.stderr,
        )
        return bool(answer == "y")

    return confirm


def _edit(desk: Desk, item: InboxItem, console: Console) -> None:
    """Open $EDITOR on the inbox file itself; the next loop re-evaluates it."""
    try:
        click.edit(filename=str(desk.root / item.rel))
    except click.ClickException as exc:
        console.print(f"[red]editor failed:[/] {shown(exc.format_message())}")
