"""What a person types in `review`: one key at a time on a terminal, a line where text is typed.

On a terminal the keys are read raw (termios cbreak: no Enter after a key, no echo; Ctrl-C
still interrupts), and a line is edited here (echo, backspace, Enter; Ctrl-D on an empty
line ends the input). Anywhere else (a pipe, a test runner) each key is the first character of
a line. Either way, end of input is `None`: `review` stops there as if `q` was pressed, so a
closed terminal or a short script never leaves anything half-decided. Why not prompt_toolkit
or Textual: raw keys plus rich's rendering do all `review` needs, with no new dependency.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import select
import sys
import termios
import tty
from collections.abc import Callable, Iterator
from typing import IO, Protocol

from memory_curator.core.names import printable

# the escape sequences of the keys that scroll the note pane, by the name `review` uses
SEQUENCES = {
    b"\x1b[A": "up",
    b"\x1b[B": "down",
    b"\x1b[5~": "page-up",
    b"\x1b[6~": "page-down",
    b"\x1bOA": "up",
    b"\x1bOB": "down",
}
EOF_KEY = b"\x04"  # Ctrl-D
ENTER = (b"\r", b"\n")
ERASE = (b"\x7f", b"\x08")


class Keys(Protocol):
    """Where `review` reads the person's answers."""

    raw: bool  # one key without Enter (a terminal): the screen may page

    def key(self) -> str | None:
        """One key: a character, a name from SEQUENCES, or None at end of input."""

    def line(self, prompt: str, default: str | None = None) -> str | None:
        """Typed text (the default on an empty line), or None at end of input."""


class LineKeys:
    """Keys from lines (not a terminal): a key is a line's first character."""

    raw = False

    def __init__(self, stream: IO[str], echo: IO[str]):
        self.stream = stream
        self.echo = echo

    def key(self) -> str | None:
        while True:
            text = self.stream.readline()
            if not text:
                return None
            if text.strip():
                return text.strip()[0]

    def line(self, prompt: str, default: str | None = None) -> str | None:
        self.echo.write(_prompt(prompt, default))
        self.echo.flush()
        text = self.stream.readline()
        if not text:
            return None
        self.echo.write(text if text.endswith("\n") else text + "\n")
        return text.rstrip("\r\n").strip() or default or ""


class TerminalKeys:
    """Raw keys from a terminal (file descriptor `fd`), echo to `echo`."""

    raw = True

    def __init__(self, fd: int, echo: IO[str]):
        self.fd = fd
        self.echo = echo

    def key(self) -> str | None:
        with self._cbreak():
            first = os.read(self.fd, 1)
            if not first or first == EOF_KEY:
                return None
            if first == b"\x1b":
                return SEQUENCES.get(first + self._pending(), "escape")
            return _char(first, lambda: os.read(self.fd, 1))

    def line(self, prompt: str, default: str | None = None) -> str | None:
        """The prompt is written once the terminal reads single keys: a Ctrl-D or Ctrl-C typed as
        soon as it shows would otherwise meet the line discipline (an end of file lost on the
        switch, the CI hang of `test_quit_and_end_of_input_exit_0_…`)."""
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        typed = ""
        with self._cbreak():
            self._write(_prompt(prompt, default))
            while True:
                byte = os.read(self.fd, 1)
                if not byte or (byte == EOF_KEY and not typed):
                    self._write("\n")
                    return None
                if byte in ENTER:
                    self._write("\n")
                    return typed.strip() or default or ""
                if byte in ERASE:
                    if typed:
                        typed = typed[:-1]
                        self._write("\b \b")
                    continue
                if byte < b" " or byte == b"\x1b":
                    continue  # other control keys do nothing in a line
                char = decoder.decode(byte)
                typed += char
                self._write(char)

    def _pending(self) -> bytes:
        """The rest of an escape sequence, if more bytes follow at once."""
        out = b""
        while len(out) < 4 and select.select([self.fd], [], [], 0.05)[0]:
            out += os.read(self.fd, 1)
            if out[-1:].isalpha() or out.endswith(b"~"):
                break
        return out

    def _write(self, text: str) -> None:
        self.echo.write(text)
        self.echo.flush()

    @contextlib.contextmanager
    def _cbreak(self) -> Iterator[None]:
        """No line buffering and no echo while reading; the terminal is restored whatever
        happens (a Ctrl-C included), so the shell after `review` is never left raw."""
        saved = termios.tcgetattr(self.fd)
        try:
            tty.setcbreak(self.fd, termios.TCSANOW)  # not the default TCSAFLUSH: a key typed ahead is kept
            yield
        finally:
            termios.tcsetattr(self.fd, termios.TCSADRAIN, saved)


def _char(first: bytes, more: Callable[[], bytes]) -> str:
    """A key's character, reading the rest of a multi-byte UTF-8 character."""
    data = first
    while len(data) < 4:
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            following = more()
            if not following:
                break
            data += following
    return data.decode("utf-8", "replace")


def _prompt(prompt: str, default: str | None) -> str:
    """The question and its default (a note's path, a surface: the vault's text), escaped."""
    return printable(f"{prompt} [{default}]: " if default else f"{prompt}: ")


def for_stdin() -> Keys:
    """Raw keys on a terminal, lines otherwise."""
    if sys.stdin.isatty():
        return TerminalKeys(sys.stdin.fileno(), sys.stdout)
    return LineKeys(sys.stdin, sys.stdout)
