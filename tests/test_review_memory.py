"""The review note's item cache (`commands.review_memory`) is bound to the curator's version (as
it was to the rules' hash, in each entry's key): after an upgrade every item's section is read
again, so the note never keeps an old version's words (issue 37)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from test_review_note import T1, small_vault, sweep

from memory_curator.commands import review_items, review_memory

from conftest import REVIEW_NOTE, age


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    real = review_items.evaluate
    monkeypatch.setattr(
        review_items, "evaluate", lambda desk, q, c, **kw: seen.append(c.inbox_path) or real(desk, q, c, **kw)
    )
    return seen


def test_another_curator_version_reads_every_cached_item_again(
    tmp_path: Path, invoke, asked: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = small_vault(tmp_path / "v", invoke)
    asked.clear()
    sweep(invoke, root, T1)
    assert asked == []  # cached
    monkeypatch.setattr(review_memory, "__version__", "99.0.0")
    age(root / REVIEW_NOTE)
    sweep(invoke, root, T1 + dt.timedelta(minutes=1))
    assert len(asked) == 4  # every waiting item (the memo has no view to ask) read again
    asked.clear()
    age(root / REVIEW_NOTE)
    sweep(invoke, root, T1 + dt.timedelta(minutes=2))
    assert asked == []  # and cached under the new version
