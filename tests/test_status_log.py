"""`status --json` and `log --json`: their documented shapes (docs/review.md), counts that
match the files on disk after a scripted sequence of sweeps, note histories, the progress bar."""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import Result
from fake_schedulers import Fakes, install_fakes
from loop_kit import CONTRADICTION, INSIGHT, PATCHING, THIN_FACT, UNSOURCED, fail, sweep

from memory_curator.cli.machine import build_context
from memory_curator.commands import sweep as sweep_mod
from memory_curator.commands.status import per_day
from memory_curator.core.clock import FixedClock
from memory_curator.core.compose import has_review_tag
from memory_curator.core.notes import parse

from conftest import NOW

STATUS_KEYS = [
    "vault",
    "state_dir",
    "inbox",
    "needs_review",
    "drops_7d",
    "secret_drops",
    "contradictions",
    "last_sweeps",
    "verdicts_per_day",
    "index",
    "schedule",
    "lock",
    "journal",
    "rules",
    "ignored",
    "review_note",
]
SWEEP_KEYS = ["run", "started", "seconds", "processed", "promoted", "patched", "dropped", "needs_review", "errors"]
ENTRY_KEYS = ["time", "run", "seq", "verdict", "inbox_path", "path", "reason", "rule", "status", "undone_by"]


