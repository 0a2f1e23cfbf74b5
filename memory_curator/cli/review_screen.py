"""One screen of `review`: a header that stays, a pane that scrolls, the keys at the bottom.

On a terminal that reads raw keys the screen is redrawn whole for each item: the pane is cut
from rich's own rendering at the terminal's width (so a wrapped line is never cut), and only
the pane moves (↑ ↓, space, PgUp, PgDn). Anywhere else everything is printed once, in order.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from memory_curator.cli.keys import Keys
from memory_curator.cli.output import diff_view, shown, shown_block
from memory_curator.cli.render import STYLE, age_text, criteria_table
from memory_curator.commands.review import Flag, View
from memory_curator.commands.status import InboxItem
from memory_curator.core import candidate as cand
from memory_curator.core import compose
from memory_curator.core.merge import Settle
from memory_curator.core.names import printable
from memory_curator.core.notes import plain
from memory_curator.core.secrets import masked_text

SETTLE_KEYS: dict[str, tuple[Settle, str]] = {
    "n": ("new", "take the new value (old → history)"),
    "k": ("old", "keep the old (new → history)"),
    "b": ("both", "keep both as a contradiction"),
}
SCROLL = {"up": -1, "down": 1}
PAGE = {" ": 1, "page-down": 1, "page-up": -1}


def screen(
    console: Console, keys: Keys, head: list[RenderableType], body: list[RenderableType], keys_line: str
) -> str | None:
    """Show an item and return the key that chose (None: input ended). On a terminal the
    header and the keys stay on screen and the pane between them scrolls (↑/↓, space,
    PgUp/PgDn); elsewhere everything is printed once."""
    if not (keys.raw and console.is_terminal):
        for part in (*head, *body):
            console.print(part)
        console.print(keys_line)
        return keys.key()
    top, pane, bottom = _lines(console, head), _lines(console, body), _lines(console, [keys_line])
    offset = 0
    while True:
        room = max(3, console.size.height - len(top) - len(bottom) - 1)
        offset = max(0, min(offset, len(pane) - room))
        console.clear()
        shown_lines = pane[offset : offset + room]
        hint = f"lines {offset + 1}-{offset + len(shown_lines)} of {len(pane)}: ↑ ↓ space PgUp PgDn scroll"
        console.file.write("\n".join([*top, *shown_lines]) + "\n")
        console.print(Rule(hint if len(pane) > room else "", style="dim"))
        console.file.write("\n".join(bottom) + "\n")
        console.file.flush()
        key = keys.key()
        if key in SCROLL:
            offset += SCROLL[key]
        elif key in PAGE:
            offset += PAGE[key] * room
        elif key != "escape":
            return key


def _lines(console: Console, parts: list[RenderableType]) -> list[str]:
    """Renderables as the terminal's lines (wrapped at its width, styles kept)."""
    with console.capture() as captured:
        for part in parts:
            console.print(part)
    return captured.get().splitlines()


def header(item: InboxItem, view: View, flag: Flag, position: str, now: float) -> list[RenderableType]:
    """What stays on screen: which item, why it waits, what the curator would do now."""
    waited = age_text(now - item.mtime)
    out: list[RenderableType] = [Rule(f"{position}  {shown(item.rel)}  ({shown(item.agent)}, waiting {waited})")]
    if item.uncertainty:
        out.append(f"[yellow]curator uncertainty:[/] {shown(item.uncertainty)}  [dim]({shown(flag.code)})[/]")
    elif item.held:
        out.append("[yellow]held for review[/] (put back by undo)")
    decision = view.decision
    style = STYLE.get(decision.verdict, "white")
    target = f" -> {shown(decision.target)}" if decision.target else ""
    out.append(f"if swept now: [{style}]{decision.verdict}[/]{target} — {shown(decision.reason)}")
    return out


def choices(view: View, alike_count: int) -> str:
    """The keys of this item: the usual ones, settling a contradiction, and the bulk one."""
    parts = ["[b]p[/] promote", "[b]o[/] as another surface", "[b]m[/] merge into a note", "[b]d[/] drop"]
    if view.side is not None and view.side.differs:
        parts += [f"[b]{k}[/] {what}" for k, (_, what) in SETTLE_KEYS.items()]
    if alike_count:
        parts.append(f"[b]a[/] apply to this and the {alike_count} like it")
    parts += ["[b]e[/] edit", "[b]s[/] skip", "[b]q[/] quit"]
    return "  ".join(parts)


def details(candidate: cand.Candidate, view: View) -> list[RenderableType]:
    """The pane: the note beside the item, the item, the criteria, neighbours, a patch's diff."""
    out: list[RenderableType] = []
    if view.side is not None:
        out.append(_side_table(view))
    out.append(_candidate_panel(candidate))
    decision = view.decision
    if decision.criteria:
        out.append(criteria_table(decision.criteria))
    if view.neighbours:
        near = ", ".join(f"{shown(n.path)} ({n.score:.2f})" for n in view.neighbours)
        out.append(f"nearest notes: {near}")
    if view.diff and not (view.side and view.side.differs):
        mine = " (your note: m asks you to confirm)" if view.persons else ""
        out.append(f"a patch into {shown(view.patch_target or '')}{mine} would change:")
        out.append(diff_view(view.diff))
    return out


def _side_table(view: View) -> Table:
    assert view.side is not None
    side = view.side
    mine = " (your note)" if view.persons else ""
    title = f"{shown(side.note)}{mine} beside this item" + (": the values differ" if side.differs else "")
    table = Table(title=title, title_justify="left", show_edge=False, header_style="bold")
    table.add_column("")
    table.add_column("the note", overflow="fold")
    table.add_column("this item", overflow="fold")
    for name, theirs, ours in side.rows:
        table.add_row(shown(name), shown_block(theirs), shown_block(ours))
    return table


def _candidate_panel(candidate: cand.Candidate) -> Panel:
    """The item as written: its keys and values, then its body as plain text (not Markdown,
    whose links would hide where they point), all through the one sanitiser."""
    table = Table(show_header=False, show_edge=False, box=None)
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    for key, value in candidate.frontmatter.items():
        table.add_row(shown(key), shown_block(masked_text(_value(plain(value)), candidate.secrets, anywhere=True)))
    text = masked_text(compose.strip_review_mark(candidate.note.body), candidate.secrets, anywhere=True)
    body = shown_block(text.strip() or "(empty body)")
    parts: list[RenderableType] = [table, Rule(style="dim"), body] if table.row_count else [body]
    if candidate.note.problem:
        parts.insert(0, shown_block(candidate.note.problem, style="red"))
    name = Text(printable(Path(candidate.inbox_path).name))  # a Panel reads a str title with emoji codes on
    return Panel(Group(*parts), title=name, title_align="left")


def _value(value: object) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)
