"""The one error boundary (`cli.app.main`): every way a command ends maps to a named exit
code (core/errors.py) and at most one line on stderr, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_curator.cli.app import main
from memory_curator.commands.context import Seams
from memory_curator.core import errors
from memory_curator.core.errors import (
    EXIT_CONFIG,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_LOCKED,
    EXIT_OK,
    EXIT_USAGE,
    CuratorError,
    LockBusy,
)

from conftest import FailingClock


def test_the_named_codes() -> None:
    assert (EXIT_OK, EXIT_CONFIG, EXIT_USAGE, EXIT_INTERNAL, EXIT_LOCKED, EXIT_INTERRUPTED) == (0, 1, 2, 3, 75, 130)
    assert CuratorError.exit_code == EXIT_CONFIG and LockBusy.exit_code == EXIT_LOCKED
    assert errors.RulesError.exit_code == EXIT_CONFIG


def ended(args: list[str], capsys: pytest.CaptureFixture[str], seams: Seams | None = None) -> tuple[int, list[str]]:
    """(exit code, the non-blank lines on stderr) of the real entry point."""
    with pytest.raises(SystemExit) as stopped:
        main(args, seams)
    code = stopped.value.code
    assert isinstance(code, int)
    return code, [line for line in capsys.readouterr().err.splitlines() if line.strip()]


@pytest.mark.parametrize(
    ("exc", "code", "line"),
    [
        (KeyboardInterrupt(), EXIT_INTERRUPTED, "aborted"),
        (CuratorError("state: not writable"), EXIT_CONFIG, "memory-curator: state: not writable"),
        (LockBusy("another sweep holds the lock"), EXIT_LOCKED, "memory-curator: another sweep holds the lock"),
        (RuntimeError("planted bug"), EXIT_INTERNAL, "memory-curator: internal error: RuntimeError: planted bug"),
    ],
)
def test_each_ending_is_one_line_and_its_code(
    vault: Path,
    capsys: pytest.CaptureFixture[str],
    exc: BaseException,
    code: int,
    line: str,
) -> None:
    got, err = ended(["status", "--vault", str(vault)], capsys, Seams(clock=FailingClock(exc)))
    assert got == code
    assert len(err) == 1 and err[0].startswith(line), err
    assert "Traceback" not in err[0]


def test_done_and_usage(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert ended(["status", "--vault", str(vault)], capsys)[0] == EXIT_OK
    code, err = ended(["status", "--no-such-option"], capsys)
    assert code == EXIT_USAGE and any("No such option" in line for line in err)
