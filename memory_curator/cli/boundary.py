"""The one error boundary (`main`): a domain error becomes one line on stderr and its exit code
(`core.errors`: 1 configuration, 2 usage, 3 internal error with its traceback in `crash.log`, 75
locked, 130 interrupted), and with `--json` also one error object on stdout; no tracebacks."""

from __future__ import annotations

import errno
import os
import sqlite3
import sys
import traceback
from pathlib import Path
from typing import NoReturn

import click

from memory_curator.cli import output
from memory_curator.cli.machine import machine_of
from memory_curator.commands.context import Seams
from memory_curator.core import names
from memory_curator.core.errors import EXIT_CONFIG, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, CuratorError
from memory_curator.store import paths as vault_mod
from memory_curator.store.state import state_fix, state_folder, state_problem


def main(cli: click.Group, argv: list[str] | None = None, seams: Seams | None = None) -> NoReturn:
    """Run `cli` inside the one error boundary, on `seams` (the click obj; None: the world's).
    Every error ends with one line on stderr and its exit code; with `--json` also one object on
    stdout, `{"error": {"code", "message", "file"}}`."""
    args = sys.argv[1:] if argv is None else argv
    try:
        code = cli.main(args=argv, prog_name="memory-curator", standalone_mode=False, obj=seams)
    except click.exceptions.Abort:  # click's name for Ctrl-C (and end of input at a prompt)
        _fail(args, EXIT_INTERRUPTED, "aborted")
    except click.ClickException as exc:
        code = exc.exit_code if exc.exit_code else EXIT_USAGE
        if _wants_json(args):  # a program reads stdout: one object there, one line on stderr
            _fail(args, code, exc.format_message(), prefix="memory-curator: ")
        exc.show()  # a person reads it: the usage and the error, as click prints them
        _fail(args, code, exc.format_message(), shown=True)
    except CuratorError as exc:  # a message may quote a file name: shown escaped
        if exc.exit_code == EXIT_OK:  # not an error (OtherHost): the line says why, no error object
            output.error_line(f"memory-curator: {names.printable(str(exc))}")
            sys.exit(EXIT_OK)
        _fail(args, exc.exit_code, str(exc), exc.file, prefix="memory-curator: ")
    except KeyboardInterrupt:
        _fail(args, EXIT_INTERRUPTED, "interrupted")
    except (OSError, sqlite3.Error) as exc:  # the state folder (index, journal, lock) cannot be written
        state = _crash_folder(args, seams)
        if not _in_state(exc, state):
            _internal(args, exc, seams)
        error = exc if isinstance(exc, OSError) else OSError(_sqlite_errno(exc), str(exc))
        message = f"{state_problem(state, error)}: {state_fix(state, error)}"
        _fail(args, EXIT_CONFIG, message, str(state), prefix="memory-curator: ")
    except Exception as exc:  # a bug: say so in one line, keep the traceback in a log
        _internal(args, exc, seams)
    sys.exit(code if isinstance(code, int) else EXIT_OK)


def _internal(args: list[str], exc: BaseException, seams: Seams | None) -> NoReturn:
    log = _crash_log(args, seams)
    what = f"{type(exc).__name__}: {exc}"
    message = f"internal error: {what} (details: {log})"
    _fail(args, EXIT_INTERNAL, message, None if log == "unavailable" else log, prefix="memory-curator: ")


def _in_state(exc: OSError | sqlite3.Error, state: Path) -> bool:
    """Whether an error is the state folder's: a file in it, or the index (which lives there)."""
    if isinstance(exc, sqlite3.Error):
        return True
    name = exc.filename
    if name is None:
        return False
    try:
        Path(os.fsdecode(name)).resolve().relative_to(state.resolve())
    except (ValueError, OSError):
        return False
    return True


def _sqlite_errno(exc: sqlite3.Error) -> int:
    """The errno a SQLite error stands for, as far as a person's fix goes."""
    text = str(exc).lower()
    return errno.ENOSPC if "full" in text else errno.EACCES


def _fail(
    args: list[str], code: int, message: str, file: str | None = None, prefix: str = "", shown: bool = False
) -> NoReturn:
    """The end of every error: its line on stderr (unless click `shown` it already), and with
    `--json` the error object on stdout; then exit `code`."""
    if not shown:
        output.error_line(prefix + names.printable(message))
    if _wants_json(args):
        output.error_object(code, message, file)
    sys.exit(code)


def _wants_json(args: list[str]) -> bool:
    """Whether the command line asked for JSON: the parsed options are gone once a command
    raised (or were never made, for a usage error), so the arguments are read again."""
    options = args[: args.index("--")] if "--" in args else args
    return "--json" in options


def _crash_log(args: list[str], seams: Seams | None) -> str:
    """Tracebacks go to the state directory the command used, never into the vault or the terminal."""
    try:
        path = _crash_folder(args, seams) / "crash.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(traceback.format_exc(), encoding="utf-8", errors="backslashreplace")
    except Exception:  # the log is a courtesy: failing to write it must not hide the one line
        return "unavailable"
    return str(path)


def _crash_folder(args: list[str], seams: Seams | None) -> Path:
    """--state-dir, else MEMORY_CURATOR_STATE, else the vault's own state folder, else the user's
    state directory (on the seams' machine): the command's parsed options are gone once it raised,
    so they are read again from its arguments."""
    machine = machine_of(seams or Seams())
    try:
        root = vault_mod.find_root(None, _option_value(args, "--vault"), machine.env, Path.cwd())
    except Exception:  # no vault here, or none that can be told from the arguments
        chosen = _option_value(args, "--state-dir") or machine.env.get("MEMORY_CURATOR_STATE")
        return Path(chosen).expanduser() if chosen else machine.state_home
    return state_folder(root, _option_value(args, "--state-dir"), machine.env, machine.state_home)


def _option_value(args: list[str], name: str) -> str | None:
    """The value of `name VALUE` or `name=VALUE` in `args` (the last one given wins, as in click)."""
    found = None
    for at, arg in enumerate(args):
        if arg == name and at + 1 < len(args):
            found = args[at + 1]
        elif arg.startswith(name + "="):
            found = arg[len(name) + 1 :]
    return found
