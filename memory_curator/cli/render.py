"""What one command just did, for people (rich) and machines (JSON); the consoles and the JSON
every printer shares are `cli.output`'s (`cli.render_status` prints status, log and schedule).
"""

from __future__ import annotations

import datetime as dt
import shlex
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

from memory_curator.cli.output import (
    diff_view,
    emit,
    emit_json,
    envelope,
    error_line,
    json_text,
    lines,
    new_table,
    print_table,
    shown,
    stderr,
    stdout,
    versioned,
)
from memory_curator.core.names import INBOX, printable
from memory_curator.core.result import SweepResult
from memory_curator.core.text import iso

if TYPE_CHECKING:  # commands' modules are imported by the commands that use them, not by every run
    from rich.console import Console
    from rich.table import Table

    from memory_curator.commands.check import Verdict
    from memory_curator.commands.desk import Done
    from memory_curator.commands.doctor import Diagnosis, Finding
    from memory_curator.commands.index import Stats
    from memory_curator.commands.init import Initialised
    from memory_curator.commands.query import Answer, Neighbours
    from memory_curator.commands.restore import Restored
    from memory_curator.commands.review import Tally
    from memory_curator.commands.rules import Checked
    from memory_curator.commands.submit import Submitted
    from memory_curator.commands.undo import UndoResult
    from memory_curator.commands.watch import Notice, Swept
    from memory_curator.index.store import Refresh

STYLE = {"promote": "green", "patch": "cyan", "drop": "red", "needs_review": "yellow"}


def sweep(result: SweepResult, as_json: bool) -> None:
    _sweep(result, as_json)
    for problem in (result.judge or {}).get("problems", []):  # one line per failed judge request
        error_line(f"memory-curator: {printable(str(problem))}")


def idle(why: str, as_json: bool) -> None:
    """`run` on a machine that is not the curator host: one line; JSON keeps the usual keys
    (zero totals) and adds `idle`."""
    if as_json:
        emit_json(versioned({"agents": [], **SweepResult("", ()).totals(), "idle": why}))
    else:
        lines([printable(why)])


def _sweep(result: SweepResult, as_json: bool) -> None:
    if as_json:
        emit_json(versioned(result.to_json()))
        return
    console = stdout()
    for note in result.notes:
        console.print(f"[dim]note:[/] {shown(note)}")
    table = new_table(show_edge=False, header_style="bold")
    for column in ("candidate", "verdict", "where", "why"):
        table.add_column(column, overflow="fold")
    for agent in result.agents:
        for action in agent.actions:
            where = action.moved_to or action.target_path or ""
            verdict = f"[{STYLE[action.verdict]}]{action.verdict}[/]"
            table.add_row(shown(action.inbox_path), verdict, shown(where), shown(action.reason))
        for failure in agent.errors:
            table.add_row(shown(failure.inbox_path), "[bold red]error[/]", "", shown(failure.error))
    if table.row_count:
        print_table(console, table)
    _diffs(console, result)
    for agent in result.agents:
        for skip in agent.skipped:
            if skip.waiting in (None, "too-large"):  # the others are summed up in one line below
                console.print(f"[dim]skipped {shown(skip.inbox_path)}: {shown(skip.reason)}[/]")
    totals = result.totals()
    prefix = "dry run (nothing written): " if result.dry_run else ""
    console.print(
        f"{prefix}{totals['processed']} processed: {totals['promoted']} promoted, {totals['patched']} patched, "
        f"{totals['dropped']} dropped, {totals['needs_review']} need review"
        + (f", {len(result.errors)} failed" if result.errors else "")
    )
    line = waiting_line(result.waiting(), result.judge_ready)
    if line:
        console.print(line, highlight=False, markup=False)
    if result.ignored:
        console.print(ignored_line(result.ignored), highlight=False, markup=False)


def ignored_line(ignored: tuple[tuple[str, str], ...]) -> str:
    """One line for the inbox entries that are no candidates (each said once until it changes)."""
    path, why = ignored[0]
    more = f" and {len(ignored) - 1} more" if len(ignored) > 1 else ""
    head = why.split(":")[0]
    return printable(f"not a candidate: {path} ({head}){more}; `memory-curator status` lists each and why")


JUDGE_HINT = "set ANTHROPIC_API_KEY to let the judge settle what the rules cannot (docs/judge.md)"


def waiting_line(waiting: Mapping[str, int], judge_ready: bool) -> str | None:
    """One line for everything that waits for a person, instead of one line per item; the items
    `undo` put back (never flagged) are named as such."""
    total = sum(waiting.values())
    if not total:
        return None
    held, large = waiting.get("held", 0), waiting.get("too-large", 0)
    line = f"{total} wait for review: `memory-curator review`"
    said = [f"{held} put back by undo"] if held else []
    said += [f"{large} too large to read"] if large else []
    if said:
        line += f" ({', '.join(said)})"
    return line + ("" if judge_ready else f"; {JUDGE_HINT}")


