"""`restore`: drop -> restore round trip (tag added, audit line gone, body bytes intact),
held for review at the next sweep, and never onto an existing name."""

from __future__ import annotations

import json
from pathlib import Path

from loop_kit import UNSOURCED, body_of, fail, sweep

from memory_curator.core.compose import has_review_tag
from memory_curator.core.notes import parse

from conftest import snapshot


def dropped_copy(root: Path, agent: str = "agent-a") -> Path:
    [copy] = (root / "_inbox/.dropped" / agent).iterdir()
    return copy


def test_drop_then_restore_round_trip(vault: Path, invoke, write_candidate) -> None:
    original = write_candidate(vault, "claim.md", UNSOURCED)
    out = sweep(invoke, vault)
    assert out["dropped"] == 2 and not original.exists()  # ours and the fixtures' unsourced claim
    copy = dropped_copy(vault)
    assert copy.read_text().startswith(UNSOURCED) and "dropped by memory-curator" in copy.read_text()

    result = json.loads(invoke("restore", str(copy), "--json").output)["data"]
    assert result == {
        "restored": copy.relative_to(vault).as_posix(),
        "inbox_path": "_inbox/agent-a/claim.md",
        "run_id": result["run_id"],
    }
    back = original.read_text()
    assert not copy.exists()
    assert "dropped by memory-curator" not in back
    assert has_review_tag(parse(back).frontmatter)
    assert body_of(back).encode() == body_of(UNSOURCED).encode()  # the original body bytes
    assert back.replace("tags:\n  - needs-review\n", "") == UNSOURCED  # nothing else changed

    # held for review: the rule that dropped it does not drop it again
    again = sweep(invoke, vault)
    assert again["processed"] == 0 and original.read_text() == back
    skipped = [s for agent in again["agents"] for s in agent["skipped"]]
    assert {
        "inbox_path": "_inbox/agent-a/claim.md",
        "reason": "needs review (unchanged since it was flagged)",
        "waiting": "flagged",
    } in skipped


def test_restore_keeps_crlf_and_a_note_without_frontmatter(vault: Path, invoke, write_candidate) -> None:
    raw = b"just a line, no frontmatter, confidence unknown\r\nsecond line\r\n"
    write_candidate(vault, "bare.md", raw, agent="agent-b")
    invoke("resolve", str(vault / "_inbox/agent-b/bare.md"), "--drop", "noise", "--by", "me")
    copy = dropped_copy(vault, "agent-b")
    assert "noise (by me)" in copy.read_text()
    invoke("restore", str(copy))
    back = (vault / "_inbox/agent-b/bare.md").read_bytes()
    assert back == b"---\r\ntags:\r\n  - needs-review\r\n---\r\n" + raw


def test_restore_onto_an_existing_name_is_refused(vault: Path, invoke, write_candidate, capsys) -> None:
    write_candidate(vault, "claim.md", UNSOURCED)
    sweep(invoke, vault)
    copy = dropped_copy(vault)
    newer = write_candidate(vault, "claim.md", "a newer candidate with the same name\n")
    before = snapshot(vault)
    code, err = fail(capsys, "restore", str(copy))
    assert code == 1
    assert err.strip() == (
        "memory-curator: _inbox/agent-a/claim.md already exists; not restored (rename or move that file first)"
    )
    assert snapshot(vault) == before and newer.read_text() == "a newer candidate with the same name\n"


def test_restore_refuses_what_is_not_a_dropped_item(vault: Path, capsys) -> None:
    code, err = fail(capsys, "restore", str(vault / "facts/obsidian/file-format.md"))
    assert code == 1 and "not a dropped item (those are in _inbox/.dropped/<agent>/)" in err
    code, err = fail(capsys, "restore", str(vault / "_inbox/.dropped/agent-a/nope.md"))
    assert code == 1 and "no such file" in err


def test_restore_without_a_journal_uses_the_name(vault: Path, invoke, write_candidate, tmp_path: Path) -> None:
    """A dropped copy from another machine (no journal here) goes back under its own stem."""
    write_candidate(vault, "claim.md", UNSOURCED)
    sweep(invoke, vault)
    copy = dropped_copy(vault)
    other_state = tmp_path / "elsewhere"
    result = json.loads(invoke("restore", str(copy), "--state-dir", str(other_state), "--json").output)["data"]
    assert result["inbox_path"] == "_inbox/agent-a/claim.md"
