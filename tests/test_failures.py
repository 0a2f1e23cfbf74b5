"""Failures that say where and what to do (issue 27): a state folder that cannot be written is
exit 1 naming it and the fix, from every command; `doctor` proves it with real bytes; every
per-file error names the path and the operation; nothing an agent drops in the inbox goes
unmentioned; the vault rule of design §1 for every command that takes a path; `--json` usage
errors are one object on stdout and one line on stderr."""

from __future__ import annotations

import errno
import io
import json
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from safety_kit import FaultyOS

from memory_curator.cli.app import main
from memory_curator.commands.context import Seams
from memory_curator.core.errors import EXIT_CONFIG, EXIT_OK, EXIT_USAGE
from memory_curator.store.writer import Files

from conftest import FIXTURES, age, cli_commands

FACT = """---
type: fact
entity: acme
predicate: headquarters
value: Acme is based in Berlin.
source_url: https://acme.dev/about
confidence: 2
---
Seen on the company site.
"""


def ended(args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    with pytest.raises(SystemExit) as stopped:
        main(args)
    out, err = capsys.readouterr()
    assert isinstance(stopped.value.code, int)
    return stopped.value.code, out, err


@pytest.fixture
def broken_state(vault: Path, tmp_path: Path, invoke: Callable[..., Any]) -> Path:
    """A state folder whose journal cannot be written (a folder stands where the file goes: root,
    as tests run here, may write anywhere, so permissions alone would prove nothing)."""
    state = tmp_path / "state"
    assert invoke("status", "--vault", str(vault), "--state-dir", str(state)).exit_code == 0
    (state / "journal.jsonl").unlink(missing_ok=True)
    (state / "journal.jsonl").mkdir(parents=True)
    return state


@pytest.mark.parametrize("command", [["run", "--settle", "0", "--no-judge"], ["status"], ["log"], ["undo", "--last"]])
@pytest.mark.parametrize("as_json", [False, True])
def test_a_state_folder_that_cannot_be_written_is_exit_1_naming_it_and_the_fix(
    vault: Path,
    broken_state: Path,
    command: list[str],
    as_json: bool,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    args = [*command, "--vault", str(vault), "--state-dir", str(broken_state), *(["--json"] if as_json else [])]
    code, out, err = ended(args, capsys, monkeypatch)
    assert code == EXIT_CONFIG, err
    assert err.count("\n") == 1 and "internal error" not in err, err
    assert f"{broken_state}: the state folder cannot be written" in err
    assert "--state-dir" in err  # the fix
    if as_json:
        assert json.loads(out)["error"]["file"] == str(broken_state)


def test_doctor_proves_the_state_folder_with_real_bytes_and_sees_a_full_disk(
    vault: Path, tmp_path: Path, invoke: Callable[..., Any]
) -> None:
    full = Files(FaultyOS("write", 1, lambda: OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)), sticky=True))
    result = invoke("doctor", "--vault", str(vault), "--state-dir", str(tmp_path / "state"), seams=Seams(files=full))
    assert result.exit_code == EXIT_CONFIG, result.output
    assert f"{tmp_path / 'state'}: the disk holding the state folder is full" in result.output
    assert "free space on the disk" in result.output
    assert not list((tmp_path / "state").glob(".doctor-probe*"))
    fine = invoke("doctor", "--vault", str(vault), "--state-dir", str(tmp_path / "state"))
    assert "works (written and fsynced)" in fine.output


def test_a_per_file_error_names_the_path_and_the_operation(
    vault: Path, write_candidate: Callable[..., Path], invoke: Callable[..., Any]
) -> None:
    write_candidate(vault, "fact.md", FACT, agent="bot")
    into_facts = lambda *args, **kwargs: "facts/acme" in str(args[-1])  # noqa: E731 - the note's own write
    denied = Files(
        FaultyOS("link", 1, lambda: PermissionError(errno.EACCES, os.strerror(errno.EACCES)), when=into_facts)
    )
    result = invoke(
        "run", "_inbox/bot", "--vault", str(vault), "--settle", "0", "--no-judge", "--json", seams=Seams(files=denied)
    )
    assert result.exit_code == EXIT_OK, result.output
    (error,) = json.loads(result.output)["errors"]
    assert error["error"].startswith("writing facts/acme/headquarters.md: Permission denied (PermissionError)"), error


