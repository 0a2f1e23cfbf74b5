"""Paths compared as the file system compares them (issue 36): on a case-insensitive file system
(macOS, Windows) `_Inbox/` is the inbox and `_meta/inbox review.md` the review note, and a sync
tool's copy of the review note (Dropbox, Syncthing, Obsidian Sync, a numbered copy) quotes the
inbox just as well. MCP serves none of them, with the review note on or off.

This machine's file system is case-sensitive: the tests give the case-insensitivity through the
seam (`Seams(case_insensitive=True)`) and put on disk the file such a system would find; the
detection itself is tested on this file system (False) and on hard links that stand for one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_mcp import call, error_text

from memory_curator.cli.machine import build_context
from memory_curator.commands.context import Context, Seams
from memory_curator.core.clock import SystemClock
from memory_curator.core.names import is_candidate_name
from memory_curator.core.review_note import is_note_file
from memory_curator.store.paths import case_insensitive

NOTE = "_meta/Inbox review.md"
QUOTED = "---\ntitle: Inbox review\n---\n- [ ] _inbox/alice/salary.md: The CEO earns 1.2M a year.\n"
COPIES = [
    "_meta/Inbox review (Jane's conflicted copy 2026-12-01).md",  # Dropbox
    "_meta/Inbox review (conflicted copy 2026-12-01).md",
    "_meta/Inbox review (Conflicted 2026-12-01 101010).md",  # Obsidian Sync
    "_meta/Inbox review.sync-conflict-20261201-101010-ABCDEFG.md",  # Syncthing
    "_meta/Inbox review 1.md",  # a numbered copy
    "_meta/Inbox review (1).md",
]


def mcp(vault: Path, tmp_path: Path, insensitive: bool) -> Context:
    return build_context(
        vault, str(tmp_path / "state"), Seams(clock=SystemClock(), env={}, case_insensitive=insensitive)
    )


def plant(vault: Path, rel: str, text: str = QUOTED) -> None:
    path = vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def note_off(vault: Path) -> None:
    rules = vault / "_meta/inbox-rules.md"
    rules.write_text(rules.read_text().replace("settings:\n", "settings:\n  review_note: false\n", 1))


@pytest.mark.parametrize("rel", ["_meta/inbox review.md", "_META/INBOX REVIEW.md", "_meta/Inbox Review (1).md"])
def test_mcp_refuses_the_review_note_in_another_case_on_a_case_insensitive_fs(vault: Path, tmp_path: Path, rel: str):
    plant(vault, rel)
    said = error_text(call(mcp(vault, tmp_path, insensitive=True), "read_note", path=rel))
    assert "not served to agents" in said


@pytest.mark.parametrize("rel", ["_Inbox/alice/deal.md", "_INBOX/alice/deal.md"])
def test_mcp_refuses_the_inbox_in_another_case_on_a_case_insensitive_fs(vault: Path, tmp_path: Path, rel: str):
    plant(vault, rel, "---\ntype: fact\n---\nAn agent's unreviewed text.\n")
    said = error_text(call(mcp(vault, tmp_path, insensitive=True), "read_note", path=rel))
    assert "not a durable note" in said


def test_on_a_case_sensitive_fs_another_case_is_another_folder(vault: Path, tmp_path: Path) -> None:
    plant(vault, "_Inbox/notes/deal.md", "---\ntitle: a person's folder\n---\nMine.\n")
    served = call(mcp(vault, tmp_path, insensitive=False), "read_note", path="_Inbox/notes/deal.md")
    assert served.structured_content is not None and served.structured_content["body"] == "Mine.\n"


@pytest.mark.parametrize("off", [False, True], ids=["note on", "note off"])
@pytest.mark.parametrize("rel", [NOTE, *COPIES])
def test_mcp_never_serves_the_review_note_or_its_copies(vault: Path, tmp_path: Path, rel: str, off: bool) -> None:
    if off:
        note_off(vault)  # an old note (and its copies) may still be there
    plant(vault, rel)
    said = error_text(call(mcp(vault, tmp_path, insensitive=False), "read_note", path=rel))
    assert "not served to agents" in said


def test_a_note_whose_name_only_begins_like_the_review_note_is_served(vault: Path, tmp_path: Path) -> None:
    plant(vault, "_meta/Inbox review 2026 plans.md", "---\ntitle: plans\n---\nMine.\n")
    served = call(mcp(vault, tmp_path, insensitive=False), "read_note", path="_meta/Inbox review 2026 plans.md")
    assert served.structured_content is not None


def test_is_note_file_folds_case_and_unicode_only_where_the_fs_does() -> None:
    decomposed = "_meta/Inbox re\u0301view.md"  # NFD é
    assert is_note_file(decomposed, "_meta/Inbox réview.md")
    assert not is_note_file("_meta/inbox review.md", NOTE)
    assert is_note_file("_meta/inbox review.md", NOTE, insensitive=True)
    assert is_note_file("_META/INBOX REVIEW 3.md", NOTE, insensitive=True)
    assert not is_note_file("_meta/Inbox review 2026 plans.md", NOTE)
    assert not is_note_file("_meta/Inbox review (draft).md", NOTE)


def test_a_dropbox_conflicted_copy_in_the_inbox_is_no_candidate() -> None:
    assert not is_candidate_name("deal (Jane's conflicted copy 2026-12-01).md")
    assert not is_candidate_name("deal (Conflicted copy 2026-12-01).md")
    assert is_candidate_name("deal 1.md") and is_candidate_name("deal (1).md")  # an agent's own names


def test_the_detection_answers_false_on_this_case_sensitive_fs(vault: Path) -> None:
    assert case_insensitive(vault) is False
    assert not any(p.name.startswith(".mc") for p in vault.iterdir())  # it creates nothing


def test_the_detection_answers_true_where_both_spellings_are_one_file(tmp_path: Path) -> None:
    """Hard links stand in for a case-insensitive file system: both spellings, one inode."""
    root = tmp_path / "v"
    root.mkdir()
    (root / "Notes.md").write_text("x")
    os.link(root / "Notes.md", root / "nOTES.MD")
    assert case_insensitive(root) is True
    (root / "nOTES.MD").unlink()
    (root / "nOTES.MD").write_text("another file")
    assert case_insensitive(root) is False
