"""The review note written after a sweep asks the sweep's own querier (issue 29): no second index,
refresh or walk, and the note's bytes are those `tend` writes from scratch over a varied queue."""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from pathlib import Path
from typing import Any

from test_review_note import (
    T0,
    fact,
    queue_model,  # noqa: F401  (a fixture)
    queue_vault,
    state_of,
)

from memory_curator.cli.machine import build_context
from memory_curator.commands import review_memory, review_note
from memory_curator.commands.context import Context, Seams, index_querier
from memory_curator.commands.desk import Desk
from memory_curator.core.clock import FixedClock
from memory_curator.core.rules import Rules

from conftest import REVIEW_NOTE

COSTLY = ("neighbours", "subject_notes", "titled_alike", "semantic_neighbours")
# written after the queue (names sort after it): patches the note two flagged items concern
LATE_PATCH = fact("widget", "Widgets weigh 4 kg.", 3).replace("example.dev/widget", "example.dev/widget-2")


class Counting:
    """A querier factory that counts the costly questions asked of each querier it opens, by
    question and inbox path."""

    def __init__(self) -> None:
        self.opened: list[Counter[tuple[str, str]]] = []

    def __call__(self, ctx: Context, rules: Rules) -> Any:
        asked: Counter[tuple[str, str]] = Counter()
        self.opened.append(asked)
        return _Spy(index_querier(ctx, rules), asked)


class _Spy:
    """The overlay, as transparent as can be (its index querier, its staged notes), counting."""

    def __init__(self, real: Any, asked: Counter[tuple[str, str]]) -> None:
        self._real, self._asked = real, asked

    def __getattr__(self, name: str) -> Any:
        real = getattr(self._real, name)
        if name not in COSTLY:
            return real

        def counted(candidate: Any, *args: Any) -> Any:
            self._asked[(name, candidate.inbox_path)] += 1
            return real(candidate, *args)

        return counted

    def stage(self, rel: str, text: str | None) -> None:
        self._real.stage(rel, text)


def queued_vault(root: Path, model: Path) -> Path:
    """The review note tests' queue (`test_review_note.QUEUE`, but the two that need a sweep of
    their own), a note of the curator's that a later candidate patches, all settled."""
    return queue_vault(root, model, {"zz-widget.md": LATE_PATCH})


def test_the_note_after_a_sweep_is_byte_for_byte_the_note_written_from_scratch(
    tmp_path: Path,
    invoke,
    queue_model: Path,  # noqa: F811
) -> None:
    root = queued_vault(tmp_path / "v", queue_model)
    counting = Counting()
    result = invoke(
        "run", "--vault", str(root), "--json", "--no-judge", seams=Seams(clock=FixedClock(T0), querier=counting)
    )
    assert result.exit_code == 0, result.output
    assert '"patched": 1' in result.output  # the late candidate patched facts/widget/size.md
    reused = (root / REVIEW_NOTE).read_bytes()
    assert len(counting.opened) == 1  # the note asked the sweep's querier: no second index, no second refresh
    assert len({rel for (_, rel) in counting.opened[0]}) >= 10
    stamp = json.loads((state_of(root) / review_memory.CACHE).read_bytes())["notes"]
    desk = Desk(build_context(root, None, Seams(clock=FixedClock(T0))))
    assert stamp == review_memory.notes_seen(desk)  # the run's one walk, with what it wrote, is what a walk finds

    (root / REVIEW_NOTE).unlink()
    (state_of(root) / review_memory.CACHE).unlink()
    ctx = build_context(root, None, Seams(clock=FixedClock(T0 + dt.timedelta(seconds=1)), querier=counting))
    outcome = review_note.tend(ctx)
    assert outcome is not None and outcome.written
    assert len(counting.opened) == 2 and counting.opened[1]  # from scratch: the index asked again
    assert (root / REVIEW_NOTE).read_bytes() == reused


def test_a_note_patched_later_in_the_sweep_is_read_as_it_is_now(tmp_path: Path, invoke, queue_model: Path) -> None:  # noqa: F811
    """The note the contradiction concerns was patched by a later candidate of the same sweep:
    the section shows (and is bound to) its bytes after that patch, as from scratch."""
    root = queued_vault(tmp_path / "v", queue_model)
    result = invoke("run", "--vault", str(root), "--json", "--no-judge", clock=FixedClock(T0))
    assert result.exit_code == 0, result.output
    note = (root / REVIEW_NOTE).read_text("utf-8")
    assert "example.dev/widget-2" in (root / "facts/widget/size.md").read_text()
    assert "https://example.dev/widget, https://example.dev/widget-2" in note  # the note's sources as patched


class _Refusing:
    """A querier that must not be asked."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"asked {name}")


def test_a_sweeps_querier_is_not_used_once_another_run_changed_the_vault(
    tmp_path: Path,
    invoke,
    queue_model: Path,  # noqa: F811
) -> None:
    """The note is written after the sweep's lock is let go: when the journal's last run is no
    longer the sweep's (another sweep, a person's action), its querier and its walk are stale and
    the note reads the vault afresh, as from scratch."""
    root = queued_vault(tmp_path / "v", queue_model)
    assert invoke("run", "--vault", str(root), "--no-judge", clock=FixedClock(T0)).exit_code == 0
    written = (root / REVIEW_NOTE).read_bytes()
    records = [json.loads(line) for line in (state_of(root) / "journal.jsonl").read_text().splitlines()]
    last = next(r["run"] for r in reversed(records) if "run" in r)
    ctx = build_context(root, None, Seams(clock=FixedClock(T0 + dt.timedelta(seconds=1))))
    for run in ("another-run", last):
        (root / REVIEW_NOTE).unlink()
        (state_of(root) / review_memory.CACHE).unlink()
        stale = review_memory.Reuse(_Refusing(), {}, run)  # type: ignore[arg-type]
        if run == last:  # the sweep's own: used (and this one refuses every question)
            review_note.tend(ctx, reuse=stale)
            assert (root / REVIEW_NOTE).read_bytes() != written
        else:
            assert review_note.tend(ctx, reuse=stale) is not None
            assert (root / REVIEW_NOTE).read_bytes() == written
