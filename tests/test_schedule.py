"""Scheduled sweeps: launchd, systemd and cron against a fake HOME and fake scheduler
executables; the cron line run by `sh -c` in an empty environment; the sweep log; and the
single-host setting."""

from __future__ import annotations

import configparser
import dataclasses
import datetime as dt
import getpass
import itertools
import json
import os
import plistlib
import re
import shlex
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from fake_schedulers import Fakes, install_fakes

from memory_curator.cli.app import main
from memory_curator.cli.machine import build_context, here
from memory_curator.commands import schedule, sweep
from memory_curator.core.clock import SystemClock
from memory_curator.core.errors import EXIT_LOCKED, CuratorError
from memory_curator.core.result import SweepResult
from memory_curator.store import runlog
from memory_curator.store.state import state_folder, sweep_lock, vault_id

from conftest import FIXTURES, age, snapshot, state_of


@pytest.fixture
def fakes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Fakes:
    return install_fakes(tmp_path / "fakes", monkeypatch)


def expected_command(root: Path, state: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "memory_curator",
        "run",
        "--vault",
        str(root),
        "--state-dir",
        str(state),
        "--json",
        "--log-file",
        str(state / "sweeps.log"),
    ]


def fail(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """Run through the real entry point (the error boundary); return the exit code and stderr."""
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    return int(exc.value.code or 0), capsys.readouterr().err


def set_curator_host(root: Path, host: str) -> None:
    rules = root / "_meta/inbox-rules.md"
    text = rules.read_text()
    assert "\nsettings:\n" in text
    rules.write_text(text.replace("\nsettings:\n", f"\nsettings:\n  curator_host: {host}\n", 1))


# --- pure builders ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "seconds", "cron", "calendar"),
    [
        ("1m", 60, "* * * * *", "*-*-* *:*:00"),
        ("15m", 900, "*/15 * * * *", "*-*-* *:00/15:00"),
        ("15", 900, "*/15 * * * *", "*-*-* *:00/15:00"),
        ("30min", 1800, "*/30 * * * *", "*-*-* *:00/30:00"),
        ("60m", 3600, "0 * * * *", "*-*-* *:00:00"),
        ("1h", 3600, "0 * * * *", "*-*-* *:00:00"),
        ("6h", 21600, "0 */6 * * *", "*-*-* 00/6:00:00"),
        ("1d", 86400, "0 0 * * *", "*-*-* 00:00:00"),
        ("24h", 86400, "0 0 * * *", "*-*-* 00:00:00"),
    ],
)
def test_intervals(text: str, seconds: int, cron: str, calendar: str) -> None:
    assert schedule.parse_every(text) == seconds
    assert schedule.cron_schedule(seconds) == cron
    assert schedule.on_calendar(seconds) == calendar
    assert schedule.every_from(cron, 0) == schedule.every_from(calendar, 1) == seconds


@pytest.mark.parametrize("text", ["7m", "45m", "5h", "2d", "0m", "30s", "soon", ""])
def test_intervals_cron_cannot_express_are_refused(text: str) -> None:
    with pytest.raises(CuratorError, match="divide an hour"):
        schedule.parse_every(text)


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="needs systemd-analyze")
def test_every_on_calendar_fires_at_its_interval() -> None:
    """systemd's own parser agrees: consecutive elapses are exactly `every` apart."""
    for seconds in sorted({60 * m for m in schedule.MINUTES} | {3600 * h for h in schedule.HOURS}):
        spec = schedule.on_calendar(seconds)
        out = subprocess.run(
            ["systemd-analyze", "calendar", "--iterations=3", spec], capture_output=True, text=True, check=True
        ).stdout
        times = [
            dt.datetime.strptime(m, "%Y-%m-%d %H:%M:%S")
            for m in re.findall(r"(?:Next elapse|Iter\. #\d): \w+ (\S+ \S+)", out)
        ]
        assert len(times) == 3, out
        assert {(b - a).total_seconds() for a, b in itertools.pairwise(times)} == {seconds}, spec


