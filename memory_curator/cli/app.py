"""The command line: a thin click layer. Commands return data and `cli.render` prints it.
One error boundary (`main`) turns domain errors into one line on stderr and an exit code
(`core.errors`: 1 configuration, 2 usage, 3 internal error, 75 locked, 130 interrupted);
no tracebacks."""

from __future__ import annotations

import dataclasses
import datetime as dt
import io
import sys
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import BinaryIO, Literal, NoReturn

import click

from memory_curator.cli import render as report
from memory_curator.cli import render_status as history
from memory_curator.cli.machine import build_context, here, machine_of
from memory_curator.commands import check as checking
from memory_curator.commands import sweep
from memory_curator.commands.context import Invocation, Seams
from memory_curator.core import names
from memory_curator.core import rules as rules_mod
from memory_curator.core.clock import SystemClock
from memory_curator.core.errors import (
    EXIT_CONFIG,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_LOCKED,
    EXIT_OK,
    EXIT_USAGE,
    CuratorError,
    OtherHost,
)
from memory_curator.core.result import SweepResult
from memory_curator.store import paths as vault_mod
from memory_curator.store import runlog

VAULT_OPTION = click.option("--vault", "vault", type=click.Path(file_okay=False), help="The vault folder.")
STATE_OPTION = click.option(
    "--state-dir",
    "state_dir",
    type=click.Path(file_okay=False),
    help="This vault's state folder (index, journal, lock, logs).",
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="memory-curator")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Keep an Obsidian-style vault clean while AI agents write into it."""
    ctx.obj = _seams(ctx.obj)


def _seams(given: Seams | None) -> Seams:
    """What every command takes from the world, always a Seams: a test's own (`obj=Seams(...)`),
    else the real ones with the index's bar on a terminal; on this machine, read once, unless
    the seams name another."""
    if given is None:
        given = Seams(progress=report.index_progress if sys.stderr.isatty() else None)  # stdout stays clean
    return given if given.machine is not None else dataclasses.replace(given, machine=here())


@cli.command()
@click.argument("folder", required=False, type=click.Path(file_okay=False))
@click.option("--vault", "vault", type=click.Path(file_okay=False), help="The vault folder (the same as FOLDER).")
def init(folder: str | None, vault: str | None) -> None:
    """Make FOLDER (default: here) a vault: _meta/inbox-rules.md (never overwritten) and _inbox/."""
    from memory_curator.commands.init import init_vault

    if folder is not None and vault is not None:
        raise click.UsageError("give the folder once: FOLDER or --vault FOLDER")
    report.initialised(init_vault(Path(folder or vault or ".")))


@cli.command()
@click.argument("path", required=False, type=click.Path())
@click.option("--dry-run", is_flag=True, help="Show the plan (with a diff for every patch); change nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--no-judge", is_flag=True, help="Do not ask the model; undecided stays needs_review.")
@click.option("--wait", is_flag=True, help=f"Wait for another sweep to finish instead of exiting {EXIT_LOCKED}.")
@click.option(
    "--settle",
    type=click.FloatRange(min=0),
    metavar="SECONDS",
    help="Take files unchanged for SECONDS as settled (instead of the rules' settle_seconds); "
    "0: every file is complete (files you copied in yourself).",
)
@click.option(
    "--judge-set",
    "judge_set",
    multiple=True,
    metavar="NAME=VALUE",
    callback=lambda _ctx, _param, values: _pairs(values),
    help="A judge setting for this run (model, effort, max_tokens, timeout_seconds, deadline_seconds, max_retries, "
    "chunk_size, neighbours, enabled); beats MEMORY_CURATOR_JUDGE_<NAME> and the rules file. Repeatable.",
)
@click.option(
    "--log-file",
    type=click.Path(dir_okay=False),
    help="Append the outcome as one JSON line to this size-capped log instead of printing (scheduled sweeps).",
)
@VAULT_OPTION
@STATE_OPTION
@click.pass_obj
def run(
    seams: Seams,
    path: str | None,
    dry_run: bool,
    as_json: bool,
    no_judge: bool,
    wait: bool,
    settle: float | None,
    judge_set: tuple[tuple[str, str], ...],
    vault: str | None,
    state_dir: str | None,
    log_file: str | None,
) -> None:
    """Sweep one agent folder (PATH) or the whole _inbox/."""
    options = sweep.Options(dry_run=dry_run, use_judge=not no_judge, wait=wait, judge_settings=judge_set, settle=settle)
    if not as_json and not log_file and sys.stdout.isatty():  # a bar only on a terminal
        options = dataclasses.replace(options, progress=report.progress)
    if log_file:  # a scheduled sweep: the outcome (or why there was none) goes to the log, not stdout
        code = runlog.record_run(
            Path(log_file), lambda: _sweep_now(seams, path, vault, state_dir, options), clock=seams.clock
        )
        raise click.exceptions.Exit(code)
    try:
        result = _sweep_now(seams, path, vault, state_dir, options)
    except OtherHost as exc:  # exit 0 and one line saying why; JSON keeps the usual keys
        report.idle(str(exc), as_json)
        return
    report.sweep(result, as_json)


def _pairs(values: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    pairs = []
    for value in values:
        name, sep, setting = value.partition("=")
        if not sep or not name.strip():
            raise click.BadParameter(f"{value!r}: expected NAME=VALUE")
        pairs.append((name.strip(), setting))
    if pairs:  # known names and usable values, checked against the defaults: a bad one is a usage error
        from memory_curator.judge import client

        try:
            client.resolve_settings(rules_mod.JudgeSettings(), pairs, env={})
        except CuratorError as exc:
            raise click.BadParameter(str(exc).removeprefix("--judge-set ")) from None
    return tuple(pairs)


def _checked(check: Callable[[str], object]) -> Callable[[click.Context, click.Parameter, str | None], str | None]:
    """A click callback: `check(value)` raising CuratorError (the domain's own wording) makes the
    value a usage error (exit 2), reported before the command touches anything."""

    def callback(_ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            check(value)
        except CuratorError as exc:
            flag = next(iter(getattr(param, "opts", [])), "")
            raise click.BadParameter(str(exc).removeprefix(f"{flag} ")) from None
        return value

    return callback


def _since_check(text: str) -> None:
    from memory_curator.commands import log as decision_log

    decision_log.parse_since(text, SystemClock().now())


def _agent_check(text: str) -> None:
    from memory_curator.commands import submit as submit_mod

    submit_mod.agent_name(text)


def _every_check(text: str) -> None:
    from memory_curator.commands import schedule

    schedule.parse_every(text)


def _day(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    """--date: a calendar day, given as YYYY-MM-DD (normalised, so the index's `day` matches)."""
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(value.strip()).isoformat()
    except ValueError:
        raise click.BadParameter(f"{value!r}: use a date like 2026-11-01") from None


def _env(seams: Seams) -> Mapping[str, str]:
    """The environment the command sees: the machine's, or the one a test passes."""
    return machine_of(seams).env


def _find(seams: Seams, start: Path | None, vault: str | None) -> Path:
    return vault_mod.find_root(start, vault, _env(seams), Path.cwd())


def _agent(seams: Seams) -> str | None:
    return _env(seams).get("MEMORY_CURATOR_AGENT")


def _sweep_now(
    seams: Seams, path: str | None, vault: str | None, state_dir: str | None, options: sweep.Options
) -> SweepResult:
    root = _find(seams, Path(path) if path else None, vault)
    return sweep.run(build_context(root, state_dir, seams), _scope(root, path), options)


def _scope(root: Path, path: str | None) -> Path | None:
    if path is None:
        return None
    candidate = Path(path)
    if not candidate.is_absolute() and not candidate.exists() and (root / candidate).exists():
        candidate = root / candidate
    if not candidate.exists():
        raise CuratorError(f"{path}: no such folder")
    return candidate


@cli.command()
@click.argument("file", type=click.Path(allow_dash=True))
@click.option("--json", "as_json", is_flag=True, help="Print the verdict as JSON.")
@click.option("--explain", is_flag=True, help="Show every drop rule and criterion evaluation.")
@VAULT_OPTION
@click.pass_obj
def check(seams: Seams, file: str, as_json: bool, explain: bool, vault: str | None) -> None:
    """The verdict one candidate would get (FILE, or - for a note or JSON payload on stdin).

    Changes nothing.
    """
    if file == "-":
        ctx = build_context(_find(seams, None, vault), None, seams)
        text = checking.read_limited(_stdin(), "<stdin>", ctx.rules.settings.max_candidate_bytes)
        data = checking.check_text(ctx, text, "<stdin>", explain)
    else:
        target = Path(file)
        if not target.is_file():
            raise CuratorError(f"{file}: no such file", file=file)
        root = _find(seams, target.parent, vault)
        data = checking.check_file(build_context(root, None, seams), target, explain)
    report.check(data, as_json)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per swept batch on stdout.")
@click.option("--no-judge", is_flag=True, help="Do not ask the model; undecided stays needs_review.")
@VAULT_OPTION
@STATE_OPTION
@click.pass_obj
def watch(seams: Seams, as_json: bool, no_judge: bool, vault: str | None, state_dir: str | None) -> None:
    """Sweep candidates as they settle, until SIGINT or SIGTERM.

    Sweeps the backlog first; logs one line per action on stderr.
    """
    from memory_curator.commands import watch as watching  # watchdog's import is paid by this command only

    root = _find(seams, None, vault)
    watcher = watching.Watcher(build_context(root, state_dir, seams), use_judge=not no_judge)
    with watching.stop_on_signals(watcher):
        for item in watcher.run():
            report.watch(item, as_json, seams.clock.now())


@cli.group(name="rules")
def rules_group() -> None:
    """The rules file (_meta/inbox-rules.md)."""


@rules_group.command(name="check")
@click.argument("file", required=False, type=click.Path(dir_okay=False))
@VAULT_OPTION
@click.pass_obj
def rules_check(seams: Seams, file: str | None, vault: str | None) -> None:
    """Validate a rules file (default: the vault's), with line numbers."""
    from memory_curator.commands import rules as rules_mod

    path = Path(file) if file is not None else rules_mod.vault_rules(_find(seams, None, vault))
    checked = rules_mod.check(path)
    report.rules_check(checked)
    if checked.rules is None:
        raise click.exceptions.Exit(checked.exit_code)


def _scheduler_flags(func: Callable[..., None]) -> Callable[..., None]:
    flags = [
        click.option("--launchd", "platform", flag_value="launchd", help="launchd (default on macOS)."),
        click.option("--systemd", "platform", flag_value="systemd", help="systemd user timer (default if reachable)."),
        click.option("--cron", "platform", flag_value="cron", help="cron (default elsewhere, if installed)."),
    ]
    for flag in reversed(flags):
        func = flag(func)
    return func


def _job_options(func: Callable[..., None]) -> Callable[..., None]:
    options: list[Callable[[Callable[..., None]], Callable[..., None]]] = [
        click.option(
            "--every",
            default="15m",
            show_default=True,
            callback=_checked(_every_check),
            help="How often (e.g. 5m, 30m, 2h, 1d).",
        ),
        click.option("--on-change", is_flag=True, help="launchd: also sweep when the inbox changes (WatchPaths)."),
        _scheduler_flags,
        VAULT_OPTION,
        STATE_OPTION,
    ]
    for option in reversed(options):
        func = option(func)
    return func


@cli.group(name="schedule")
def schedule_group() -> None:
    """Scheduled sweeps of one vault: launchd, a systemd user timer, or cron (the first that works here)."""


@schedule_group.command(name="install")
@_job_options
@click.pass_obj
def schedule_install(
    seams: Seams, every: str, on_change: bool, platform: str | None, vault: str | None, state_dir: str | None
) -> None:
    """Install (or replace) this vault's scheduled sweep."""
    from memory_curator.commands import schedule

    plan = schedule.plan_install(_find(seams, None, vault), state_dir, every, platform, on_change)
    history.schedule_applied([schedule.install(plan)])


@schedule_group.command(name="show")
@_job_options
@click.pass_obj
def schedule_show(
    seams: Seams, every: str, on_change: bool, platform: str | None, vault: str | None, state_dir: str | None
) -> None:
    """Print exactly what `install` would write and run; change nothing."""
    from memory_curator.commands import schedule

    history.schedule_plan(schedule.plan_install(_find(seams, None, vault), state_dir, every, platform, on_change))


@schedule_group.command(name="status")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@VAULT_OPTION
@STATE_OPTION
@click.pass_obj
def schedule_status(seams: Seams, as_json: bool, vault: str | None, state_dir: str | None) -> None:
    """Ask the scheduler itself whether this vault's sweep is loaded, and when it last ran."""
    from memory_curator.commands import schedule

    history.schedule_status(schedule.status(_find(seams, None, vault), state_dir), as_json)


@schedule_group.command(name="uninstall")
@_scheduler_flags
@VAULT_OPTION
@click.pass_obj
def schedule_uninstall(seams: Seams, platform: str | None, vault: str | None) -> None:
    """Remove this vault's scheduled sweep (from every scheduler, or the one named)."""
    from memory_curator.commands import schedule

    if vault and not Path(vault).expanduser().exists():  # a deleted vault's job can still be removed
        root = Path(vault).expanduser().absolute()
    else:
        root = _find(seams, None, vault)
    done = [schedule.uninstall(plan) for plan in schedule.plan_uninstall(root, platform)]
    history.schedule_applied(done, f"no scheduled sweep of {root} found")


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
@VAULT_OPTION
@STATE_OPTION
@click.pass_obj
def doctor(seams: Seams, as_json: bool, vault: str | None, state_dir: str | None) -> None:
    """Check the vault, rules, state, lock, schedule and judge key; exit 1 on any problem."""
    from memory_curator.commands import doctor as doctor_mod

    findings = doctor_mod.diagnose(Invocation(seams, machine_of(seams), Path.cwd(), vault, state_dir))
    report.doctor(findings, as_json)
    if doctor_mod.failed(findings):
        raise click.exceptions.Exit(EXIT_CONFIG)


# --- the human and agent loop (docs/review.md, docs/agents.md) --------------------------------

BY_OPTION = click.option("--by", "by", metavar="NAME", help="Who decides (default: $MEMORY_CURATOR_USER or login).")
WAIT_OPTION = click.option("--wait", is_flag=True, help=f"Wait for a running sweep instead of exiting {EXIT_LOCKED}.")
JSON_OPTION = click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")


@cli.command()
@click.argument("path", required=False, type=click.Path())
@click.option("--agent", "agents", multiple=True, metavar="AGENT", help="Only this agent's items (repeatable).")
@click.option(
    "--reason", metavar="CODE", help="Only items flagged for this reason code, e.g. near-duplicate (docs/review.md)."
)
@BY_OPTION
@VAULT_OPTION
@STATE_OPTION
@click.pass_obj
def review(
    seams: Seams,
    path: str | None,
    agents: tuple[str, ...],
    reason: str | None,
    by: str | None,
    vault: str | None,
    state_dir: str | None,
) -> None:
    """Walk the items waiting for a person, oldest first (PATH: one agent folder or one file).

    One key each, no Enter: p promote, o promote as another surface, m merge (patch) into a
    note, d drop (asks a reason), e edit in $EDITOR, s skip, q quit; on a contradiction n takes
    the new value, k keeps the old, b keeps both; a applies one choice to this item and the
    others like it (one run: `undo RUN` takes all back). Each choice is applied and journalled
    at once; q or end of input exits 0, Ctrl-C 130.
    """
    from memory_curator.cli import keys as keys_mod
    from memory_curator.cli import review as review_ui
    from memory_curator.commands import review as review_mod
    from memory_curator.commands.desk import Desk
    from memory_curator.core.reasons import CODES

    if reason is not None and reason not in CODES:
        raise click.BadParameter(f"{reason!r} is not a reason code (one of: {', '.join(CODES)})", param_hint="--reason")
    root = _find(seams, Path(path) if path else None, vault)
    scoped, only = review_mod.scope(root, path)
    chosen = set(agents) if agents else None
    if chosen is not None and scoped is not None:
        chosen &= scoped
    wanted = chosen if chosen is not None else scoped
    desk = Desk(build_context(root, state_dir, seams, by))
    tally = review_ui.review(desk, report.make_console(highlight=False), keys_mod.for_stdin(), wanted, only, reason)
    report.review_tally(tally)
    if tally.interrupted:  # Ctrl-C: the counts are said, what was decided stays decided
        raise click.exceptions.Exit(EXIT_INTERRUPTED)


@cli.command()
@click.argument("file", type=click.Path())
@click.option("--promote", is_flag=True, help="Promote to the computed target.")
@click.option("--surface", metavar="SURFACE", help="Promote as this surface (implies --promote).")
@click.option("--patch", "patch_into", metavar="NOTE", help="Patch into this durable note (vault path).")
@click.option("--drop", "drop_reason", metavar="REASON", help="Drop to .dropped/ with this reason.")
@click.option(
    "--settle",
    type=click.Choice(["new", "old", "both"]),
    help="With --patch, a contradiction: the new value current (old to history), the old kept, or both kept.",
)
@click.option("--yes", is_flag=True, help="Patch into a note of your own without showing the diff and asking.")
@BY_OPTION
@WAIT_OPTION
@JSON_OPTION
@VAULT_OPTION
@STATE_OPTION
@click.pass_obj
def resolve(
    seams: Seams,
    file: str,
    promote: bool,
    surface: str | None,
    patch_into: str | None,
    drop_reason: str | None,
    settle: Literal["new", "old", "both"] | None,
    yes: bool,
    by: str | None,
    wait: bool,
    as_json: bool,
    vault: str | None,
    state_dir: str | None,
) -> None:
    """Decide one inbox item without the interactive queue (for scripts and agents).

    A patch into a note of your own (not the curator's) shows its diff and asks on a
    terminal; without one it is refused unless --yes."""
    from memory_curator.cli import review as review_ui
    from memory_curator.commands import review as review_mod
    from memory_curator.commands.desk import Desk

    chosen = [promote or surface is not None, patch_into is not None, drop_reason is not None]
    if sum(chosen) != 1:
        raise click.UsageError("give exactly one of --promote/--surface, --patch NOTE, --drop REASON")
    if settle is not None and patch_into is None:
        raise click.UsageError("--settle goes with --patch NOTE")
    root = _find(seams, Path(file).parent, vault)
    desk = Desk(build_context(root, state_dir, seams, by), wait)
    if patch_into is not None:
        confirm = review_ui.asker() if review_ui.on_terminal() else None
        done = review_mod.patch_confirmed(desk, file, patch_into, confirm, yes, settle)
    elif drop_reason is not None:
        done = desk.drop(file, drop_reason)
    else:
        done = desk.promote(file, surface)
    report.person_action(done, as_json)


@cli.command()
@click.argument("dropped_file", type=click.Path())
@BY_OPTION
@WAIT_OPTION
@JSON_OPTION
@VAULT_OPTION
@STATE_OPTION
@click.pass_obj
def restore(
    seams: Seams,
    dropped_file: str,
    by: str | None,
    wait: bool,
    as_json: bool,
    vault: str | None,
    state_dir: str | None,
) -> None:
    """Move a dropped item back to _inbox/<agent>/, tagged needs-review, without its audit line."""
    from memory_curator.commands import restore as restore_mod

    root = _find(seams, Path(dropped_file).parent, vault)
    report.restored(restore_mod.restore(build_context(root, state_dir, seams, by), dropped_file, wait), as_json)


@cli.command()
@click.argument("run_id", required=False)
@click.option("--last", is_flag=True, help="Undo the latest run that was not undone yet.")
@BY_OPTION
@WAIT_OPTION
@JSON_OPTION
@VAULT_OPTION
@STATE_OPTION
@click.pass_obj
def undo(
    seams: Seams,
    run_id: str | None,
    last: bool,
    by: str | None,
    wait: bool,
    as_json: bool,
    vault: str | None,
    state_dir: str | None,
) -> None:
    """Revert one run (a sweep or a person's action) where the vault still holds what it wrote."""
    from memory_curator.commands import undo as undo_mod

    if (run_id is None) == (not last):
        raise click.UsageError("give a RUN_ID (see `memory-curator log`) or --last")
    root = _find(seams, None, vault)
    report.undone(undo_mod.undo(build_context(root, state_dir, seams, by), run_id, wait), as_json)


@cli.command()
@click.argument("file", type=click.Path(allow_dash=True))
@click.option(
    "--agent",
    metavar="ID",
    callback=_checked(_agent_check),
    help="The agent folder (default: $MEMORY_CURATOR_AGENT, else _inbox/).",
)
@click.option("--check", "with_check", is_flag=True, help="Add the verdict a sweep would give.")
@JSON_OPTION
@VAULT_OPTION
@click.pass_obj
def submit(seams: Seams, file: str, agent: str | None, with_check: bool, as_json: bool, vault: str | None) -> None:
    """Validate a candidate (a note, or a JSON payload; - for stdin) and write it atomically
    into _inbox/<agent>/ under a unique name."""
    from memory_curator.commands import submit as submit_mod

    ctx = build_context(_find(seams, None, vault), None, seams)
    limit = ctx.rules.settings.max_candidate_bytes
    if file == "-":
        text, origin = checking.read_limited(_stdin(), "<stdin>", limit), "<stdin>"
    else:
        source = Path(file)
        if not source.is_file():
            raise CuratorError(f"{file}: no such file", file=file)
        with source.open("rb") as stream:
            text = checking.read_limited(stream, file, limit)
        origin = file
    report.submitted(submit_mod.submit(ctx, text, origin, agent or _agent(seams), with_check), as_json)


def _stdin() -> BinaryIO:
    """Standard input as bytes (a test's or a wrapper's text stream is encoded as it is read)."""
    binary = getattr(sys.stdin, "buffer", None)
    return binary if binary is not None else io.BytesIO(sys.stdin.read().encode("utf-8", "surrogateescape"))


@cli.command()
@JSON_OPTION
@VAULT_OPTION
@STATE_OPTION
@click.pass_obj
def status(seams: Seams, as_json: bool, vault: str | None, state_dir: str | None) -> None:
    """The inbox backlog, the review queue, recent drops and sweeps, the index and the schedule."""
    from memory_curator.commands import status as status_mod

    root = _find(seams, None, vault)
    history.status(status_mod.gather(build_context(root, state_dir, seams)), as_json)


@cli.command()
@click.option(
    "--agent",
    metavar="ID",
    callback=_checked(_agent_check),
    help="Write every candidate as this agent (calls naming another are refused).",
)
@VAULT_OPTION
@STATE_OPTION
@click.pass_obj
def mcp(seams: Seams, agent: str | None, vault: str | None, state_dir: str | None) -> None:
    """Serve this vault to agents over MCP (stdio): submit, check, search, read, status.

    Example, for Claude Code: claude mcp add curator -- memory-curator mcp --vault ~/notes --agent claude
    """
    try:
        from memory_curator.cli import mcp as mcp_server
    except ImportError as exc:
        raise CuratorError(f"the mcp command needs the MCP SDK ({exc}): pip install 'memory-curator[mcp]'") from None
    root = _find(seams, None, vault)  # a folder that is not a vault is refused there
    mcp_server.serve(build_context(root, state_dir, seams), agent)


@cli.command(name="log")
@click.option(
    "--since",
    metavar="WHEN",
    callback=_checked(_since_check),
    help="Only actions since then: 30m, 12h, 7d, 2w or a date.",
)
@click.option("--file", "file", metavar="PATH", help="One note's history (vault path), e.g. facts/x/y.md.")
@JSON_OPTION
@VAULT_OPTION
@STATE_OPTION
@click.pass_obj
def log_command(
    seams: Seams, since: str | None, file: str | None, as_json: bool, vault: str | None, state_dir: str | None
) -> None:
    """The decision log: which candidate, which verdict, why, and where it went."""
    from memory_curator.commands import log as decision_log

    root = _find(seams, None, vault)
    history.decision_log(decision_log.read(build_context(root, state_dir, seams), since, file), as_json)


@cli.command()
@click.argument("entity_predicate", nargs=-1, metavar="[ENTITY PREDICATE]")
@click.option("--slug", metavar="S", help="Notes whose title, alias, slug or file name is S (case, accents folded).")
@click.option("--text", metavar="TEXT", help="The notes closest to TEXT (BM25), scored 0 to 1.")
@click.option("--date", "day", metavar="YYYY-MM-DD", callback=_day, help="Event notes on this day.")
@click.option(
    "--similar",
    metavar="FILE|TEXT",
    help="The notes closest to a note file (or a text): lexical and semantic neighbours side by side.",
)
@click.option(
    "--limit", default=5, show_default=True, type=click.IntRange(min=1), help="How many --text/--similar neighbours."
)
@JSON_OPTION
@VAULT_OPTION
@STATE_OPTION
@click.pass_obj
def query(
    seams: Seams,
    entity_predicate: tuple[str, ...],
    slug: str | None,
    text: str | None,
    day: str | None,
    similar: str | None,
    limit: int,
    as_json: bool,
    vault: str | None,
    state_dir: str | None,
) -> None:
    """Ask the vault's index: the note for ENTITY PREDICATE, a --slug, a --date, --text or --similar neighbours."""
    from memory_curator.commands import query as query_mod

    asked = [bool(entity_predicate), slug is not None, text is not None, day is not None, similar is not None]
    if sum(asked) != 1 or len(entity_predicate) not in (0, 2):
        raise click.UsageError(
            "ask one thing: ENTITY PREDICATE, --slug S, --text TEXT, --similar FILE|TEXT or --date YYYY-MM-DD"
        )
    ctx = build_context(_find(seams, None, vault), state_dir, seams)
    key = (entity_predicate[0], entity_predicate[1]) if entity_predicate else None
    question = query_mod.Question(key, slug, text, day, similar, limit)
    report.query(query_mod.ask(ctx, question, Path.cwd()), as_json)


@cli.group(name="index")
def index_group() -> None:
    """The vault's index (a disposable SQLite file in the state directory)."""


@index_group.command(name="rebuild")
@JSON_OPTION
@VAULT_OPTION
@STATE_OPTION
@click.pass_obj
def index_rebuild(seams: Seams, as_json: bool, vault: str | None, state_dir: str | None) -> None:
    """Build the index from scratch (sweeps refresh it by themselves)."""
    from memory_curator.commands import index

    report.index_rebuilt(index.rebuild(build_context(_find(seams, None, vault), state_dir, seams)), as_json)


@index_group.command(name="stats")
@JSON_OPTION
@VAULT_OPTION
@STATE_OPTION
@click.pass_obj
def index_stats(seams: Seams, as_json: bool, vault: str | None, state_dir: str | None) -> None:
    """Where the index lives, its size, freshness and the notes it could only read by body (no refresh)."""
    from memory_curator.commands import index

    report.index_stats(index.stats(build_context(_find(seams, None, vault), state_dir, seams)), as_json)


@cli.group(name="semantic")
def semantic_group() -> None:
    """Opt-in semantic pairing: a local embedding model (needs the `semantic` extra)."""


@semantic_group.command(name="fetch")
@click.argument("name")
@click.option(
    "--to",
    "to",
    type=click.Path(file_okay=False),
    help="The model's folder (default: the user's models folder, where `semantic: {model: NAME}` looks).",
)
@click.pass_obj
def semantic_fetch(seams: Seams, name: str, to: str | None) -> None:
    """Download the model NAME (owner/name on the model hub), or copy a model folder NAME, for
    semantic pairing. The only command that downloads one: sweeps read it from its local folder."""
    from memory_curator.commands import semantic

    machine = machine_of(seams)
    fetched = semantic.fetch(name, Path(to) if to else None, machine.env, data_home=machine.data_home)
    report.lines([f"{names.printable(name)}: {fetched.path} ({fetched.bytes / 1e6:.1f} MB)"])


# One example per command, shown at the end of its --help (mcp's is in its docstring); a test
# fails for a command without one.
EXAMPLES = {
    ("init",): "memory-curator init ~/notes",
    ("run",): "memory-curator run --vault ~/notes --settle 0",
    ("check",): "memory-curator check _inbox/bot/note.md --explain",
    ("watch",): "memory-curator watch --vault ~/notes",
    ("rules",): "memory-curator rules check --vault ~/notes",
    ("rules", "check"): "memory-curator rules check --vault ~/notes",
    ("schedule",): "memory-curator schedule install --vault ~/notes --every 15m",
    ("schedule", "install"): "memory-curator schedule install --vault ~/notes --every 15m",
    ("schedule", "show"): "memory-curator schedule show --vault ~/notes --every 1h",
    ("schedule", "status"): "memory-curator schedule status --vault ~/notes",
    ("schedule", "uninstall"): "memory-curator schedule uninstall --vault ~/notes",
    ("doctor",): "memory-curator doctor --vault ~/notes",
    ("review",): "memory-curator review _inbox/bot",
    ("resolve",): "memory-curator resolve _inbox/bot/note.md --drop 'already in facts/acme/hq.md'",
    ("restore",): "memory-curator restore _inbox/.dropped/bot/2026-11-30T12-00-00-note.md",
    ("undo",): "memory-curator undo --last",
    ("submit",): "memory-curator submit --agent bot --check note.md",
    ("status",): "memory-curator status --vault ~/notes",
    ("log",): "memory-curator log --since 7d",
    ("query",): "memory-curator query acme headquarters",
    ("index",): "memory-curator index rebuild --vault ~/notes",
    ("index", "rebuild"): "memory-curator index rebuild --vault ~/notes",
    ("index", "stats"): "memory-curator index stats --json",
    ("semantic",): "memory-curator semantic fetch minishlab/potion-base-8M",
    ("semantic", "fetch"): "memory-curator semantic fetch minishlab/potion-base-8M",
}


def _add_examples(group: click.Group, prefix: tuple[str, ...] = ()) -> None:
    for name, command in group.commands.items():
        example = EXAMPLES.get((*prefix, name))
        if example:
            command.epilog = f"\b\nExample:\n  {example}"
        if isinstance(command, click.Group):
            _add_examples(command, (*prefix, name))


_add_examples(cli)


def main(argv: list[str] | None = None) -> None:
    """Entry point: the one error boundary. Every error ends with one line on stderr and its exit
    code; with `--json` also one object on stdout, `{"error": {"code", "message", "file"}}`."""
    args = sys.argv[1:] if argv is None else argv
    try:
        code = cli.main(args=argv, prog_name="memory-curator", standalone_mode=False)
    except click.exceptions.Abort:  # click's name for Ctrl-C (and end of input at a prompt)
        _fail(args, EXIT_INTERRUPTED, "aborted")
    except click.ClickException as exc:
        exc.show()  # the usage and the error, as click prints them
        _fail(args, exc.exit_code if exc.exit_code else EXIT_USAGE, exc.format_message(), shown=True)
    except CuratorError as exc:  # a message may quote a file name: shown escaped
        if exc.exit_code == EXIT_OK:  # not an error (OtherHost): the line says why, no error object
            report.error_line(f"memory-curator: {names.printable(str(exc))}")
            sys.exit(EXIT_OK)
        _fail(args, exc.exit_code, str(exc), exc.file, prefix="memory-curator: ")
    except KeyboardInterrupt:
        _fail(args, EXIT_INTERRUPTED, "interrupted")
    except Exception as exc:  # a bug: say so in one line, keep the traceback in a log
        log = _crash_log(args)
        what = f"{type(exc).__name__}: {exc}"
        message = f"internal error: {what} (details: {log})"
        _fail(args, EXIT_INTERNAL, message, None if log == "unavailable" else log, prefix="memory-curator: ")
    sys.exit(code if isinstance(code, int) else EXIT_OK)


def _fail(
    args: list[str], code: int, message: str, file: str | None = None, prefix: str = "", shown: bool = False
) -> NoReturn:
    """The end of every error: its line on stderr (unless click `shown` it already), and with
    `--json` the error object on stdout; then exit `code`."""
    if not shown:
        report.error_line(prefix + names.printable(message))
    if _wants_json(args):
        report.error_object(code, message, file)
    sys.exit(code)


def _wants_json(args: list[str]) -> bool:
    """Whether the command line asked for JSON: the parsed options are gone once a command
    raised (or were never made, for a usage error), so the arguments are read again."""
    options = args[: args.index("--")] if "--" in args else args
    return "--json" in options


def _crash_log(args: list[str]) -> str:
    """Tracebacks go to the state directory the command used, never into the vault or the terminal."""
    try:
        path = _crash_folder(args) / "crash.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(traceback.format_exc(), encoding="utf-8", errors="backslashreplace")
    except Exception:  # the log is a courtesy: failing to write it must not hide the one line
        return "unavailable"
    return str(path)


def _crash_folder(args: list[str]) -> Path:
    """--state-dir, else MEMORY_CURATOR_STATE, else the vault's own state folder, else the user's
    state directory: the command's parsed options are gone once it raised, so they are read again
    from its arguments."""
    from memory_curator.store.state import state_folder

    machine = here()
    try:
        root = vault_mod.find_root(None, _option_value(args, "--vault"), machine.env, Path.cwd())
    except Exception:  # no vault here, or none that can be told from the arguments
        chosen = _option_value(args, "--state-dir") or machine.env.get("MEMORY_CURATOR_STATE")
        return Path(chosen).expanduser() if chosen else machine.state_home
    return state_folder(root, _option_value(args, "--state-dir"), machine.env, machine.state_home)


def _option_value(args: list[str], name: str) -> str | None:
    """The value of `name VALUE` or `name=VALUE` in `args` (the last one given wins, as in click)."""
    found = None
    for at, arg in enumerate(args):
        if arg == name and at + 1 < len(args):
            found = args[at + 1]
        elif arg.startswith(name + "="):
            found = arg[len(name) + 1 :]
    return found
