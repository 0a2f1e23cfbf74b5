"""Domain errors. The CLI is the one place that turns them into messages and exit codes."""

from __future__ import annotations

from pathlib import PurePath

EXIT_OK = 0  # done (needs_review items and per-candidate write failures included)
EXIT_CONFIG = 1  # a user, configuration or rules error; `doctor` found a problem
EXIT_USAGE = 2  # the command line itself is wrong (click's usage errors)
EXIT_INTERNAL = 3  # a bug: one line on stderr, the traceback in crash.log
EXIT_LOCKED = 75  # another sweep holds the vault's lock (EX_TEMPFAIL)
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT)


class CuratorError(Exception):
    """A user or configuration error: one line, exit code 1, never a traceback. `file`: the file
    or folder the error is about, when there is one (`--json` errors name it)."""

    exit_code = EXIT_CONFIG

    def __init__(self, message: str = "", *, file: str | PurePath | None = None) -> None:
        super().__init__(message)
        self.file = None if file is None else str(file)


class RulesError(CuratorError):
    """A rules file problem, carrying the file and (when known) the line. `problems` holds every
    problem one pass found (this one first): `rules check` shows them all, others the first."""

    def __init__(self, path: str, message: str, line: int | None = None, problems: tuple[RulesError, ...] = ()) -> None:
        self.path, self.line, self.message = path, line, message
        self.problems: tuple[RulesError, ...] = problems or (self,)  # every problem found, in file order
        where = f"{path}:{line}" if line else path
        super().__init__(f"{where}: {message}", file=path)


class VaultNotFound(CuratorError):
    pass


class UnsafePath(CuratorError):
    """A value that would place a file outside its folder or the vault."""


class LockBusy(CuratorError):
    exit_code = EXIT_LOCKED


class OtherHost(CuratorError):
    """Not an error: `curator_host` names another machine, so this one leaves the vault alone."""

    exit_code = EXIT_OK