def status(invoke, root: Path) -> dict:
    result = invoke("status", "--vault", str(root), "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)["data"]


def log(invoke, root: Path, *args: str) -> dict:
    result = invoke("log", "--vault", str(root), "--json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)["data"]


def on_disk(root: Path) -> dict:
    """What status must agree with, counted from the files themselves."""
    inbox = [p for p in (root / "_inbox").glob("*/*.md") if not p.parent.name.startswith(".")]
    flagged = [p for p in inbox if has_review_tag(parse(p.read_bytes()).frontmatter)]
    per_agent: dict[str, int] = {}
    for path in inbox:
        per_agent[path.parent.name] = per_agent.get(path.parent.name, 0) + 1
    dropped = list((root / "_inbox/.dropped").rglob("*.md"))
    return {
        "candidates": len(inbox),
        "agents": per_agent,
        "flagged": len(flagged),
        "flagged_paths": flagged,
        "dropped": len(dropped),
    }


def scripted(root: Path, invoke, write_candidate) -> list[dict]:
    """Two sweeps, then a person's resolve: returns the sweeps' JSON outputs."""
    write_candidate(root, "patching.md", PATCHING)
    write_candidate(root, "claim.md", UNSOURCED)
    write_candidate(root, "insight.md", INSIGHT)
    first = sweep(invoke, root)
    write_candidate(root, "contra.md", CONTRADICTION, agent="agent-b")
    write_candidate(root, "claim2.md", UNSOURCED.replace("acme", "globex"), agent="agent-b")
    write_candidate(root, "thin.md", THIN_FACT, agent="agent-b")
    second = sweep(invoke, root)
    invoke("resolve", str(root / "_inbox/agent-b/thin.md"), "--drop", "stale", "--by", "tester")
    return [first, second]


@pytest.fixture
def invoke(invoke: Callable[..., Result], clock: FixedClock) -> Callable[..., Result]:
    """Every command of a test here runs at the same fixed moment: the days, the 7-day drops and
    `--since` are counted from it, not from the day the suite runs."""
    return functools.partial(invoke, clock=clock)


@pytest.fixture(autouse=True)
def fake_schedulers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Fakes:
    """`status` reads the schedule: never the real crontab, launchctl or systemctl."""
    return install_fakes(tmp_path / "fakes", monkeypatch)


def test_status_counts_match_the_files_on_disk(vault: Path, invoke, write_candidate) -> None:
    runs = scripted(vault, invoke, write_candidate)
    data = status(invoke, vault)
    assert list(data) == STATUS_KEYS
    disk = on_disk(vault)
    assert data["inbox"]["candidates"] == disk["candidates"]
    assert {a: c["candidates"] for a, c in data["inbox"]["agents"].items()} == disk["agents"]
    assert data["needs_review"]["count"] == disk["flagged"] == sum(r["needs_review"] for r in runs) - 1
    oldest = min(disk["flagged_paths"], key=lambda p: (p.stat().st_mtime, p.relative_to(vault).as_posix()))
    assert data["needs_review"]["oldest_path"] == oldest.relative_to(vault).as_posix()
    assert data["drops_7d"]["total"] == disk["dropped"] == sum(r["dropped"] for r in runs) + 1
    assert data["drops_7d"]["by_rule"] == {"low-confidence-unsourced": disk["dropped"] - 1, "by-person": 1}
    assert data["contradictions"] == ["_inbox/agent-b/contra.md"]
    assert "contradiction" in (vault / "_inbox/agent-b/contra.md").read_text()
    assert [list(s)[: len(SWEEP_KEYS)] for s in data["last_sweeps"]] == [SWEEP_KEYS, SWEEP_KEYS]
    for seen, run in zip(data["last_sweeps"], runs, strict=True):
        assert seen["run"] == run["run_id"] and seen["undone"] is False
        assert [seen[k] for k in SWEEP_KEYS[3:8]] == [run[k] for k in SWEEP_KEYS[3:8]]
    days = data["verdicts_per_day"]
    assert len(days) == 14 and days[-1]["date"] == NOW.date().isoformat()
    today = {k: days[-1][k] for k in ("promote", "patch", "drop", "needs_review")}
    assert today["drop"] == disk["dropped"]
    assert today["patch"] == sum(r["patched"] for r in runs)
    assert today["promote"] == sum(r["promoted"] for r in runs)
    assert data["lock"] == {"free": True, "holder": None}
    assert data["schedule"] == {"installed": False, "jobs": []}
    assert data["index"]["usable"] is True and data["index"]["notes"] > 0 and data["index"]["age_seconds"] >= 0

    # an undo shows at once: the person's drop is back in the inbox and out of the counts
    invoke("undo", "--last", "--vault", str(vault))
    after = status(invoke, vault)
    assert after["drops_7d"]["total"] == on_disk(vault)["dropped"] == disk["dropped"] - 1
    assert after["inbox"]["candidates"] == disk["candidates"] + 1
    assert after["needs_review"]["count"] == data["needs_review"]["count"] + 1  # back with its needs-review tag


def test_status_text_dashboard(vault: Path, invoke, write_candidate) -> None:
    scripted(vault, invoke, write_candidate)
    text = invoke("status", "--vault", str(vault)).output
    for part in ("inbox", "waiting for a person:", "drops in the last 7 days:", "last sweeps", "verdicts per day"):
        assert part in text
    assert "contradictions flagged: _inbox/agent-b/contra.md" in text
    assert "schedule: not installed" in text and "lock: free" in text


def test_verdicts_per_day_counts_by_utc_day() -> None:
    from memory_curator.commands.log import entries

    now = dt.datetime(2026, 11, 30, 12, tzinfo=dt.UTC)
    records = []
    for seq, (day, verdict) in enumerate([(30, "promote"), (30, "drop"), (29, "drop"), (16, "patch"), (15, "drop")]):
        when = f"2026-11-{day:02d}T08:00:00Z"
        records += [
            {"event": "begin", "time": when, "run": "r", "seq": seq, "verdict": verdict},
            {"event": "end", "run": "r", "seq": seq, "ok": True},
        ]
    days = [day.to_json() for day in per_day(entries(records), now)]
    assert days[0]["date"] == "2026-11-17" and len(days) == 14
    assert days[-1] == {"date": "2026-11-30", "promote": 1, "patch": 0, "drop": 1, "needs_review": 0}
    assert days[-2]["drop"] == 1 and sum(d["patch"] for d in days) == 0  # the 16th is outside the two weeks


def test_log_json_shape_and_note_histories(vault: Path, invoke, write_candidate) -> None:
    scripted(vault, invoke, write_candidate)
    everything = log(invoke, vault)
    assert list(everything) == ["count", "entries"] and everything["count"] == len(everything["entries"])
    assert all(list(e)[: len(ENTRY_KEYS)] == ENTRY_KEYS for e in everything["entries"])

    # why was this dropped?
    [drop] = log(invoke, vault, "--file", "_inbox/agent-a/claim.md")["entries"]
    assert (drop["verdict"], drop["rule"], drop["status"]) == ("drop", "low-confidence-unsourced", "done")
    assert drop["reason"] == "confidence=1 AND no source_url" and (vault / drop["path"]).is_file()
    assert log(invoke, vault, "--file", drop["path"])["entries"] == [drop]

    # a patched note's history
    patches = log(invoke, vault, "--file", "facts/obsidian/file-format.md")["entries"]
    assert [(e["verdict"], e["inbox_path"]) for e in patches] == [("patch", "_inbox/agent-a/patching.md")]

    # a note promoted by a person, with the flag that sent it to the person first
    insight = vault / "_inbox/agent-a/insight.md"
    done = json.loads(invoke("resolve", str(insight), "--promote", "--by", "tester", "--json").output)["data"]
    history = log(invoke, vault, "--file", done["target_path"])["entries"]
    assert [(e["verdict"], e["reason"]) for e in history] == [
        ("needs_review", history[0]["reason"]),
        ("promote", "promoted by tester"),
    ]
    assert "load-bearing undecided" in history[0]["reason"]

    text = invoke("log", "--vault", str(vault), "--file", done["target_path"]).output
    assert "promoted by tester" in text and "needs_review" in text


def test_log_since(vault: Path, invoke, write_candidate, capsys) -> None:
    scripted(vault, invoke, write_candidate)
    total = log(invoke, vault)["count"]
    assert total > 0
    assert log(invoke, vault, "--since", "1h")["count"] == total
    assert log(invoke, vault, "--since", "2099-01-01")["count"] == 0
    code, err = fail(capsys, "log", "--vault", str(vault), "--since", "yesterday-ish")
    assert code == 2 and "'--since': 'yesterday-ish': use 30m, 12h, 7d, 2w, or a date like 2026-11-01" in err


def test_long_sweeps_tick_a_progress_bar_short_ones_do_not(vault: Path, write_candidate) -> None:
    calls: list[int] = []
    ticks: list[int] = []

    @contextlib.contextmanager
    def bar(total: int) -> Iterator[Callable[[], None]]:
        calls.append(total)
        yield lambda: ticks.append(1)

    for n in range(sweep_mod.PROGRESS_MIN):
        write_candidate(vault, f"c{n:03}.md", UNSOURCED.replace("acme", f"acme-{n}"))
    total = sweep_mod.PROGRESS_MIN + 2  # plus the fixtures' two
    sweep_mod.run(build_context(vault, None), None, sweep_mod.Options(use_judge=False, progress=bar))
    assert calls == [total] and len(ticks) == total
    write_candidate(vault, "one-more.md", UNSOURCED)
    sweep_mod.run(build_context(vault, None), None, sweep_mod.Options(use_judge=False, progress=bar))
    assert calls == [total]


def test_no_progress_bar_when_stdout_is_not_a_terminal(vault: Path, invoke, write_candidate) -> None:
    for n in range(sweep_mod.PROGRESS_MIN + 1):
        write_candidate(vault, f"c{n:03}.md", UNSOURCED.replace("acme", f"acme-{n}"))
    text = invoke("run", "--vault", str(vault)).output
    assert "sweeping" not in text
    assert json.loads(invoke("run", "--vault", str(vault), "--json").output)["processed"] == 0


def test_status_shows_an_installed_schedule_and_its_last_run(vault: Path, invoke) -> None:
    assert invoke("schedule", "install", "--cron", "--every", "30m", "--vault", str(vault)).exit_code == 0
    data = status(invoke, vault)
    assert data["schedule"]["installed"] is True
    assert data["schedule"]["jobs"] == [
        {
            "platform": "cron",
            "where": "crontab",
            "every_seconds": 1800,
            "loaded": True,
            "state": "in the crontab",
            "last_ran": None,
        }
    ]
    log_file = Path(data["state_dir"]) / "sweeps.log"
    assert invoke("run", "--vault", str(vault), "--log-file", str(log_file)).exit_code == 0
    last = status(invoke, vault)["schedule"]["last_run"]
    assert last["exit"] == 0 and "processed" in last["summary"]
    assert "schedule: cron every 30 min; last run" in invoke("status", "--vault", str(vault)).output


def _on_a_terminal(*args: str) -> str:
    """Run the real entry point with stdout on a pseudo-terminal; return what it printed."""
    import os
    import pty
    import subprocess
    import sys

    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "memory_curator", *args], stdout=slave, stderr=subprocess.DEVNULL, close_fds=True
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    assert proc.wait(timeout=120) == 0
    return b"".join(chunks).decode("utf-8", "replace")


def test_a_terminal_sees_the_bar_json_never_does(vault: Path, write_candidate) -> None:
    for n in range(sweep_mod.PROGRESS_MIN):
        write_candidate(vault, f"c{n:03}.md", UNSOURCED.replace("acme", f"acme-{n}"))
    assert "sweeping" in _on_a_terminal("run", "--vault", str(vault), "--dry-run")
    out = _on_a_terminal("run", "--vault", str(vault), "--json")
    assert "sweeping" not in out and json.loads(out)["dropped"] == sweep_mod.PROGRESS_MIN + 1
