"""The command line: a thin click layer. One error boundary turns domain errors into one
line on stderr and an exit code (1 configuration, 2 usage, 75 locked); no tracebacks."""

from __future__ import annotations

import sys
import traceback
from pathlib import Path

import click

from memory_curator import checking, report, sweep
from memory_curator import rules as rules_mod
from memory_curator import vault as vault_mod
from memory_curator.errors import EXIT_USAGE, CuratorError

VAULT_OPTION = click.option("--vault", "vault", type=click.Path(file_okay=False), help="The vault folder.")
STATE_OPTION = click.option(
    "--state-dir",
    "state_dir",
    type=click.Path(file_okay=False),
    help="This vault's state folder (index, journal, lock, logs).",
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="memory-curator")
def cli() -> None:
    """Keep an Obsidian-style vault clean while AI agents write into it."""


@cli.command()
@click.argument("vault", required=False, type=click.Path(file_okay=False))
def init(vault: str | None) -> None:
    """Create _meta/inbox-rules.md (never overwritten) and the vault's folders."""
    from memory_curator.setup import init_vault

    root = Path(vault or ".")
    for line in init_vault(root):
        click.echo(line)


@cli.command()
@click.argument("path", required=False, type=click.Path())
@click.option("--dry-run", is_flag=True, help="Show the plan (with a diff for every patch); change nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--no-judge", is_flag=True, help="Do not ask the model; undecided stays needs_review.")
@click.option("--wait", is_flag=True, help="Wait for another sweep to finish instead of exiting 75.")
@VAULT_OPTION
@STATE_OPTION
def run(
    path: str | None,
    dry_run: bool,
    as_json: bool,
    no_judge: bool,
    wait: bool,
    vault: str | None,
    state_dir: str | None,
) -> None:
    """Sweep one agent folder (PATH) or the whole _inbox/."""
    root = vault_mod.find_root(Path(path) if path else None, vault)
    scope = _scope(root, path)
    options = sweep.Options(dry_run=dry_run, use_judge=not no_judge, wait=wait, state_dir=state_dir)
    result = sweep.run(root, scope, options)
    report.sweep(result, as_json)


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
def check(file: str, as_json: bool, explain: bool, vault: str | None) -> None:
    """The verdict one candidate would get (FILE, or - for a note or JSON payload on stdin).

    Changes nothing.
    """
    if file == "-":
        root = vault_mod.find_root(None, vault)
        data = checking.check_text(root, sys.stdin.read(), "<stdin>", explain)
    else:
        target = Path(file)
        if not target.is_file():
            raise CuratorError(f"{file}: no such file")
        root = vault_mod.find_root(target.parent, vault)
        data = checking.check_file(root, target, explain)
    report.check(data, as_json)


@cli.group(name="rules")
def rules_group() -> None:
    """The rules file (_meta/inbox-rules.md)."""


@rules_group.command(name="check")
@click.argument("file", required=False, type=click.Path(dir_okay=False))
@VAULT_OPTION
def rules_check(file: str | None, vault: str | None) -> None:
    """Validate a rules file (default: the vault's), with line numbers."""
    if file is None:
        root = vault_mod.find_root(None, vault)
        path = root / vault_mod.RULES_PATH
        if not path.exists():
            raise CuratorError(f"{path}: no rules file (run `memory-curator init`)")
    else:
        path = Path(file)
    report.rules_summary(rules_mod.load(path))


def main(argv: list[str] | None = None) -> None:
    """Entry point: the one error boundary."""
    try:
        code = cli.main(args=argv, prog_name="memory-curator", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code if exc.exit_code else EXIT_USAGE)
    except CuratorError as exc:
        click.echo(f"memory-curator: {exc}", err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(130)
    except Exception as exc:  # a bug: say so in one line, keep the traceback in a log
        log = _crash_log()
        click.echo(f"memory-curator: internal error: {type(exc).__name__}: {exc} (details: {log})", err=True)
        sys.exit(3)
    sys.exit(code if isinstance(code, int) else 0)


def _crash_log() -> str:
    """Tracebacks go to the state directory, never into the vault or the terminal."""
    import platformdirs

    path = Path(platformdirs.user_state_dir("memory-curator")) / "crash.log"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(traceback.format_exc(), encoding="utf-8")
    except OSError:
        return "unavailable"
    return str(path)
