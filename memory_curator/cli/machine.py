"""The one place that reads the machine a command runs on (`commands.context.Machine`)."""

from __future__ import annotations

import getpass
import os
import platform
import socket
from pathlib import Path

import platformdirs

from memory_curator.commands.context import Machine

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
    )


def _login() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"
