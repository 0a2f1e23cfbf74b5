"""The review note written after a sweep reuses the sweep's own answers for the items it has just
flagged (issue 29): the note's bytes are those `tend` writes from scratch, over a varied queue,
and the note asks the index nothing again for those items nor opens a second querier."""

from __future__ import annotations

import datetime as dt
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

from test_review_note import (
    CURATOR_FACTS,
    EXACT_DUPLICATE_RULE,
    LATER,
    QUEUE,
    T0,
    fact,
    queue_model,  # noqa: F401  (a fixture)
    state_of,
)

from memory_curator.cli.machine import build_context
from memory_curator.commands import review_note
from memory_curator.commands.context import Context, Seams, index_querier
from memory_curator.core import candidate as cand
from memory_curator.core.clock import FixedClock
from memory_curator.core.compose import review_bytes
from memory_curator.core.facts import Neighbour
from memory_curator.core.rules import Rules
from memory_curator.index.recorded import Recorded
from memory_curator.store.rules_file import DEFAULT_RULES, load

from conftest import FIXTURES, REVIEW_NOTE, age

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
    def __init__(self, base: Any, asked: Counter[tuple[str, str]]) -> None:
        self.base, self.asked = base, asked

    def __getattr__(self, name: str) -> Any:
        real = getattr(self.base, name)
        if name not in COSTLY:
            return real

        def counted(candidate: Any, *args: Any) -> Any:
            self.asked[(name, candidate.inbox_path)] += 1
            return real(candidate, *args)

        return counted

    def stage(self, rel: str, text: str | None) -> None:
        self.base.stage(rel, text)


def queued_vault(root: Path, model: Path) -> Path:
    """The review note tests' queue (`test_review_note.QUEUE`, but the two that need a sweep of
    their own), a note of the curator's that a later candidate patches, all settled."""
    shutil.copytree(FIXTURES, root)
    shutil.rmtree(root / "_inbox/test-step-4")
    rules = root / "_meta/inbox-rules.md"
    text = rules.read_text().replace(EXACT_DUPLICATE_RULE, "")
    rules.write_text(text.replace("\nsettings:\n", f"\nsettings:\n  semantic: {{model: {str(model)!r}}}\n", 1))
    for rel, body in CURATOR_FACTS.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(body)
    (root / "_inbox/agent-a").mkdir(parents=True)
    for name, (body, _, _) in QUEUE.items():
        if name not in LATER:
            (root / "_inbox/agent-a" / name).write_text(body)
    (root / "_inbox/agent-a/zz-widget.md").write_text(LATE_PATCH)
    for path in root.rglob("*"):
        if path.is_file():
            age(path)
    return root


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
    assert len(counting.opened) == 1  # the note asked the sweep's querier: no second one, no second walk
    flagged = {rel for (_, rel) in counting.opened[0]}
    assert len(flagged) >= 10
    twice = {rel for (_, rel), n in counting.opened[0].items() if n > 1}
    assert twice == {"_inbox/agent-a/empty.md"}  # flagged unasked (empty), so asked by the note alone
    # every other costly question asked once per candidate: by the sweep, never again by the note

    (root / REVIEW_NOTE).unlink()
    (state_of(root) / review_note.CACHE).unlink()
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


class _Base:
    """A staging querier whose neighbours are whatever `near` holds now, counting each time asked."""

    def __init__(self) -> None:
        self.near: list[Neighbour] = [Neighbour("facts/a/b.md", "A b", 0.5)]
        self.asked = 0

    def neighbours(self, candidate: Any, k: int) -> list[Neighbour]:
        self.asked += 1
        return list(self.near)

    def stage(self, rel: str, text: str | None) -> None:
        pass


def test_a_kept_answer_is_replayed_until_a_note_it_names_or_the_key_path_is_staged_again() -> None:
    rules = load(DEFAULT_RULES)
    flagged = cand.build(fact("kite", "Kites fly."), "_inbox/a/kite.md", "a", rules)
    base = _Base()
    recorded = Recorded(base)  # type: ignore[arg-type]
    assert recorded.neighbours(flagged, 5) == base.near and base.asked == 1
    recorded.stage("facts/other/note.md", "---\ntitle: x\n---\n")  # a note the answer does not name
    replay = recorded.replay()
    marked = cand.build(review_bytes(flagged.raw, "undecided", T0), flagged.inbox_path, "a", rules)
    assert replay.neighbours(marked, 5) == base.near and base.asked == 1  # the flag changes nothing asked
    assert replay.neighbours(marked, 7) and base.asked == 2  # another question: asked
    other = cand.build(fact("kite", "Kites soar."), flagged.inbox_path, "a", rules)
    assert replay.neighbours(other, 5) and base.asked == 3  # another text (edited since): asked
    recorded.stage("facts/a/b.md", "---\ntitle: changed\n---\n")  # the note it names, patched later
    base.near = []
    assert replay.neighbours(marked, 5) == [] and base.asked == 4
    recorded.keep_only(set())
    assert recorded.answers == {}
    assert flagged.target is not None
    again = Recorded(_Base())  # type: ignore[arg-type]
    again.neighbours(flagged, 5)
    again.stage(flagged.target, "---\ntitle: kite\n---\n")  # its own key path, written later
    assert again.replay().neighbours(marked, 5) and again.base.asked == 2  # type: ignore[attr-defined]
