"""Docs and code agree: every command has help, and docs/cli.md is exactly `--help` (below the
hand-written table of every command's JSON and exit codes).

Regenerate docs/cli.md after changing a command: `MC_REGEN_DOCS=1 .venv/bin/python -m pytest tests/test_docs.py`.
"""

from __future__ import annotations

import os
import re

import click
from click.testing import CliRunner

from memory_curator.cli.app import cli

from conftest import REPO, cli_commands

MARK = "<!-- Below: `--help` of every command (tests/test_docs.py keeps it exact; MC_REGEN_DOCS=1 rewrites it). -->\n"


def commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for name in sorted(group.commands):
        command = group.commands[name]
        out.append((*prefix, name))
        if isinstance(command, click.Group):
            out += commands(command, (*prefix, name))
    return out


def help_text(path: tuple[str, ...]) -> str:
    result = CliRunner().invoke(cli, [*path, "--help"], terminal_width=100, prog_name="memory-curator")
    assert result.exit_code == 0, result.output
    return result.output


def render() -> str:
    parts = ["\n## memory-curator\n\n```\n" + help_text(()) + "```\n"]
    for path in commands(cli):
        parts.append(f"\n## memory-curator {' '.join(path)}\n\n```\n{help_text(path)}```\n")
    return "".join(parts)


def test_every_command_has_help() -> None:
    for path in commands(cli):
        command = cli
        for name in path:
            command = command.commands[name]  # type: ignore[attr-defined]
        assert (command.help or "").strip(), f"{' '.join(path)} has no help"


def test_every_command_has_a_row_of_json_and_exit_codes() -> None:
    """The hand-written table above the marker names every command exactly once."""
    head = (REPO / "docs/cli.md").read_text(encoding="utf-8").partition(MARK)[0]
    rows = re.findall(r"^\| `([a-z ]+)` \|", head, flags=re.M)
    assert sorted(rows) == sorted(typed for typed, _ in cli_commands())


def test_cli_docs_match_help() -> None:
    """Below its marker, docs/cli.md is exactly `--help`; above it (the JSON and exit codes of
    every command) it is written by hand."""
    doc = REPO / "docs/cli.md"
    head, mark, generated = doc.read_text(encoding="utf-8").partition(MARK)
    assert mark, "docs/cli.md lost its marker line"
    expected = render()
    if os.environ.get("MC_REGEN_DOCS"):
        doc.write_text(head + MARK + expected, encoding="utf-8")
        generated = expected
    assert generated == expected, "docs/cli.md is stale: see this file's docstring"
