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
