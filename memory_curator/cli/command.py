"""One shape for every vault command (issue 26). `vault_command` declares the options a command
shares with the others (--by, --wait, --json, --vault, --state-dir, as it asks), finds its vault
(design §1: --vault, else MEMORY_CURATOR_VAULT, else the vault around the path it was given,
else around the working folder) and calls it with the Context built there; the click obj is
always the Seams. The option callbacks here turn a bad value into a usage error (exit 2) in the
domain's own words, before any vault is looked for."""

from __future__ import annotations

import dataclasses
import functools
import io
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, BinaryIO

import click

from memory_curator.cli import output
from memory_curator.cli.machine import here, invocation
from memory_curator.commands import log as decision_log
from memory_curator.commands import submit as submit_mod
from memory_curator.commands.context import Seams
from memory_curator.core.clock import SystemClock
from memory_curator.core.errors import EXIT_LOCKED, CuratorError
from memory_curator.core.reasons import CODES
from memory_curator.core.rules import JudgeSettings
from memory_curator.core.text import parse_day as read_day
from memory_curator.judge.settings import resolve_settings

Params = Mapping[str, Any]
Callback = Callable[..., None]
JSON_HELP = "Print the result as JSON."


class VaultCommand(click.Command):
    """A command declared by `vault_command`: it runs in a Context (or, for the few that look
    for the vault themselves, an Invocation) and builds none (tests/test_cli_shape.py)."""

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        """Its options, the scheduler flags made where `schedulers` put their stand-in."""
        out: list[click.Parameter] = []
        for param in super().get_params(ctx):
            out += scheduler_flags() if isinstance(param, SchedulerFlags) else [param]
        return out


def vault_command(
    group: click.Group,
    name: str,
    *,
    example: str | None,
    json: bool | str = False,
    json_at: int | None = None,
    state: bool = True,
    by: bool = False,
    wait: bool = False,
    start: Callable[[Params], Path | None] | None = None,
    usage: Callable[[Params], None] | None = None,
    context: bool = True,
) -> Callable[[Callback], click.Command]:
    """Declare `name` in `group`, with its one `example` line. The decorated function takes its Context first (with
    `context=False`, the Invocation: `run --log-file`, `doctor`, `rules check FILE` and
    `schedule` look for the vault themselves), then its own parameters, `as_json` with `json`
    (True, or --json's help) and `wait` with `wait`. --json goes after the command's own
    options, or before its `json_at`-th. `usage` refuses a command line that is wrong by itself
    (exit 2) and `start` names the path the vault is looked for around (it may refuse a missing
    file), both before any vault is looked for."""

    def decorate(func: Callback) -> click.Command:
        @functools.wraps(func)
        def callback(**params: Any) -> None:
            if usage is not None:
                usage(params)
            where = start(params) if start is not None else None
            asked = invocation(
                _seams(), params.pop("vault"), params.pop("state_dir", None), params.pop("by", None), where
            )
            func(asked.context() if context else asked, **params)

        own = list(reversed(getattr(func, "__click_params__", [])))  # click keeps them last first
        params = [*own, *shared_options(json=json if json_at is None else False, by=by, wait=wait, state=state)]
        if json and json_at is not None:
            options = [i for i, param in enumerate(own) if isinstance(param, click.Option)]
            params.insert(options[json_at] if json_at < len(options) else len(own), json_option(_json_help(json)))
        callback.__click_params__ = list(reversed(params))  # type: ignore[attr-defined]
        return group.command(name, cls=VaultCommand, epilog=example_epilog(example))(callback)

    return decorate


def person_command(
    group: click.Group,
    name: str,
    *,
    example: str,
    start: Callable[[Params], Path | None] | None = None,
    usage: Callable[[Params], None] | None = None,
) -> Callable[[Callback], click.Command]:
    """A person's action on the vault (`resolve`, `restore`, `undo`): `vault_command` with who
    decides (--by), waiting for a running sweep (--wait) and --json."""
    return vault_command(group, name, example=example, json=True, by=True, wait=True, start=start, usage=usage)


def example_epilog(line: str | None) -> str | None:
    """A command's one example (its arguments after `memory-curator`), shown at the end of its
    --help (mcp's is in its help text)."""
    return f"\b\nExample:\n  memory-curator {line}" if line else None


