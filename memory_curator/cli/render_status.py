"""What the curator has done and what waits, for people (and as JSON): `status`, `log` and the
`schedule` commands' printers. Apart from `render`, which prints what one command just did (a
sweep, a verdict, a person's action) and holds the consoles and the JSON envelope they share."""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from memory_curator.cli.output import emit, lines, new_table, new_text, print_table, shown, stdout
from memory_curator.cli.render import STYLE, age_text
from memory_curator.core.names import printable, printable_block

if TYPE_CHECKING:  # commands' modules are imported by the commands that use them, not by every run
    from rich.console import Console
    from rich.table import Table

    from memory_curator.commands import schedule
    from memory_curator.commands.log import Log
    from memory_curator.commands.note_link import NoteLink
    from memory_curator.commands.status import Day, Inbox, IndexState, LastSweep, Status


def decision_log(log: Log, as_json: bool) -> None:
    """One line per action (greppable, readable at any width): when, verdict, what, where, why."""
    if as_json:
        emit("log", log.to_json())
        return
    console = stdout()
    entries = log.entries
    if not entries:
        console.print("no journalled actions match")
        return
    for entry in entries:
        when = entry.time.strftime("%Y-%m-%d %H:%M") if entry.time else "?"
        verdict = f"[{STYLE.get(entry.verdict, 'bold')}]{shown(entry.verdict)}[/]"
        state = "undone" if entry.undone_by else "" if entry.status == "done" else entry.status
        state = f" [dim]({shown(state)})[/]" if state else ""
        where = "" if entry.dest in (None, entry.inbox) else f" -> {shown(entry.dest)}"
        via = entry.record.get("by")  # how a person decided, when not at a terminal: `review-note`
        copy = entry.record.get("copy")  # the note's sync conflict copy the tick was read from
        by = f" · by {shown(via)}" if isinstance(via, str) else ""
        by += f" (from {shown(copy)})" if by and isinstance(copy, str) else ""
        why = f"[dim]{shown(entry.reason)} · {shown(entry.run)}{by}[/]"
        console.print(f"{when}  {verdict}{state}  {shown(entry.inbox or '')}{where}  {why}")
    note_line(console, log.note)


def note_line(console: Console, note: NoteLink | None) -> None:
    """The review note and the `obsidian://` link that opens it: a terminal hyperlink where rich
    finds the terminal supports one, else the link as plain text (piped output, `--json` aside)."""
    if note is None or not note.exists:
        return
    console.print(f"review note: {shown(note.path)}  [link={note.url}]{note.url}[/link]", soft_wrap=True)
    for copy in note.conflicts:
        console.print(f"  [yellow]sync conflict copy:[/] {shown(copy)} (read for ticks; merge it and delete it)")


def status(data: Status, as_json: bool) -> None:
    if as_json:
        emit("status", data.to_json())
        return
    console = stdout()
    console.print(f"[bold]vault[/] {shown(data.vault)}\n[bold]state[/] {shown(data.state_dir)}")
    print_table(console, _inbox_table(data.inbox))
    review = data.needs_review
    oldest = f" (oldest {shown(review.oldest_path)}, {review.oldest_age_hours} h)" if review.count else ""
    console.print(f"[yellow]waiting for a person:[/] {review.count}{oldest}")
    for path, reason in review.too_large:
        console.print(f"  {shown(path)}: {shown(reason)} (never read; split it or move it by hand)")
    for path, why in data.ignored:
        console.print(f"[dim]not a candidate:[/] {shown(path)}: {shown(why)}")
    if data.contradictions:
        console.print(f"[red]contradictions flagged:[/] {', '.join(shown(p) for p in data.contradictions)}")
    drops = data.drops_7d
    rules = ", ".join(f"{shown(rule)} {n}" for rule, n in drops.by_rule.items())
    console.print(f"drops in the last 7 days: {drops.total}" + (f" ({rules})" if rules else ""))
    if data.secret_drops:
        console.print(
            f"[yellow]dropped holding a credential:[/] {data.secret_drops} (their audit copies in _inbox/.dropped/ "
            "keep the candidate whole, the one place a credential stays: delete them once it is rotated)"
        )
    if data.last_sweeps:
        print_table(console, _sweeps_table(data.last_sweeps))
    print_table(console, verdict_chart(data.verdicts_per_day))
    if not data.rules.valid:  # the index is not read then: the rules are what to fix
        where = f"{data.rules.file}:{data.rules.line}" if data.rules.line else data.rules.file
        console.print(f"[red]sweeps stopped:[/] rules file invalid ({shown(f'{where}: {data.rules.problem}')})")
    else:
        console.print(_index_line(data.index))
    console.print(_schedule_line(data.schedule.to_json()))
    console.print("lock: free" if data.lock_free else f"lock: held by {shown(str(data.lock_holder))}")
    note_line(console, data.review_note)


def _inbox_table(inbox: Inbox) -> Table:
    headers = ("agent", "candidates", "needs review", "held")
    table = new_table(*headers, title="inbox", show_edge=False, title_justify="left")
    for agent, counts in inbox.agents.items():
        table.add_row(shown(agent), str(counts.candidates), str(counts.needs_review), str(counts.held))
    if not table.row_count:
        table.add_row("(empty)", "0", "0", "0")
    return table


