"""The command line, as declarations: each command is a module in `commands/` returning a frozen
result; `vault_command` (cli/command.py) gives it its options and its Context, `cli.render` and
`cli.render_status` print what it returns, and `cli.boundary.main` ends every error in one line
and an exit code (1 configuration, 2 usage, 3 internal error, 75 locked, 130 interrupted)."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Literal

import click

from memory_curator.cli import boundary, command, output
from memory_curator.cli import render as report
from memory_curator.cli import render_status as history
from memory_curator.cli.command import vault_command
from memory_curator.cli.machine import machine_of
from memory_curator.commands import check as checking
from memory_curator.commands import index, query, semantic, status, submit, sweep
from memory_curator.commands import init as initialising
from memory_curator.commands import log as decision_log
from memory_curator.commands import restore as restoring
from memory_curator.commands import review as reviewing
from memory_curator.commands import rules as rules_checker
from memory_curator.commands import undo as undoing
from memory_curator.commands.context import Context, Invocation, Seams
from memory_curator.commands.desk import Desk
from memory_curator.core.errors import EXIT_CONFIG, EXIT_INTERRUPTED, EXIT_LOCKED, CuratorError, OtherHost
from memory_curator.core.names import printable
from memory_curator.core.result import SweepResult
from memory_curator.store import runlog


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="memory-curator")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Keep an Obsidian-style vault clean while AI agents write into it."""
    ctx.obj = command.seams_of(ctx.obj)


@cli.command(epilog=command.example_epilog("init ~/notes"))
@click.argument("folder", required=False, type=click.Path(file_okay=False))
@click.option("--vault", "vault", type=click.Path(file_okay=False), help="The vault folder (the same as FOLDER).")
def init(folder: str | None, vault: str | None) -> None:
    """Make FOLDER (default: here) a vault: _meta/inbox-rules.md (never overwritten) and _inbox/."""
    if folder is not None and vault is not None:
        raise click.UsageError("give the folder once: FOLDER or --vault FOLDER")
    report.initialised(initialising.init_vault(Path(folder or vault or ".")))


@vault_command(
    cli,
    "run",
    example="run --vault ~/notes --settle 0",
    json=True,
    json_at=1,
    start=command.around("path"),
    context=False,
)
@click.argument("path", required=False, type=click.Path())
@click.option("--dry-run", is_flag=True, help="Show the plan (with a diff for every patch); change nothing.")
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
    callback=command.judge_pairs,
    help=command.JUDGE_SET_HELP,
)
@click.option(
    "--log-file",
    type=click.Path(dir_okay=False),
    help="Append the outcome as one JSON line to this size-capped log instead of printing (scheduled sweeps).",
)
def run(
    asked: Invocation,
    path: str | None,
    dry_run: bool,
    no_judge: bool,
    wait: bool,
    settle: float | None,
    judge_set: tuple[tuple[str, str], ...],
    log_file: str | None,
    as_json: bool,
) -> None:
    """Sweep one agent folder (PATH) or the whole _inbox/."""
    options = sweep.Options(dry_run=dry_run, use_judge=not no_judge, wait=wait, judge_settings=judge_set, settle=settle)
    if not as_json and not log_file and sys.stdout.isatty():  # a bar only on a terminal
        options = dataclasses.replace(options, progress=output.progress)

    def swept() -> SweepResult:  # the vault too is looked for here: with --log-file, a missing one is logged
        ctx = asked.context()
        return sweep.run(ctx, command.run_scope(ctx.root, path), options)

    if log_file:  # a scheduled sweep: the outcome (or why there was none) goes to the log, not stdout
        raise click.exceptions.Exit(runlog.record_run(Path(log_file), swept, clock=asked.seams.clock))
    try:
        result = swept()
    except OtherHost as exc:  # exit 0 and one line saying why; JSON keeps the usual keys
        report.idle(str(exc), as_json)
        return
    report.sweep(result, as_json)


@vault_command(
    cli,
    "check",
    example="check _inbox/bot/note.md --explain",
    json="Print the verdict as JSON.",
    json_at=0,
    state=False,
    start=command.existing_file,
)
@click.argument("file", type=click.Path(allow_dash=True))
@click.option("--explain", is_flag=True, help="Show every drop rule and criterion evaluation.")
def check(ctx: Context, file: str, explain: bool, as_json: bool) -> None:
    """The verdict one candidate would get (FILE, or - for a note or JSON payload on stdin).

    Changes nothing.
    """
    if file == "-":
        text, origin = checking.read_candidate(file, command.stdin(), ctx.rules.settings.max_candidate_bytes)
        report.check(checking.check_text(ctx, text, origin, explain), as_json)
    else:
        report.check(checking.check_file(ctx, Path(file), explain), as_json)


