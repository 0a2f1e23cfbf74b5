"""Ticks are never lost without a word (issue 37): a note saved within the settle window is said
to be left for the next sweep (in the output and in `--json`), `--settle 0` reads it at once,
and `leave` is acknowledged once in the note."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

from test_review_note import (
    MEMO_REL,
    T1,
    note_records,
    obsidian_save,
    section_text,
    sections,
    small_vault,
    sweep,
    ticked,
)

from memory_curator.core.clock import FixedClock

from conftest import REVIEW_NOTE


def saved_at(path: Path, text: str, when: dt.datetime) -> None:
    path.write_text(text, "utf-8")
    os.utime(path, (when.timestamp(), when.timestamp()))


def test_a_tick_within_the_settle_window_is_told_and_applied_by_the_next_sweep(tmp_path: Path, invoke) -> None:
    root = small_vault(tmp_path / "v", invoke)
    note = root / REVIEW_NOTE
    saved_at(note, ticked(note.read_text("utf-8"), MEMO_REL, "drop"), T1 - dt.timedelta(seconds=1))
    out = sweep(invoke, root, T1)
    assert out["review_note"] == {"left_for_next_sweep": True, "saved_seconds_ago": 1}
    assert note_records(root) == [] and (root / MEMO_REL).exists()
    text = invoke("run", "--vault", str(root), "--no-judge", clock=FixedClock(T1)).output
    assert "review note: saved 1 s ago: its ticks are read at the next sweep" in text, text
    later = sweep(invoke, root, T1 + dt.timedelta(minutes=5))
    assert not (root / MEMO_REL).exists() and "review_note" not in later
    assert [r["verdict"] for r in note_records(root) if r["event"] == "begin"] == ["drop"]


def test_settle_zero_reads_a_note_saved_just_now(tmp_path: Path, invoke) -> None:
    root = small_vault(tmp_path / "v", invoke)
    note = root / REVIEW_NOTE
    saved_at(note, ticked(note.read_text("utf-8"), MEMO_REL, "drop"), T1)
    result = invoke("run", "--vault", str(root), "--json", "--no-judge", "--settle", "0", clock=FixedClock(T1))
    assert result.exit_code == 0, result.output
    assert "review_note" not in json.loads(result.output)
    assert not (root / MEMO_REL).exists()


def test_leave_is_acknowledged_once_in_the_note(tmp_path: Path, invoke) -> None:
    root = small_vault(tmp_path / "v", invoke)
    note = root / REVIEW_NOTE
    obsidian_save(note, ticked(note.read_text("utf-8"), MEMO_REL, "leave"))
    sweep(invoke, root, T1)
    assert "left: it stays in the queue" in section_text(root, MEMO_REL)
    assert note_records(root) == [] and (root / MEMO_REL).exists()
    os.utime(note, (0, 0))
    sweep(invoke, root, T1 + dt.timedelta(minutes=1))
    assert "left: it stays in the queue" not in section_text(root, MEMO_REL)  # once


def test_a_comment_typed_inside_a_section_keeps_its_tick_and_the_comment(tmp_path: Path, invoke) -> None:
    root = small_vault(tmp_path / "v", invoke)
    note = root / REVIEW_NOTE
    text = ticked(note.read_text("utf-8"), MEMO_REL, "drop", "not news")
    where = text.index("\n", text.index("Waits: **no-surface**"))
    obsidian_save(note, text[:where] + "\nI asked Ana: she agrees." + text[where:])
    out = sweep(invoke, root, T1)
    assert not (root / MEMO_REL).exists(), out  # the tick was applied
    assert [r["reason"].split(" (by ")[0] for r in note_records(root) if r["event"] == "begin"] == ["not news"]
    after = note.read_text("utf-8")
    assert after.count("I asked Ana: she agrees.") == 1 and "changed or cut" not in after


def test_a_tick_on_an_item_decided_in_a_terminal_meanwhile_is_told_who_when_and_the_run(tmp_path: Path, invoke) -> None:
    root = small_vault(tmp_path / "v", invoke)
    note = root / REVIEW_NOTE
    obsidian_save(note, ticked(note.read_text("utf-8"), MEMO_REL, "drop"))
    done = invoke("resolve", str(root / MEMO_REL), "--drop", "not news", "--by", "alice", "--json")
    assert done.exit_code == 0, done.output
    run = json.loads(done.output)["data"]["run_id"]
    result = invoke("run", "--vault", str(root), "--no-judge", clock=FixedClock(T1))
    said = [line for line in result.output.splitlines() if MEMO_REL in line and "already decided" in line]
    assert said and "alice" in said[0] and run in said[0], result.output
    head = note.read_text("utf-8").split("%% mc:end head %%")[0]
    assert "already decided" in head and "alice" in head and run in head
    os.utime(note, (0, 0))
    sweep(invoke, root, T1 + dt.timedelta(minutes=1))
    assert "already decided" not in note.read_text("utf-8")  # said once


def test_log_prints_by_review_note_in_a_ticks_line(tmp_path: Path, invoke) -> None:
    root = small_vault(tmp_path / "v", invoke)
    note = root / REVIEW_NOTE
    obsidian_save(note, ticked(note.read_text("utf-8"), MEMO_REL, "drop"))
    sweep(invoke, root, T1)
    lines = [line for line in invoke("log", "--vault", str(root)).output.splitlines() if MEMO_REL in line]
    assert [line for line in lines if "drop" in line and "by review-note" in line], lines
    assert not [line for line in lines if "needs_review" in line and "by review-note" in line]


def test_a_deleted_section_is_said_once_and_the_item_stays(tmp_path: Path, invoke) -> None:
    root = small_vault(tmp_path / "v", invoke)
    note = root / REVIEW_NOTE
    text = note.read_text("utf-8")
    sid = sections(text)[MEMO_REL]
    begin, end = f"%% mc:begin {sid} %%", f"%% mc:end {sid} %%"
    obsidian_save(note, text[: text.index(begin)] + text[text.index(end) + len(end) + 1 :])
    sweep(invoke, root, T1)
    assert (root / MEMO_REL).exists() and note_records(root) == []
    assert "ection was deleted" in section_text(root, MEMO_REL)
    os.utime(note, (0, 0))
    sweep(invoke, root, T1 + dt.timedelta(minutes=1))
    assert "ection was deleted" not in section_text(root, MEMO_REL)  # once
