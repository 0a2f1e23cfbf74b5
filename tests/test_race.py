"""Races: two sweeps at once (exit 75, or --wait), the lock surviving kill -9, a person or an
agent writing between our read and our write (compare-and-swap), and candidates still being
written (the settle window)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from safety_kit import KINDS, add_candidate, assert_conserved, census, files, new_vault, normalized, populate, temps

from memory_curator.cli.machine import build_context
from memory_curator.commands import sweep
from memory_curator.commands.context import Seams
from memory_curator.core.clock import Clock, FixedClock, SystemClock
from memory_curator.store.state import lock_holder, lock_is_free, sweep_lock
from memory_curator.store.writer import FILES, Files, Group

pytestmark = pytest.mark.slow  # real processes, kill -9 and lock waits: run by .ci/run, not by default

BIG = 200  # candidates: enough that a sweep holds the lock a while after both sweeps start


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str], dict[str, bytes]]:
    """A vault of BIG mixed candidates, and what one sweep of it leaves (times blanked)."""
    base = tmp_path_factory.mktemp("big")
    root = new_vault(base / "vault")
    markers = populate(root, [KINDS[i % len(KINDS)] for i in range(BIG)])
    reference = base / "reference"
    shutil.copytree(root, reference)
    result = sweep.run(build_context(reference, str(base / "reference-state")), None, sweep.Options(use_judge=False))
    assert result.totals()["processed"] == BIG and not result.errors
    return root, markers, normalized(reference)


def _copy(big, tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "vault"
    shutil.copytree(big[0], root)
    return root, tmp_path / "state"


def _start(root: Path, state: Path, *extra: str) -> subprocess.Popen[str]:
    args = [sys.executable, "-m", "memory_curator", "run", "--vault", str(root), "--state-dir", str(state), "--json"]
    return subprocess.Popen([*args, *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _sweep(root: Path, state: Path, clock: Clock = SystemClock(), files: Files = FILES) -> sweep.SweepResult:
    ctx = build_context(root, str(state), Seams(clock=clock, files=files))
    return sweep.run(ctx, None, sweep.Options(use_judge=False))


# --- one sweep at a time --------------------------------------------------------------------


def test_a_second_sweep_exits_75_with_one_line(big, tmp_path: Path) -> None:
    root, state = _copy(big, tmp_path)
    state.mkdir()
    before = normalized(root)
    with sweep_lock(state, SystemClock(), os.getpid(), socket.gethostname()):
        proc = _start(root, state)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 75
    assert json.loads(out)["error"]["code"] == 75  # --json: the error object on stdout too
    assert err.count("\n") == 1 and err.startswith("memory-curator: another sweep holds the lock")
    assert f"pid {os.getpid()}" in err
    assert normalized(root) == before


def test_two_sweeps_started_at_once_one_runs_one_exits_75(big, tmp_path: Path) -> None:
    root, state = _copy(big, tmp_path)
    procs = [_start(root, state), _start(root, state)]
    outs = [p.communicate(timeout=120) for p in procs]
    codes = sorted(p.returncode for p in procs)
    assert codes == [0, 75], outs
    winner, loser = sorted(zip(procs, outs, strict=True), key=lambda po: po[0].returncode)
    assert json.loads(winner[1][0])["processed"] == BIG
    assert json.loads(loser[1][0])["error"]["code"] == 75 and loser[1][1].count("\n") == 1
    assert normalized(root) == big[2], "the end state is one sweep's"
    assert_conserved(root, big[1], state)


def test_with_wait_the_second_sweep_runs_after_the_first(big, tmp_path: Path) -> None:
    root, state = _copy(big, tmp_path)
    procs = [_start(root, state, "--wait"), _start(root, state, "--wait")]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert sorted(json.loads(out)["processed"] for out, _ in outs) == [0, BIG]
    assert normalized(root) == big[2]


def test_wait_blocks_until_the_lock_is_free(big, tmp_path: Path) -> None:
    root, state = _copy(big, tmp_path)
    state.mkdir()
    before = normalized(root)
    with sweep_lock(state, SystemClock(), os.getpid(), socket.gethostname()):
        proc = _start(root, state, "--wait")
        time.sleep(1.5)
        assert proc.poll() is None, "it waits instead of exiting 75"
        assert normalized(root) == before
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert json.loads(out)["processed"] == BIG


def test_kill_9_releases_the_lock(big, tmp_path: Path) -> None:
    root, state = _copy(big, tmp_path)
    proc = _start(root, state)
    deadline = time.monotonic() + 30
    while f"pid {proc.pid} " not in (lock_holder(state) or "") and proc.poll() is None:
        assert time.monotonic() < deadline
        time.sleep(0.005)
    assert proc.poll() is None, "the sweep finished before it could be killed"
    assert not lock_is_free(state)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    assert lock_is_free(state)
    nxt = _start(root, state)
    _, err = nxt.communicate(timeout=60)
    assert nxt.returncode == 0, err
    assert normalized(root) == big[2]


# --- compare-and-swap: someone writes between our read and our write -------------------------


@dataclass(frozen=True)
class Meddled(Files):
    """The real file operations, with `act(path)` run once just before the temp file for a
    target named `name` is written (after the sweep read and decided): a person saving in
    Obsidian, an agent rewriting its file."""

    name: str = ""
    act: Callable[[Path], object] = lambda path: None
    hits: list[Path] = field(default_factory=list)

    def _write_temp(self, folder: Path, name: str, data: bytes, mode: int, sync: bool = True) -> Path:
        if name == self.name and not self.hits:
            self.hits.append(folder / name)
            self.act(folder / name)
        return super()._write_temp(folder, name, data, mode, sync)


def test_a_person_edit_of_the_note_being_patched_is_never_overwritten(tmp_path: Path) -> None:
    root = new_vault(tmp_path / "vault")
    state = tmp_path / "state"
    markers = populate(root, ["patch"])
    (marker,) = markers
    note = root / f"facts/p{marker}/status.md"
    person = b"A line the person typed in Obsidian.\n"
    meddled = Meddled(name="status.md", act=lambda p: p.write_bytes(p.read_bytes() + person))
    first = _sweep(root, state, files=meddled)
    assert meddled.hits == [note]
    assert [e.inbox_path for e in first.errors] == [f"_inbox/agent-a/patch-{marker}.md"]
    assert "changed since it was read" in first.errors[0].error
    assert note.read_bytes().endswith(person), "the person's save stands"
    assert temps(root) == []
    second = _sweep(root, state)
    assert second.totals()["patched"] == 1
    assert person in note.read_bytes(), "the patch merged on top of the person's edit"
    assert_conserved(root, markers, state)


def test_an_agent_rewriting_a_candidate_being_flagged_keeps_its_new_text(tmp_path: Path) -> None:
    root = new_vault(tmp_path / "vault")
    state = tmp_path / "state"
    path = add_candidate(root, "review", "r1")
    newer = path.read_bytes().replace(b"Evidence", b"Better evidence")
    first = _sweep(root, state, files=Meddled(name=path.name, act=lambda p: p.write_bytes(newer)))
    assert [e.inbox_path for e in first.errors] == [f"_inbox/agent-a/{path.name}"]
    assert path.read_bytes() == newer
    assert temps(root) == []


def test_a_note_created_at_the_target_meanwhile_is_never_overwritten(tmp_path: Path) -> None:
    root = new_vault(tmp_path / "vault")
    state = tmp_path / "state"
    path = add_candidate(root, "promote", "p1")
    theirs = b"---\ntype: fact\nentity: ep1\npredicate: status\nvalue: red\n---\nWritten by a person.\n"
    first = _sweep(root, state, files=Meddled(name="status.md", act=lambda p: p.write_bytes(theirs)))
    assert [e.inbox_path for e in first.errors] == [f"_inbox/agent-a/{path.name}"]
    assert (root / "facts/ep1/status.md").read_bytes() == theirs
    assert path.exists() and temps(root) == []


def test_a_candidate_rewritten_after_its_note_was_written_is_not_removed(tmp_path: Path) -> None:
    """The inbox file is removed only if it still holds the bytes that were promoted."""
    root = new_vault(tmp_path / "vault")
    state = tmp_path / "state"
    path = add_candidate(root, "promote", "p2")
    newer = path.read_bytes().replace(b"Evidence for promote:", b"A correction the agent wrote:")
    assert newer != path.read_bytes()

    @dataclass(frozen=True)
    class RewriteAfterCreate(Files):
        def create(self, target: Path, data: bytes, group: Group | None = None) -> None:
            super().create(target, data, group)
            if target.name == "status.md":
                path.write_bytes(newer)

    first = _sweep(root, state, files=RewriteAfterCreate())
    assert "changed since it was read" in first.errors[0].error
    assert path.read_bytes() == newer
    assert b"Evidence for promote:" in (root / "facts/ep2/status.md").read_bytes()
    second = _sweep(root, state)
    assert not second.errors
    holders = [p for p in files(root) if b"A correction the agent wrote:" in p.read_bytes()]
    assert len(holders) == 1, "the correction survives the next sweep, once"


# --- files still being written --------------------------------------------------------------


def _aged(path: Path, seconds: float, clock: Clock) -> Path:
    """Give `path` an mtime `seconds` before the clock's now (negative: in its future)."""
    moment = clock.timestamp() - seconds
    os.utime(path, (moment, moment))
    return path