def test_platform_choice_is_pure_and_forceable() -> None:
    works = {"launchd": None, "systemd": None, "cron": None}
    no_bus = {**works, "systemd": "no bus"}
    assert schedule.choose_platform(None, "Darwin", works) == "launchd"
    assert schedule.choose_platform(None, "Darwin", {**works, "launchd": "no launchctl"}) == "cron"
    assert schedule.choose_platform(None, "Linux", works) == "systemd"
    assert schedule.choose_platform(None, "Linux", no_bus) == "cron"
    assert schedule.choose_platform(None, "FreeBSD", {**no_bus, "launchd": "macOS only"}) == "cron"
    assert schedule.choose_platform(None, "Linux", {**no_bus, "cron": "no crontab"}) is None
    assert schedule.choose_platform("launchd", "Linux", no_bus) == "launchd"
    assert schedule.choose_platform("cron", "Darwin", {}) == "cron"


def test_the_uncreated_state_folder_is_the_one_sweeps_use(vault: Path, tmp_path: Path) -> None:
    """`show` computes the state folder without creating it; it must be the one sweeps use."""
    guess = state_folder(vault, None, os.environ, here().state_home).resolve()
    assert not guess.exists()
    assert state_of(vault) == guess
    explicit = tmp_path / "st"
    assert state_folder(vault, str(explicit), {}, here().state_home).resolve() == state_of(vault, explicit)


def test_systemd_quote_round_trips_odd_paths() -> None:
    for arg in ["/plain/path", "/with space/x", 'quo"te', "back\\slash", "100%", "$HOME", "tab\there"]:
        quoted = schedule.systemd_quote(arg)
        words = shlex.split(quoted)
        assert len(words) == 1
        assert words[0].replace("%%", "%").replace("$$", "$") == arg


def test_crontab_edits_touch_only_this_vaults_line() -> None:
    table = "MAILTO=me\n# my own job\n0 1 * * * /bin/true\n"
    added = schedule.crontab_with(table, "*/5 * * * * x # memory-curator:v-1", "v-1")
    assert added == table + "*/5 * * * * x # memory-curator:v-1\n"
    replaced = schedule.crontab_with(added, "0 * * * * y # memory-curator:v-1", "v-1")
    assert replaced == table + "0 * * * * y # memory-curator:v-1\n"
    assert schedule.crontab_without(replaced, "v-1") == table
    assert schedule.crontab_without(replaced, "v") == replaced, "a marker is matched whole"
    assert (
        schedule.crontab_with("0 1 * * * /bin/true", "L # memory-curator:v", "v")
        == "0 1 * * * /bin/true\nL # memory-curator:v\n"
    )


# --- launchd ---------------------------------------------------------------------------------------


def test_launchd_install_reinstall_uninstall(vault: Path, fakes: Fakes, invoke) -> None:
    uid, job = os.getuid(), vault_id(vault)
    label = f"org.memory-curator.sweep.{job}"
    path = Path.home() / "Library/LaunchAgents" / f"{label}.plist"

    result = invoke("schedule", "install", "--launchd", "--vault", str(vault))
    assert result.exit_code == 0, result.output
    data = plistlib.loads(path.read_bytes())
    state = state_of(vault)
    assert data["Label"] == label
    assert data["ProgramArguments"] == expected_command(vault, state)
    assert data["StartInterval"] == 900
    assert data["RunAtLoad"] is True
    assert data["StandardOutPath"] == data["StandardErrorPath"] == str(state / "sweeps.log")
    assert "WatchPaths" not in data
    assert fakes.calls() == [
        f"launchctl bootout gui/{uid}/{label}",
        f"launchctl enable gui/{uid}/{label}",
        f"launchctl bootstrap gui/{uid} {path}",
    ]

    before = path.read_bytes()
    fakes.reset()
    assert invoke("schedule", "install", "--launchd", "--vault", str(vault)).exit_code == 0
    assert path.read_bytes() == before
    assert sorted(path.parent.iterdir()) == [path], "no second plist, no temp file left"
    assert fakes.calls()[0] == f"launchctl bootout gui/{uid}/{label}", "re-install boots the old job out first"

    fakes.reset()
    result = invoke("schedule", "uninstall", "--vault", str(vault))
    assert result.exit_code == 0
    assert not path.exists()
    assert fakes.calls() == ["crontab -l", f"launchctl bootout gui/{uid}/{label}"], "looks in cron too"
    fakes.reset()
    assert "no scheduled sweep" in invoke("schedule", "uninstall", "--vault", str(vault)).output
    assert fakes.calls() == ["crontab -l"]