def shared_options(*, json: bool | str, by: bool, wait: bool, state: bool) -> list[click.Option]:
    """The options vault commands share, in the order every command lists them."""
    out = []
    if by:
        out.append(
            click.Option(["--by", "by"], metavar="NAME", help="Who decides (default: $MEMORY_CURATOR_USER or login).")
        )
    if wait:
        help_text = f"Wait for a running sweep instead of exiting {EXIT_LOCKED}."
        out.append(click.Option(["--wait"], is_flag=True, help=help_text))
    if json:
        out.append(json_option(_json_help(json)))
    out.append(click.Option(["--vault", "vault"], type=click.Path(file_okay=False), help="The vault folder."))
    if state:
        help_text = "This vault's state folder (index, journal, lock, logs)."
        out.append(click.Option(["--state-dir", "state_dir"], type=click.Path(file_okay=False), help=help_text))
    return out


def json_option(help_text: str = JSON_HELP) -> click.Option:
    return click.Option(["--json", "as_json"], is_flag=True, help=help_text)


def _json_help(json: bool | str) -> str:
    return json if isinstance(json, str) else JSON_HELP


def seams_of(given: Seams | None) -> Seams:
    """What every command takes from the world, always a Seams: a test's own (`obj=Seams(...)`),
    else the real ones with the index's bar on a terminal; on this machine, read once, unless
    the seams name another."""
    if given is None:
        given = Seams(progress=output.index_progress if sys.stderr.isatty() else None)  # stdout stays clean
    return given if given.machine is not None else dataclasses.replace(given, machine=here())


def _seams() -> Seams:
    seams = click.get_current_context().obj
    if not isinstance(seams, Seams):  # the group makes it one: only a command run outside it gets here
        raise TypeError(f"the click obj is {type(seams).__name__}, not Seams")
    return seams


# --- where the vault is looked for -------------------------------------------------------------


def around(parameter: str) -> Callable[[Params], Path | None]:
    """The vault around the path in `parameter` (PATH of `run`, `review`): itself, else none."""
    return lambda params: Path(params[parameter]) if params[parameter] else None


def beside(parameter: str) -> Callable[[Params], Path | None]:
    """The vault around the file in `parameter` (`resolve`, `restore`): its folder."""
    return lambda params: Path(params[parameter]).parent


def existing_file(params: Params) -> Path | None:
    """`check FILE`: the vault around FILE, which must exist (`-`, stdin: around the working folder)."""
    file = params["file"]
    if file == "-":
        return None
    if not Path(file).is_file():
        raise CuratorError(f"{file}: no such file", file=file)
    return Path(file).parent


# --- what the command line names ----------------------------------------------------------------


def run_scope(root: Path, path: str | None) -> Path | None:
    """`run PATH`: the folder PATH names, from here or else from the vault."""
    if path is None:
        return None
    candidate = Path(path)
    if not candidate.is_absolute() and not candidate.exists() and (root / candidate).exists():
        candidate = root / candidate
    if not candidate.exists():
        raise CuratorError(f"{path}: no such folder")
    return candidate


def stdin() -> BinaryIO:
    """Standard input as bytes (a test's or a wrapper's text stream is encoded as it is read)."""
    binary = getattr(sys.stdin, "buffer", None)
    return binary if binary is not None else io.BytesIO(sys.stdin.read().encode("utf-8", "surrogateescape"))


def _every(text: str) -> None:
    from memory_curator.commands import schedule  # start-up: the schedulers' module, for `schedule` only

    schedule.parse_every(text)


def schedulers(func: Callback) -> Callback:
    """--launchd, --systemd, --cron: the scheduler, else the first that works here. One flag per
    scheduler in the registry (`commands.schedule.registry`), made when the command's options
    are asked for (`VaultCommand.get_params`): start-up loads no scheduler."""
    return click.option("--scheduler", "platform", cls=SchedulerFlags, hidden=True)(func)


class SchedulerFlags(click.Option):
    """Stands for the scheduler flags among a command's options (`VaultCommand.get_params`)."""


_FLAGS: dict[tuple[tuple[str, str], ...], list[click.Parameter]] = {}


