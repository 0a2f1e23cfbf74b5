"""Docs and code agree: every command has help, and docs/cli.md is exactly `--help`.

Regenerate docs/cli.md after changing a command: `MC_REGEN_DOCS=1 .venv/bin/python -m pytest tests/test_docs.py`.
"""

from __future__ import annotations

import os

import click
from click.testing import CliRunner

from memory_curator.cli.app import cli

from conftest import REPO

HEADER = (
    "# Command line\n\nGenerated from `--help` (a test keeps it exact). Exit codes: 0 done, 1 configuration or\n"
    "rules error, 2 usage error, 3 internal error, 75 another sweep holds the lock, 130 interrupted.\n"
    '`run --json` prints the spec\'s shape; every other `--json` prints `{"version": 1, "command": ..., "data": ...}`\n'
    "([architecture.md](architecture.md#output-and-exit-codes)).\n"
)


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
    parts = [HEADER, "\n## memory-curator\n\n```\n" + help_text(()) + "```\n"]
    for path in commands(cli):
        parts.append(f"\n## memory-curator {' '.join(path)}\n\n```\n{help_text(path)}```\n")
    return "".join(parts)


def test_every_command_has_help() -> None:
    for path in commands(cli):
        command = cli
        for name in path:
            command = command.commands[name]  # type: ignore[attr-defined]
        assert (command.help or "").strip(), f"{' '.join(path)} has no help"


def test_cli_docs_match_help() -> None:
    doc = REPO / "docs/cli.md"
    expected = render()
    if os.environ.get("MC_REGEN_DOCS"):
        doc.write_text(expected, encoding="utf-8")
    assert doc.read_text(encoding="utf-8") == expected, "docs/cli.md is stale: see this file's docstring"
