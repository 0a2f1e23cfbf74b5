"""The curator reads past its own marks (issue 28): its uncertainty line, its `needs-review` tag and
its audit lines are no content, so flagging a candidate never changes the verdict `check` gives it."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pytest

from memory_curator.cli.machine import build_context
from memory_curator.commands.check import check_text
from memory_curator.commands.context import Context
from memory_curator.core import compose
from memory_curator.core.notes import content_hash

NOVELTY = Path(__file__).resolve().parent / "novelty"
NOW = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)
REASON = "near-duplicate of Plugins/Canvas.md (0.76); canvas plugin sync publish words to change the text"


@pytest.fixture(scope="module")
def ctx(tmp_path_factory: pytest.TempPathFactory) -> Context:
    from conftest import REAL_VAULT, require_shared

    source = require_shared(REAL_VAULT)
    root = tmp_path_factory.mktemp("marks") / "vault"
    shutil.copytree(source, root)
    shutil.copytree(NOVELTY / "owned", root, dirs_exist_ok=True)
    (root / "_inbox").mkdir()
    return build_context(root, str(tmp_path_factory.mktemp("state")))


def _candidates() -> list[Path]:
    return sorted((NOVELTY / "candidates").rglob("*.md"))


@pytest.mark.parametrize("path", _candidates(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_check_gives_the_same_verdict_before_and_after_a_sweep_flags_the_file(ctx: Context, path: Path) -> None:
    raw = path.read_bytes()
    rel = f"_inbox/{path.parent.name}/{path.name}"
    before = check_text(ctx, raw.decode("utf-8"), rel, agent=path.parent.name)
    flagged = compose.review_bytes(raw, f"{before.reason}; {REASON}", NOW)
    assert content_hash(flagged) != content_hash(raw)
    after = check_text(ctx, flagged.decode("utf-8"), rel, agent=path.parent.name)
    assert (after.verdict, after.target_path) == (before.verdict, before.target_path), (before.reason, after.reason)
