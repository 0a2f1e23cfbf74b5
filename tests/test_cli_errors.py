"""Errors an agent can rely on (issue 18): every command × {a bad value, a missing vault, a
folder that is not a vault, the sweep lock held elsewhere}, through the real error boundary
(`cli.app.main`), without and with `--json`.

A bad value exits 2 (EXIT_USAGE); a missing vault or a folder that is not a vault exits 1
(EXIT_CONFIG); a command that takes the sweep lock exits 75 (EXIT_LOCKED) while another holder
has it, and one that only reads runs as usual. With `--json`, an error is one object on stdout,
`{"error": {"code", "message", "file"}}`, besides the one line on stderr.

The lock is held by this test process through its own open file (flock locks belong to the open
file, so the command's own `open` + `flock` is refused exactly as with another process; the
subprocess form is in tests/test_race.py). Commands are enumerated from the click group: a new
command without a row in CASES fails `test_every_command_has_a_row`."""

from __future__ import annotations

import io
import json
import os
import socket
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner
from fake_schedulers import install_fakes
from loop_kit import INSIGHT
from semantic_kit import write_model
from test_json_contract import SUBMITTED

from memory_curator.cli.app import cli, main
from memory_curator.commands.context import Seams
from memory_curator.core.clock import SystemClock
from memory_curator.core.errors import EXIT_CONFIG, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_LOCKED, EXIT_OK, EXIT_USAGE
from memory_curator.store.state import sweep_lock

from conftest import FailingClock, age, cli_commands, signalled


@dataclass
class Place:
    """The folders a case runs against: a real vault, its state folder, a missing folder, a folder
    that is not a vault, and a regular file (a bad value for any folder option)."""

    vault: Path
    state: Path
    missing: Path
    bare: Path
    a_file: Path

    def candidate(self, name: str) -> str:
        path = self.vault / "_inbox" / "agent-e" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(INSIGHT, encoding="utf-8")
        age(path)
        return str(path)

    def dropped(self) -> str:
        item = self.candidate("to-drop.md")
        done = CliRunner().invoke(
            cli,
            ["resolve", item, "--drop", "not now", "--by", "tester", "--json", *where(self, str(self.vault))],
            obj=Seams(),
            catch_exceptions=False,
        )
        assert done.exit_code == 0, done.output
        return str(self.vault / json.loads(done.stdout)["data"]["moved_to"])


CELLS = ("bad value", "missing vault", "not a vault", "locked")
NOT_A_VAULT_YET = "not yet refused as 'not a vault' (issue 18, first run: another change)"


@dataclass
class Case:
    """`args(place, vault)`: a command line that succeeds against `vault` when it is the real one;
    `bad`: what to add for the bad-value cell (a later option wins); `codes`: the exit code of a
    cell where it is not the default; `xfail`: cells known not to pass yet, with why."""

    args: Callable[[Place, str], list[str]]
    bad: Callable[[Place], list[str]]
    codes: dict[str, int] = field(default_factory=dict)
    xfail: dict[str, str] = field(default_factory=dict)
    stdin: str = ""
    # a command whose own output is its answer even when it exits 1 (doctor's findings)
    reports: tuple[str, ...] = ()


def vault_file(place: Place) -> list[str]:
    return ["--vault", str(place.a_file)]


def where(place: Place, vault: str) -> list[str]:
    return ["--vault", vault, "--state-dir", str(place.state)]


def indexed(place: Place, vault: str) -> list[str]:
    """`where`, with the real vault's index built first (`index stats` reads, never builds)."""
    if vault == str(place.vault):
        built = CliRunner().invoke(cli, ["index", "rebuild", *where(place, vault)], obj=Seams())
        assert built.exit_code == 0, built.output
    return where(place, vault)


DEFAULT = {"bad value": EXIT_USAGE, "missing vault": EXIT_CONFIG, "not a vault": EXIT_CONFIG, "locked": EXIT_OK}
READS = {"locked": EXIT_OK}  # the default: a command that does not take the sweep lock runs as usual
LOCKS = {"locked": EXIT_LOCKED}

