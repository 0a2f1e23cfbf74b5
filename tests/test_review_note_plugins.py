"""Ticks as Obsidian's plugins write them (issue 37): the Tasks plugin's done date and the other
fields it serialises, a Dataview completion field, and a box set to another status than `x`.
Each fixture line is the plugin's own documented serialisation of a task, appended after the
label and before the block id, where the plugins put it."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest
from test_review_note import MEMO_REL, T1, note_records, obsidian_save, sections, small_vault, sweep, ticked

from memory_curator.core import review_note as rn
from memory_curator.core.clock import FixedClock

from conftest import REVIEW_NOTE

PROMOTE = rn.Item(
    "_inbox/a/one.md",
    "sha256:1",
    "One",
    "undecided",
    "a criterion could not be decided",
    offers=(rn.Offer("promote", "facts/one/x.md"), rn.Offer("drop"), rn.Offer("leave")),
)
DROPPED = (rn.Dropped("_inbox/.dropped/a/x.md", "rule", "2026-11-20"),)
HEAD = rn.head_section(rn.Head((("undecided", 1),), (), DROPPED, "hint"))
SECTION = rn.item_section(PROMOTE)
TEXT = rn.render(HEAD, [SECTION])

# what each plugin appends to a completed task (Tasks plugin docs: "Dates", "Priority",
# "Recurring tasks"; Dataview docs: "Metadata on Tasks and Lists", automatic completion)
PLUGIN_TAILS = {
    "tasks-done": " ✅ 2026-12-05",
    "tasks-done-created": " ➕ 2026-12-01 ✅ 2026-12-05",
    "tasks-scheduled-start-due": " ⏳ 2026-12-03 🛫 2026-12-02 📅 2026-12-04 ✅ 2026-12-05",
    "tasks-priority": " ⏫ ✅ 2026-12-05",
    "tasks-priorities": " 🔺 🔼 🔽 ⏬ ✅ 2026-12-05",
    "tasks-recurring": " 🔁 every day ✅ 2026-12-05",
    "dataview-completion": " [completion:: 2026-12-05]",
    "dataview-emoji-shorthand": " ✅ 2026-12-05",
}


def tick(text: str, verb: str, box: str = "x", tail: str = "", words: str = "") -> str:
    """`text` with `verb`'s line of the item toggled to `box`, `words` typed after its label and
    the plugin's `tail` appended before its block id."""
    block = f" ^mc-{SECTION.id}-{verb}"
    line = next(line for line in text.split("\n") if line.endswith(block))
    label = line.removeprefix("- [ ] ").removesuffix(block)
    return text.replace(line, f"- [{box}] {label}{words}{tail}{block}")


@pytest.mark.parametrize("tail", PLUGIN_TAILS.values(), ids=PLUGIN_TAILS.keys())
def test_a_promote_ticked_through_a_plugin_is_read_as_a_promote(tail: str) -> None:
    got = rn.read(tick(TEXT, "promote", tail=tail), [HEAD, SECTION]).ticks[SECTION.id]
    assert (got.verbs, got.mangled, got.others) == (("promote",), None, ())


@pytest.mark.parametrize("tail", PLUGIN_TAILS.values(), ids=PLUGIN_TAILS.keys())
def test_a_drops_typed_reason_excludes_what_a_plugin_appended(tail: str) -> None:
    got = rn.read(tick(TEXT, "drop", tail=tail, words=": not news"), [HEAD, SECTION]).ticks[SECTION.id]
    assert (got.verbs, got.reason, got.mangled) == (("drop",), "not news", None)
    bare = rn.read(tick(TEXT, "drop", tail=tail), [HEAD, SECTION]).ticks[SECTION.id]
    assert (bare.verbs, bare.reason) == (("drop",), None)


def test_a_restore_ticked_through_the_tasks_plugin_is_read() -> None:
    line = next(line for line in TEXT.split("\n") if line.endswith("-restore"))
    label, block = line.removeprefix("- [ ] ").rsplit(" ^", 1)
    done = TEXT.replace(line, f"- [x] {label} ✅ 2026-12-05 ^{block}")
    assert rn.read(done, [HEAD, SECTION]).restores == (DROPPED[0].id,)


@pytest.mark.parametrize(
    ("box", "tail", "name"),
    [("-", " ❌ 2026-12-05", "cancelled"), ("/", "", "in progress"), (">", "", "deferred"), ("!", "", "important")],
)
def test_another_status_is_not_a_tick_and_is_told_by_name(box: str, tail: str, name: str) -> None:
    got = rn.read(tick(TEXT, "promote", box=box, tail=tail), [HEAD, SECTION]).ticks[SECTION.id]
    assert (got.verbs, got.mangled, got.others) == ((), None, (("promote", box),))
    assert rn.status_problem(got.others) == f"{name} (`[{box}]`): not applied; tick it with x"


