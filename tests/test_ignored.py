"""Inbox entries a sweep skips are named, each with why (issue 27): a person never wonders why an
agent's note "vanished"."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memory_curator.core.names import ignored_kind
from memory_curator.store.paths import ignored_entries


@pytest.mark.parametrize(
    ("name", "kind", "in_agent", "expected"),
    [
        ("note.md", "file", True, None),
        ("Note.MD", "file", False, None),
        (".hidden.md", "file", True, None),  # an agent's write in progress: not news
        (".note.md.x1y2.tmp", "file", True, None),
        ("draft.tmp", "file", True, None),
        ("link.md", "symlink", True, "symlink"),
        ("agent-b", "symlink", False, "symlink"),
        ("pipe.md", "other", True, "special"),
        ("sub", "dir", True, "nested"),
        ("agent-a", "dir", False, None),
        ("note (conflicted copy 2026-11-02).md", "file", True, "conflict"),
        ("note.sync-conflict-20261102-101010-ABC.md", "file", True, "conflict"),
        ("note.md.icloud", "file", True, "icloud"),
        ("notes.txt", "file", True, "not-markdown"),
    ],
)
def test_each_kind_of_entry_has_its_reason(name: str, kind: str, in_agent: bool, expected: str | None) -> None:
    assert ignored_kind(name, kind, in_agent) == expected


def test_the_scan_names_every_skipped_entry_once_and_follows_no_link(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    agent = root / "_inbox/agent-a"
    agent.mkdir(parents=True)
    (agent / "good.md").write_text("---\ntype: fact\n---\n")
    (agent / "sub").mkdir()
    (agent / "sub/deep.md").write_text("x")
    os.mkfifo(agent / "pipe.md")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("x")
    (agent / "link.md").symlink_to(outside / "secret.md")
    (root / "_inbox/linked-agent").symlink_to(outside, target_is_directory=True)
    (agent / "good (conflicted copy).md").write_text("x")
    (agent / "notes.txt").write_text("x")
    (agent / ".writing.tmp").write_text("x")
    (root / "_inbox/.dropped/agent-a").mkdir(parents=True)
    (root / "_inbox/.dropped/agent-a/x.md").symlink_to(outside / "secret.md")

    found = {i.rel: i.kind for i in ignored_entries(root)}
    assert found == {
        "_inbox/agent-a/sub/": "nested",
        "_inbox/agent-a/pipe.md": "special",
        "_inbox/agent-a/link.md": "symlink",
        "_inbox/linked-agent": "symlink",
        "_inbox/agent-a/good (conflicted copy).md": "conflict",
        "_inbox/agent-a/notes.txt": "not-markdown",
    }
    assert all(i.why for i in ignored_entries(root))


def test_a_vault_without_an_inbox_has_nothing_to_report(tmp_path: Path) -> None:
    assert ignored_entries(tmp_path) == []


def test_run_is_told_of_each_entry_once_until_it_changes(tmp_path: Path) -> None:
    from memory_curator.store import stores

    root, state = tmp_path / "vault", tmp_path / "state"
    agent = root / "_inbox/agent-a"
    agent.mkdir(parents=True)
    state.mkdir()
    (agent / "notes.txt").write_text("x")
    first = ignored_entries(root)
    assert [e.rel for e in stores.ignored_news(state, first)] == ["_inbox/agent-a/notes.txt"]
    stores.save_ignored(state, first)
    assert stores.ignored_news(state, ignored_entries(root)) == []
    (agent / "notes.txt").write_text("changed, and longer")
    assert [e.rel for e in stores.ignored_news(state, ignored_entries(root))] == ["_inbox/agent-a/notes.txt"]