CASES: dict[str, Case] = {
    "check": Case(lambda p, v: [p.candidate("c.md"), "--vault", v], vault_file),
    "doctor": Case(
        lambda p, v: where(p, v),
        vault_file,
        reports=("missing vault", "not a vault"),  # its findings are its answer, exit 1 on a problem
    ),
    "index rebuild": Case(lambda p, v: where(p, v), vault_file),
    "index stats": Case(lambda p, v: indexed(p, v), vault_file),
    "init": Case(
        lambda p, v: [v],
        lambda p: [str(p.a_file)],
        codes={"missing vault": EXIT_OK, "not a vault": EXIT_OK},  # making a vault is init's job
    ),
    "log": Case(lambda p, v: where(p, v), lambda p: ["--since", "yesterday"]),
    "mcp": Case(lambda p, v: where(p, v), lambda p: ["--agent", "../x"]),
    "query": Case(
        lambda p, v: ["--slug", "Ada Lovelace", *where(p, v)],
        lambda p: ["--slug", "x", "--date", "notadate"],
    ),
    "resolve": Case(
        lambda p, v: [p.candidate("r.md"), "--promote", "--by", "tester", *where(p, v)],
        vault_file,
        codes=LOCKS,
    ),
    "restore": Case(
        lambda p, v: [p.dropped(), "--by", "tester", *where(p, v)],
        vault_file,
        codes=LOCKS,
    ),
    "review": Case(
        lambda p, v: ["--vault", v, "--state-dir", str(p.state), "--by", "tester"],
        vault_file,
    ),
    "rules check": Case(lambda p, v: ["--vault", v], vault_file),
    "run": Case(
        lambda p, v: ["--no-judge", *where(p, v)],
        lambda p: ["--judge-set", "foo=bar"],
        codes=LOCKS,
    ),
    "semantic fetch": Case(  # a local model folder: no test downloads; no vault involved
        lambda p, v: [str(write_model(p.vault.parent / "tiny-model")), "--to", str(p.vault.parent / "models" / "m")],
        lambda p: ["--to", str(p.a_file)],
        codes={"missing vault": EXIT_OK, "not a vault": EXIT_OK},
    ),
    "schedule install": Case(
        lambda p, v: ["--cron", *where(p, v)],
        lambda p: ["--every", "7x"],
    ),
    "schedule show": Case(
        lambda p, v: ["--cron", *where(p, v)],
        lambda p: ["--every", "7x"],
    ),
    "schedule status": Case(lambda p, v: where(p, v), vault_file),
    "schedule uninstall": Case(
        lambda p, v: ["--cron", "--vault", v],
        vault_file,
        codes={"missing vault": EXIT_OK},  # a deleted vault's job can still be removed
    ),
    "status": Case(lambda p, v: where(p, v), vault_file),
    "submit": Case(
        lambda p, v: ["-", "--agent", "bot", "--vault", v],
        lambda p: ["--agent", "../x"],
        stdin=SUBMITTED,
    ),
    "undo": Case(
        lambda p, v: ["--last", "--by", "tester", *where(p, v)],
        vault_file,
        codes=LOCKS,
    ),
    "watch": Case(lambda p, v: ["--no-judge", *where(p, v)], vault_file),
}


def has_json(command: str) -> bool:
    return any("--json" in getattr(p, "opts", ()) for p in dict(cli_commands())[command].params)


def test_every_command_has_a_row() -> None:
    found = {name for name, _ in cli_commands()}
    assert {"run", "submit", "index stats", "schedule install"} <= found  # the walk sees the commands
    assert found == set(CASES), "every command needs a row in CASES (a bad value, its codes)"


@pytest.fixture
def place(vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Place:
    install_fakes(tmp_path / "fakes", monkeypatch)  # schedule never reaches a real scheduler
    bare = tmp_path / "just-a-folder"
    bare.mkdir()
    a_file = tmp_path / "a-file.txt"
    a_file.write_text("not a folder\n", encoding="utf-8")
    return Place(vault, tmp_path / "state", tmp_path / "no-such-vault", bare, a_file)


def ended(
    args: list[str],
    stdin: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    seams: Seams | None = None,
) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))  # `mcp` reads its bytes
    with pytest.raises(SystemExit) as stopped:
        main(args, seams)
    code = stopped.value.code
    assert isinstance(code, int)
    out, err = capsys.readouterr()
    return code, out, err


def table() -> Iterator[object]:
    for command in sorted(CASES):
        for cell in CELLS:
            for as_json in (False, True) if has_json(command) else (False,):
                reason = CASES[command].xfail.get(cell)
                marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
                yield pytest.param(
                    command, cell, as_json, marks=marks, id=f"{command}-{cell}{'-json' if as_json else ''}"
                )


