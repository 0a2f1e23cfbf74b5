"""Reading the vault's rules file: only a regular file is read, and the shipped defaults stand
in only when the vault has none (`core.rules.parse` turns the text into `Rules`)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from memory_curator.core.errors import RulesError
from memory_curator.core.names import RULES_PATH
from memory_curator.core.rules import RULES_MAX_BYTES, Rules, parse

DEFAULT_RULES = Path(__file__).parent.parent / "data" / "inbox-rules.md"


def load(path: Path) -> Rules:
    return parse(read_rules_text(path), str(path))


def read_rules_text(path: Path) -> str:
    """The rules file's text. Only a regular file (a symlink to one is fine) is read: a broken
    symlink, a FIFO, a device or a folder is refused by name, and a FIFO is never opened."""
    origin = str(path)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise RulesError(origin, _missing(path)) from None
    except OSError as exc:
        raise RulesError(origin, f"cannot read the rules file: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise RulesError(origin, f"the rules file is {_kind(info.st_mode)}, not a regular file")
    try:  # non-blocking: a file swapped for a FIFO since the stat still cannot hang the open
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise RulesError(origin, f"cannot read the rules file: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as handle:
        try:
            mode = os.fstat(handle.fileno()).st_mode
            if not stat.S_ISREG(mode):
                raise RulesError(origin, f"the rules file is {_kind(mode)}, not a regular file")
            data = handle.read(RULES_MAX_BYTES + 1)
        except OSError as exc:
            raise RulesError(origin, f"cannot read the rules file: {exc.strerror or exc}") from None
    if len(data) > RULES_MAX_BYTES:
        raise RulesError(origin, f"the rules file is over {RULES_MAX_BYTES >> 20} MiB")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise RulesError(origin, f"not UTF-8 text (byte {exc.start})", line) from None


def _missing(path: Path) -> str:
    """Why `path` cannot be found: a broken symlink (the file's or a folder's) is named as one."""
    for link in [path, *path.parents]:
        if os.path.islink(link) and not os.path.exists(link):
            what = "the rules file" if link == path else f"{link}"
            return f"{what} is a broken symlink (to {os.readlink(link)}): repair or remove it"
    return "the rules file does not exist (run `memory-curator init`)"


def _kind(mode: int) -> str:
    kinds = (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    )
    return next((name for test, name in kinds if test(mode)), "a special file")


def vault_rules_file(root: Path) -> Path | None:
    """The vault's own rules file, or None when it has none. Anything at that path (a broken
    symlink, a FIFO, a folder), or a `_meta` that is not a folder, counts as the vault's own file,
    which `load` then refuses: the shipped defaults never stand in for a file that is there."""
    own = root / RULES_PATH
    if os.path.lexists(own) or (os.path.lexists(own.parent) and not own.parent.is_dir()):
        return own
    return None


def load_for_vault(root: Path) -> Rules:
    """The vault's own rules file wins; the shipped defaults apply when it has none."""
    return load(vault_rules_file(root) or DEFAULT_RULES)
