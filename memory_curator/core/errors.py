"""Domain errors. The CLI is the one place that turns them into messages and exit codes."""

from __future__ import annotations

EXIT_OK = 0
EXIT_CONFIG = 1
EXIT_USAGE = 2
EXIT_LOCKED = 75


class CuratorError(Exception):
    """A user or configuration error: one line, exit code 1, never a traceback."""

    exit_code = EXIT_CONFIG


class RulesError(CuratorError):
    """A rules file problem, carrying the file and (when known) the line."""

    def __init__(self, path: str, message: str, line: int | None = None) -> None:
        self.path, self.line, self.message = path, line, message
        where = f"{path}:{line}" if line else path
        super().__init__(f"{where}: {message}")


class VaultNotFound(CuratorError):
    pass


class UnsafePath(CuratorError):
    """A value that would place a file outside its folder or the vault."""


class LockBusy(CuratorError):
    exit_code = EXIT_LOCKED