@pytest.mark.parametrize(("command", "cell", "as_json"), list(table()))
def test_every_command_ends_with_its_code_and_error_object(
    command: str,
    cell: str,
    as_json: bool,
    place: Place,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    case = CASES[command]
    folder = {"missing vault": place.missing, "not a vault": place.bare}.get(cell, place.vault)
    args = [*command.split(), *case.args(place, str(folder))]
    if cell == "bad value":
        args += case.bad(place)
    args += ["--json"] if as_json else []
    expected = case.codes.get(cell, DEFAULT[cell])
    with ExitStack() as world:
        if cell == "locked":
            place.state.mkdir(exist_ok=True)
            world.enter_context(sweep_lock(place.state, SystemClock(), os.getpid(), socket.gethostname()))
        if command == "watch":  # a service runs until it is signalled (`mcp`: until its input ends)
            world.enter_context(signalled())
        code, out, err = ended(args, case.stdin, monkeypatch, capsys)
    assert code == expected, (out, err)
    if code == EXIT_OK or cell in case.reports:
        assert "Traceback" not in err
        assert command != "watch" or err.rstrip().endswith(" stopped"), err  # it ran until the signal
        return
    assert err.strip(), "an error says why on stderr"
    if cell == "not a vault":
        assert "not a vault" in err
    if not as_json:
        assert '"error"' not in out
        return
    printed = json.loads(out)
    assert list(printed) == ["error", "version"] and printed["version"] == 1  # every JSON object has its version
    error = printed["error"]
    assert list(error) == ["code", "message", "file"]
    assert error["code"] == expected
    assert error["message"] and "\n" not in error["message"]
    assert error["message"] in err, "the object's message is the line on stderr"
    if cell == "bad value":
        assert error["file"] is None
    elif cell == "missing vault":
        assert error["file"] == str(place.missing)
    elif cell == "not a vault":
        assert error["file"] is not None and Path(error["file"]).resolve().is_relative_to(place.bare.resolve())
    else:
        assert error["file"] == str(place.state.resolve() / "lock")


@pytest.mark.parametrize(
    "args",
    [
        ["log", "--since", "yesterday"],
        ["log", "--since", "7x"],
        ["schedule", "install", "--every", "7x"],
        ["schedule", "show", "--every", "7m"],  # not a divisor of an hour: cron cannot say it
        ["run", "--judge-set", "foo=bar"],
        ["run", "--judge-set", "chunk_size=many"],
        ["run", "--judge-set", "chunk_size=0"],
        ["run", "--judge-set", "novalue"],
        ["query", "--date", "notadate"],
        ["query", "--date", "2026-13-01"],
        ["query", "--text", "x", "--limit", "0"],
        ["submit", "-", "--agent", "../x"],
        ["mcp", "--agent", ".hidden"],
        ["status", "--no-such-option"],
    ],
    ids=" ".join,
)
def test_each_bad_value_is_a_usage_error_found_before_the_vault(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit 2 even where there is no vault: the command line is checked before the world."""
    code, out, err = ended([*args, "--vault", str(tmp_path / "missing"), "--json"], "", monkeypatch, capsys)
    assert code == EXIT_USAGE, err
    error = json.loads(out)["error"]
    assert error["code"] == EXIT_USAGE and error["file"] is None
    assert err == f"memory-curator: {error['message']}\n"  # issue 27: with --json, one line, no usage text


@pytest.mark.parametrize(
    ("raised", "code", "message"),
    [
        (RuntimeError("planted bug"), EXIT_INTERNAL, "internal error: RuntimeError: planted bug (details: "),
        (KeyboardInterrupt(), EXIT_INTERRUPTED, "aborted"),
    ],
)
def test_an_internal_error_and_an_interrupt_are_error_objects_too(
    raised: BaseException,
    code: int,
    message: str,
    place: Place,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["status", *where(place, str(place.vault)), "--json"]
    got, out, err = ended(args, "", monkeypatch, capsys, Seams(clock=FailingClock(raised)))
    assert got == code
    error = json.loads(out)["error"]
    assert error["code"] == code and error["message"].startswith(message)
    assert error["message"] in err and len([line for line in err.splitlines() if line.strip()]) == 1
    if code == EXIT_INTERNAL:  # the traceback's file
        assert error["file"] == str(place.state.resolve() / "crash.log") and Path(error["file"]).is_file()
    else:
        assert error["file"] is None