@vault_command(
    cli,
    "watch",
    example="watch --vault ~/notes",
    json="Print one JSON object per swept batch on stdout.",
    json_at=0,
)
@click.option("--no-judge", is_flag=True, help="Do not ask the model; undecided stays needs_review.")
def watch(ctx: Context, no_judge: bool, as_json: bool) -> None:
    """Sweep candidates as they settle, until SIGINT or SIGTERM.

    Sweeps the backlog first; logs one line per action on stderr.
    """
    from memory_curator.commands import watch as watching  # start-up: watchdog's import is paid by `watch` only

    watcher = watching.Watcher(ctx, use_judge=not no_judge)
    with watching.stop_on_signals(watcher):
        for item in watcher.run():
            report.watch(item, as_json, ctx.clock.now())


@cli.group(name="rules", epilog=command.example_epilog("rules check --vault ~/notes"))
def rules_group() -> None:
    """The rules file (_meta/inbox-rules.md)."""


@vault_command(rules_group, "check", example="rules check --vault ~/notes", state=False, context=False)
@click.argument("file", required=False, type=click.Path(dir_okay=False))
def rules_check_command(asked: Invocation, file: str | None) -> None:
    """Validate a rules file (default: the vault's), with line numbers."""
    result = rules_checker.check(Path(file) if file is not None else rules_checker.vault_rules(asked.root()))
    report.rules_check(result)
    if result.rules is None:
        raise click.exceptions.Exit(result.exit_code)


@cli.group(name="schedule", epilog=command.example_epilog("schedule install --vault ~/notes --every 15m"))
def schedule_group() -> None:
    """Scheduled sweeps of one vault: launchd, a systemd user timer, or cron (the first that works here)."""


@vault_command(schedule_group, "install", example="schedule install --vault ~/notes --every 15m", context=False)
@command.job_options
def schedule_install(asked: Invocation, every: str, on_change: bool, platform: str | None) -> None:
    """Install (or replace) this vault's scheduled sweep."""
    from memory_curator.commands import schedule  # start-up: the schedulers' module, for `schedule` only

    plan = schedule.plan_install(asked.machine, asked.root(), asked.state, every, platform, on_change)
    history.schedule_applied([schedule.install(plan)])


@vault_command(schedule_group, "show", example="schedule show --vault ~/notes --every 1h", context=False)
@command.job_options
def schedule_show(asked: Invocation, every: str, on_change: bool, platform: str | None) -> None:
    """Print exactly what `install` would write and run; change nothing."""
    from memory_curator.commands import schedule  # start-up: the schedulers' module, for `schedule` only

    history.schedule_plan(schedule.plan_install(asked.machine, asked.root(), asked.state, every, platform, on_change))


@vault_command(schedule_group, "status", example="schedule status --vault ~/notes", json=True, context=False)
def schedule_status(asked: Invocation, as_json: bool) -> None:
    """Ask the scheduler itself whether this vault's sweep is loaded, and when it last ran."""
    from memory_curator.commands import schedule  # start-up: the schedulers' module, for `schedule` only

    history.schedule_status(schedule.status(asked.machine, asked.root(), asked.state), as_json)


@vault_command(schedule_group, "uninstall", example="schedule uninstall --vault ~/notes", state=False, context=False)
@command.schedulers
def schedule_uninstall(asked: Invocation, platform: str | None) -> None:
    """Remove this vault's scheduled sweep (from every scheduler, or the one named)."""
    from memory_curator.commands import schedule  # start-up: the schedulers' module, for `schedule` only

    vault = Path(asked.vault).expanduser() if asked.vault else None
    gone = vault is not None and not vault.exists()  # a deleted vault's job can still be removed
    root = vault.absolute() if vault is not None and gone else asked.root()
    done = [schedule.uninstall(plan) for plan in schedule.plan_uninstall(asked.machine, root, platform)]
    history.schedule_applied(done, f"no scheduled sweep of {root} found")


@vault_command(cli, "doctor", example="doctor --vault ~/notes", json="Print the findings as JSON.", context=False)
def doctor(asked: Invocation, as_json: bool) -> None:
    """Check the vault, rules, state, lock, schedule and judge key; exit 1 on any problem."""
    from memory_curator.commands import doctor as diagnosing  # start-up: it loads the schedulers' module

    diagnosis = diagnosing.diagnose(asked)
    report.doctor(diagnosis, as_json)
    if diagnosis.failed:
        raise click.exceptions.Exit(EXIT_CONFIG)


# --- the human and agent loop (docs/review.md, docs/agents.md) --------------------------------