def test_launchd_on_change_watches_the_inbox_and_agent_folders(vault: Path, fakes: Fakes, invoke) -> None:
    assert (
        invoke("schedule", "install", "--launchd", "--on-change", "--every", "1h", "--vault", str(vault)).exit_code == 0
    )
    data = plistlib.loads(schedule.plist_path(Path.home(), vault_id(vault)).read_bytes())
    assert data["StartInterval"] == 3600
    assert data["WatchPaths"] == [str(vault / "_inbox"), str(vault / "_inbox/test-step-4")]


def test_on_change_needs_launchd(vault: Path, fakes: Fakes, capsys) -> None:
    code, err = fail(capsys, "schedule", "install", "--cron", "--on-change", "--vault", str(vault))
    assert code == 1
    assert err.strip().startswith("memory-curator: --on-change needs launchd (not cron)")
    assert len(err.strip().splitlines()) == 1
    assert fakes.calls() == []


# --- systemd ---------------------------------------------------------------------------------------


def read_ini(path: Path) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(path.read_text())
    return parser


def test_systemd_install_reinstall_uninstall(vault: Path, fakes: Fakes, invoke) -> None:
    job = vault_id(vault)
    units = Path(os.environ["XDG_CONFIG_HOME"]) / "systemd/user"
    service, timer = units / f"memory-curator-{job}.service", units / f"memory-curator-{job}.timer"

    result = invoke("schedule", "install", "--systemd", "--every", "30m", "--vault", str(vault))
    assert result.exit_code == 0, result.output
    svc, tmr = read_ini(service), read_ini(timer)
    assert svc["Service"]["Type"] == "oneshot"
    assert shlex.split(svc["Service"]["ExecStart"]) == expected_command(vault, state_of(vault))
    assert svc["Service"]["SuccessExitStatus"] == "75"
    assert tmr["Timer"]["OnCalendar"] == "*-*-* *:00/30:00"
    assert tmr["Timer"]["Persistent"] == "true"
    assert tmr["Timer"]["Unit"] == service.name
    assert tmr["Install"]["WantedBy"] == "timers.target"
    assert fakes.calls() == ["systemctl --user daemon-reload", f"systemctl --user enable --now {timer.name}"]
    if not Path("/var/lib/systemd/linger", getpass.getuser()).exists():
        assert "loginctl enable-linger" in result.output

    stamps = (service.stat().st_mtime_ns, timer.stat().st_mtime_ns)
    fakes.reset()
    assert invoke("schedule", "install", "--systemd", "--every", "30m", "--vault", str(vault)).exit_code == 0
    assert (service.stat().st_mtime_ns, timer.stat().st_mtime_ns) == stamps, "identical units are not rewritten"
    assert sorted(units.iterdir()) == [service, timer]
    assert invoke("schedule", "install", "--systemd", "--every", "2h", "--vault", str(vault)).exit_code == 0
    assert read_ini(timer)["Timer"]["OnCalendar"] == "*-*-* 00/2:00:00"

    fakes.reset()
    assert invoke("schedule", "uninstall", "--systemd", "--vault", str(vault)).exit_code == 0
    assert list(units.iterdir()) == []
    assert fakes.calls() == [f"systemctl --user disable --now {timer.name}", "systemctl --user daemon-reload"]


def test_systemd_exec_start_survives_spaces_and_percent(tmp_path: Path, fakes: Fakes, invoke) -> None:
    root = tmp_path / "my vault 100%"
    shutil.copytree(FIXTURES, root)
    assert invoke("schedule", "install", "--systemd", "--vault", str(root)).exit_code == 0
    service = Path(os.environ["XDG_CONFIG_HOME"]) / f"systemd/user/memory-curator-{vault_id(root)}.service"
    exec_start = read_ini(service)["Service"]["ExecStart"]
    assert "%%" in exec_start, "systemd expands a bare % as a specifier"
    words = [w.replace("%%", "%") for w in shlex.split(exec_start)]
    assert words == expected_command(root, state_of(root))


