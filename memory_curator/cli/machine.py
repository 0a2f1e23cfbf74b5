"""The one place that reads the machine a command runs on (`commands.context.Machine`), and
builds a command's context on it: the CLI's decorator and the tests build contexts here."""

from __future__ import annotations

import getpass
import os
import platform
import socket
import sys
from pathlib import Path
from typing import TextIO

import platformdirs

from memory_curator.commands.context import Context, Invocation, Machine, Seams

APP = "memory-curator"


def here() -> Machine:
    """This process's machine, as it is now (the environment is copied: later changes unseen)."""
    return Machine(
        env=dict(os.environ),
        home=Path.home(),
        uid=os.getuid(),
        system=platform.system(),
        host=socket.gethostname(),
        login=_login(),
        pid=os.getpid(),
        state_home=platformdirs.user_state_path(APP),
        data_home=platformdirs.user_data_path(APP),
        terminal=_is_terminal(sys.stdin) and _is_terminal(sys.stderr),
    )


def _is_terminal(stream: TextIO | None) -> bool:
    """A terminal behind `stream` (None or closed where the process was started without one)."""
    try:
        return stream is not None and stream.isatty()
    except ValueError:  # a closed stream
        return False


def _login() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def machine_of(seams: Seams) -> Machine:
    """The machine the seams name (a test's), else this one; with the seams' environment."""
    return seams.applied(seams.machine or here())


def build_context(
    root: Path, explicit_state: str | None = None, seams: Seams | None = None, user: str | None = None
) -> Context:
    """The context a command runs in for the vault at `root` (--state-dir, the seams, --by), on
    the seams' machine or this one: what a test builds when it calls a command directly."""
    seams = seams or Seams()
    return Context.build(root, machine_of(seams), explicit_state, seams, user)


def invocation(
    seams: Seams | None = None,
    vault: str | None = None,
    state: str | None = None,
    user: str | None = None,
    start: Path | None = None,
) -> Invocation:
    """A command line's vault options on the seams' machine (else this one), in this folder."""
    seams = seams or Seams()
    return Invocation(seams, machine_of(seams), Path.cwd(), vault, state, user, start)
