"""One bulk line per (agent, reason) group in the review note (issue 37), as `review`'s `a`: a
tick on it is a tick on each item of the group the note was written with, applied (journalled,
one run, undoable) exactly as each would be, and an item changed since is told, not applied."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
from pathlib import Path

from loop_kit import MEMO
from test_review_note import T0, T1, note_records, obsidian_save, section_text, sweep

from memory_curator.core import review_bulk
from memory_curator.core import review_note as rn
from memory_curator.core.clock import FixedClock

from conftest import FIXTURES, REVIEW_NOTE, age

MEMOS = {f"memo-{n}.md": MEMO.replace("A memo worth keeping", f"Memo {n}") for n in range(3)}
LONE = "_inbox/agent-b/memo.md"  # the one item of its group: no bulk line


def bulk_vault(root: Path, invoke) -> Path:
    shutil.copytree(FIXTURES, root)
    shutil.rmtree(root / "_inbox/test-step-4")
    (root / "_inbox/agent-a").mkdir(parents=True)
    (root / "_inbox/agent-b").mkdir(parents=True)
    for name, text in MEMOS.items():
        (root / "_inbox/agent-a" / name).write_text(text)
    (root / LONE).write_text(MEMO)
    for path in root.rglob("*"):
        if path.is_file():
            age(path)
    assert sweep(invoke, root, T0)["needs_review"] == len(MEMOS) + 1
    age(root / REVIEW_NOTE)
    return root


def bulk_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if re.match(r"- \[.\] \w+ all \d+", line)]


def tick_bulk(text: str, verb: str, reason: str | None = None) -> str:
    pattern = re.compile(rf"^- \[ \] ({verb} all \d+[^\^\r\n]*?)( \^mc-[0-9a-f]{{12}}-{verb})(\r?)$", re.M)
    assert len(pattern.findall(text)) == 1, text
    said = f": {reason}" if reason else ""
    return pattern.sub(lambda m: f"- [x] {m.group(1)}{said}{m.group(2)}{m.group(3)}", text, count=1)


def test_a_group_of_two_or_more_gets_one_bulk_line_per_verb_and_a_lone_item_none(tmp_path: Path, invoke) -> None:
    root = bulk_vault(tmp_path / "v", invoke)
    text = (root / REVIEW_NOTE).read_text("utf-8")
    lines = bulk_lines(text)
    assert [line.split(" ^mc-")[0] for line in lines] == ["- [ ] drop all 3", "- [ ] leave all 3"], lines
    assert "3 items from `agent-a` wait for **no-surface**" in text
    assert "agent-b` wait for" not in text


def test_a_ticked_bulk_drop_drops_each_item_of_the_group_in_one_undoable_run(tmp_path: Path, invoke) -> None:
    root = bulk_vault(tmp_path / "v", invoke)
    note = root / REVIEW_NOTE
    obsidian_save(note, tick_bulk(note.read_text("utf-8"), "drop", "memos are not notes"))
    out = invoke("run", "--vault", str(root), "--no-judge", clock=FixedClock(T1)).output
    assert "3 ticked action(s) applied" in out, out
    assert not any((root / "_inbox/agent-a" / name).exists() for name in MEMOS)
    assert (root / LONE).exists()
    begins = [r for r in note_records(root) if r["event"] == "begin"]
    assert sorted(r["inbox"] for r in begins) == sorted(f"_inbox/agent-a/{n}" for n in MEMOS)
    assert {r["reason"].split(" (by ")[0] for r in begins} == {"memos are not notes"}
    assert len({r["run"] for r in begins}) == 1
    assert bulk_lines(note.read_text("utf-8")) == []  # the group is gone: so is its line
    undone = invoke("undo", begins[0]["run"], "--vault", str(root))
    assert undone.exit_code == 0, undone.output
    assert all((root / "_inbox/agent-a" / name).exists() for name in MEMOS)  # as flagged before the tick


def test_a_bulk_tick_applies_only_to_the_items_unchanged_since_and_tells_the_changed_one(
    tmp_path: Path, invoke
) -> None:
    root = bulk_vault(tmp_path / "v", invoke)
    note = root / REVIEW_NOTE
    changed = root / "_inbox/agent-a/memo-1.md"
    changed.write_text(MEMOS["memo-1.md"] + "One more line.\n")
    age(changed)
    obsidian_save(note, tick_bulk(note.read_text("utf-8"), "drop"))
    result = invoke("run", "--vault", str(root), "--no-judge", clock=FixedClock(T1))
    assert result.exit_code == 0, result.output
    assert changed.exists() and not (root / "_inbox/agent-a/memo-0.md").exists()
    assert not (root / "_inbox/agent-a/memo-2.md").exists()
    told = [line for line in result.output.splitlines() if "memo-1.md: not applied" in line]
    assert told and "changed since the review note was written" in told[0], result.output
    assert "changed since the review note was written" in section_text(root, "_inbox/agent-a/memo-1.md")


def test_a_bulk_leave_is_acknowledged_on_each_item_and_changes_nothing(tmp_path: Path, invoke) -> None:
    root = bulk_vault(tmp_path / "v", invoke)
    note = root / REVIEW_NOTE
    obsidian_save(note, tick_bulk(note.read_text("utf-8"), "leave"))
    sweep(invoke, root, T1)
    assert note_records(root) == []
    for name in MEMOS:
        assert "left: it stays in the queue" in section_text(root, f"_inbox/agent-a/{name}")
    assert "left: it stays" not in section_text(root, LONE)


def test_a_bulk_drop_and_another_box_of_one_item_is_two_actions_for_that_item(tmp_path: Path, invoke) -> None:
    root = bulk_vault(tmp_path / "v", invoke)
    note = root / REVIEW_NOTE
    text = tick_bulk(note.read_text("utf-8"), "drop")
    sid = re.search(r"^%% mc:begin ([0-9a-f]{12}) %%\r?\n\r?\n## .* `_inbox/agent-a/memo-0", text, re.M)
    assert sid is not None
    text = text.replace(f"- [ ] leave ^mc-{sid.group(1)}-leave", f"- [x] leave ^mc-{sid.group(1)}-leave")
    obsidian_save(note, text)
    out = sweep(invoke, root, T1 + dt.timedelta(minutes=1))
    assert (root / "_inbox/agent-a/memo-0.md").exists(), json.dumps(out)
    assert not (root / "_inbox/agent-a/memo-2.md").exists()
    assert "2 actions ticked (drop, leave)" in section_text(root, "_inbox/agent-a/memo-0.md")
    os.utime(note, (0, 0))


def _member(n: int, agent: str = "a", promote: bool = True) -> rn.Item:
    offers = (*((rn.Offer("promote", f"insights/x{n}.md"),) if promote else ()), rn.Offer("drop"), rn.Offer("leave"))
    return rn.Item(f"_inbox/{agent}/x{n}.md", f"sha256:{n}", f"x{n}", "undecided", "w", offers=offers, agent=agent)


def test_a_bulk_verb_is_offered_only_when_every_member_offers_it() -> None:
    both = review_bulk.sections([_member(1), _member(2)])
    assert [sorted(s.tasks) for s in both] == [["drop", "leave", "promote"]]
    one_cannot = review_bulk.sections([_member(1), _member(2, promote=False), _member(3, agent="b")])
    assert [sorted(s.tasks) for s in one_cannot] == [["drop", "leave"]]  # b's lone item: no line
    assert one_cannot[0].members == (_member(1).id, _member(2, promote=False).id)


def test_a_bulk_box_set_to_another_status_or_mangled_is_told_on_each_member() -> None:
    items = [_member(1), _member(2)]
    bulk = review_bulk.sections(items)[0]
    known = {s.id: s for s in [bulk, *(rn.item_section(i) for i in items)]}
    ticks = {bulk.id: rn.Tick(bulk.id, others=(("drop", "-"),))}
    spread = review_bulk.spread(ticks, known)
    assert set(spread) == {i.id for i in items}
    assert all(t.others == (("drop", "-"),) and not t.verbs for t in spread.values())
    own = rn.Tick(items[0].id, verbs=("promote",))
    mangled = review_bulk.spread({bulk.id: rn.Tick(bulk.id, mangled="cut"), items[0].id: own}, known)
    assert mangled[items[0].id].mangled is None and mangled[items[0].id].verbs == ("promote",)
    assert mangled[items[1].id].mangled == "its group's bulk line: cut"
