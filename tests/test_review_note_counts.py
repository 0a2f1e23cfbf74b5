"""After a restore ticked in the note (issue 37): the restored drop waits as `held`, not `other`,
and the counts agree across `run`, the note, `status` and `doctor`; "Last sweeps" counts tick runs."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

from test_review_note import SMALL, T1, UNSOURCED_KITE, obsidian_save, section_text, small_vault

from memory_curator.core.clock import FixedClock

from conftest import REVIEW_NOTE, age

KITE = "_inbox/agent-a/kite.md"


def waiting_in_note(root: Path) -> int:
    head = (root / REVIEW_NOTE).read_text("utf-8").split("%% mc:end head %%")[0]
    found = re.search(r"^(\d+) waiting:", head, re.M)
    return int(found.group(1)) if found else 0


def test_a_restored_drop_waits_as_held_and_every_count_agrees(tmp_path: Path, invoke) -> None:
    root = small_vault(tmp_path / "v", invoke)
    note = root / REVIEW_NOTE
    kite = root / KITE
    kite.write_text(UNSOURCED_KITE)
    age(kite)
    invoke("run", "--vault", str(root), "--no-judge", clock=FixedClock(T1))  # dropped by a rule
    assert not kite.exists() and "- [ ] restore" in note.read_text("utf-8")
    age(note)
    obsidian_save(note, note.read_text("utf-8").replace("- [ ] restore", "- [x] restore"))
    out = invoke("run", "--vault", str(root), "--no-judge", clock=FixedClock(T1 + dt.timedelta(minutes=1))).output
    assert kite.exists()
    assert "Waits: **held**" in section_text(root, KITE)
    said = re.search(r"^(\d+) wait for review", out, re.M)
    status = json.loads(invoke("status", "--vault", str(root), "--json").output)["data"]
    assert said is not None, out
    assert int(said.group(1)) == waiting_in_note(root) == status["needs_review"]["count"] == len(SMALL) + 1
    doctor = invoke("doctor", "--vault", str(root)).output
    assert f"{len(SMALL) + 1} wait" in doctor, doctor
    assert "last tick applied from the review note" in doctor and "restore" in doctor, doctor
    head = (root / REVIEW_NOTE).read_text("utf-8").split("%% mc:end head %%")[0]
    assert "(ticked in this note, 1 restored)" in head, head
