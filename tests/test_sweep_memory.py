"""A sweep's memory is bounded by the size limit times a small constant, whatever the number of
candidates (issue 36): it held every candidate's bytes, text and body from the listing to the
end, and every note it wrote (the overlay) with its word counts; 2,000 candidates of 1 MiB
took 8.4 GB."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from memory_curator.cli import cli
from memory_curator.cli.machine import build_context
from memory_curator.commands import sweep
from tests.conftest import OLD
from tests.safety_kit import set_commit_batch
from tests.test_similarity_linear import prose

SIZE = 128 * 1024
COUNT = 40
BATCH = 4


def big_fact(n: int, size: int = SIZE) -> str:
    head = f"---\ntype: fact\nentity: widget-{n}\npredicate: history\nvalue: Widget {n} history.\n"
    return head + f"source_url: https://example.dev/{n}\nconfidence: 2\n---\n" + prose(size, 100 + n)


@pytest.mark.slow
def test_a_sweep_holds_a_few_candidates_at_a_time_not_all_of_them(
    empty_vault: Path, write_candidate: Callable[..., Path], invoke: Callable[..., Result], monkeypatch
) -> None:
    """40 candidates of 128 KiB, a group commit every 4 of them (by their bytes, the commit batch
    left at 64): the peak of what the sweep allocates
    stays under 176 x the size of one (20.6 MiB here: a decision reads a few notes as word lists,
    a batch stays staged, the tokens of `words.KEPT` = 8 texts are kept, 15 MiB with 4); every
    candidate and note held, it was 40 candidates' worth and more."""
    monkeypatch.setattr(sweep, "BATCH_BYTES", BATCH * SIZE)
    for n in range(COUNT):
        write_candidate(empty_vault, f"c{n:02d}.md", big_fact(n), agent=f"agent-{n % 3}")
    tracemalloc.start()
    try:
        result = invoke("run", "--no-judge", "--vault", str(empty_vault))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.exit_code == 0, result.output
    assert len(list(empty_vault.glob("facts/widget-*/history.md"))) == COUNT
    assert peak < 176 * SIZE, f"peak {peak / 2**20:.1f} MiB"


def test_a_candidate_changed_after_the_sweep_read_it_waits_for_the_next(
    empty_vault: Path, write_candidate: Callable[..., Path], invoke: Callable[..., Result], monkeypatch
) -> None:
    """Read at the listing, let go, read again at its turn: bytes that changed in between are not
    the candidate that was found settled; it waits, untouched, as one changing while read does."""
    from memory_curator.commands import pending

    first = write_candidate(empty_vault, "a.md", big_fact(1))
    load = pending.load

    def changed_first(item: pending.Pending, rules: object) -> object:
        first.write_text(big_fact(2), encoding="utf-8")
        os.utime(first, (OLD, OLD))
        return load(item, rules)  # type: ignore[arg-type]

    monkeypatch.setattr(pending, "load", changed_first)
    result = invoke("run", "--no-judge", "--vault", str(empty_vault))
    assert result.exit_code == 0, result.output
    assert "changed after the sweep first read it" in result.output
    assert first.read_text(encoding="utf-8") == big_fact(2)
    assert not list(empty_vault.glob("facts/*/*.md"))


# A small launcher forks the sweep and reports its peak RSS: a child forked from pytest itself
# would count pytest's resident pages in its peak (Linux keeps ru_maxrss across exec).
LAUNCHER = """
import os, subprocess, sys
proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
_, status, usage = os.wait4(proc.pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)
"""


def swept_peak_mb(root: Path) -> float:
    """The peak RSS (MB) of `memory-curator run --no-judge` on the vault, in its own process."""
    cmd = [sys.executable, "-c", LAUNCHER, sys.executable, "-m", "memory_curator", "run", "--no-judge"]
    out = subprocess.run([*cmd, "--vault", str(root)], capture_output=True, text=True, check=True).stdout.split()
    assert out[0] == "0", out
    return int(out[1]) / 1024


@pytest.mark.slow
def test_the_peak_of_a_sweep_does_not_grow_with_the_number_of_candidates(tmp_path: Path) -> None:
    """20 and then 60 candidates of 256 KiB, each swept in its own process: the peak RSS is the
    same within a few MB (a batch weighed 16 MiB, so 60 of them were held at once: 120-129 MB
    for 20, 203-215 MB for 60 in two runs; with 4 MiB batches 120 and 122 MB; issue 36), and all
    are promoted either way."""
    peaks = []
    for count in (20, 60):
        root = tmp_path / f"v{count}"
        assert CliRunner().invoke(cli, ["init", str(root)]).exit_code == 0
        for n in range(count):
            path = root / "_inbox" / f"agent-{n % 3}" / f"c{n:03d}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(big_fact(n, 256 * 1024), encoding="utf-8")
            os.utime(path, (OLD, OLD))
        peaks.append(swept_peak_mb(root))
        assert len(list(root.glob("facts/widget-*/history.md"))) == count
    assert peaks[1] - peaks[0] < 12, f"peaks {peaks[0]:.0f} MB for 20, {peaks[1]:.0f} MB for 60"


def test_a_sweep_of_small_notes_gives_the_index_one_segment_not_one_a_group_commit(
    vault: Path, write_candidate: Callable[..., Path], invoke: Callable[..., Result]
) -> None:
    """Each intake of written notes is one more FTS5 segment that every later BM25 query reads:
    at 100k notes the 16 intakes of a 1,000-candidate sweep made each query 32% slower
    (`tests/perf/bench.py --only sweep`). Small notes wait in the overlay (bounded by
    `SETTLE_NOTES` and `BATCH_BYTES`) and go in once; a group commit every 3 candidates."""
    set_commit_batch(vault, 3)
    assert invoke("run", "--no-judge", "--vault", str(vault)).exit_code == 0  # the vault's first notes
    assert invoke("index", "rebuild", "--vault", str(vault)).exit_code == 0
    state = build_context(vault).state
    before = _segments(state)
    for n in range(18):
        write_candidate(vault, f"w{n:02d}.md", big_fact(n, 2_000))
    result = invoke("run", "--no-judge", "--vault", str(vault))
    assert result.exit_code == 0, result.output
    assert len(list(vault.glob("facts/widget-*/history.md"))) == 18
    assert _segments(state) <= before + 1, (before, _segments(state))


def _segments(state: Path) -> int:
    with sqlite3.connect(state / "index.sqlite3") as conn:
        return int(conn.execute("SELECT count(DISTINCT segid) FROM fts_idx").fetchone()[0])