def test_a_scheduler_failure_is_one_line(vault: Path, fakes: Fakes, capsys, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_FAIL", "systemctl")
    code, err = fail(capsys, "schedule", "install", "--systemd", "--vault", str(vault))
    assert code == 1
    assert err == (
        "memory-curator: `systemctl --user daemon-reload` failed (1): Failed to connect to bus: No medium found; "
        "nothing installed (rolled back)\n"
    )


def test_a_missing_scheduler_is_one_line(vault: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    empty = tmp_path / "nothing"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    code, err = fail(capsys, "schedule", "install", "--cron", "--vault", str(vault))
    assert code == 1
    assert err.startswith("memory-curator: crontab: not found on PATH")


# --- cron ------------------------------------------------------------------------------------------


def test_cron_install_is_idempotent_and_keeps_other_lines(vault: Path, fakes: Fakes, invoke) -> None:
    mine = "MAILTO=me@example.dev\n# backups\n0 3 * * * /usr/local/bin/backup --all\n"
    fakes.table.write_text(mine)
    assert invoke("schedule", "install", "--cron", "--vault", str(vault)).exit_code == 0
    first = fakes.table.read_text()
    assert first.startswith(mine)
    ours = first[len(mine) :].splitlines()
    assert len(ours) == 1 and ours[0].endswith(f"# memory-curator:{vault_id(vault)}")
    assert ours[0].startswith("*/15 * * * * ")
    assert fakes.calls() == ["crontab -l", "crontab -"]

    assert invoke("schedule", "install", "--cron", "--vault", str(vault)).exit_code == 0
    assert fakes.table.read_text() == first
    assert invoke("schedule", "install", "--cron", "--every", "1h", "--vault", str(vault)).exit_code == 0
    assert fakes.table.read_text() == mine + ours[0].replace("*/15 * * * *", "0 * * * *", 1) + "\n"

    assert invoke("schedule", "uninstall", "--vault", str(vault)).exit_code == 0
    assert fakes.table.read_text() == mine, "uninstall removes exactly our line"


def test_two_vaults_each_get_their_own_schedule(tmp_path: Path, fakes: Fakes, invoke) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    for root in (one, two):
        shutil.copytree(FIXTURES, root)
        for flag in ("--cron", "--systemd", "--launchd"):
            assert invoke("schedule", "install", flag, "--vault", str(root)).exit_code == 0
    assert len(fakes.table.read_text().splitlines()) == 2
    units = Path(os.environ["XDG_CONFIG_HOME"]) / "systemd/user"
    assert len(list(units.iterdir())) == 4
    assert len(list((Path.home() / "Library/LaunchAgents").iterdir())) == 2

    assert invoke("schedule", "uninstall", "--vault", str(one)).exit_code == 0
    table = fakes.table.read_text()
    assert table.count("\n") == 1 and vault_id(two) in table and vault_id(one) not in table
    assert sorted(p.name for p in units.iterdir()) == [
        f"memory-curator-{vault_id(two)}.{k}" for k in ("service", "timer")
    ]
    assert [p.name for p in (Path.home() / "Library/LaunchAgents").iterdir()] == [
        f"org.memory-curator.sweep.{vault_id(two)}.plist"
    ]
    two_installed = schedule.installed(vault_id(two), here())
    assert sorted(i.platform for i in two_installed) == ["cron", "launchd", "systemd"]
    assert {tuple(i.command) for i in two_installed} == {tuple(expected_command(two, state_of(two)))}


def cron_command(line: str) -> str:
    """What cron hands to /bin/sh: the line after the five time fields, with `\\%` unescaped."""
    return line.split(None, 5)[5].replace("\\%", "%")


def as_cron_runs(line: str, cwd: str | None = None) -> subprocess.CompletedProcess[str]:
    """The line's command in cron's empty environment; only Python is told to write no bytecode,
    which it would otherwise put beside the package's sources (a test writes its temp folders only)."""
    argv = ["/usr/bin/env", "-i", "PYTHONDONTWRITEBYTECODE=1", "/bin/sh", "-c", cron_command(line)]
    return subprocess.run(argv, capture_output=True, text=True, cwd=cwd)


def test_cron_line_sweeps_for_real_in_an_empty_environment(tmp_path: Path, fakes: Fakes, invoke) -> None:
    root = tmp_path / "my vault 100%"
    shutil.copytree(FIXTURES, root)
    for path in (root / "_inbox").rglob("*.md"):
        age(path)
    state = tmp_path / "state dir"
    assert invoke("schedule", "install", "--cron", "--vault", str(root), "--state-dir", str(state)).exit_code == 0
    (line,) = fakes.table.read_text().splitlines()
    assert "%" not in line.replace("\\%", ""), "every % is escaped for cron"

    proc = as_cron_runs(line, cwd="/")
    assert proc.returncode == 0
    assert proc.stdout == proc.stderr == "", "everything goes to the log"
    assert (root / "facts/copilot/data-handling.md").is_file()
    assert not list((root / "_inbox/test-step-4").glob("*.md"))
    assert len(list((root / "_inbox/.dropped/test-step-4").glob("*.md"))) == 1
    assert (state / "journal.jsonl").is_file(), "the sweep used the state directory in the line"
    (record,) = [json.loads(x) for x in (state / "sweeps.log").read_text().splitlines()]
    assert record["exit"] == 0
    assert (record["result"]["processed"], record["result"]["promoted"], record["result"]["dropped"]) == (2, 1, 1)

    again = as_cron_runs(line)
    assert again.returncode == 0
    assert [json.loads(x)["result"]["processed"] for x in (state / "sweeps.log").read_text().splitlines()] == [2, 0]


# --- show ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["--launchd", "--systemd", "--cron"])
def test_show_prints_what_install_writes_and_changes_nothing(vault: Path, fakes: Fakes, invoke, flag: str) -> None:
    home = Path.home()
    before = snapshot(home), snapshot(vault)
    shown = invoke("schedule", "show", flag, "--every", "5m", "--vault", str(vault))
    assert shown.exit_code == 0
    assert (snapshot(home), snapshot(vault)) == before
    assert fakes.calls() == []
    assert not state_folder(vault, None, os.environ, here().state_home).exists()

    assert invoke("schedule", "install", flag, "--every", "5m", "--vault", str(vault)).exit_code == 0
    written = [p for p in home.rglob("*") if p.is_file() and p.suffix in (".plist", ".service", ".timer")]
    for path in written:
        assert f"# {path}\n{path.read_text().rstrip()}\n" in shown.output
    if flag == "--cron":
        assert fakes.table.read_text().strip() in shown.output.splitlines()
    for call in fakes.calls():
        if not call.startswith("crontab"):
            assert "$ " + call in shown.output


# --- the sweep log ---------------------------------------------------------------------------------


def test_the_log_is_size_capped(vault: Path, tmp_path: Path) -> None:
    log = tmp_path / "state" / "sweeps.log"

    def swept() -> SweepResult:  # as `run --log-file` sweeps: a fresh context each time
        return sweep.run(build_context(vault, str(log.parent)), None, sweep.Options(use_judge=False))

    for _ in range(40):
        assert runlog.record_run(log, swept, max_bytes=2_000) == 0
    assert sorted(p.name for p in log.parent.glob("sweeps.log*")) == ["sweeps.log", "sweeps.log.1"]
    line = len(log.read_text().splitlines()[-1]) + 1
    assert log.stat().st_size < 2_000 + line
    assert log.with_name("sweeps.log.1").stat().st_size < 2_000 + line
    assert all(json.loads(x)["exit"] == 0 for x in log.read_text().splitlines())


def test_errors_and_a_busy_lock_are_logged_not_printed(vault: Path, invoke, tmp_path: Path) -> None:
    state, log = tmp_path / "state", tmp_path / "state" / "sweeps.log"
    args = ("run", "--vault", str(vault), "--state-dir", str(state), "--json", "--log-file", str(log))
    state.mkdir()
    with sweep_lock(state, SystemClock(), os.getpid(), socket.gethostname()):
        busy = invoke(*args)
    assert busy.exit_code == EXIT_LOCKED and busy.output == ""
    (vault / "_meta/inbox-rules.md").write_text("no rules block here\n")
    broken = invoke(*args)
    assert broken.exit_code == 1 and broken.output == ""
    gone = invoke("run", "--vault", str(tmp_path / "deleted"), "--state-dir", str(state), "--log-file", str(log))
    assert gone.exit_code == 1
    records = [json.loads(x) for x in log.read_text().splitlines()]
    assert [r["exit"] for r in records] == [EXIT_LOCKED, 1, 1]
    assert "another sweep holds the lock" in records[0]["error"]
    assert "inbox-rules.md" in records[1]["error"] and "curator-rules" in records[1]["error"]
    assert "deleted" in records[2]["error"]
    entries = runlog.entries(log)
    assert [e.failed for e in entries] == [False, True, True]


# --- the single-host setting -----------------------------------------------------------------------


def test_host_refusal_is_pure() -> None:
    assert schedule_host("mini", "mini") is None
    assert schedule_host("Mini", "mini.local") is None
    assert schedule_host("mini.example.dev", "MINI") is None
    assert schedule_host(None, "laptop") is None
    assert schedule_host("", "laptop") is None
    line = schedule_host("mini", "laptop")
    assert line == "not the curator host: the rules name 'mini' (curator_host), this is 'laptop'; nothing done"


def schedule_host(wanted: str | None, here: str) -> str | None:
    from memory_curator.core.hosts import host_refusal

    return host_refusal(wanted, here)


def test_another_host_sweeps_nothing_and_says_why(vault: Path, invoke, tmp_path: Path) -> None:
    set_curator_host(vault, "the-curator-machine")
    before = snapshot(vault)
    result = invoke("run", "--vault", str(vault))
    assert result.exit_code == 0
    assert result.output == (
        f"not the curator host: the rules name 'the-curator-machine' (curator_host), "
        f"this is {socket.gethostname()!r}; nothing done\n"
    )
    out = json.loads(invoke("run", "--vault", str(vault), "--json").output)
    assert (out["processed"], out["promoted"], out["dropped"], out["agents"]) == (0, 0, 0, [])
    assert out["idle"].startswith("not the curator host")
    log = tmp_path / "sweeps.log"
    assert invoke("run", "--vault", str(vault), "--json", "--log-file", str(log)).exit_code == 0
    assert json.loads(log.read_text())["idle"].startswith("not the curator host")
    assert snapshot(vault) == before

    dry = json.loads(invoke("run", "--vault", str(vault), "--dry-run", "--json").output)
    assert dry["promoted"] == 1, "a dry run changes nothing, so it may look from any machine"


def test_the_curator_host_sweeps(vault: Path, invoke) -> None:
    set_curator_host(vault, socket.gethostname().upper())
    out = json.loads(invoke("run", "--vault", str(vault), "--json").output)
    assert (out["promoted"], out["dropped"]) == (1, 1)


def test_install_on_another_host_says_it_will_idle(vault: Path, fakes: Fakes, invoke) -> None:
    set_curator_host(vault, "the-curator-machine")
    result = invoke("schedule", "install", "--cron", "--vault", str(vault))
    assert result.exit_code == 0
    assert "note: scheduled sweeps here will do nothing: not the curator host" in result.output


# --- macOS privacy ---------------------------------------------------------------------------------


def test_protected_locations() -> None:
    home = Path("/Users/ada")
    protected = schedule.protected_location
    assert protected(home / "Documents/vault", home, "Darwin") == "~/Documents"
    assert protected(home / "Documents", home, "Darwin") == "~/Documents"
    assert protected(home / "Library/Mobile Documents/iCloud~md~obsidian/Documents/v", home, "Darwin") == "iCloud Drive"
    assert protected(home / "Library/CloudStorage/Dropbox/v", home, "Darwin").startswith("a cloud-storage folder")
    assert protected(home / "Desktop/v", home, "Darwin") == "~/Desktop"
    assert protected(home / "vaults/v", home, "Darwin") is None
    assert protected(home / "DocumentsArchive/v", home, "Darwin") is None
    assert protected(home / "Documents/vault", home, "Linux") is None
    note = schedule.fda_note(home / "Documents/v", sys.executable, home, "Darwin")
    assert note is not None and os.path.realpath(sys.executable) in note and "Full Disk Access" in note


# --- which scheduler works here; an install that fails leaves nothing (issue 18) ---------------------


def tree(folder: Path) -> list[str]:
    """Every file and folder under `folder`: what "nothing written" compares."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


@pytest.fixture
def alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Fakes:
    """Only the fakes on PATH: this machine's own systemctl or crontab is never found."""
    return install_fakes(tmp_path / "fakes", monkeypatch, alone=True)


def test_detect_picks_the_scheduler_that_works_here(vault: Path, alone: Fakes, monkeypatch) -> None:
    linux = dataclasses.replace(here(), system="Linux")
    assert schedule.available(linux) == {
        "launchd": "launchd is macOS only",
        "systemd": None,
        "cron": None,
    }
    assert schedule.choose_platform(None, "Linux", schedule.available(linux)) == "systemd"
    monkeypatch.setenv("FAKE_FAIL", "systemctl")  # no user bus (an SSH session, a container)
    found = schedule.available(linux)
    assert (
        found["systemd"] == "`systemctl --user` cannot reach a user manager (Failed to connect to bus: No medium found)"
    )
    assert schedule.choose_platform(None, "Linux", found) == "cron"
    alone.remove("crontab")
    found = schedule.available(linux)
    assert found["cron"] == "no crontab on PATH"
    assert schedule.choose_platform(None, "Linux", found) is None
    assert schedule.choose_platform("cron", "Linux", found) == "cron", "a flag forces one"
    assert schedule.choose_platform(None, "Darwin", {"launchd": None, "systemd": None, "cron": None}) == "launchd"


def test_nothing_available_show_and_install_point_to_watch(
    vault: Path, alone: Fakes, invoke, capsys, monkeypatch
) -> None:
    alone.remove("crontab", "launchctl")
    monkeypatch.setenv("FAKE_FAIL", "systemctl")
    home = Path.home()
    before = tree(home)

    shown = invoke("schedule", "show", "--vault", str(vault))
    assert shown.exit_code == 0, shown.output
    first = shown.output.splitlines()[0]
    assert first.startswith("no scheduler works here (launchd is macOS only; `systemctl --user` cannot reach")
    assert "no crontab on PATH" in first and "memory-curator watch" in first
    assert f"--vault {vault}" in shown.output, "a ready unit that runs `watch` for this vault"

    code, err = fail(capsys, "schedule", "install", "--vault", str(vault))
    assert code == 1
    assert len(err.splitlines()) == 1 and "no scheduler works here" in err and "memory-curator watch" in err
    assert tree(home) == before, "nothing written, not even the state folder"
    assert [call for call in alone.calls() if "show-environment" not in call] == [], "only asked, never changed"


@pytest.mark.parametrize(
    ("flag", "failing"),
    [
        ("--systemd", "systemctl"),  # no user bus: daemon-reload fails after the units are written
        ("--systemd", "systemctl --user enable"),  # half-way: reloaded, then enabling fails
        ("--launchd", "launchctl bootstrap"),
    ],
)
def test_an_install_failing_half_way_leaves_nothing(
    vault: Path, alone: Fakes, invoke, capsys, monkeypatch, flag: str, failing: str
) -> None:
    home = Path.home()
    before = tree(home)
    monkeypatch.setenv("FAKE_FAIL", failing)
    code, err = fail(capsys, "schedule", "install", flag, "--vault", str(vault))
    assert code == 1
    assert len(err.splitlines()) == 1 and "Failed to connect to bus" in err and "nothing installed" in err
    assert tree(home) == before, "no unit, no plist, no state folder left"
    monkeypatch.delenv("FAKE_FAIL")
    assert alone.loaded() == [], "nothing half-registered with the scheduler"

    data = json.loads(invoke("status", "--vault", str(vault), "--json").output)["data"]["schedule"]
    assert data["installed"] is False and data["jobs"] == []
    assert "schedule: not installed" in invoke("status", "--vault", str(vault)).output
    doctor = invoke("doctor", "--vault", str(vault)).output
    assert "ok      schedule" not in doctor and "warn    schedule: no scheduled sweep of this vault" in doctor


def test_a_failed_reinstall_puts_the_old_job_back(vault: Path, alone: Fakes, invoke, capsys, monkeypatch) -> None:
    assert invoke("schedule", "install", "--systemd", "--vault", str(vault)).exit_code == 0
    units = Path(os.environ["XDG_CONFIG_HOME"]) / "systemd/user"
    old = snapshot(units)
    monkeypatch.setenv("FAKE_FAIL", "systemctl --user enable")
    code, err = fail(capsys, "schedule", "install", "--systemd", "--every", "1h", "--vault", str(vault))
    assert code == 1 and "the previous job is back" in err
    assert snapshot(units) == old


def test_uninstall_of_nothing_exits_0(vault: Path, alone: Fakes, invoke, capsys, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_FAIL", "systemctl")
    assert fail(capsys, "schedule", "install", "--systemd", "--vault", str(vault))[0] == 1
    for flags in ([], ["--systemd"], ["--cron"], ["--launchd"]):
        result = invoke("schedule", "uninstall", *flags, "--vault", str(vault))
        assert result.exit_code == 0, result.output
        assert result.output == f"no scheduled sweep of {vault} found\n"
    alone.remove("crontab", "systemctl", "launchctl")
    assert invoke("schedule", "uninstall", "--vault", str(vault)).exit_code == 0


def test_left_over_units_without_a_user_bus_are_not_called_scheduled(
    vault: Path, alone: Fakes, invoke, monkeypatch
) -> None:
    """The issue's machine: unit files an older version left while `systemctl --user` fails."""
    assert invoke("schedule", "install", "--systemd", "--vault", str(vault)).exit_code == 0
    monkeypatch.setenv("FAKE_FAIL", "systemctl")
    text = invoke("status", "--vault", str(vault)).output
    assert "schedule: systemd every 15 min;" not in text
    assert "systemd every 15 min: cannot ask systemd" in text
    doctor = invoke("doctor", "--vault", str(vault))
    assert doctor.exit_code == 1
    assert "PROBLEM schedule: systemd: cannot ask `systemctl --user` whether the timer runs" in doctor.output

    units = Path(os.environ["XDG_CONFIG_HOME"]) / "systemd/user"
    result = invoke("schedule", "uninstall", "--vault", str(vault))
    assert result.exit_code == 0, result.output
    assert list(units.iterdir()) == []


def test_schedule_status_asks_the_scheduler(vault: Path, alone: Fakes, invoke) -> None:
    assert json.loads(invoke("schedule", "status", "--vault", str(vault), "--json").output) == {
        "version": 1,
        "command": "schedule status",
        "data": {
            "installed": False,
            "jobs": [],
            "available": {"launchd": "launchd is macOS only", "systemd": None, "cron": None},
            "choice": "systemd",
        },
    }
    assert invoke("schedule", "install", "--systemd", "--vault", str(vault)).exit_code == 0
    alone.last_trigger("Mon 2026-11-30 11:45:00 UTC")
    data = json.loads(invoke("schedule", "status", "--vault", str(vault), "--json").output)["data"]
    (job,) = data["jobs"]
    timer = f"memory-curator-{vault_id(vault)}.timer"
    assert job["platform"] == "systemd" and job["every_seconds"] == 900
    assert (job["loaded"], job["state"], job["last_ran"]) == (True, "enabled, active", "Mon 2026-11-30 11:45:00 UTC")
    assert f"systemctl --user is-enabled {timer}" in alone.calls()
    assert f"systemctl --user is-active {timer}" in alone.calls()
    text = invoke("schedule", "status", "--vault", str(vault)).output
    assert "systemd every 15 min: enabled, active; last ran Mon 2026-11-30 11:45:00 UTC" in text

    subprocess.run(["systemctl", "--user", "disable", "--now", timer], check=True)
    (job,) = json.loads(invoke("schedule", "status", "--vault", str(vault), "--json").output)["data"]["jobs"]
    assert (job["loaded"], job["state"]) == (False, "disabled, inactive")