def _skipped(result: sweep.SweepResult) -> dict[str, str]:
    return {s.inbox_path: s.reason for a in result.agents for s in a.skipped}


def _verdicts(result: sweep.SweepResult) -> dict[str, str]:
    return {x.inbox_path: x.verdict for a in result.agents for x in a.actions}


def test_a_candidate_inside_the_settle_window_waits(tmp_path: Path, clock: FixedClock) -> None:
    root = new_vault(tmp_path / "vault")
    path = _aged(add_candidate(root, "promote", "s1"), 1, clock)
    before = path.read_bytes()
    result = _sweep(root, tmp_path / "state", clock)
    assert "still being written" in _skipped(result)[f"_inbox/agent-a/{path.name}"]
    assert result.totals()["processed"] == 0 and path.read_bytes() == before


def test_a_candidate_stamped_in_the_future_settles_after_the_window_of_observation(
    tmp_path: Path, clock: FixedClock
) -> None:
    """A sync peer with a fast clock (or a shifted test clock) stamps mtimes in our future: the
    file settles once sweeps have seen it unchanged for settle_seconds (3), not never."""
    root = new_vault(tmp_path / "vault")
    path = _aged(add_candidate(root, "promote", "f1"), -3600, clock)
    rel = f"_inbox/agent-a/{path.name}"
    first = _sweep(root, tmp_path / "state", clock)
    assert "in the future" in _skipped(first)[rel] and path.exists()
    clock.advance(2)
    assert rel in _skipped(_sweep(root, tmp_path / "state", clock))
    clock.advance(1)
    assert _verdicts(_sweep(root, tmp_path / "state", clock)) == {rel: "promote"}
    assert not path.exists()
    assert json.loads((tmp_path / "state/sightings.json").read_text()) == {}  # forgotten once it left


