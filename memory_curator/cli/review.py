"""`review`'s terminal: the interactive queue of items waiting for a person.

Oldest first, each item is shown with what the curator saw: the candidate (frontmatter and
body), its uncertainty, the verdict it would get now with the criteria table, its nearest
durable notes and, when a note with its key exists, the diff a patch would make. One key
decides: every choice is applied at once through `desk.Desk` (lock, writer, journal), so
quitting midway loses nothing. Keys are read with click prompts, which `CliRunner` scripts.
What to show and what a choice does is `commands/review.py`; this module only talks.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import click
from rich.console import Console, Group, RenderableType
from rich.markdown import Markdown
from rich.markup import escape
from rich.panel import Panel
from rich.rule import Rule
from rich.syntax import Syntax
from rich.table import Table

from memory_curator.cli.render import STYLE, age_text, criteria_table, shown
from memory_curator.commands.desk import Desk, Done, Preview
from memory_curator.commands.review import Tally, View, evaluate, patch_confirmed, queue
from memory_curator.commands.status import InboxItem
from memory_curator.core import candidate as cand
from memory_curator.core import compose
from memory_curator.core.errors import CuratorError
from memory_curator.core.facts import Querier
from memory_curator.core.notes import plain

KEYS = {
    "p": "promote",
    "o": "promote as another surface",
    "m": "merge (patch) into a note",
    "d": "drop",
    "e": "edit",
    "s": "skip",
    "q": "quit",
}
PROMPT = "[p]romote, promote as an[o]ther surface, [m]erge into a note, [d]rop, [e]dit, [s]kip, [q]uit"


@dataclass
class _Session:
    """The tally while the queue is walked (a frozen `Tally` once it ends)."""

    done: list[Done] = field(default_factory=list)
    skipped: int = 0
    edited: int = 0

    def tally(self, left: int = 0) -> Tally:
        return Tally(tuple(self.done), self.skipped, self.edited, left, quit=left > 0)


def review(desk: Desk, console: Console, agents: set[str] | None = None, only: str | None = None) -> Tally:
    items = queue(desk, agents, only)
    session = _Session()
    if not items:
        console.print("nothing waits for review")
        return session.tally()
    querier = desk.querier()
    for number, item in enumerate(items, start=1):
        outcome = _one(desk, querier, console, item, f"{number}/{len(items)}", session)
        if outcome == "quit":
            return session.tally(left=len(items) - number + 1)  # this one included
    return session.tally()


def _one(desk: Desk, querier: Querier, console: Console, item: InboxItem, position: str, session: _Session) -> str:
    """Show one item and act on keys until it is decided, skipped, or the person quits."""
    while True:
        try:
            _, candidate = desk.read(str(desk.root / item.rel))
        except CuratorError as exc:  # gone (a sweep or another person took it), or unreadable
            console.print(f"[dim]skipped: {escape(str(exc))}[/]")
            return "gone"
        view = evaluate(desk, querier, candidate)
        show(console, item, candidate, view, position, desk.clock.timestamp())
        key = click.prompt(PROMPT, type=click.Choice(list(KEYS)), show_choices=False, default="s")
        if key == "q":
            return "quit"
        if key == "s":
            session.skipped += 1
            return "skip"
        if key == "e":
            _edit(desk, item, console)
            session.edited += 1
            continue
        try:
            done = act(desk, key, candidate, view, console)
        except CuratorError as exc:
            console.print(f"[red]not done:[/] {escape(str(exc))}")
            continue
        session.done.append(done)
        action = done.action
        where = action.moved_to or action.target_path or ""
        console.print(f"[{STYLE[action.verdict]}]{action.verdict}[/] {shown(action.inbox_path)} -> {shown(where)}")
        return action.verdict


def act(desk: Desk, key: str, candidate: cand.Candidate, view: View, console: Console | None = None) -> Done:
    """Apply the person's choice (prompting for what it needs)."""
    rel = str(desk.root / candidate.inbox_path)  # absolute: never another vault's file under the cwd
    if key == "p" and candidate.surface is not None:
        return desk.promote(rel)
    if key in ("p", "o"):
        names = [s.name for s in desk.rules.surfaces]
        default = candidate.surface.name if candidate.surface else None
        surface = click.prompt("Surface", type=click.Choice(names), default=default)
        return desk.promote(rel, surface)
    if key == "m":
        suggestion = view.patch_target or (view.neighbours[0].path if view.neighbours else None)
        target = click.prompt("Patch into (vault path)", default=suggestion)
        return patch_confirmed(desk, rel, target, asker(console))
    reason = click.prompt("Reason for the drop")
    return desk.drop(rel, reason)


def on_terminal() -> bool:
    """A person is there to see a diff and answer (`resolve` asks only then)."""
    return sys.stdin.isatty() and sys.stderr.isatty()


def asker(console: Console | None = None) -> Callable[[Preview], bool]:
    """Show a patch into the person's own note and ask for a second key. The diff and the
    question go to `console` (default: stderr, so `--json` stays clean)."""
    out = console or Console(stderr=True)

    def confirm(preview: Preview) -> bool:
        out.print(f"[yellow]{shown(preview.target)} is your note[/] (not the curator's); the patch would change:")
        out.print(Syntax(preview.diff, "diff", theme="ansi_dark", word_wrap=True))
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
        console.print(f"[red]editor failed:[/] {escape(exc.format_message())}")


def show(console: Console, item: InboxItem, candidate: cand.Candidate, view: View, position: str, now: float) -> None:
    """One item as a person sees it; `now` (epoch seconds) says how long it has waited."""
    waited = age_text(now - item.mtime)
    console.print(Rule(f"{position}  {shown(item.rel)}  ({shown(item.agent)}, waiting {waited})"))
    console.print(_candidate_panel(candidate))
    if item.uncertainty:
        console.print(f"[yellow]curator uncertainty:[/] {escape(item.uncertainty)}")
    elif item.held:
        console.print("[yellow]held for review[/] (put back by undo)")
    decision = view.decision
    style = STYLE.get(decision.verdict, "white")
    console.print(f"if swept now: [{style}]{decision.verdict}[/] — {escape(decision.reason)}")
    if decision.target:
        console.print(f"target: {shown(decision.target)}")
    if decision.criteria:
        console.print(criteria_table(decision.criteria))
    if view.neighbours:
        near = ", ".join(f"{escape(n.path)} ({n.score:.2f})" for n in view.neighbours)
        console.print(f"nearest notes: {near}")
    if view.diff:
        mine = " (your note: m asks you to confirm)" if view.persons else ""
        console.print(f"a patch into {escape(view.patch_target or '')}{mine} would change:")
        console.print(Syntax(view.diff, "diff", theme="ansi_dark", word_wrap=True))


def _candidate_panel(candidate: cand.Candidate) -> Panel:
    table = Table(show_header=False, show_edge=False, box=None)
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    for key, value in candidate.frontmatter.items():
        table.add_row(escape(str(key)), escape(_value(plain(value))))
    body = compose.strip_review_mark(candidate.note.body).strip() or "(empty body)"
    parts: list[RenderableType] = [table, Rule(style="dim"), Markdown(body)] if table.row_count else [Markdown(body)]
    if candidate.note.problem:
        parts.insert(0, f"[red]{escape(candidate.note.problem)}[/]")
    return Panel(Group(*parts), title=shown(Path(candidate.inbox_path).name), title_align="left")


def _value(value: object) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)