def _odd_inbox(vault: Path, tmp_path: Path) -> None:
    agent = vault / "_inbox/bot"
    agent.mkdir(parents=True, exist_ok=True)
    (agent / "sub").mkdir()
    (agent / "sub/deep.md").write_text(FACT)
    os.mkfifo(agent / "pipe.md")
    (tmp_path / "elsewhere.md").write_text(FACT)
    (agent / "link.md").symlink_to(tmp_path / "elsewhere.md")
    (agent / "fact (conflicted copy).md").write_text(FACT)
    for path in agent.iterdir():
        if path.is_file() and not path.is_symlink():
            age(path)


def test_inbox_entries_the_sweep_skips_are_said_by_run_once_and_listed_by_status_and_doctor(
    vault: Path, tmp_path: Path, invoke: Callable[..., Any]
) -> None:
    _odd_inbox(vault, tmp_path)
    first = invoke("run", "--vault", str(vault), "--settle", "0", "--no-judge", "--json")
    ignored = {i["path"]: i["why"] for i in json.loads(first.output)["ignored"]}
    assert set(ignored) == {
        "_inbox/bot/sub/",
        "_inbox/bot/pipe.md",
        "_inbox/bot/link.md",
        "_inbox/bot/fact (conflicted copy).md",
    }
    assert ignored["_inbox/bot/link.md"].startswith("a symlink")
    again = invoke("run", "--vault", str(vault), "--settle", "0", "--no-judge", "--json")
    assert "ignored" not in json.loads(again.output)  # said once, until it changes
    (vault / "_inbox/bot/fact (conflicted copy).md").write_text(FACT + "changed\n")
    text = invoke("run", "--vault", str(vault), "--settle", "0", "--no-judge")
    assert "not a candidate: _inbox/bot/fact (conflicted copy).md (a sync conflict copy)" in text.output
    status = json.loads(invoke("status", "--vault", str(vault), "--json").output)["data"]
    assert {i["path"] for i in status["ignored"]} == set(ignored)
    shown = invoke("status", "--vault", str(vault)).output
    assert "not a candidate: _inbox/bot/pipe.md: not a regular file" in shown
    doctor = invoke("doctor", "--vault", str(vault)).output
    assert "_inbox/bot/sub/: not a candidate" in doctor


@pytest.mark.parametrize("command", [["check"], ["submit", "--agent", "bot"], ["query", "--similar"]])
def test_a_path_in_no_vault_is_read_in_the_vault_around_the_working_folder(
    tmp_path: Path, command: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Design §1: --vault, else the environment, else the vault around the path, else — the path
    lies in no vault — the vault around the current folder."""
    vault = tmp_path / "vault"
    shutil.copytree(FIXTURES, vault)
    drafts = tmp_path / "cands"
    drafts.mkdir()
    (drafts / "fact.md").write_text(FACT)
    monkeypatch.chdir(vault / "facts")
    code, _, err = ended([*command, "../../cands/fact.md"], capsys, monkeypatch)
    assert code == EXIT_OK, err
    if command[0] == "submit":
        assert (vault / "_inbox/bot/acme-headquarters.md").read_text() == FACT


COMMANDS = [typed for typed, _ in cli_commands()]


@pytest.mark.parametrize("typed", COMMANDS)
def test_a_json_usage_error_is_one_object_on_stdout_and_one_line_on_stderr(
    typed: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = ended([*typed.split(), "--no-such-option", "--json"], capsys, monkeypatch)
    assert code == EXIT_USAGE
    assert json.loads(out)["error"]["code"] == EXIT_USAGE
    assert err.count("\n") == 1 and err.startswith("memory-curator: No such option"), err


def test_check_explain_names_the_surfaces_a_person_s_fields_fit_not_a_fact_s(
    vault: Path, tmp_path: Path, invoke: Callable[..., Any]
) -> None:
    draft = tmp_path / "grace.md"
    draft.write_text("---\nname: Grace Hopper\nsource_url: https://en.wikipedia.org/wiki/Grace_Hopper\n---\nAdmiral.\n")
    out = invoke("check", str(draft), "--explain", "--vault", str(vault)).output
    assert "set `type` to person or project (its fields fit those)" in out
    assert "entity and predicate" not in out