def test_a_candidate_changed_between_sweeps_starts_its_observation_again(tmp_path: Path, clock: FixedClock) -> None:
    root = new_vault(tmp_path / "vault")
    path = _aged(add_candidate(root, "promote", "f2"), -3600, clock)
    rel = f"_inbox/agent-a/{path.name}"
    assert rel in _skipped(_sweep(root, tmp_path / "state", clock))
    clock.advance(2)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("One more line from the agent.\n")
    _aged(path, -3600, clock)
    assert rel in _skipped(_sweep(root, tmp_path / "state", clock))
    clock.advance(2)  # 4 s since first seen, 2 s since it changed
    assert rel in _skipped(_sweep(root, tmp_path / "state", clock))
    clock.advance(1)
    assert _verdicts(_sweep(root, tmp_path / "state", clock)) == {rel: "promote"}


def test_a_dry_run_observes_but_records_nothing(tmp_path: Path, clock: FixedClock) -> None:
    root = new_vault(tmp_path / "vault")
    path = _aged(add_candidate(root, "promote", "f3"), -3600, clock)
    options = sweep.Options(use_judge=False, dry_run=True)
    ctx = build_context(root, str(tmp_path / "state"), Seams(clock=clock))
    assert f"_inbox/agent-a/{path.name}" in _skipped(sweep.run(ctx, None, options))
    assert not (tmp_path / "state/sightings.json").exists()


def test_an_unclosed_frontmatter_waits_then_gets_needs_review(tmp_path: Path, clock: FixedClock) -> None:
    root = new_vault(tmp_path / "vault")
    path = root / "_inbox/agent-a/half.md"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"---\ntype: fact\nentity: half\nmarker h1\n")
    _aged(path, 60, clock)
    result = _sweep(root, tmp_path / "state", clock)
    assert _skipped(result)["_inbox/agent-a/half.md"] == "frontmatter not closed yet"
    assert path.read_bytes() == b"---\ntype: fact\nentity: half\nmarker h1\n"
    _aged(path, 3601, clock)  # past settings.settle_ceiling_seconds: nothing waits forever
    result = _sweep(root, tmp_path / "state", clock)
    (action,) = result.agents[-1].actions
    assert action.verdict == "needs_review" and "no closing ---" in action.reason
    assert path.read_bytes().startswith(b"---\ntype: fact\nentity: half\nmarker h1\n")
    assert b"> \xe2\x9a\xa0 curator uncertainty: the frontmatter has no closing ---" in path.read_bytes()


def test_an_empty_file_waits_then_gets_needs_review(tmp_path: Path, clock: FixedClock) -> None:
    root = new_vault(tmp_path / "vault")
    path = root / "_inbox/agent-a/empty.md"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"")
    _aged(path, 60, clock)
    result = _sweep(root, tmp_path / "state", clock)
    assert _skipped(result)["_inbox/agent-a/empty.md"] == "empty file, waiting for its content"
    _aged(path, 3601, clock)
    (action,) = _sweep(root, tmp_path / "state", clock).agents[-1].actions
    assert (action.verdict, action.reason) == ("needs_review", "empty file")


def test_a_candidate_that_changes_while_it_is_read_waits(tmp_path: Path, monkeypatch) -> None:
    from memory_curator.commands import pending

    root = new_vault(tmp_path / "vault")
    path = add_candidate(root, "promote", "s2")
    real = pending.read_capped

    def read_while_agent_appends(target: Path, limit: int) -> bytes | None:
        data = real(target, limit)
        if target == path:  # the agent appends between the sweep's stat and its second look
            with open(target, "ab") as more:
                more.write(b"more text arriving\n")
        return data

    monkeypatch.setattr(pending, "read_capped", read_while_agent_appends)
    result = _sweep(root, tmp_path / "state")
    assert "changed while it was read" in _skipped(result)[f"_inbox/agent-a/{path.name}"]
    monkeypatch.undo()
    assert path.read_bytes().endswith(b"more text arriving\n")
    assert census(root)["s2"] == [f"_inbox/agent-a/{path.name}"]
