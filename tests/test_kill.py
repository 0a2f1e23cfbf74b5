"""kill -9 at random moments: a real `memory-curator run` subprocess over mixed candidates is
killed (sometimes its recovery too), then a normal sweep runs. Nothing may be lost, doubled
or half-written: the vault must equal what one uninterrupted sweep leaves (times aside)."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from safety_kit import KINDS, assert_conserved, new_vault, normalized, populate

from memory_curator.commands import sweep
from memory_curator.commands.context import Context

TRIALS = 30
PER_TRIAL = 40  # 1,200 candidates across the trials


def _start(root: Path, state: Path) -> subprocess.Popen[bytes]:
    args = [sys.executable, "-m", "memory_curator", "run", "--vault", str(root), "--state-dir", str(state), "--json"]
    return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _progress(state: Path) -> tuple[int, int]:
    """(begin, end) records in the journal so far."""
    try:
        data = (state / "journal.jsonl").read_bytes()
    except FileNotFoundError:
        return 0, 0
    return data.count(b'"event": "begin"'), data.count(b'"event": "end"')


def _kill_after(proc: subprocess.Popen[bytes], state: Path, actions: int, jitter: float) -> None:
    """SIGKILL once the sweep has begun `actions` actions, plus a random few milliseconds."""
    deadline = time.monotonic() + 60
    while _progress(state)[0] < actions and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.0005)
    time.sleep(jitter)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)


@pytest.mark.slow
def test_sigkill_at_random_moments_loses_nothing(tmp_path: Path) -> None:
    seed = int(os.environ.get("MC_KILL_SEED") or time.time_ns() % 1_000_000)
    rng = random.Random(seed)
    template = new_vault(tmp_path / "template")
    markers = populate(template, [KINDS[i % len(KINDS)] for i in range(PER_TRIAL)])
    shutil.copytree(template, tmp_path / "reference")
    sweep.run(Context.build(tmp_path / "reference", str(tmp_path / "ref-state")), None, sweep.Options(use_judge=False))
    reference = normalized(tmp_path / "reference")

    at_kill: list[tuple[int, int]] = []
    for trial in range(TRIALS):
        where = f"seed {seed} (MC_KILL_SEED), trial {trial}"
        root, state = tmp_path / f"t{trial}" / "vault", tmp_path / f"t{trial}" / "state"
        shutil.copytree(template, root)
        _kill_after(_start(root, state), state, rng.randrange(PER_TRIAL + 1), rng.uniform(0, 0.004))
        at_kill.append(_progress(state))
        if rng.random() < 0.3:  # kill the next sweep too, during its recovery or soon after
            _kill_after(_start(root, state), state, 0, rng.uniform(0.05, 0.4))
        final = sweep.run(Context.build(root, str(state)), None, sweep.Options(use_judge=False))
        assert not final.errors, (where, final.errors)
        try:
            assert_conserved(root, markers, state)
        except AssertionError as exc:
            raise AssertionError(f"{where}: {exc}; the sweep after the kill: {final.to_json()}") from None
        assert normalized(root) == reference, where
        shutil.rmtree(tmp_path / f"t{trial}")

    midway = [b for b, _ in at_kill if 0 < b < PER_TRIAL]
    open_at_kill = [(b, e) for b, e in at_kill if b > e]
    assert len(midway) >= TRIALS // 3, f"kills landed mid-sweep only {len(midway)} times: {at_kill}"
    assert len(set(midway)) >= 5, f"kill points not varied: {at_kill}"
    assert open_at_kill, f"no kill landed inside an action: {at_kill}"
