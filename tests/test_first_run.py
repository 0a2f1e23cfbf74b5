"""A first run that explains itself (issue 18): `run --settle`, folders that are not vaults,
`init`'s folders and next steps, one `watch` per vault, aliases on promoted notes, and an
example in every command's help."""

from __future__ import annotations

import datetime as dt
import os
import socket
from pathlib import Path

import click
import pytest

from memory_curator.cli.app import cli, main
from memory_curator.core import candidate as cand
from memory_curator.core.clock import FixedClock
from memory_curator.core.compose import promoted_text
from memory_curator.core.notes import parse
from memory_curator.store.rules_file import DEFAULT_RULES, load
from memory_curator.store.state import watcher_lock

from conftest import NOW, REPO, state_of

RULES = load(DEFAULT_RULES)


def ended(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """(exit code, stdout and stderr) of the real entry point, through its error boundary."""
    with pytest.raises(SystemExit) as stopped:
        main(list(args))
    captured = capsys.readouterr()
    assert isinstance(stopped.value.code, int)
    return stopped.value.code, captured.out + captured.err


def fresh(path: Path, clock: FixedClock) -> None:
    """An mtime of "now" by the clock the sweep uses: inside any settle window."""
    os.utime(path, (clock.timestamp(), clock.timestamp()))


# --- run --settle ------------------------------------------------------------------------------


def test_a_fresh_file_waits_without_settle_and_is_swept_with_settle_0(vault: Path, invoke, clock) -> None:
    path = vault / "_inbox/test-step-4/promotable-fact.md"
    fresh(path, clock)
    waited = invoke("run", "--vault", str(vault), clock=clock)
    assert waited.exit_code == 0 and "still being written" in waited.output and path.exists()
    swept = invoke("run", "--vault", str(vault), "--settle", "0", clock=clock)
    assert swept.exit_code == 0, swept.output
    assert not path.exists()
    assert "promote" in swept.output


def test_settle_overrides_the_rules_window_both_ways(vault: Path, invoke, clock) -> None:
    path = vault / "_inbox/test-step-4/promotable-fact.md"
    os.utime(path, (clock.timestamp() - 30, clock.timestamp() - 30))  # 30 s old
    assert "still being written" in invoke("run", "--vault", str(vault), "--settle", "600", clock=clock).output
    assert path.exists()
    invoke("run", "--vault", str(vault), "--settle", "10", clock=clock)
    assert not path.exists()


def test_an_empty_file_is_complete_with_settle_0(vault: Path, invoke, clock, write_candidate) -> None:
    path = write_candidate(vault, "empty.md", "", settled=False)
    fresh(path, clock)
    result = invoke("run", "--vault", str(vault), "--settle", "0", "--json", clock=clock)
    assert result.exit_code == 0
    assert "_inbox/agent-a/empty.md" in result.output
    assert "waiting for its content" not in result.output


@pytest.mark.parametrize("value", ["-1", "soon"])
def test_a_bad_settle_is_a_usage_error(vault: Path, invoke, value: str) -> None:
    assert invoke("run", "--vault", str(vault), "--settle", value).exit_code == 2


# --- not a vault -------------------------------------------------------------------------------

VAULT_COMMANDS = [
    ("run",),
    ("check", "{note}"),
    ("watch",),
    ("rules", "check"),
    ("schedule", "show"),
    ("schedule", "install"),
    ("schedule", "status"),
    ("schedule", "status"),
    ("doctor",),
    ("review",),
    ("resolve", "{note}", "--promote"),
    ("restore", "{note}"),
    ("undo", "--last"),
    ("submit", "{note}"),
    ("status",),
    ("log",),
    ("query", "--slug", "x"),
    ("index", "rebuild"),
    ("index", "stats"),
    ("mcp",),
]


def test_every_command_with_a_vault_option_is_in_the_table() -> None:
    def walk(group: click.Group, prefix: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
        out: set[tuple[str, ...]] = set()
        for name, command in group.commands.items():
            if isinstance(command, click.Group):
                out |= walk(command, (*prefix, name))
            elif any("--vault" in p.opts for p in command.params) and name != "init":
                out.add((*prefix, name))
        return out

    table = {
        tuple(a for a in args if not a.startswith("{") and not a.startswith("-") and a != "x")
        for args in VAULT_COMMANDS
    }
    assert walk(cli) - {("schedule", "uninstall")} <= table


@pytest.mark.parametrize("args", VAULT_COMMANDS, ids=lambda a: " ".join(a))
def test_a_folder_that_is_not_a_vault_is_refused(tmp_path: Path, capsys, args: tuple[str, ...]) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    note = tmp_path / "note.md"
    note.write_text("---\ntype: fact\n---\n", encoding="utf-8")
    state = tmp_path / "state"
    argv = [a.replace("{note}", str(note)) for a in args]
    extra = ["--state-dir", str(state)] if any(p == "--state-dir" for p in _options(args)) else []
    code, output = ended(capsys, *argv, "--vault", str(folder), *extra)
    assert code == 1, output
    expected = f"not a vault: {folder.resolve()} has no _inbox/ and no _meta/inbox-rules.md"
    assert expected in output
    assert f"(run `memory-curator init {folder.resolve()}`)" in output
    assert sorted(os.listdir(folder)) == []  # no _inbox/ (watch), nothing at all
    assert not state.exists()  # no state folder either


def _options(args: tuple[str, ...]) -> list[str]:
    command: click.Command = cli
    for name in args:
        if isinstance(command, click.Group) and name in command.commands:
            command = command.commands[name]
    return [opt for p in command.params for opt in p.opts]


def test_the_vault_from_the_environment_is_checked_too(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("MEMORY_CURATOR_VAULT", str(tmp_path))
    code, output = ended(capsys, "status")
    assert code == 1 and "not a vault:" in output


# --- init ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["positional", "option"])
def test_init_makes_only_the_inbox_and_the_rules_and_says_what_next(tmp_path: Path, invoke, how: str) -> None:
    root = tmp_path / "notes"
    result = invoke("init", str(root)) if how == "positional" else invoke("init", "--vault", str(root))
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in root.iterdir()) == ["_inbox", "_meta"]
    assert sorted(p.name for p in (root / "_inbox").iterdir()) == []
    out = result.output
    assert f"memory-curator submit --vault {root.resolve()}" in out
    assert f"memory-curator run --vault {root.resolve()} --settle 0" in out
    assert f"memory-curator status --vault {root.resolve()}" in out
    assert "Settings → Files & Links → Excluded files" in out and "_inbox/" in out


def test_init_takes_one_folder(tmp_path: Path, invoke) -> None:
    result = invoke("init", str(tmp_path / "a"), "--vault", str(tmp_path / "b"))
    assert result.exit_code == 2
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_a_vault_made_by_init_takes_its_first_note(tmp_path: Path, invoke, clock) -> None:
    root = tmp_path / "notes"
    invoke("init", "--vault", str(root))
    note = root / "_inbox/bot/n.md"
    note.parent.mkdir()
    note.write_text(
        "---\ntype: fact\nentity: acme\npredicate: hq\nvalue: Lyon\nsource_url: https://e.com/a\nconfidence: 3\n"
        "load_bearing: true\n---\nAcme moved to Lyon.\n",
        encoding="utf-8",
    )
    fresh(note, clock)
    result = invoke("run", "--vault", str(root), "--settle", "0", clock=clock)
    assert result.exit_code == 0, result.output
    assert (root / "facts/acme/hq.md").is_file()


# --- one watch per vault ----------------------------------------------------------------------


def test_a_second_watch_of_the_same_vault_exits_75(vault: Path, capsys) -> None:
    state = state_of(vault)
    with watcher_lock(state, os.getpid(), socket.gethostname()):
        code, output = ended(capsys, "watch", "--vault", str(vault))
    assert code == 75
    assert len(output.strip().splitlines()) == 1
    assert "another watch of this vault is running" in output


def test_the_watcher_lock_is_free_again_once_released(vault: Path) -> None:
    state = state_of(vault)
    with watcher_lock(state, os.getpid(), socket.gethostname()):
        pass
    with watcher_lock(state, os.getpid(), socket.gethostname()):
        pass


# --- aliases on promoted notes ----------------------------------------------------------------


def build(text: str) -> cand.Candidate:
    return cand.build(text.encode("utf-8"), "_inbox/agent-a/c.md", "agent-a", RULES)


FACT = (
    "---\ntype: fact\nentity: obsidian\npredicate: price\ntitle: {title}\nvalue: free\n"
    "source_url: https://obsidian.md\n{extra}---\nBody.\n"
)
WHEN = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC)


def test_a_promoted_note_whose_name_differs_from_its_title_gets_the_title_as_alias() -> None:
    text = promoted_text(build(FACT.format(title="Obsidian 1.9 ships Bases", extra="")), WHEN)
    assert parse(text).frontmatter["aliases"] == ["Obsidian 1.9 ships Bases"]
    assert "aliases:\n  - Obsidian 1.9 ships Bases\n" in text


def test_no_alias_when_the_name_is_the_title() -> None:
    text = promoted_text(build(FACT.format(title="price", extra="")), WHEN)
    assert "aliases" not in parse(text).frontmatter


@pytest.mark.parametrize("spelling", ["'NO'", '"on"', "yes", "2026-11-30", "'It''s here'", "010", '"tab\\there"'])
def test_the_alias_is_the_title_as_written(spelling: str) -> None:
    text = promoted_text(build(FACT.format(title=spelling, extra="")), WHEN)
    fm = parse(text).frontmatter
    assert fm["aliases"] == [fm["title"]]
    assert f"title: {spelling}\n" in text
    assert spelling in text.split("aliases:", 1)[1]


def test_existing_aliases_are_kept_and_the_title_added_once() -> None:
    text = promoted_text(build(FACT.format(title="Bases", extra="aliases: [Obsidian Bases, 'NO']\n")), WHEN)
    assert parse(text).frontmatter["aliases"] == ["Obsidian Bases", "NO", "Bases"]
    assert "'NO'" in text
    again = promoted_text(build(FACT.format(title="Bases", extra="aliases: [Bases]\n")), WHEN)
    assert parse(again).frontmatter["aliases"] == ["Bases"]


def test_a_person_gets_its_name_as_alias() -> None:
    text = promoted_text(
        build("---\ntype: person\nname: Ada Lovelace\nsource_url: https://e.com\n---\nMathematician.\n"), WHEN
    )
    assert parse(text).frontmatter["aliases"] == ["Ada Lovelace"]


# --- help ---------------------------------------------------------------------------------------


def _all(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for name, command in sorted(group.commands.items()):
        out.append((*prefix, name))
        if isinstance(command, click.Group):
            out += _all(command, (*prefix, name))
    return out


@pytest.mark.parametrize("path", _all(cli), ids=" ".join)
def test_every_command_help_has_an_example(invoke, path: tuple[str, ...]) -> None:
    result = invoke(*path, "--help")
    assert result.exit_code == 0
    assert f"memory-curator {' '.join(path)}" in result.output.split("Example", 1)[-1], result.output
    assert "Example" in result.output


def test_the_readme_lists_every_command_and_shell_completion() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for path in _all(cli):
        command = cli
        for name in path:
            command = command.commands[name]  # type: ignore[attr-defined]
        if isinstance(command, click.Group):
            continue
        assert f"memory-curator {' '.join(path)}" in readme, path
    assert "_MEMORY_CURATOR_COMPLETE=bash_source memory-curator" in readme
    assert "_MEMORY_CURATOR_COMPLETE=zsh_source memory-curator" in readme


def test_the_readmes_first_command_uses_settle_and_no_touch() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    first = readme.split("```sh\n", 1)[1].split("```", 1)[0]
    assert "--settle 0" in first and "touch" not in first and "--json" not in first
    assert NOW  # the suite's fixed "now" (the demo needs none)


def test_a_run_that_asks_no_judge_never_imports_its_client(vault: Path) -> None:
    """The client's SDK and pydantic models cost ~0.1 s to import: an empty-inbox run (every few
    minutes from a scheduler) and `--no-judge` must not pay for them (issue 29: <= 0.4 s)."""
    import subprocess
    import sys

    probe = (
        "import sys\nfrom memory_curator.cli.app import main\n"
        "try:\n    main(['run', '--no-judge', '--vault', sys.argv[1], '--settle', '0'])\n"
        "except SystemExit:\n    pass\n"
        "print('memory_curator.judge.client' in sys.modules, 'anthropic' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe, str(vault)], capture_output=True, text=True, check=False)
    assert done.stdout.strip().splitlines()[-1] == "False False", (done.stdout, done.stderr)
