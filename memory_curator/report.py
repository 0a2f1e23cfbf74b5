"""The one module that prints results: JSON for machines, rich tables for people."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from memory_curator.result import SweepResult
from memory_curator.rules import Rules

STYLE = {"promote": "green", "patch": "cyan", "drop": "red", "needs_review": "yellow"}


def stdout() -> Console:
    return Console(soft_wrap=True)


def stderr() -> Console:
    return Console(stderr=True, soft_wrap=True)


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def sweep(result: SweepResult, as_json: bool) -> None:
    if as_json:
        emit_json(result.to_json())
        return
    console = stdout()
    for note in result.notes:
        console.print(f"[dim]recovered:[/] {escape(note)}")
    table = Table(show_edge=False, header_style="bold")
    for column in ("candidate", "verdict", "where", "why"):
        table.add_column(column, overflow="fold")
    for agent in result.agents:
        for action in agent.actions:
            where = action.moved_to or action.target_path or ""
            verdict = f"[{STYLE[action.verdict]}]{action.verdict}[/]"
            table.add_row(escape(action.inbox_path), verdict, escape(where), escape(action.reason))
        for failure in agent.errors:
            table.add_row(escape(failure.inbox_path), "[bold red]error[/]", "", escape(failure.error))
    if table.row_count:
        console.print(table)
    for agent in result.agents:
        for skip in agent.skipped:
            console.print(f"[dim]skipped {escape(skip.inbox_path)}: {escape(skip.reason)}[/]")
    totals = result.totals()
    prefix = "dry run (nothing written): " if result.dry_run else ""
    console.print(
        f"{prefix}{totals['processed']} processed: {totals['promoted']} promoted, {totals['patched']} patched, "
        f"{totals['dropped']} dropped, {totals['needs_review']} need review"
        + (f", {len(result.errors)} failed" if result.errors else "")
    )


def check(data: Mapping[str, Any], as_json: bool) -> None:
    if as_json:
        emit_json(dict(data))
        return
    console = stdout()
    verdict = str(data["verdict"])
    console.print(f"[{STYLE.get(verdict, 'white')}]{verdict}[/]: {escape(str(data['reason']))}")
    if data.get("target_path"):
        console.print(f"target: {data['target_path']}")
    table = Table("criterion", "value", show_edge=False)
    for name, value in (data.get("criteria") or {}).items():
        table.add_row(name, {True: "[green]yes[/]", False: "[red]no[/]", None: "[yellow]undecided[/]"}[value])
    if table.row_count:
        console.print(table)
    for line in data.get("explanation", []):
        console.print(f"  {escape(line)}")


def rules_summary(rules: Rules) -> None:
    console = stdout()
    console.print(f"{rules.path}: valid")
    console.print("surfaces: " + ", ".join(f"{s.name} ({s.path})" for s in rules.surfaces))
    console.print("criteria: " + ", ".join(c.name for c in rules.criteria))
    for rule in rules.drop_rules:
        how = "judge only" if rule.judge_only else (rule.when.text if rule.when else "")
        console.print(f"drop {rule.id}: {escape(rule.reason)}  [dim]when {escape(how)}[/]")