@vault_command(cli, "review", example="review _inbox/bot", by=True, start=command.around("path"))
@click.argument("path", required=False, type=click.Path())
@click.option("--agent", "agents", multiple=True, metavar="AGENT", help="Only this agent's items (repeatable).")
@click.option(
    "--reason",
    metavar="CODE",
    callback=command.check_reason,
    help="Only items flagged for this reason code, e.g. near-duplicate (docs/review.md).",
)
def review(ctx: Context, path: str | None, agents: tuple[str, ...], reason: str | None) -> None:
    """Walk the items waiting for a person, oldest first (PATH: one agent folder or one file).

    One key each, no Enter: p promote, o promote as another surface, m merge (patch) into a
    note, d drop (asks a reason), e edit in $EDITOR, s skip, q quit; on a contradiction n takes
    the new value, k keeps the old, b keeps both; a applies one choice to this item and the
    others like it (one run: `undo RUN` takes all back). Each choice is applied and journalled
    at once; q or end of input exits 0, Ctrl-C 130.
    """
    from memory_curator.cli import keys  # start-up: the terminal's screen and keys, for `review` only
    from memory_curator.cli import review as review_ui

    wanted, only = reviewing.wanted(ctx.root, path, agents)
    tally = review_ui.review(Desk(ctx), output.make_console(highlight=False), keys.for_stdin(), wanted, only, reason)
    report.review_tally(tally)
    if tally.interrupted:  # Ctrl-C: the counts are said, what was decided stays decided
        raise click.exceptions.Exit(EXIT_INTERRUPTED)


@command.person_command(
    cli,
    "resolve",
    example="resolve _inbox/bot/note.md --drop 'already in facts/acme/hq.md'",
    start=command.beside("file"),
    usage=command.one_decision,
)
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
def resolve(
    ctx: Context,
    file: str,
    promote: bool,
    surface: str | None,
    patch_into: str | None,
    drop_reason: str | None,
    settle: Literal["new", "old", "both"] | None,
    yes: bool,
    wait: bool,
    as_json: bool,
) -> None:
    """Decide one inbox item without the interactive queue (for scripts and agents).

    A patch into a note of your own (not the curator's) shows its diff and asks on a
    terminal; without one it is refused unless --yes."""
    from memory_curator.cli import review as review_ui  # start-up: the terminal's prompt, for `resolve` only

    confirm = review_ui.asker() if patch_into is not None and ctx.machine.terminal else None
    done = reviewing.resolve(Desk(ctx, wait), file, surface, patch_into, drop_reason, confirm, yes, settle)
    report.person_action(done, as_json)


@command.person_command(
    cli,
    "restore",
    example="restore _inbox/.dropped/bot/2026-11-30T12-00-00-note.md",
    start=command.beside("dropped_file"),
)
@click.argument("dropped_file", type=click.Path())
def restore(ctx: Context, dropped_file: str, wait: bool, as_json: bool) -> None:
    """Move a dropped item back to _inbox/<agent>/, tagged needs-review, without its audit line."""
    report.restored(restoring.restore(ctx, dropped_file, wait), as_json)


@command.person_command(cli, "undo", example="undo --last", usage=command.run_or_last)
@click.argument("run_id", required=False)
@click.option("--last", is_flag=True, help="Undo the latest run that was not undone yet.")
def undo(ctx: Context, run_id: str | None, last: bool, wait: bool, as_json: bool) -> None:
    """Revert one run (a sweep or a person's action) where the vault still holds what it wrote."""
    report.undone(undoing.undo(ctx, run_id, wait), as_json)


@vault_command(cli, "submit", example="submit --agent bot --check note.md", json=True, state=False)
@click.argument("file", type=click.Path(allow_dash=True))
@click.option(
    "--agent",
    metavar="ID",
    callback=command.checked(command.check_agent),
    help="The agent folder (default: $MEMORY_CURATOR_AGENT, else _inbox/).",
)
@click.option("--check", "with_check", is_flag=True, help="Add the verdict a sweep would give.")
def submit_command(ctx: Context, file: str, agent: str | None, with_check: bool, as_json: bool) -> None:
    """Validate a candidate (a note, or a JSON payload; - for stdin) and write it atomically
    into _inbox/<agent>/ under a unique name."""
    text, origin = checking.read_candidate(file, command.stdin(), ctx.rules.settings.max_candidate_bytes)
    agent = agent or ctx.env.get("MEMORY_CURATOR_AGENT")
    report.submitted(submit.submit(ctx, text, origin, agent, with_check), as_json)


