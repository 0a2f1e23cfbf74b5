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
from safety_kit import KINDS, assert_conserved, assert_in_one_place, new_vault, normalized, populate, set_commit_batch

from memory_curator.cli.machine import build_context
from memory_curator.commands import sweep

TRIALS = 30
PER_TRIAL = 40  # 1,200 candidates across the trials
BATCH = 4  # plans per group commit: ten batches, so the kills land in varied ones


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
    set_commit_batch(template, BATCH)
    markers = populate(template, [KINDS[i % len(KINDS)] for i in range(PER_TRIAL)])
    shutil.copytree(template, tmp_path / "reference")
    sweep.run(build_context(tmp_path / "reference", str(tmp_path / "ref-state")), None, sweep.Options(use_judge=False))
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
        final = sweep.run(build_context(root, str(state)), None, sweep.Options(use_judge=False))
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


PERSON_TRIALS = 12


def _person(root: Path, state: Path, *args: str) -> subprocess.Popen[bytes]:
    base = [sys.executable, "-m", "memory_curator", *args, "--vault", str(root), "--state-dir", str(state)]
    return subprocess.Popen([*base, "--by", "pat"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@pytest.mark.slow
def test_sigkill_during_undo_and_restore_loses_nothing(tmp_path: Path) -> None:
    """A real `undo --last` (of a sweep of every kind) and a `restore`, killed at random moments
    (after a random number of their plans began), then a normal sweep: every item's content in
    exactly one place, and each file as an uninterrupted history left it (the item's plan done,
    or not done)."""
    seed = int(os.environ.get("MC_KILL_SEED") or time.time_ns() % 1_000_000)
    rng = random.Random(seed)
    template = new_vault(tmp_path / "template")
    set_commit_batch(template, BATCH)
    markers = populate(template, [KINDS[i % len(KINDS)] for i in range(8)])
    sweep.run(build_context(template, str(tmp_path / "template-state")), None, sweep.Options(use_judge=False))
    histories = {}
    for name, action in (("undo", ("undo", "--last")), ("none", None)):
        root, state = _copy_pair(template, tmp_path, name)
        if action:
            assert _person(root, state, *action).wait(timeout=60) == 0
        sweep.run(build_context(root, str(state)), None, sweep.Options(use_judge=False))
        assert_in_one_place(root, markers)
        histories[name] = normalized(root)
    at_kill: list[tuple[int, int]] = []
    for trial in range(PERSON_TRIALS):
        where = f"seed {seed} (MC_KILL_SEED), trial {trial}"
        root, state = _copy_pair(template, tmp_path, f"t{trial}")
        _kill_at(_person(root, state, "undo", "--last"), state, "undo", rng.randrange(9), rng.uniform(0, 0.003))
        at_kill.append(_plans(state, "undo"))
        final = sweep.run(build_context(root, str(state)), None, sweep.Options(use_judge=False))
        assert not final.errors, (where, final.errors)
        assert_in_one_place(root, markers)
        _assert_item_by_item(normalized(root), histories, where)
        shutil.rmtree(tmp_path / f"t{trial}")
    for trial in range(PERSON_TRIALS // 2):
        where = f"seed {seed} (MC_KILL_SEED), restore trial {trial}"
        root, state = _copy_pair(template, tmp_path, f"r{trial}")
        dropped = sorted((root / "_inbox/.dropped").rglob("*.md"))
        _kill_at(
            _person(root, state, "restore", str(dropped[0])), state, "restore", rng.randrange(2), rng.uniform(0, 0.002)
        )
        final = sweep.run(build_context(root, str(state)), None, sweep.Options(use_judge=False))
        assert not final.errors, (where, final.errors)
        assert_in_one_place(root, markers)
        shutil.rmtree(tmp_path / f"r{trial}")
    assert any(0 < begun < 8 for begun, _ in at_kill), f"no kill landed mid-undo: {at_kill}"


def _assert_item_by_item(vault: dict[str, bytes], histories: dict[str, dict[str, bytes]], where: str) -> None:
    """An undo is one plan per item: killed midway, some items are undone and the rest not. Each
    file must be exactly what one of the uninterrupted histories has at that path."""
    for rel, data in vault.items():
        assert any(h.get(rel) == data for h in histories.values()), f"{where}: {rel} is in neither history"


def _plans(state: Path, verdict: str) -> tuple[int, int]:
    """(begin, end) records of `verdict` plans in the journal so far (a torn line is skipped)."""
    try:
        lines = (state / "journal.jsonl").read_bytes().splitlines()
    except FileNotFoundError:
        return 0, 0
    begun, runs = 0, set()
    for line in lines:
        if f'"verdict": "{verdict}"'.encode() in line and b'"event": "begin"' in line:
            begun += 1
            runs.add(line.split(b'"run": "')[1].split(b'"')[0])
    ended = sum(1 for line in lines if b'"event": "end"' in line and any(run in line for run in runs))
    return begun, ended


def _kill_at(proc: subprocess.Popen[bytes], state: Path, verdict: str, plans: int, jitter: float) -> None:
    """SIGKILL once the command has begun `plans` plans of `verdict`, plus a few milliseconds."""
    deadline = time.monotonic() + 60
    while _plans(state, verdict)[0] < plans and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.0005)
    time.sleep(jitter)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)


def _copy_pair(template: Path, tmp_path: Path, name: str) -> tuple[Path, Path]:
    root, state = tmp_path / name / "vault", tmp_path / name / "state"
    shutil.copytree(template, root)
    shutil.copytree(tmp_path / "template-state", state)
    return root, state
