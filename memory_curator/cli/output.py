"""The consoles and the JSON every printer shares (`cli.render`, `cli.render_status`, `cli.review`,
the error boundary): the one place a Console is built, the one way a name from a file is shown,
the one JSON writer and its envelope, and the transient progress bars.

JSON, one rule (docs/cli.md): every object a command prints carries `"version": 1`. `run --json`
prints the spec's shape (`SweepResult.to_json`, pinned by tests/test_result_contract.py) with
`version` as its last key; every other command prints one envelope, `{"version": 1, "command":
"<name>", "data": ...}` (`watch --json`: one per line per batch), pinned by
tests/test_json_contract.py.
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import click

from memory_curator.core.names import printable, printable_block

if TYPE_CHECKING:  # rich is imported where something is rendered: a JSON command never needs it
    from rich.console import Console
    from rich.syntax import Syntax
    from rich.table import Table
    from rich.text import Text

PIPED_MAX_WIDTH = 100_000  # a piped table's row stays one line up to this many characters


def make_console(stderr: bool = False, soft_wrap: bool = False, highlight: bool = True) -> Console:
    """The one place a Console is built (tests/test_shown.py holds it to that): rich's emoji codes
    off, so an agent's `:warning:` stays the text it wrote. rich is imported here, not at start:
    ~40 ms of CPU a process that prints JSON only saves (docs/testing.md)."""
    from rich.console import Console

    return Console(stderr=stderr, soft_wrap=soft_wrap, highlight=highlight, emoji=False)


def stdout() -> Console:
    return make_console(soft_wrap=True)


def stderr() -> Console:
    return make_console(stderr=True, soft_wrap=True)


def new_table(*headers: str, **options: Any) -> Table:
    """A rich Table (`Table(*headers, **options)`), rich imported only now (`make_console`)."""
    from rich.table import Table

    return Table(*headers, **options)


def new_text() -> Text:
    """An empty rich Text to append styled pieces to, rich imported only now."""
    from rich.text import Text

    return Text()


def print_table(console: Console, table: Table) -> None:
    """A table as a terminal shows it (folded to its width); anywhere else (a file, a pipe) at
    the width its cells need, so no path, name or header is folded mid-word or cut, and each
    row stays one line that greps."""
    if console.is_terminal:
        console.print(table)
        return
    unbounded = console.options.update_width(PIPED_MAX_WIDTH)  # measured as wide as its cells ask
    width = console.width
    console.width = max(width, console.measure(table, options=unbounded).maximum)  # print(width=) caps at it
    try:
        console.print(table)
    finally:
        console.width = width


# What JSON leaves raw with ensure_ascii=False and a terminal must not get: DEL and C1 controls,
# line and paragraph separators, bidi marks (U+200E, U+200F, U+061C), overrides and isolates, and
# lone surrogates (a file name's bytes that are not UTF-8): `names.printable`'s set, less the C0
# controls JSON escapes itself.
_RAW_IN_JSON = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def shown(text: object) -> str:
    """Any one-line text from a file, a name, a reason or an error, for rich output: what could
    act on the terminal (an escape sequence, a newline, bytes that are not UTF-8) escaped by
    `names.printable`, and rich's markup escaped. The one way report prints a name."""
    from rich.markup import escape

    return escape(printable(str(text)))


def shown_block(text: object, style: str = "") -> Text:
    """`shown` for text that keeps its lines (a body, a value), through `names.printable_block`:
    a Text, never parsed as markup, so it stands alone (a cell, a panel's body) exactly as written."""
    from rich.text import Text

    return Text(printable_block(str(text)), style=style)


def diff_view(diff: str) -> Syntax:
    """A diff, coloured as one: its text (an agent's values) through `printable_block` first, as
    Syntax shows text as it is (no markup to escape)."""
    from rich.syntax import Syntax

    return Syntax(printable_block(diff.rstrip("\n")), "diff", theme="ansi_dark", word_wrap=True)


def json_text(data: Any, indent: int | None = None) -> str:
    """JSON for stdout: readable UTF-8, every control character escaped (JSON escapes C0 itself),
    and a non-UTF-8 name's byte shown as the text `\\xff`, never as a lone surrogate."""
    text = json.dumps(data, indent=indent, ensure_ascii=False, default=str)
    return _RAW_IN_JSON.sub(_json_escape, text) if _RAW_IN_JSON.search(text) else text


def _json_escape(match: re.Match[str]) -> str:
    code = ord(match.group())  # only ever inside a JSON string: json.dumps writes structure in ASCII
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\\\x{code - 0xDC00:02x}"
    return f"\\u{code:04x}"


def emit_json(data: Any) -> None:
    sys.stdout.write(json_text(data, indent=2) + "\n")


JSON_VERSION = 1


def versioned(spec: dict[str, Any]) -> dict[str, Any]:
    """`run --json`: the spec's shape, whose keys come first (design §7: extra keys may follow),
    with the version every command's JSON carries."""
    return {**spec, "version": JSON_VERSION}


def envelope(command: str, data: Any) -> dict[str, Any]:
    """The JSON of every command but `run`: `command` is its name as typed (`index stats`)."""
    return {"version": JSON_VERSION, "command": command, "data": data}


def emit(command: str, data: Any) -> None:
    emit_json(envelope(command, data))


def lines(texts: Iterable[str]) -> None:
    """Plain lines on stdout, no markup (each text escapes what it quotes itself)."""
    for text in texts:
        click.echo(text)


def error_line(text: str) -> None:
    """The error boundary's one line on stderr (the caller escapes what it quotes)."""
    click.echo(text, err=True)


def error_object(code: int, message: str, file: str | None) -> None:
    """The error boundary's object for `--json`: one line on stdout, beside the line on stderr."""
    error = {"error": {"code": code, "message": message, "file": file}, "version": JSON_VERSION}
    sys.stdout.write(json_text(error) + "\n")
    sys.stdout.flush()


@contextlib.contextmanager
def index_progress(total: int) -> Iterator[Callable[[int], None]]:
    """The index's bar on stderr while a build or refresh reads many notes (`cli` passes it on a
    terminal only; stdout stays clean for --json)."""
    from rich.progress import Progress

    with Progress(console=stderr(), transient=True) as bar:
        task = bar.add_task("indexing the vault", total=total)
        yield lambda done: bar.advance(task, done)


@contextlib.contextmanager
def progress(total: int) -> Iterator[Callable[[], None]]:
    """A transient bar for a long sweep on a terminal; `cli` only passes it to a TTY without --json."""
    from rich.progress import Progress

    with Progress(console=stdout(), transient=True) as bar:
        task = bar.add_task("sweeping", total=total)
        yield lambda: bar.advance(task)
