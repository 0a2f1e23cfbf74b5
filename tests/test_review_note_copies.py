"""A sync conflict copy of the review note (issue 37): its ticks are applied once, ever, so an
`undo` of their run stays undone; the note's head and `doctor` name every copy to merge."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from test_review_note import MEMO_REL, T1, note_records, obsidian_save, sweep, ticked

from conftest import REVIEW_NOTE, age


def test_undo_of_a_copys_ticks_stays_undone_and_the_copy_is_named(tmp_path: Path, invoke) -> None:
    from test_review_note import small_vault

    root = small_vault(tmp_path / "v", invoke)
    note = root / REVIEW_NOTE
    copy = note.with_name("Inbox review (conflicted copy 2026-11-20).md")
    obsidian_save(copy, ticked(note.read_text("utf-8"), MEMO_REL, "drop"))
    out = sweep(invoke, root, T1)
    assert not (root / MEMO_REL).exists(), out.get("notes")
    run = next(r["run"] for r in note_records(root) if r["event"] == "begin")
    assert invoke("undo", run, "--vault", str(root)).exit_code == 0
    assert (root / MEMO_REL).exists()
    for minutes in (1, 2):  # the copy is still there, its tick unchanged: never applied again
        age(note)
        sweep(invoke, root, T1 + dt.timedelta(minutes=minutes))
        assert (root / MEMO_REL).exists()
    assert [r["verdict"] for r in note_records(root) if r["event"] == "begin"] == ["drop"]
    head = note.read_text("utf-8").split("%% mc:end head %%")[0]
    assert "Inbox review (conflicted copy 2026-11-20).md" in head
    assert "merge it into this note and delete it" in head
    doctor = invoke("doctor", "--vault", str(root))
    assert "_meta/Inbox review (conflicted copy 2026-11-20).md" in doctor.output
    assert "merge it into" in doctor.output, doctor.output


def test_log_prints_by_review_note_and_the_conflict_copy_a_tick_came_from(tmp_path: Path, invoke) -> None:
    import json

    from test_review_note import small_vault

    root = small_vault(tmp_path / "v", invoke)
    note = root / REVIEW_NOTE
    text = note.read_text("utf-8")
    copy = note.with_name("Inbox review (Jane's conflicted copy 2026-12-05).md")
    obsidian_save(copy, ticked(text, MEMO_REL, "drop"))
    obsidian_save(note, ticked(text, "_inbox/agent-a/insight.md", "drop"))
    sweep(invoke, root, T1)
    lines = invoke("log", "--vault", str(root)).output.splitlines()
    memo = [line for line in lines if MEMO_REL in line and " drop " in f" {line} "]
    assert memo and memo[0].endswith(
        "· by review-note (from _meta/Inbox review (Jane's conflicted copy 2026-12-05).md)"
    ), lines
    insight = [line for line in lines if "insight.md" in line and "by review-note" in line]
    assert insight and "conflicted copy" not in insight[0], lines  # ticked in the note itself
    data = json.loads(invoke("log", "--vault", str(root), "--json").output)["data"]["entries"]
    copies = {e["inbox_path"]: e.get("copy") for e in data if e.get("by") == "review-note"}
    assert copies[MEMO_REL] == "_meta/Inbox review (Jane's conflicted copy 2026-12-05).md"
    assert copies["_inbox/agent-a/insight.md"] is None
