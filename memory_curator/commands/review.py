"""`review`: the interactive queue of items waiting for a person.

Oldest first, each item is shown with what the curator saw: the candidate (frontmatter and
body), its uncertainty, the verdict it would get now with the criteria table, its nearest
durable notes and, when a note with its key exists, the diff a patch would make. One key
decides: every choice is applied at once through `actions.Desk` (lock, writer, journal), so
quitting midway loses nothing. Keys are read with click prompts, which `CliRunner` scripts.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

import click
from rich.console import Console, Group
from rich.markdown import Markdown
from rich.markup import escape
from rich.panel import Panel
from rich.rule import Rule
from rich.syntax import Syntax
from rich.table import Table

from memory_curator.cli.render import age_text
from memory_curator.commands.desk import PERSONS_NOTE, Desk, Done, inbox_item
from memory_curator.commands.status import InboxItem, scan_inbox
from memory_curator.commands.sweep import make_querier
from memory_curator.core import candidate as cand
from memory_curator.core import compose, merge
from memory_curator.core.decide import Decision, decide
from memory_curator.core.errors import CuratorError
from memory_curator.core.facts import Neighbour, Querier, gather_facts
from memory_curator.core.names import printable
from memory_curator.core.notes import plain
from memory_curator.store.paths import scope_agents

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
STYLE = {"promote": "green", "patch": "cyan", "drop": "red", "needs_review": "yellow"}


@dataclass(frozen=True)
class View:
    """What the curator would decide about the item now, and what a patch would change."""

    decision: Decision
    neighbours: tuple[Neighbour, ...]
    patch_target: str | None
    diff: str | None
    persons: bool = False  # the patch target is the person's note: writing it needs a second key


@dataclass
class Tally:
    done: list[Done] = field(default_factory=list)
    skipped: int = 0
    edited: int = 0
    left: int = 0
    quit: bool = False

    def line(self) -> str:
        counts = {"promote": 0, "patch": 0, "drop": 0}
        for item in self.done:
            counts[item.action.verdict] += 1
        words = f"{counts['promote']} promoted, {counts['patch']} patched, {counts['drop']} dropped"
        rest = f", quit with {self.left} not looked at" if self.quit else ""
        return f"review: {words}, {self.skipped} skipped{rest}"


def scope(root: Path, path: str | None) -> tuple[set[str] | None, str | None]:
    """(agent folders, single item) that `review PATH` covers: the whole inbox, one agent
    folder, or one file."""
    if path is None:
        return None, None
    given = Path(path)
    if given.is_file() or (not given.is_absolute() and (root / given).is_file()):
        return None, inbox_item(root, path)[0]
    folder = given if given.exists() or given.is_absolute() else root / given
    return {name for name, _ in scope_agents(root, folder)}, None


def queue(desk: Desk, agents: set[str] | None = None, only: str | None = None) -> list[InboxItem]:
    """The items waiting for a person (or just `only`), oldest first."""
    items = scan_inbox(desk.root, desk.state)
    if only is not None:
        return [i for i in items if i.rel == only]
    return [i for i in items if i.waiting_for_person and (agents is None or i.agent in agents)]


def review(
    desk: Desk,
    console: Console,
    agents: set[str] | None = None,
    only: str | None = None,
) -> Tally:
    items = queue(desk, agents, only)
    tally = Tally()
    if not items:
        console.print("nothing waits for review")
        return tally
    querier = make_querier(desk.root, desk.rules, desk.state, desk.clock)
    for number, item in enumerate(items, start=1):
        outcome = _one(desk, querier, console, item, f"{number}/{len(items)}", tally)
        if outcome == "quit":
            tally.quit = True
            tally.left = len(items) - number + 1  # this one included
            break
    return tally


def _one(desk: Desk, querier: Querier, console: Console, item: InboxItem, position: str, tally: Tally) -> str:
    """Show one item and act on keys until it is decided, skipped, or the person quits."""
    while True:
        try:
            _, candidate = desk.read(str(desk.root / item.rel))
        except CuratorError as exc:  # gone (a sweep or another person took it), or unreadable
            console.print(f"[dim]skipped: {escape(str(exc))}[/]")
            return "gone"
        view = evaluate(desk, querier, candidate)
        show(console, item, candidate, view, position, desk.clock.timestamp())
        key = click.prompt(
            PROMPT,
            type=click.Choice(list(KEYS)),
            show_choices=False,
            default="s",
        )
        if key == "q":
            return "quit"
        if key == "s":
            tally.skipped += 1
            return "skip"
        if key == "e":
            _edit(desk, item, console)
            tally.edited += 1
            continue
        try:
            done = act(desk, key, candidate, view, console)
        except CuratorError as exc:
            console.print(f"[red]not done:[/] {escape(str(exc))}")
            continue
        tally.done.append(done)
        action = done.action
        where = action.moved_to or action.target_path or ""
        console.print(f"[{STYLE[action.verdict]}]{action.verdict}[/] {_shown(action.inbox_path)} -> {_shown(where)}")
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
        return patch_confirmed(desk, rel, target, console, ask=True)
    reason = click.prompt("Reason for the drop")
    return desk.drop(rel, reason)


def on_terminal() -> bool:
    """A person is there to see a diff and answer (`resolve` asks only then)."""
    return sys.stdin.isatty() and sys.stderr.isatty()


def patch_confirmed(desk: Desk, rel: str, target: str, console: Console | None, ask: bool, yes: bool = False) -> Done:
    """Patch into `target`. A person's note is written only once the person confirms the diff:
    `yes` (`resolve --yes`), or a second key when `ask`; otherwise it is refused, unchanged.
    The diff and the question go to `console` (default: stderr, so `--json` stays clean)."""
    if yes:
        return desk.patch(rel, target, confirmed=True)
    preview = desk.persons_patch(rel, target)
    if preview is None:  # the curator's note: no confirmation needed
        return desk.patch(rel, target)
    if not ask:
        raise CuratorError(f"{preview.target}: {PERSONS_NOTE}")
    console = console or Console(stderr=True)
    console.print(f"[yellow]{_shown(preview.target)} is your note[/] (not the curator's); the patch would change:")
    console.print(Syntax(preview.diff, "diff", theme="ansi_dark", word_wrap=True))
    answer = click.prompt(
        "Write this into your note? [y]es, [n]o",
        type=click.Choice(["y", "n"]),
        show_choices=False,
        default="n",
        err=console.stderr,
    )
    if answer != "y":
        raise CuratorError(f"{preview.target}: left as it was")
    return desk.patch(rel, preview.target, confirmed=True, seen=preview.seen)


def _edit(desk: Desk, item: InboxItem, console: Console) -> None:
    """Open $EDITOR on the inbox file itself; the next loop re-evaluates it."""
    try:
        click.edit(filename=str(desk.root / item.rel))
    except click.ClickException as exc:
        console.print(f"[red]editor failed:[/] {escape(exc.format_message())}")


def evaluate(desk: Desk, querier: Querier, candidate: cand.Candidate) -> View:
    facts = gather_facts(candidate, querier, desk.rules.settings)
    decision = decide(candidate, desk.rules, facts)
    try:
        neighbours = tuple(querier.neighbours(candidate, desk.rules.settings.neighbours))
    except CuratorError:
        neighbours = ()
    existing = facts.existing
    if existing is None:
        return View(decision, neighbours, None, None)
    person = not existing.curator_owned  # shown as the person would write it: their note stays theirs
    merged = merge.merge(existing.text, candidate, desk.clock.now(), person=person)
    diff = merge.note_diff(existing.path, existing.text, merged.text) if merged.changed else None
    return View(decision, neighbours, existing.path, diff, person)


def _shown(name: str) -> str:
    """A file name for the screen: escaped for rich markup and for the terminal itself."""
    return escape(printable(name))


def show(console: Console, item: InboxItem, candidate: cand.Candidate, view: View, position: str, now: float) -> None:
    """One item as a person sees it; `now` (epoch seconds) says how long it has waited."""
    waited = age_text(now - item.mtime)
    console.print(Rule(f"{position}  {_shown(item.rel)}  ({_shown(item.agent)}, waiting {waited})"))
    console.print(_candidate_panel(candidate))
    if item.uncertainty:
        console.print(f"[yellow]curator uncertainty:[/] {escape(item.uncertainty)}")
    elif item.held:
        console.print("[yellow]held for review[/] (put back by undo)")
    decision = view.decision
    style = STYLE.get(decision.verdict, "white")
    console.print(f"if swept now: [{style}]{decision.verdict}[/] — {escape(decision.reason)}")
    if decision.target:
        console.print(f"target: {_shown(decision.target)}")
    if decision.criteria:
        console.print(_criteria_table(decision))
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
    parts = [table, Rule(style="dim"), Markdown(body)] if table.row_count else [Markdown(body)]
    if candidate.note.problem:
        parts.insert(0, f"[red]{escape(candidate.note.problem)}[/]")
    return Panel(Group(*parts), title=_shown(Path(candidate.inbox_path).name), title_align="left")


def _value(value: object) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


def _criteria_table(decision: Decision) -> Table:
    table = Table("criterion", "value", show_edge=False)
    for name, value in decision.criteria.items():
        table.add_row(name, {True: "[green]yes[/]", False: "[red]no[/]", None: "[yellow]undecided[/]"}[value])
    return table
