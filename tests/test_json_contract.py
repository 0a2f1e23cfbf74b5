"""The JSON contract of every command (issue 15): `run --json` prints the spec's shape
(tests/test_result_contract.py pins its keys); every other `--json` prints one envelope,
`{"version": 1, "command": "<name as typed>", "data": ...}` (`watch`: one per line).

Each command that has a `--json` option needs a case here: a command added without one fails
`test_every_json_command_has_a_case`."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result
from fake_schedulers import install_fakes
from loop_kit import INSIGHT
from test_result_contract import TOTAL_KEYS, check_agent

from memory_curator.cli.app import cli
from memory_curator.commands.context import Seams
from memory_curator.core.clock import Clock, FixedClock, SystemClock
from memory_curator.store.journal import Journal

from conftest import NOW, signalled

SUBMITTED = """---
type: fact
entity: acme
predicate: headquarters
value: Acme is based in Berlin.
source_url: https://example.dev/acme
confidence: 2
---
Seen on the company site.
"""


@dataclass
class Vault:
    """A temp vault, its state folder, and the CLI against both with a fixed clock."""

    root: Path
    state: Path
    write_candidate: Callable[..., Path]

    def invoke(self, *args: str, input: str | None = None, clock: Clock | None = None) -> Result:
        seams = Seams(clock=clock or FixedClock(NOW))
        return CliRunner().invoke(cli, list(args), input=input, obj=seams, catch_exceptions=False)

    @property
    def where(self) -> tuple[str, ...]:
        return ("--vault", str(self.root), "--state-dir", str(self.state))

    def dropped(self) -> str:
        """Drop one candidate by hand: the file that `restore` can bring back."""
        item = self.write_candidate(self.root, "dropped.md", INSIGHT)
        done = self.invoke("resolve", str(item), "--drop", "not now", "--by", "tester", "--json", *self.where)
        assert done.exit_code == 0, done.output
        return str(self.root / json.loads(done.stdout)["data"]["moved_to"])


def indexed(v: Vault) -> list[str]:
    assert v.invoke("index", "rebuild", *v.where).exit_code == 0
    return [*v.where]


def undoable(v: Vault) -> list[str]:
    v.dropped()
    return ["--last", *v.where]


def candidate(v: Vault, name: str) -> str:
    return str(v.write_candidate(v.root, name, INSIGHT))


# command (as typed) -> (its arguments but --json, given a vault; its stdin; the type of `data`)
CASES: dict[str, tuple[Callable[[Vault], list[str]], str | None, type]] = {
    "check": (lambda v: [candidate(v, "c.md"), "--vault", str(v.root)], None, dict),
    "doctor": (lambda v: [*v.where], None, list),
    "index rebuild": (lambda v: [*v.where], None, dict),
    "index stats": (indexed, None, dict),
    "log": (lambda v: [*v.where], None, dict),
    "query": (lambda v: ["--slug", "Ada Lovelace", *v.where], None, dict),
    "resolve": (lambda v: [candidate(v, "r.md"), "--promote", "--by", "tester", *v.where], None, dict),
    "restore": (lambda v: [v.dropped(), "--by", "tester", *v.where], None, dict),
    "schedule status": (lambda v: ["--vault", str(v.root)], None, dict),
    "status": (lambda v: [*v.where], None, dict),
    "submit": (lambda v: ["-", "--agent", "bot", "--vault", str(v.root)], SUBMITTED, dict),
    "undo": (undoable, None, dict),
    "watch": (lambda v: ["--no-judge", *v.where], None, dict),  # one JSON line per batch that did something
}


def json_commands(group: click.Group = cli, prefix: str = "") -> Iterator[str]:
    """Every command, as typed after `memory-curator`, that has a `--json` option."""
    for name, command in sorted(group.commands.items()):
        typed = f"{prefix}{name}"
        if isinstance(command, click.Group):
            yield from json_commands(command, typed + " ")
        elif any("--json" in getattr(param, "opts", ()) for param in command.params):
            yield typed


def test_every_json_command_has_a_case() -> None:
    found = set(json_commands())
    assert "run" in found and len(found) > 5  # the walk sees the commands
    assert found - {"run"} == set(CASES), "a command with --json needs a case in CASES (and its docs)"


@pytest.fixture
def env(vault: Path, tmp_path: Path, write_candidate: Callable[..., Path], monkeypatch: pytest.MonkeyPatch) -> Vault:
    install_fakes(tmp_path / "fakes", monkeypatch)  # `status`, `doctor`, `schedule status` ask the schedulers
    return Vault(vault, tmp_path / "state", write_candidate)


def swept(state: Path) -> Callable[[], bool]:
    """Whether a sweep that did something has ended (its run record is in the journal)."""

    return lambda: any(r.get("event") == "run" for r in Journal(state / "journal.jsonl").records())


@pytest.mark.parametrize("command", sorted(CASES))
@pytest.mark.filterwarnings("ignore:Callback with id:RuntimeWarning")  # watchdog's, as a sweep makes .dropped/
def test_every_other_json_output_is_the_versioned_envelope(command: str, env: Vault) -> None:
    arguments, stdin, kind = CASES[command]
    if command == "watch":  # the real watch, on the system's clock (its timers), signalled after one batch
        with signalled(swept(env.state)):
            result = env.invoke(command, *arguments(env), "--json", clock=SystemClock())
    else:
        result = env.invoke(*command.split(), *arguments(env), "--json", input=stdin)
    assert result.exit_code in ((0, 1) if command == "doctor" else (0,)), result.output
    lines = result.stdout.splitlines() if command == "watch" else [result.stdout]
    assert [line for line in lines if line.strip()], result.output
    for line in lines:
        out = json.loads(line)
        assert list(out) == ["version", "command", "data"]
        assert (out["version"], out["command"]) == (1, command)
        assert isinstance(out["data"], kind), out["data"]


def test_run_json_keeps_the_spec_shape(env: Vault) -> None:
    one = json.loads(env.invoke("run", "_inbox/test-step-4", "--dry-run", "--json", *env.where).stdout)
    assert list(one)[-1] == "version" and one["version"] == 1 and "data" not in one  # the one rule: a version
    check_agent(one)
    everything: dict[str, Any] = json.loads(env.invoke("run", "--json", *env.where).stdout)
    assert list(everything)[: len(TOTAL_KEYS)] == TOTAL_KEYS and list(everything)[-1] == "version"
    for agent in everything["agents"]:
        check_agent(agent)