def _diffs(console: Console, result: SweepResult) -> None:
    """A dry run shows what each patch would change in its note."""
    for agent in result.agents:
        for action in agent.actions:
            if action.diff:
                console.print(diff_view(action.diff))


def check(verdict: Verdict, as_json: bool) -> None:
    if as_json:
        emit("check", verdict.to_json())
        return
    console = stdout()
    console.print(f"[{STYLE.get(verdict.verdict, 'white')}]{verdict.verdict}[/]: {shown(verdict.reason)}")
    if verdict.target_path:
        console.print(f"target: {shown(verdict.target_path)}")
    table = criteria_table(verdict.criteria)
    if table.row_count:
        print_table(console, table)
    for line in verdict.explanation or ():
        console.print(f"  {shown(line)}")


def criteria_table(criteria: Mapping[str, bool | None]) -> Table:
    table = new_table("criterion", "value", show_edge=False)
    for name, value in criteria.items():
        table.add_row(shown(name), {True: "[green]yes[/]", False: "[red]no[/]", None: "[yellow]undecided[/]"}[value])
    return table


def rules_check(checked: Checked) -> None:
    """`rules check`: what a valid file holds, or every problem of the one pass, one line each
    (as the error boundary shows one: `file:line: problem`)."""
    if checked.rules is None:
        for problem in checked.problems:
            error_line(f"memory-curator: {printable(str(problem))}")
        return
    rules = checked.rules
    console = stdout()
    console.print(f"{shown(rules.path)}: valid")
    console.print("surfaces: " + ", ".join(f"{shown(s.name)} ({shown(s.path)})" for s in rules.surfaces))
    console.print("criteria: " + ", ".join(shown(c.name) for c in rules.criteria))
    for rule in rules.drop_rules:
        how = "judge only" if rule.judge_only else (rule.when.text if rule.when else "")
        console.print(f"drop {shown(rule.id)}: {shown(rule.reason)}  [dim]when {shown(how)}[/]")


def watch(item: Swept | Notice, as_json: bool, now: dt.datetime) -> None:
    """Watch mode: a log line stamped `now` per action (or notice) on stderr; with --json, one
    JSON object per line per batch on stdout, flushed at once so a pipe sees it live."""
    from memory_curator.commands.watch import Swept  # already loaded by `watch`: watchdog's cost is its own

    console = stderr()
    stamp = iso(now)

    def line(text: str) -> None:
        console.print(f"{stamp} {text}", highlight=False)

    if not isinstance(item, Swept):
        line(shown(item.text))
        return
    if not item.worth_reporting:
        return
    for note in item.result.notes:
        line(f"[dim]note:[/] {shown(note)}")
    for agent in item.result.agents:
        for action in agent.actions:
            where = action.moved_to or action.target_path
            arrow = f" -> {shown(where)}" if where and where != action.inbox_path else ""
            verdict = f"[{STYLE[action.verdict]}]{action.verdict}[/]"
            line(f"{verdict} {shown(action.inbox_path)}{arrow}: {shown(action.reason)}")
        for failure in agent.errors:
            line(f"[bold red]error[/] {shown(failure.inbox_path)}: {shown(failure.error)}")
    if as_json:
        sys.stdout.write(json_text(envelope("watch", item.to_json())) + "\n")
        sys.stdout.flush()


# --- the human and agent loop: resolve, restore, undo, submit (status and log: render_status) ---


def person_action(done: Done, as_json: bool) -> None:
    """A person's resolve (a `desk.Done`)."""
    if as_json:
        emit("resolve", done.to_json())
        return
    action = done.action
    where = action.moved_to or action.target_path or ""
    stdout().print(
        f"[{STYLE[action.verdict]}]{action.verdict}[/] {shown(action.inbox_path)} -> {shown(where)}"
        f"  [dim](run {done.run_id}; `memory-curator undo {done.run_id}` takes it back)[/]"
    )


def restored(result: Restored, as_json: bool) -> None:
    if as_json:
        emit("restore", result.to_json())
        return
    stdout().print(f"restored {shown(result.dropped)} -> {shown(result.inbox_path)} (tagged needs-review)")


def undone(result: UndoResult, as_json: bool) -> None:
    if as_json:
        emit("undo", result.to_json())
        return
    console = stdout()
    for item in result.undone:
        console.print(f"undone {item.verdict}: {shown(item.inbox_path or '')} [dim]({shown(item.path or '')})[/]")
    for item in result.left:
        console.print(f"[yellow]left alone[/] {item.verdict} of {shown(item.inbox_path or '')}: {shown(item.left)}")
    console.print(f"run {result.run_id}: {len(result.undone)} undone, {len(result.left)} left alone")


def submitted(result: Submitted, as_json: bool) -> None:
    if as_json:
        emit("submit", result.to_json())
        return
    console = stdout()
    console.print(f"submitted {shown(result.inbox_path)}")
    if result.check is not None:
        check(result.check, False)


def age_text(seconds: float | None) -> str:
    """`3 min`, `5 h`, `2 d`: how long ago, for people."""
    if seconds is None:
        return "?"
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f} {unit}"
    return f"{max(seconds, 0):.0f} s"