@vault_command(cli, "status", example="status --vault ~/notes", json=True)
def status_command(ctx: Context, as_json: bool) -> None:
    """The inbox backlog, the review queue, recent drops and sweeps, the index and the schedule."""
    history.status(status.gather(ctx), as_json)


@vault_command(cli, "mcp", example=None)
@click.option(
    "--agent",
    metavar="ID",
    callback=command.checked(command.check_agent),
    help="Write every candidate as this agent (calls naming another are refused).",
)
def mcp(ctx: Context, agent: str | None) -> None:
    """Serve this vault to agents over MCP (stdio): submit, check, search, read, status.

    Example, for Claude Code: claude mcp add curator -- memory-curator mcp --vault ~/notes --agent claude
    """
    try:
        from memory_curator.cli import mcp as mcp_server  # start-up, and an extra: the MCP SDK, for `mcp` only
    except ImportError as exc:
        raise CuratorError(f"the mcp command needs the MCP SDK ({exc}): pip install 'memory-curator[mcp]'") from None
    mcp_server.serve(ctx, agent)


@vault_command(cli, "log", example="log --since 7d", json=True)
@click.option(
    "--since",
    metavar="WHEN",
    callback=command.checked(command.check_since),
    help="Only actions since then: 30m, 12h, 7d, 2w or a date.",
)
@click.option("--file", "file", metavar="PATH", help="One note's history (vault path), e.g. facts/x/y.md.")
def log_command(ctx: Context, since: str | None, file: str | None, as_json: bool) -> None:
    """The decision log: which candidate, which verdict, why, and where it went."""
    history.decision_log(decision_log.read(ctx, since, file), as_json)


@vault_command(cli, "query", example="query acme headquarters", json=True, usage=command.one_question)
@click.argument("entity_predicate", nargs=-1, metavar="[ENTITY PREDICATE]")
@click.option("--slug", metavar="S", help="Notes whose title, alias, slug or file name is S (case, accents folded).")
@click.option(
    "--text",
    metavar="TEXT",
    help="The notes closest to TEXT (BM25; by meaning too with semantic pairing on), scored 0 to 1.",
)
@click.option("--date", "day", metavar="YYYY-MM-DD", callback=command.parse_day, help="Event notes on this day.")
@click.option(
    "--similar",
    metavar="FILE|TEXT",
    help="The notes closest to a note file (or a text): lexical and semantic neighbours side by side.",
)
@click.option(
    "--limit", default=5, show_default=True, type=click.IntRange(min=1), help="How many --text/--similar neighbours."
)
def query_command(
    ctx: Context,
    entity_predicate: tuple[str, ...],
    slug: str | None,
    text: str | None,
    day: str | None,
    similar: str | None,
    limit: int,
    as_json: bool,
) -> None:
    """Ask the vault's index: the note for ENTITY PREDICATE, a --slug, a --date, --text or --similar neighbours."""
    key = (entity_predicate[0], entity_predicate[1]) if entity_predicate else None
    report.query(query.ask(ctx, query.Question(key, slug, text, day, similar, limit), Path.cwd()), as_json)


@cli.group(name="index", epilog=command.example_epilog("index rebuild --vault ~/notes"))
def index_group() -> None:
    """The vault's index (a disposable SQLite file in the state directory)."""


@vault_command(index_group, "rebuild", example="index rebuild --vault ~/notes", json=True)
def index_rebuild(ctx: Context, as_json: bool) -> None:
    """Build the index from scratch (sweeps refresh it by themselves)."""
    report.index_rebuilt(index.rebuild(ctx), as_json)


@vault_command(index_group, "stats", example="index stats --json", json=True)
def index_stats(ctx: Context, as_json: bool) -> None:
    """Where the index lives, its size, freshness and the notes it could only read by body (no refresh)."""
    report.index_stats(index.stats(ctx), as_json)


@cli.group(name="semantic", epilog=command.example_epilog("semantic fetch minishlab/potion-base-8M"))
def semantic_group() -> None:
    """Opt-in semantic pairing: a local embedding model (needs the `semantic` extra)."""


@semantic_group.command(name="fetch", epilog=command.example_epilog("semantic fetch minishlab/potion-base-8M"))
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
    machine = machine_of(seams)
    fetched = semantic.fetch(name, Path(to) if to else None, machine.env, data_home=machine.data_home)
    output.lines([f"{printable(name)}: {fetched.path} ({fetched.bytes / 1e6:.1f} MB)"])


def main(argv: list[str] | None = None, seams: Seams | None = None) -> None:
    """Entry point: the command line inside the one error boundary (`cli.boundary`), on `seams`
    (what it takes from the world; None: the real ones), as `CliRunner().invoke(cli, argv, obj=seams)`."""
    boundary.main(cli, argv, seams)
