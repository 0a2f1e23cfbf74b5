"""`doctor`: one test per problem it detects, plus its warnings, its exit code and its
promise never to print the judge key."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import socket
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from fake_schedulers import Fakes, install_fakes

from memory_curator.cli.machine import here, invocation
from memory_curator.cli.render import finding_line
from memory_curator.commands import doctor, schedule
from memory_curator.commands.context import Seams
from memory_curator.commands.doctor import Finding
from memory_curator.core.clock import FixedClock
from memory_curator.store import runlog
from memory_curator.store.state import sweep_lock, vault_id
from memory_curator.store.writer import FILES, Files

from conftest import NOW, state_of


@pytest.fixture(autouse=True)
def fakes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Fakes:
    """Always: doctor reads `crontab -l`, and the real user's table must never be reached."""
    return install_fakes(tmp_path / "fakes", monkeypatch)


def diagnose(
    root: Path | str,
    state: Path | str | None = None,
    now: dt.datetime = NOW,
    files: Files = FILES,
    **changes: object,
) -> list[Finding]:
    """Doctor's findings on this machine, as Linux on the host `box` unless `changes` say otherwise."""
    machine = replace(here(), **{"system": "Linux", "host": "box", **changes})  # type: ignore[arg-type]
    seams = Seams(clock=FixedClock(now), files=files, machine=machine)
    asked = invocation(seams, str(root), str(state) if state else None)
    return list(doctor.diagnose(asked).findings)


def problems(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.level == "problem"]


def only_problem(findings: list[Finding], topic: str) -> Finding:
    found = problems(findings)
    assert [f.topic for f in found] == [topic], [finding_line(f) for f in findings]
    assert found[0].fix, "every problem says how to fix it"
    return found[0]


def log_line(state: Path, when: dt.datetime, **record: object) -> None:
    runlog.append(state / runlog.LOG_NAME, {"time": when.strftime("%Y-%m-%dT%H:%M:%SZ"), **record})


def install_cron(root: Path, state: Path, python: str = sys.executable, every: int = 900) -> None:
    job = schedule.Job(root, state, python, every)
    schedule.install(schedule.install_plan(job, "cron", here()))


# --- a healthy vault, and the CLI ---------------------------------------------------------------------


def test_a_healthy_scheduled_vault_has_no_problem(vault: Path, invoke) -> None:
    state = state_of(vault)
    install_cron(vault, state)
    log_line(state, NOW - dt.timedelta(minutes=10), exit=0, result={"processed": 2, "promoted": 1, "dropped": 1})
    findings = diagnose(vault)
    assert problems(findings) == []
    lines = [finding_line(f) for f in findings]
    assert "ok      schedule: cron every 15m (crontab)" in lines
    assert any(line.startswith("ok      last run: 2026-11-30 11:50:00Z: 2 processed (1 promoted") for line in lines)

    result = invoke("doctor", "--vault", str(vault), clock=FixedClock(NOW))
    assert result.exit_code == 0, result.output
    assert "PROBLEM" not in result.output


def test_cli_exits_1_with_one_line_per_problem(vault: Path, invoke) -> None:
    (vault / "_meta/inbox-rules.md").write_text("prose only\n")
    result = invoke("doctor", "--vault", str(vault))
    assert result.exit_code == 1
    bad = [line for line in result.output.splitlines() if line.startswith("PROBLEM")]
    assert len(bad) == 1
    assert "inbox-rules.md" in bad[0] and " — fix: " in bad[0]
    data = json.loads(invoke("doctor", "--vault", str(vault), "--json").output)["data"]
    assert [d["topic"] for d in data if d["level"] == "problem"] == ["rules"]


def test_the_judge_key_is_never_printed(vault: Path, invoke, monkeypatch) -> None:
    secret = "sk-ant-secret-value-0123456789"
    monkeypatch.setenv("ANTHROPIC_API_KEY", secret)
    for args in (("doctor", "--vault", str(vault)), ("doctor", "--vault", str(vault), "--json")):
        result = invoke(*args)
        assert secret not in result.output and secret[-8:] not in result.output
        assert "ANTHROPIC_API_KEY is set" in result.output


# --- one test per problem ----------------------------------------------------------------------------


def test_problem_no_vault(tmp_path: Path) -> None:
    found = only_problem(diagnose(tmp_path / "missing"), "vault")
    assert "does not exist" in found.message


class Refusing:
    """`os` as the curator's `Files` sees it, refusing access to `path` when asked for `mode`
    (as a folder without those permission bits does, even for root); the rest is the real one."""

    def __init__(self, path: Path, mode: int) -> None:
        self.path, self.mode = path, mode

    def __getattr__(self, name: str) -> object:
        return getattr(os, name)

    def access(self, path: str | Path, mode: int) -> bool:
        return not (Path(path) == self.path and mode & self.mode) and os.access(path, mode)