def _sweeps_table(runs: tuple[LastSweep, ...]) -> Table:
    table = new_table(title="last sweeps", show_edge=False, title_justify="left")
    for column in ("started", "processed", "promoted", "patched", "dropped", "review", "errors", "seconds", "judge"):
        table.add_column(column, justify="left" if column == "started" else "right")
    for run in reversed(runs):
        started = str(run.count("started") or "?")[:16].replace("T", " ") + (" (undone)" if run.undone else "")
        counts = [shown(run.count(k) or 0) for k in ("processed", "promoted", "patched", "dropped", "needs_review")]
        errors, seconds = shown(run.count("errors") or 0), shown(run.count("seconds"))
        table.add_row(shown(started), *counts, errors, seconds, f"{run.tokens} tok")
    return table


def verdict_chart(days: tuple[Day, ...], width: int = 40) -> Table:
    """Verdicts per day as stacked bars, one row a day (rich renders it in the terminal)."""
    verdicts = ("promote", "patch", "drop", "needs_review")
    peak = max((day.total for day in days), default=0)
    scale = width / peak if peak > width else 1.0
    table = new_table(title="verdicts per day", show_edge=False, show_header=False, title_justify="left", box=None)
    table.add_column(style="dim")
    table.add_column()
    table.add_column(justify="right")
    for day in days:
        bar = new_text()
        for verdict in verdicts:
            count = day.counts.get(verdict, 0)
            if count:
                bar.append("█" * max(1, round(count * scale)), style=STYLE[verdict])
        table.add_row(day.date[5:], bar, str(day.total))
    legend = "  ".join(f"[{STYLE[v]}]█[/] {v}" for v in verdicts)
    table.caption = legend
    return table


def _index_line(index: IndexState | None) -> str:
    if index is None:
        return "index: not built yet (the next sweep builds it)"
    if not index.usable:
        return f"index: unusable, rebuilt at the next sweep ({shown(index.error or index.path)})"
    size = (index.bytes or 0) / 1_000_000
    age = age_text(index.age_seconds)
    problems = f", {index.problems} read by body only (index stats)" if index.problems else ""
    return f"index: {shown(index.notes)} notes{problems}, {size:.1f} MB, refreshed {age} ago"


def _schedule_line(schedule: Mapping[str, Any]) -> str:
    if schedule.get("error"):
        return f"schedule: unknown ({shown(str(schedule['error']))})"
    if not schedule.get("installed"):
        return "schedule: not installed (memory-curator schedule install)"
    jobs = ", ".join(_job_text(j, j.get("loaded") is not True) for j in schedule["jobs"])
    last = schedule.get("last_run")
    tail = f"; last run {shown(last['time'])}: {shown(last['summary'])}" if last else "; no run logged yet"
    return f"schedule: {jobs}{tail}"


def _job_text(job: Mapping[str, Any], said: bool) -> str:
    """`systemd every 15 min`, with what the scheduler says of it (`: disabled, inactive`) when `said`."""
    text = f"{shown(job['platform'])} every {age_text(job['every_seconds'])}"
    if said and job.get("state"):
        text += f": {shown(job['state'])}"
    return text + (f"; last ran {shown(job['last_ran'])}" if said and job.get("last_ran") else "")


def schedule_status(data: schedule.ScheduleStatus, as_json: bool) -> None:
    """`schedule status`: each job as its scheduler sees it, the last logged sweep, what works here."""
    if as_json:
        emit("schedule status", data.to_json())
        return
    out = [_job_text(job.to_json(), True) for job in data.summary.jobs]
    if not out:
        why = "; ".join(str(r) for r in data.available.values() if r)
        choice = data.choice
        out.append(
            f"not installed; `memory-curator schedule install` would use {shown(choice)}"
            if choice
            else f"not installed; no scheduler works here ({shown(why)}): keep `memory-curator watch` running"
        )
    last = data.summary.last_run
    if last:
        out.append(f"last logged sweep {shown(last.time)}: {shown(last.summary)}")
    console = stdout()
    for line in out:  # markup: each text escapes what it quotes (`shown`)
        console.print(line, highlight=False)


def schedule_plan(plan: schedule.JobPlan) -> None:
    """`schedule show`: every file with its full text, every command, the scheduler's own lines
    (cron's crontab line)."""
    if plan.unavailable:  # no scheduler works here: say so, then a unit that keeps `watch` running
        lines([printable(plan.unavailable), *map(printable_block, plan.fallback)])
        return
    out = [printable("$ " + shlex.join(step.argv)) for step in plan.before]
    for path, data in plan.files:
        out += [printable(f"# {path}"), printable_block(data.decode(errors="replace").rstrip("\n")), ""]
    out += [printable("$ " + shlex.join(step.argv)) for step in plan.after]
    out += [printable(line) for line in plan.shown]
    lines(out + [printable(f"note: {n}") for n in plan.notes])


_DID = {"wrote": "wrote {}", "removed": "removed {}", "ran": "ran {}", "said": "{}"}


def schedule_applied(done: Iterable[schedule.Applied], nothing: str | None = None) -> None:
    """What `schedule install` or `uninstall` did, one line an event; `nothing` when it did nothing."""
    out = []
    for applied in done:
        out += [printable(_DID[kind].format(what)) for kind, what in applied.events]
        out += [printable(f"note: {n}") for n in applied.notes]
    lines(out or ([printable(nothing)] if nothing else []))