# --- setup and upkeep: init, doctor, query, index, review's tally (schedule: render_status) ------


def initialised(result: Initialised) -> None:
    out = [f"{'wrote' if result.wrote_rules else 'kept existing'} {printable(str(result.rules_path))}"]
    out += [f"created {printable(name)}/" for name in result.created]
    vault = shlex.quote(printable(str(result.root)))
    lines(
        [
            *out,
            f"vault ready: {printable(str(result.root))}",
            "",
            "next:",
            f"  memory-curator submit --vault {vault} --agent me note.md  # hand in a candidate note",
            f"  memory-curator run --vault {vault} --settle 0             # sweep now (--settle 0: files are complete)",
            f"  memory-curator status --vault {vault}                     # what was done, what waits for you",
            "",
            "In Obsidian, hide the inbox from search and the graph: Settings → Files & Links → Excluded files,"
            f" add {INBOX}/",
            *_note_steps(result),
        ]
    )


def _note_steps(result: Initialised) -> list[str]:
    """Where a person decides what waits without a terminal (docs/review.md, "The review note")."""
    if not result.review_note:
        return []
    where = printable(result.review_note)
    return ["", f"After each sweep, tick what waits in {where} (in Obsidian: {result.review_url})"]


def doctor(diagnosis: Diagnosis, as_json: bool) -> None:
    if as_json:
        emit("doctor", diagnosis.to_json())
        return
    lines(finding_line(f) for f in diagnosis.findings)


def finding_line(finding: Finding) -> str:
    """One plain line (no markup): what a finding quotes (a note's name, an error) escaped."""
    tag = {"ok": "ok", "warn": "warn", "problem": "PROBLEM"}[finding.level]
    line = f"{tag:<8}{finding.topic}: {finding.message}" + (f" — fix: {finding.fix}" if finding.fix else "")
    return printable(line)


def query(result: Answer | Neighbours, as_json: bool) -> None:
    if as_json:
        emit("query", result.to_json())
    elif result.kind == "similar":
        _neighbours(result)
    elif not result.results:
        lines([printable(f"no note matches {result.kind} {result.query!r}")])
    else:
        out = []
        for row in result.results:
            score = f"  {row.score:.3f}" if row.score is not None else ""
            value = f"  value: {row.value}" if row.value else ""
            out.append(printable(f"{row.path}  ({row.surface or 'no surface'}){score}{value}"))
        lines(out)  # a note's name or value may hold an escape sequence: shown escaped


def _neighbours(result: Neighbours) -> None:
    """`query --similar`: the lexical and the semantic neighbours in two columns."""
    table = new_table(show_edge=False, header_style="bold")
    status = result.semantic_status
    table.add_column("lexical", overflow="fold")
    table.add_column("semantic" if status == "on" else f"semantic: {shown(status)}", overflow="fold")
    left, right = result.lexical, result.semantic
    for i in range(max(len(left), len(right), 1)):
        cells = [
            shown(f"{column[i].path}  {column[i].score or 0:.3f}") if i < len(column) else ""
            for column in (left, right)
        ]
        table.add_row(*cells)
    print_table(stdout(), table)


def index_rebuilt(built: Refresh, as_json: bool) -> None:
    if as_json:
        emit("index rebuild", built.to_json())
        return
    lines([f"indexed {built.notes} notes in {built.seconds:.1f} s"])


def index_stats(stats: Stats, as_json: bool) -> None:
    if as_json:
        emit("index stats", stats.to_json())
        return
    surfaces = ", ".join(f"{name} {count}" for name, count in stats.surfaces.items())  # escaped below
    out = [
        f"index: {stats.path} (schema {stats.schema}, {stats.bytes / 1e6:.1f} MB)",
        f"notes: {stats.notes} ({surfaces}); {stats.terms} distinct words",
        f"built {stats.built}, refreshed {stats.refreshed}",
    ]
    vectors = stats.vectors
    if vectors is not None:
        model = f", model {vectors.model}" if vectors.model else ""
        out.append(f"semantic vectors: {vectors.count} ({vectors.bytes / 1e6:.1f} MB{model})")
    out += [f"read by body only: {path}: {problem}" for path, problem in stats.problems]
    lines(map(printable, out))  # the index's values: a note's name, a surface, a model


def review_tally(tally: Tally) -> None:
    """The end of a review session, exact: decided + skipped + left (+ gone) is the queue it
    walked; where to look and undo when something was decided."""
    counts = tally.counts()
    words = f"{counts['promote']} promoted, {counts['patch']} patched, {counts['drop']} dropped"
    gone = f", {tally.gone} gone or unreadable" if tally.gone else ""
    line = f"review: {len(tally.done)} decided ({words}), {tally.skipped} skipped, {tally.left} left{gone}"
    if tally.interrupted:
        line += " (interrupted)"
    if tally.runs:
        line += "; `memory-curator log --since 1d` lists them, `memory-curator undo RUN` takes one back"
    lines([line])
