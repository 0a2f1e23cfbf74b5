"""kill -9 during a person's `review` action: a real `memory-curator review` subprocess (keys on
its stdin) is killed at random moments while it applies a choice, then the next command's
recovery runs. The vault must end as if the action ran once or not at all — for a bulk choice
(one run, one plan per item) item by item, every item's content whole and in one place."""

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
from safety_kit import files, normalized, temps

from memory_curator.cli.machine import build_context
from memory_curator.commands import sweep
from memory_curator.commands.desk import locked

from conftest import FIXTURES, age

BULK = 21
TRIALS_BULK = 8
TRIALS_SINGLE = 8


def _fact(entity: str, marker: str, value: str = "A claim.", confidence: int = 1) -> str:
    return (
        f"---\ntype: fact\nentity: {entity}\npredicate: claim\nvalue: {value}\n"
        f"source_url: https://example.dev/{marker}\nconfidence: {confidence}\n---\n"
        f"marker {marker}\nend {marker}\n"
    )


INSIGHT = (
    "---\ntype: insight\ntitle: Kill tests need markers\nsource_url: https://example.dev/ins\nconfidence: 2\n---\n"
    "marker ins\nend ins\n"
)
CONTRA = (
    "---\ntype: fact\nentity: obsidian\npredicate: file-format\nvalue: A proprietary database.\n"
    "source_url: https://example.dev/contra\nconfidence: 2\n---\nmarker contra\nend contra\n"
)
ADA = (
    "---\ntype: person\nname: Ada King\nsources:\n  - https://example.dev/ada\nconfidence: 1\n---\n"
    "marker ada\nend ada\n"
)

# (name, review arguments, keys on stdin, the markers whose items the action decides)
ACTIONS = {
    "bulk-drop": (["--agent", "bulk"], "a\nd\nnoise\ny\n", [f"b{n:02}" for n in range(BULK)]),
    "promote": (["_inbox/agent-a/ins.md"], "p\n", ["ins"]),
    "settle-new": (["_inbox/agent-a/contra.md"], "n\ny\n", ["contra"]),
    "patch": (["_inbox/agent-a/ada.md"], "m\n\n", ["ada"]),
}


def _template(tmp_path: Path) -> tuple[Path, Path]:
    root, state = tmp_path / "template" / "vault", tmp_path / "template" / "state"
    shutil.copytree(FIXTURES, root)
    for path in (root / "_inbox/test-step-4").glob("*.md"):
        path.unlink()
    (root / "_inbox/bulk").mkdir(parents=True)
    (root / "_inbox/agent-a").mkdir(parents=True)
    for n in range(BULK):
        (root / f"_inbox/bulk/b{n:02}.md").write_text(_fact(f"lang-{n}", f"b{n:02}"))
    for name, text in (("ins.md", INSIGHT), ("contra.md", CONTRA), ("ada.md", ADA)):
        (root / "_inbox/agent-a" / name).write_text(text)
    for path in root.rglob("*"):
        if path.is_file():
            age(path)
    result = sweep.run(build_context(root, str(state)), None, sweep.Options(use_judge=False))
    assert result.totals()["needs_review"] == BULK + 3, result.to_json()
    return root, state


def _copy(template: tuple[Path, Path], where: Path) -> tuple[Path, Path]:
    root, state = where / "vault", where / "state"
    shutil.copytree(template[0], root)
    shutil.copytree(template[1], state)
    return root, state


def _review(root: Path, state: Path, args: list[str], keys: str) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "memory_curator", "review", *args, "--vault", str(root), "--state-dir", str(state)]
    proc = subprocess.Popen(
        [*argv, "--by", "pat"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=root
    )
    assert proc.stdin is not None
    proc.stdin.write(keys.encode())
    proc.stdin.close()  # then end of input: the session ends by itself
    return proc


def _begun(state: Path, before: int) -> int:
    try:
        data = (state / "journal.jsonl").read_bytes()
    except FileNotFoundError:
        return 0
    return data.count(b'"event": "begin"') - before


def _kill_after(proc: subprocess.Popen[bytes], state: Path, before: int, plans: int, jitter: float) -> int:
    """SIGKILL once the action has begun `plans` plans, plus a few milliseconds; returns how
    many had begun when it landed."""
    deadline = time.monotonic() + 60
    while _begun(state, before) < plans and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.0005)
    time.sleep(jitter)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    return _begun(state, before)


def _recover(root: Path, state: Path) -> None:
    """What the next command does first: finish (or roll back) what the kill left open."""
    with locked(build_context(root, str(state))):
        pass


def _in_one_place(root: Path, markers: list[str]) -> None:
    for marker in markers:
        holders = [p for p in files(root) if f"marker {marker}\nend {marker}\n".encode() in p.read_bytes()]
        assert len(holders) == 1, f"{marker} in {holders}"


@pytest.mark.slow
@pytest.mark.parametrize("action", list(ACTIONS))
def test_sigkill_during_a_review_action_leaves_it_done_or_not(tmp_path: Path, action: str) -> None:
    seed = int(os.environ.get("MC_KILL_SEED") or time.time_ns() % 1_000_000)
    rng = random.Random(seed)
    args, keys, markers = ACTIONS[action]
    template = _template(tmp_path)
    every = [f"b{n:02}" for n in range(BULK)] + ["ins", "contra", "ada"]
    before = _begun(template[1], 0)

    done_root, done_state = _copy(template, tmp_path / "done")
    assert _review(done_root, done_state, args, keys).wait(timeout=120) == 0
    histories = {"done": normalized(done_root), "not": normalized(template[0])}
    assert histories["done"] != histories["not"], "the action did nothing"

    trials = TRIALS_BULK if len(markers) > 1 else TRIALS_SINGLE
    landed = []
    for trial in range(trials):
        where = f"{action}: seed {seed} (MC_KILL_SEED), trial {trial}"
        root, state = _copy(template, tmp_path / f"t{trial}")
        plans = rng.randrange(len(markers) + 1)
        landed.append(_kill_after(_review(root, state, args, keys), state, before, plans, rng.uniform(0, 0.003)))
        _recover(root, state)
        after = normalized(root)
        if len(markers) == 1:
            assert after in histories.values(), f"{where}: neither done nor not done"
        else:  # one plan per item: each file as one history or the other has it
            for rel, data in after.items():
                assert any(h.get(rel) == data for h in histories.values()), f"{where}: {rel} is in neither history"
        _in_one_place(root, every)
        assert temps(root, state) == [], f"{where}: temp files left"
        shutil.rmtree(tmp_path / f"t{trial}")
    if len(markers) > 1:
        assert any(0 < n < len(markers) for n in landed), f"no kill landed mid-bulk: {landed}"