def scheduler_flags() -> list[click.Parameter]:
    """`--<name>` for each registered scheduler, in the registry's order (the same objects while
    the registry is the same: click parses with one list and reads values with another)."""
    from memory_curator.commands.schedule import schedulers  # start-up: the schedulers' module, for `schedule` only

    named = tuple((s.name, s.flag_help) for s in schedulers().values())
    if named not in _FLAGS:
        _FLAGS[named] = [click.Option([f"--{name}", "platform"], flag_value=name, help=text) for name, text in named]
    return _FLAGS[named]


def job_options(func: Callback) -> Callback:
    """What a scheduled sweep is: how often, on a change too (launchd), by which scheduler."""
    every = click.option(
        "--every", default="15m", show_default=True, callback=checked(_every), help="How often (e.g. 5m, 30m, 2h, 1d)."
    )
    on_change = click.option(
        "--on-change", is_flag=True, help="launchd: also sweep when the inbox changes (WatchPaths)."
    )
    return every(on_change(schedulers(func)))


# --- a command line wrong by itself (a usage error, before any vault is looked for) -----------


def one_decision(params: Params) -> None:
    """`resolve`: exactly one decision (and --settle only with --patch)."""
    chosen = [params["promote"] or params["surface"] is not None, params["patch_into"] is not None]
    if sum([*chosen, params["drop_reason"] is not None]) != 1:
        raise click.UsageError("give exactly one of --promote/--surface, --patch NOTE, --drop REASON")
    if params["settle"] is not None and params["patch_into"] is None:
        raise click.UsageError("--settle goes with --patch NOTE")


def run_or_last(params: Params) -> None:
    """`undo`: a RUN_ID or --last, not both."""
    if (params["run_id"] is None) == (not params["last"]):
        raise click.UsageError("give a RUN_ID (see `memory-curator log`) or --last")


def one_question(params: Params) -> None:
    """`query`: one question at a time (ENTITY PREDICATE is two words)."""
    key = params["entity_predicate"]
    asked = [bool(key), *(params[name] is not None for name in ("slug", "text", "day", "similar"))]
    if sum(asked) != 1 or len(key) not in (0, 2):
        raise click.UsageError(
            "ask one thing: ENTITY PREDICATE, --slug S, --text TEXT, --similar FILE|TEXT or --date YYYY-MM-DD"
        )


JUDGE_SET_HELP = (
    "A judge setting for this run (model, effort, max_tokens, timeout_seconds, deadline_seconds, max_retries, "
    "chunk_size, neighbours, enabled); beats MEMORY_CURATOR_JUDGE_<NAME> and the rules file. Repeatable."
)


# --- option callbacks: a bad value is a usage error, in the domain's words ----------------------


def checked(check: Callable[[str], object]) -> Callable[[click.Context, click.Parameter, str | None], str | None]:
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


def check_since(text: str) -> None:
    decision_log.parse_since(text, SystemClock().now())  # the syntax only: the command counts from its clock


def check_agent(text: str) -> None:
    submit_mod.agent_name(text)


def parse_day(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    """--date: a calendar day, read as MCP's `search_notes` reads it (`core.text.parse_day`)."""
    if value is None:
        return None
    try:
        return read_day(value)
    except CuratorError as exc:
        raise click.BadParameter(str(exc)) from None


def check_reason(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    """--reason: one of the reason codes (docs/review.md)."""
    if value is not None and value not in CODES:
        raise click.BadParameter(f"{value!r} is not a reason code (one of: {', '.join(CODES)})", param_hint="--reason")
    return value


def judge_pairs(_ctx: click.Context, _param: click.Parameter, values: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """--judge-set NAME=VALUE: known names and usable values, checked against the defaults."""
    pairs = []
    for value in values:
        name, sep, setting = value.partition("=")
        if not sep or not name.strip():
            raise click.BadParameter(f"{value!r}: expected NAME=VALUE")
        pairs.append((name.strip(), setting))
    if pairs:
        try:
            resolve_settings(JudgeSettings(), pairs, env={})
        except CuratorError as exc:
            raise click.BadParameter(str(exc).removeprefix("--judge-set ")) from None
    return tuple(pairs)
