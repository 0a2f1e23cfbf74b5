"""One clock seam: only memory_curator/clock.py reads the system clock, and the CLI passes the
clock it is given all the way down (journal, drop names, the lock, `log --since`)."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pytest
from loop_kit import UNSOURCED

from memory_curator.core.clock import FixedClock, SystemClock

from conftest import NOW, REPO, state_of

SYSTEM_CLOCK = re.compile(
    r"datetime\.now|datetime\.today|utcnow|date\.today|time\.time(_ns)?\(|time\.monotonic|perf_counter"
    r"|time\.(localtime|gmtime|ctime|asctime)\(\)|from time import"
)


def test_only_clock_py_reads_the_system_clock() -> None:
    found = [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for path in sorted((REPO / "memory_curator").rglob("*.py"))
        if path.name != "clock.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if SYSTEM_CLOCK.search(line)
    ]
    assert found == [], "take a Clock parameter instead (memory_curator/clock.py):\n" + "\n".join(found)


def test_the_pattern_catches_what_it_must() -> None:
    for line in ("dt.datetime.now(dt.UTC)", "utcnow()", "time.time()", "time.time_ns()", "date.today()"):
        assert SYSTEM_CLOCK.search(line), line
    for line in ("clock.now()", "clock.timestamp()", "self.clock.monotonic()", "stat.st_mtime"):
        assert not SYSTEM_CLOCK.search(line), line


def test_a_fixed_clock_moves_only_when_told() -> None:
    clock = FixedClock(NOW + dt.timedelta(microseconds=250_000))
    assert clock.now() == NOW and clock.now().tzinfo == dt.UTC
    assert clock.timestamp() == NOW.timestamp() + 0.25 and clock.monotonic() == 0.0
    clock.advance(90)
    assert clock.now() == NOW + dt.timedelta(seconds=90) and clock.monotonic() == 90.0
    with pytest.raises(ValueError, match="aware"):
        FixedClock(dt.datetime(2026, 11, 30))


def test_the_system_clock_gives_whole_seconds_in_utc() -> None:
    now = SystemClock().now()
    assert now.tzinfo == dt.UTC and now.microsecond == 0


def test_the_cli_passes_its_clock_down(vault: Path, invoke, write_candidate) -> None:
    write_candidate(vault, "claim.md", UNSOURCED)
    clock = FixedClock(NOW)
    out = json.loads(invoke("run", "--vault", str(vault), "--json", clock=clock).output)
    actions = [a for agent in out["agents"] for a in agent["actions"]]
    (action,) = [a for a in actions if a["inbox_path"] == "_inbox/agent-a/claim.md"]
    assert action["verdict"] == "drop" and action["moved_to"].endswith("/2026-11-30T12-00-00-claim.md")
    assert "(2026-11-30T12:00:00Z)" in (vault / action["moved_to"]).read_text(encoding="utf-8")
    state = state_of(vault)
    times = {json.loads(line)["time"] for line in (state / "journal.jsonl").read_text().splitlines()}
    assert times == {"2026-11-30T12:00:00Z"}
    assert json.loads((state / "lock").read_text())["since"] == "2026-11-30T12:00:00Z"

    def since(text: str) -> int:
        out = invoke("log", "--vault", str(vault), "--json", "--since", text, clock=clock).output
        return json.loads(out)["data"]["count"]

    assert since("1h") == len(actions) > 1
    clock.advance(2 * 3600)
    assert since("1h") == 0 and since("3h") == len(actions)