def test_problem_vault_not_readable(vault: Path) -> None:
    found = only_problem(diagnose(vault, files=Files(Refusing(vault, os.R_OK))), "vault")
    assert found.message == f"{vault} is not readable" and "chmod" in (found.fix or "")


def test_problem_inbox_not_writable(vault: Path) -> None:
    inbox = vault / "_inbox"
    found = only_problem(diagnose(vault, files=Files(Refusing(inbox, os.W_OK))), "vault")
    assert found.message == f"{inbox} is not writable: sweeps cannot move notes"


def test_problem_rules_invalid(vault: Path) -> None:
    rules = vault / "_meta/inbox-rules.md"
    rules.write_text(rules.read_text().replace("settle_seconds: 3", "settle_seconds: soon"))
    found = only_problem(diagnose(vault), "rules")
    assert str(rules) in found.message and "must be a number" in found.message
    assert "rules check" in (found.fix or "")


def test_problem_state_directory_unusable(vault: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    found = only_problem(diagnose(vault, blocker / "state"), "state")
    assert "cannot create the state directory" in found.message


def test_problem_lock_held_for_hours(vault: Path) -> None:
    state = state_of(vault)
    with sweep_lock(state, FixedClock(NOW), os.getpid(), socket.gethostname()):
        info = json.loads((state / "lock").read_text())
        info["since"] = "2026-11-30T09:00:00Z"
        (state / "lock").write_text(json.dumps(info))
        found = only_problem(diagnose(vault), "lock")
        assert f"pid {os.getpid()}" in found.message and "exits 75" in found.message
        recent = diagnose(vault, now=dt.datetime(2026, 11, 30, 9, 5, tzinfo=dt.UTC))
        assert [finding_line(f) for f in recent if f.topic == "lock"] == [
            f"ok      lock: a sweep is running now (pid {os.getpid()} on {info['host']} since 2026-11-30T09:00:00Z)"
        ]
    assert [f.level for f in diagnose(vault) if f.topic == "lock"] == ["ok"]


def test_problem_unreadable_schedule_file(vault: Path) -> None:
    path = schedule.plist_path(Path.home(), vault_id(vault))
    path.parent.mkdir(parents=True)
    path.write_text("<plist>this is not a plist")
    found = only_problem(diagnose(vault), "schedule")
    assert str(path) in found.message and "unreadable plist" in found.message


def test_problem_scheduled_interpreter_gone(vault: Path, tmp_path: Path) -> None:
    venv = tmp_path / "old-venv/bin"
    venv.mkdir(parents=True)
    shutil.copy(sys.executable, venv / "python")
    install_cron(vault, state_of(vault), python=str(venv / "python"))
    assert problems(diagnose(vault)) == []
    shutil.rmtree(tmp_path / "old-venv")
    found = only_problem(diagnose(vault), "schedule")
    assert found.message == f"cron: the scheduled interpreter '{venv / 'python'}' is gone"


def test_problem_schedule_uses_another_state_dir(vault: Path, tmp_path: Path) -> None:
    install_cron(vault, tmp_path / "elsewhere")
    found = only_problem(diagnose(vault), "schedule")
    assert "two locks" in found.message and str(tmp_path / "elsewhere") in found.message
    assert problems(diagnose(vault, tmp_path / "elsewhere")) == []


def test_problem_last_run_failed(vault: Path) -> None:
    state = state_of(vault)
    install_cron(vault, state)
    error = f"{vault}/_meta/inbox-rules.md:3: YAML error: mapping values are not allowed here"
    log_line(state, NOW - dt.timedelta(minutes=5), exit=1, error=error)
    found = only_problem(diagnose(vault), "last run")
    assert found.message == f"2026-11-30 11:55:00Z failed: {error}"


def test_problem_last_run_denied_by_macos_privacy(tmp_path: Path) -> None:
    home = tmp_path / "Users/ada"
    root = home / "Documents/vault"
    shutil.copytree(Path(__file__).parent.parent / "vault_fixtures", root)
    state = state_of(root)
    log_line(state, NOW - dt.timedelta(minutes=5), exit=1, error=f"{root}: the vault folder: Operation not permitted")
    findings = diagnose(root, home=home, system="Darwin")
    found = only_problem(findings, "last run")
    assert "Full Disk Access" in (found.fix or "") and os.path.realpath(sys.executable) in (found.fix or "")
    assert [f.topic for f in findings if f.level == "warn" and "Full Disk Access" in f.message] == ["macOS"]


def test_problem_scheduled_run_crashed_before_logging(vault: Path) -> None:
    state = state_of(vault)
    install_cron(vault, state)
    log_line(state, NOW - dt.timedelta(minutes=20), exit=0, result={"processed": 0})
    with open(state / runlog.LOG_NAME, "a") as log:
        log.write("Traceback (most recent call last):\nModuleNotFoundError: No module named 'memory_curator'\n")
    found = only_problem(diagnose(vault), "last run")
    assert found.message == "the last scheduled sweep crashed: ModuleNotFoundError: No module named 'memory_curator'"


def test_problem_schedule_overdue(vault: Path) -> None:
    state = state_of(vault)
    install_cron(vault, state)
    log_line(state, NOW - dt.timedelta(hours=3), exit=0, result={"processed": 1})
    found = only_problem(diagnose(vault), "last run")
    assert found.message == "no sweep logged since 2026-11-30 09:00Z although scheduled every 15m"
    assert "cron" in (found.fix or "")
    assert problems(diagnose(vault, now=NOW - dt.timedelta(hours=2, minutes=40))) == []


def test_problem_installed_but_never_ran(vault: Path, fakes: Fakes, invoke) -> None:
    assert invoke("schedule", "install", "--systemd", "--vault", str(vault)).exit_code == 0
    service = Path(os.environ["XDG_CONFIG_HOME"]) / f"systemd/user/memory-curator-{vault_id(vault)}.service"
    installed_at = NOW - dt.timedelta(hours=1)
    os.utime(service, (installed_at.timestamp(), installed_at.timestamp()))
    found = only_problem(diagnose(vault), "last run")
    assert found.message == "systemd job installed 2026-11-30 11:00Z but no sweep was ever logged"
    assert "loginctl enable-linger" in (found.fix or "")
    fresh = diagnose(vault, now=installed_at + dt.timedelta(minutes=10))
    assert [finding_line(f) for f in fresh if f.topic == "last run"] == ["ok      last run: not run yet"]


# --- warnings: worth knowing, not failures ------------------------------------------------------------


def warnings(findings: list[Finding]) -> dict[str, str]:
    return {f.topic: f.message for f in findings if f.level == "warn"}


def test_warnings(vault: Path, invoke) -> None:
    found = warnings(diagnose(vault))
    assert found["schedule"] == "no scheduled sweep of this vault"
    assert found["judge"].startswith("no ANTHROPIC_API_KEY")
    assert "macOS" not in found

    rules = vault / "_meta/inbox-rules.md"
    rules.write_text(rules.read_text().replace("\nsettings:\n", "\nsettings:\n  curator_host: mini\n", 1))
    assert warnings(diagnose(vault, host="laptop"))["host"].startswith("not the curator host")
    assert [finding_line(f) for f in diagnose(vault, host="Mini.local") if f.topic == "host"] == [
        "ok      host: this is the curator host (mini)"
    ]

    for flag in ("--cron", "--launchd"):
        assert invoke("schedule", "install", flag, "--vault", str(vault)).exit_code == 0
    assert warnings(diagnose(vault))["schedule"] == "scheduled 2 times (launchd, cron); one is enough"


def test_warning_vault_in_a_macos_protected_folder(tmp_path: Path) -> None:
    home = tmp_path / "Users/ada"
    root = home / "Library/Mobile Documents/iCloud~md~obsidian/Documents/vault"
    shutil.copytree(Path(__file__).parent.parent / "vault_fixtures", root)
    found = diagnose(root, home=home, system="Darwin")
    assert problems(found) == []
    assert warnings(found)["macOS"].startswith("the vault is in iCloud Drive: macOS lets a launchd job read it only")
    assert "macOS" not in warnings(diagnose(root, home=home, system="Linux"))


def test_missing_rules_file_is_a_warning_and_defaults_apply(vault: Path) -> None:
    (vault / "_meta/inbox-rules.md").unlink()
    found = diagnose(vault)
    assert problems(found) == []
    assert warnings(found)["rules"] == "no _meta/inbox-rules.md: the shipped default rules apply"


@pytest.mark.parametrize("flag", ["--systemd", "--launchd"])
def test_problem_installed_but_not_active(vault: Path, fakes: Fakes, invoke, flag: str) -> None:
    """The files are there but the scheduler does not run the job: doctor asks it, and says how to fix it."""
    assert invoke("schedule", "install", flag, "--vault", str(vault)).exit_code == 0
    assert problems(diagnose(vault)) == []
    job = vault_id(vault)
    if flag == "--systemd":
        timer = f"memory-curator-{job}.timer"
        subprocess.run(["systemctl", "--user", "disable", "--now", timer], check=True)
        message = f"systemd: {timer} is disabled, inactive: nothing runs the sweeps"
        fix = f"systemctl --user enable --now {timer} (or memory-curator schedule install)"
    else:
        target = f"gui/{os.getuid()}/org.memory-curator.sweep.{job}"
        subprocess.run(["launchctl", "bootout", target], check=True)
        message = f"launchd: {target} is not loaded: nothing runs the sweeps"
        plist = schedule.plist_path(Path.home(), job)
        fix = f"launchctl bootstrap gui/{os.getuid()} {plist} (or memory-curator schedule install)"
    found = only_problem(diagnose(vault), "schedule")
    assert (found.message, found.fix) == (message, fix)
    result = invoke("doctor", "--vault", str(vault), clock=FixedClock(NOW))
    assert result.exit_code == 1 and f"PROBLEM schedule: {message}" in result.output
