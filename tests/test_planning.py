"""Planning apart from the sweep: run ids, the numbering of a run's plans, and a patch that reads
its note once and merges once, whether a sweep or a person patches."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Any

import pytest
from test_patch_sweep import ADDS_SOURCE, NOTE

from memory_curator.cli.machine import build_context
from memory_curator.commands import sweep as sweep_mod
from memory_curator.commands.desk import Desk
from memory_curator.commands.planning import new_run_id
from memory_curator.core import merge as merge_mod
from memory_curator.core.plan import Numbering


def test_a_run_id_is_its_start_and_a_token() -> None:
    now = dt.datetime(2026, 11, 1, 12, 30, 5, tzinfo=dt.UTC)
    assert new_run_id(now, lambda n: "ab" * n) == "20261101T123005Z-abab"
    assert new_run_id(now).startswith("20261101T123005Z-") and len(new_run_id(now)) == 21


def test_a_plan_that_could_not_be_built_takes_no_number() -> None:
    numbers = Numbering()
    assert numbers.take(lambda seq: seq) == 1

    def broken(seq: int) -> int:
        raise ValueError(seq)

    with pytest.raises(ValueError):
        numbers.take(broken)
    assert numbers.take(lambda seq: seq) == 2


@pytest.fixture
def counted(vault: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How often the note is opened (every read and hash of it opens it with `os.open`) and a merge is made."""
    counts = {"reads": 0, "merges": 0}
    real_open, real_merge = os.open, merge_mod.merge

    def read(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        counts["reads"] += Path(path) == vault / NOTE and not flags & (os.O_WRONLY | os.O_RDWR)
        return real_open(path, flags, *args, **kwargs)

    def merge(*args: object, **kwargs: object) -> merge_mod.Merged:
        counts["merges"] += 1
        return real_merge(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", read)
    monkeypatch.setattr(merge_mod, "merge", merge)
    return counts


def test_a_persons_patch_reads_the_note_once_and_merges_once(vault: Path, write_candidate, counted) -> None:
    inbox = write_candidate(vault, "more.md", ADDS_SOURCE)
    done = Desk(build_context(vault, None, user="tester")).patch(str(inbox), NOTE)
    assert done.action.verdict == "patch" and not inbox.exists()
    assert counted == {"reads": 2, "merges": 1}  # the plan's one read, and the writer's compare-and-swap


def test_a_preview_reads_once_and_its_diff_is_that_merge(vault: Path, write_candidate, counted) -> None:
    inbox = write_candidate(vault, "more.md", ADDS_SOURCE)
    preview = Desk(build_context(vault, None, user="tester")).preview(str(inbox), NOTE)
    assert "+  - https://obsidian.md/help/data" in preview.diff and inbox.exists()
    assert counted == {"reads": 1, "merges": 1}


def test_a_sweeps_patch_merges_once(vault: Path, write_candidate, counted) -> None:
    write_candidate(vault, "more.md", ADDS_SOURCE)
    result = sweep_mod.run(build_context(vault, None), vault / "_inbox/agent-a", sweep_mod.Options(use_judge=False))
    assert [a.verdict for a in result.agents[0].actions] == ["patch"]
    assert counted["merges"] == 1
