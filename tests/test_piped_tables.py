"""Tables piped to a file or a pipe (not a terminal): every path, name and header whole on its
row's one line, so the output greps; on a terminal a table still folds to the terminal's width."""

from __future__ import annotations

import io
import json
from pathlib import Path

from rich.console import Console
from rich.table import Table

AGENT = "research-assistant-for-the-quarterly-planning-cycle-team"
FACT = """---
type: fact
entity: acme-corporation-international
predicate: european-headquarters-location
value: Acme is based in Berlin.
source_url: https://acme.example.dev/about
confidence: 2
---
Seen on the company site.
"""
NAME = "acme-corporation-european-headquarters-location-report.md"


def line_with(out: str, text: str) -> str:
    """The one output line holding `text` whole (it fails when `text` was folded or cut)."""
    [line] = [line for line in out.splitlines() if text in line]
    return line


def test_run_piped_keeps_each_path_whole_on_its_rows_line(empty_vault: Path, invoke, write_candidate) -> None:
    write_candidate(empty_vault, NAME, FACT, agent=AGENT)
    done = invoke("run", "--vault", str(empty_vault), "--no-judge")
    assert done.exit_code == 0, done.output
    row = line_with(done.output, f"_inbox/{AGENT}/{NAME}")
    assert "promote" in row and "facts/acme-corporation-international/european-headquarters-location.md" in row
    assert "novel + sourced + specific + future-useful + load-bearing" in row


def test_status_piped_keeps_agent_names_and_headers_whole(empty_vault: Path, invoke, write_candidate) -> None:
    write_candidate(empty_vault, NAME, FACT, agent=AGENT)
    invoke("run", "--vault", str(empty_vault), "--no-judge")
    write_candidate(empty_vault, NAME, FACT.replace("Berlin", "Paris"), agent=AGENT)
    out = invoke("status", "--vault", str(empty_vault)).output
    assert json.loads(invoke("status", "--vault", str(empty_vault), "--json").output)["data"]["inbox"]
    assert "1" in line_with(out, AGENT)
    header = line_with(out, "started")
    for column in ("processed", "promoted", "patched", "dropped", "review", "errors", "seconds", "judge"):
        assert column in header, header
    assert "…" not in out


def test_a_terminal_still_folds_a_table_to_its_width() -> None:
    from memory_curator.cli.output import print_table

    table = Table("path", "why")
    table.add_row("facts/" + "x" * 70 + ".md", "a reason")
    terminal = Console(file=io.StringIO(), force_terminal=True, width=50, color_system=None)
    piped = Console(file=io.StringIO(), force_terminal=False, width=50, color_system=None)
    print_table(terminal, table)
    print_table(piped, table)
    assert max(map(len, terminal.file.getvalue().splitlines())) <= 50  # type: ignore[attr-defined]
    assert "x" * 70 in piped.file.getvalue()  # type: ignore[attr-defined]