@pytest.mark.parametrize(
    "words", [" and more", " ✅ soon", " [completion:: 2026-12-05] extra", " #tag", " 📅 2026-12-05 and words"]
)
def test_words_other_than_a_plugins_fields_on_a_promote_line_are_a_changed_section(words: str) -> None:
    got = rn.read(tick(TEXT, "promote", tail=words), [HEAD, SECTION]).ticks[SECTION.id]
    assert got.verbs == () and got.mangled is not None


def test_a_section_a_plugin_ticked_leaves_no_line_behind_when_written_again() -> None:
    reading = rn.read(tick(TEXT, "promote", tail=" ✅ 2026-12-05"), [HEAD, SECTION])
    assert reading.own == ()  # no ticked line kept as the person's (a duplicate `^mc-` id)


# --- through a sweep, on a vault ---------------------------------------------------------------

INSIGHT_REL = "_inbox/agent-a/insight.md"


def tasks_done(text: str, inbox: str, verb: str, box: str = "x", reason: str = "") -> str:
    """`text` as the Tasks plugin leaves it when `verb`'s box of `inbox` is set to `box`: a done
    (or cancelled) date before the block id."""
    sid = sections(text)[inbox]
    pattern = re.compile(rf"^- \[ \] (.*?)( \^mc-{sid}-{verb})(\r?)$", re.M)
    date = " ❌ 2026-12-05" if box == "-" else " ✅ 2026-12-05" if box in "xX" else ""
    said = f": {reason}" if reason else ""
    return pattern.sub(lambda m: f"- [{box}] {m.group(1)}{said}{date}{m.group(2)}{m.group(3)}", text, count=1)


def test_the_tasks_plugins_promote_drop_and_restore_ticks_are_applied(tmp_path: Path, invoke) -> None:
    root = small_vault(tmp_path / "v", invoke)
    note = root / REVIEW_NOTE
    text = tasks_done(note.read_text("utf-8"), MEMO_REL, "drop", reason="not a note")
    obsidian_save(note, tasks_done(text, INSIGHT_REL, "promote"))
    out = sweep(invoke, root, T1)
    begins = {r["inbox"]: r for r in note_records(root) if r["event"] == "begin"}
    assert {k: v["verdict"] for k, v in begins.items()} == {MEMO_REL: "drop", INSIGHT_REL: "promote"}, out["notes"]
    assert begins[MEMO_REL]["reason"].startswith("not a note "), begins[MEMO_REL]["reason"]
    after = note.read_text("utf-8")
    assert "✅" not in after and "not applied" not in " ".join(out["notes"])  # no line left behind
    restore = re.sub(r"^- \[ \] (restore .*?)( \^mc-\w+-restore)$", r"- [x] \1 ✅ 2026-12-05\2", after, flags=re.M)
    assert restore != after
    obsidian_save(note, restore)
    sweep(invoke, root, T1 + dt.timedelta(minutes=1))
    assert (root / MEMO_REL).exists()
    assert [r["inbox"] for r in note_records(root) if r["event"] == "begin" and r["verdict"] == "restore"] == [MEMO_REL]


@pytest.mark.parametrize(("box", "name"), [("-", "cancelled"), ("/", "in progress")])
def test_a_cancelled_or_in_progress_box_is_told_by_name_and_applies_nothing(
    tmp_path: Path, invoke, box: str, name: str
) -> None:
    root = small_vault(tmp_path / "v", invoke)
    note = root / REVIEW_NOTE
    obsidian_save(note, tasks_done(note.read_text("utf-8"), MEMO_REL, "drop", box=box))
    out = sweep(invoke, root, T1)
    assert note_records(root) == [] and (root / MEMO_REL).exists()
    said = f"review note: {MEMO_REL}: not applied: {name} (`[{box}]`): not applied; tick it with x"
    assert said in out.get("notes", []), out
    assert f"{name} ( {box} ): not applied; tick it with x" in note.read_text("utf-8")  # the item says so too


def test_a_cancelled_restore_box_in_the_head_is_told_by_name(tmp_path: Path, invoke) -> None:
    root = small_vault(tmp_path / "v", invoke)
    note = root / REVIEW_NOTE
    obsidian_save(note, ticked(note.read_text("utf-8"), MEMO_REL, "drop"))
    sweep(invoke, root, T1)
    obsidian_save(note, note.read_text("utf-8").replace("- [ ] restore", "- [-] restore", 1))
    out = invoke("run", "--vault", str(root), "--no-judge", clock=FixedClock(T1 + dt.timedelta(minutes=1))).output
    assert not (root / MEMO_REL).exists()
    assert "cancelled (`[-]`): not applied" in out, out
    head = note.read_text("utf-8").split("%% mc:end head %%")[0]
    assert "cancelled" in head and "Not applied" in head, head
