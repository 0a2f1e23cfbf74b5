"""A sweep's memory is bounded by the size limit times a small constant, whatever the number of
candidates (issue 36): it held every candidate's bytes, text and body from the listing to the
end, and every note it wrote (the overlay) with its word counts; 2,000 candidates of 1 MiB
took 8.4 GB."""

from __future__ import annotations

import os
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from memory_curator.commands import sweep
from tests.conftest import OLD
from tests.test_similarity_linear import prose

SIZE = 128 * 1024
COUNT = 40
BATCH = 4


def big_fact(n: int) -> str:
    head = f"---\ntype: fact\nentity: widget-{n}\npredicate: history\nvalue: Widget {n} history.\n"
    return head + f"source_url: https://example.dev/{n}\nconfidence: 2\n---\n" + prose(SIZE, 100 + n)


@pytest.mark.slow
def test_a_sweep_holds_a_few_candidates_at_a_time_not_all_of_them(
    empty_vault: Path, write_candidate: Callable[..., Path], invoke: Callable[..., Result], monkeypatch
) -> None:
    """40 candidates of 128 KiB, a group commit every 4 of them (by their bytes, the commit batch
    left at 64): the peak of what the sweep allocates
    stays under 160 x the size of one (15 MiB here: a decision reads a few notes as word lists,
    a batch stays staged); every candidate and note held, it was 40 candidates' worth and more."""
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
    assert peak < 160 * SIZE, f"peak {peak / 2**20:.1f} MiB"


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
