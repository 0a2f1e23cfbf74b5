"""The review note (issue 30): a 20-item queue cleared by ticking boxes in the note as Obsidian
saves it gives the same vault, journal and undo as `review`; ambiguous, stale, forged, mangled
or half-saved notes apply nothing; the note renders as GFM task lists whose links resolve, and is
not rewritten when nothing changed."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
from pathlib import Path

import pytest
from loop_kit import CONTRADICTION, INSIGHT, MEMO, THIN_FACT, fail

from memory_curator.cli.machine import build_context
from memory_curator.commands import review_items, review_memory, review_note
from memory_curator.commands.context import Seams
from memory_curator.commands.desk import Desk
from memory_curator.commands.review import patch_confirmed
from memory_curator.core.clock import FixedClock

from conftest import FIXTURES, REVIEW_NOTE, age, snapshot

T0 = dt.datetime(2026, 11, 20, 9, 0, tzinfo=dt.UTC)
T1 = T0 + dt.timedelta(hours=1)
PRIVATE = INSIGHT.replace("confidence: 2", "confidence: 2\ntags: [do-not-share]")
MINE = INSIGHT.replace("type: insight", "type: decision")
MINE = MINE.replace("Agents should batch writes", "Keep notes in markdown")  # the person's decisions/ note


def fact(entity: str, value: str, confidence: int = 1) -> str:
    return (
        f"---\ntype: fact\nentity: {entity}\npredicate: size\nvalue: {value}\n"
        f"source_url: https://example.dev/{entity}\nconfidence: {confidence}\n---\nAbout {entity}.\n"
    )


def insight(title: str) -> str:
    return INSIGHT.replace("Agents should batch writes", title)


SOURCE = "source_url: https://example.dev/x\nconfidence: 2\n"
CURATOR_TEXT = (  # the body of insights/agents-need-a-curator.md
    "Left alone, agents write the same fact five times in five shapes. A sweep that\n"
    "checks novelty before anything becomes durable keeps the vault worth reading.\n"
)
HOSTING = "---\ntitle: Acme hosting\n---\nAcme stores customer data in Frankfurt.\n"  # semantic_kit's words

ADA_KEYED = (  # persons/ada-lovelace.md's key, its fields known, its body one sentence more
    "---\ntype: person\nname: Ada Lovelace\nsources:\n  - https://en.wikipedia.org/wiki/Ada_Lovelace\n"
    "confidence: 1\n---\nAlso known as Ada King, she wrote the notes on the Analytical Engine.\n"
)
UNSOURCED_KITE = fact("kite", "Kites fly.").replace("source_url: https://example.dev/kite\n", "")

# inbox name -> (text, reason code, the decision: verb, and a drop's typed reason). Every code
# the note offers an action on; `internal-error`, `unsettled`, `cannot-write` and `other` are
# made by a bug, an agent still writing, a refused write or an old version, not by a vault's
# content, and the note treats them as any other code (its offers come from the item, not the
# code), so the queue does not stage them.
QUEUE: dict[str, tuple[str, str, tuple[str, str | None]]] = {
    "memo.md": (MEMO, "no-surface", ("drop", "not a note")),
    "thin.md": (fact("nim", "Nim compiles to C."), "criteria-failed", ("promote", None)),  # no word the model knows
    "ada.md": (ADA_KEYED, "exists", ("patch", None)),  # its own key: a patch is offered (never on likeness alone)
    "insight.md": (INSIGHT, "undecided", ("promote", None)),
    "contra.md": (CONTRADICTION, "contradiction", ("both", None)),
    "contra-b.md": (fact("widget", "Widgets weigh 9 kg.", 2), "contradiction", ("new", None)),
    "contra-c.md": (fact("gadget", "Gadgets weigh 7 kg.", 2), "contradiction", ("old", None)),
    "mine.md": (MINE, "persons-note", ("drop", "I wrote this already")),
    "empty.md": ("", "empty", ("drop", None)),
    "broken.md": ("---\ntype: fact\nvalue: [unclosed\n---\nbody\n", "unreadable", ("drop", None)),
    "private.md": (PRIVATE, "private", ("drop", "private")),
    "incomplete.md": (fact("blank", "''", 2), "incomplete", ("drop", None)),
    "big.md": (insight("Too large") + "x" * (1 << 20), "too-large", ("leave", None)),  # only `leave` is offered
    # an exact copy of a note's text (the vault's rules here have no exact-duplicate drop rule)
    "dup.md": (
        f"---\ntype: research\ntopic: saved\ntitle: Saved copy\n{SOURCE}---\n{CURATOR_TEXT}",
        "duplicate",
        ("drop", None),
    ),
    "near.md": (
        f"---\ntype: research\ntopic: saved\ntitle: Agents want a curator\n{SOURCE}---\n"
        + CURATOR_TEXT.replace("worth reading.", "worth reading and tidy."),
        "near-duplicate",
        ("promote", None),
    ),
    "subject.md": (
        f"---\ntype: insight\ntitle: Coding assistants\n{SOURCE}load_bearing: true\n---\nThey handle data apart.\n",
        "subject-note",
        ("leave", None),
    ),
    "semantic.md": (  # no word of it is in notes/hosting.md: only the (test) model pairs them
        f"---\ntype: research\ntopic: vendors\ntitle: Supplier records\n{SOURCE}---\n"
        "The company keeps client records in Germany.\n",
        "semantic-neighbour",
        ("promote", None),
    ),
    "exists.md": (
        fact("widget", "Widgets weigh 4 kg.", 3).replace(
            "About widget.", "About widget. Factory engineers cast every widget from recycled marine steel alloys."
        ),
        "exists",
        ("drop", "the note says enough"),
    ),
    # dropped by a rule (confidence 1, no source) then put back by undo: held, never flagged
    "held.md": (UNSOURCED_KITE, "held", ("promote", None)),
    # the judge (through the SDK's mock transport) cites a drop rule whose condition does not hold
    "judge.md": (insight("Agents should judge"), "judge", ("drop", "the judge was right")),
}
LATER = ("held.md", "judge.md")
EXACT_DUPLICATE_RULE = '  - id: exact-duplicate\n    reason: "exact duplicate of {note}"\n    when: exact_duplicate\n'
TARGETS = {  # the note a patch goes into, as `review` is told it
    "ada.md": "persons/ada-lovelace.md",
    "contra.md": "facts/obsidian/file-format.md",
    "contra-b.md": "facts/widget/size.md",
    "contra-c.md": "facts/gadget/size.md",
}  # staged by sweeps of their own (see `make_vault`)
CURATOR_FACTS = {  # curator's notes the contradictions are about, and the semantic neighbour
    "facts/widget/size.md": fact("widget", "Widgets weigh 4 kg.", 3),
    "facts/gadget/size.md": fact("gadget", "Gadgets weigh 2 kg.", 3),
    "notes/hosting.md": HOSTING,
}


@pytest.fixture(autouse=True)
def person(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_CURATOR_USER", "tester")


@pytest.fixture
def queue_model(model_dir: Path, no_network: None) -> Path:
    """The tiny semantic model (`semantic_kit`) the queue's semantic-neighbour is paired by."""
    return model_dir


def judge_seams(at: dt.datetime) -> Seams:
    """A sweep whose judge (its SDK on a mock transport, as `test_judge` wires it) cites the
    `low-confidence-unsourced` drop rule for every candidate it is shown."""
    from test_judge import FakeModel, answer, answering, wire_fake_api

    model = FakeModel(answering(lambda title, cid, notes: [answer(cid, drop_rule="low-confidence-unsourced")]))
    return wire_fake_api(model, {}, clock=FixedClock(at))


def queue_vault(root: Path, model: Path, extra: dict[str, str] | None = None) -> Path:
    """The fixtures with semantic pairing on (`model`), the curator's notes and the queue but the
    two that need a sweep of their own (`LATER`), plus `extra` inbox files; all settled."""
    shutil.copytree(FIXTURES, root)
    shutil.rmtree(root / "_inbox/test-step-4")
    rules = root / "_meta/inbox-rules.md"
    text = rules.read_text().replace(EXACT_DUPLICATE_RULE, "")
    semantic = f"\nsettings:\n  semantic: {{model: {json.dumps(str(model))}}}\n"
    rules.write_text(text.replace("\nsettings:\n", semantic, 1))
    for rel, body in CURATOR_FACTS.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(body)
    (root / "_inbox/agent-a").mkdir(parents=True)
    inbox = {name: body for name, (body, _, _) in QUEUE.items() if name not in LATER} | (extra or {})
    for name, body in inbox.items():
        (root / "_inbox/agent-a" / name).write_text(body)
    for path in root.rglob("*"):
        if path.is_file():
            age(path)
    return root


def make_vault(root: Path, invoke, model: Path) -> Path:
    """The fixtures, the curator's notes and the 20-item queue, all waiting at T0 + 3 min: the
    queue swept at T0 (all flagged), then `held.md` dropped by a rule and put back by undo,
    then `judge.md` swept with the judge, then one more sweep writes the whole note."""
    queue_vault(root, model)
    out = sweep(invoke, root, T0)
    assert out["needs_review"] == len(QUEUE) - len(LATER) - 1, out
    codes = {a["inbox_path"].rsplit("/", 1)[1]: a["reason_code"] for g in out["agents"] for a in g["actions"]}
    codes |= {s["inbox_path"].rsplit("/", 1)[1]: s["waiting"] for g in out["agents"] for s in g["skipped"]}

    held, judged = (root / "_inbox/agent-a" / name for name in LATER)
    held.write_text(QUEUE["held.md"][0])
    age(held)
    assert sweep(invoke, root, T0 + dt.timedelta(minutes=1))["dropped"] == 1
    assert invoke("undo", "--last", "--vault", str(root)).exit_code == 0
    age(held)
    judged.write_text(QUEUE["judge.md"][0])
    age(judged)
    result = invoke("run", "--vault", str(root), "--json", seams=judge_seams(T0 + dt.timedelta(minutes=2)))
    out = json.loads(result.output)
    assert out["judge"]["requests"] == 1, out
    codes |= {a["inbox_path"].rsplit("/", 1)[1]: a["reason_code"] for g in out["agents"] for a in g["actions"]}
    age(root / REVIEW_NOTE)
    out = sweep(invoke, root, T0 + dt.timedelta(minutes=3))
    skipped = [s for g in out["agents"] for s in g["skipped"]]
    codes |= {s["inbox_path"].rsplit("/", 1)[1]: s["waiting"] for s in skipped if s["waiting"] == "held"}
    assert codes == {name: code for name, (_, code, _) in QUEUE.items()}
    note = (root / REVIEW_NOTE).read_text("utf-8")
    assert {f"**{code}**" for _, code, _ in QUEUE.values()} <= {m for m in re.findall(r"\*\*[a-z-]+\*\*", note)}
    age(root / REVIEW_NOTE)
    return root


def sweep(invoke, root: Path, at: dt.datetime) -> dict:
    result = invoke("run", "--vault", str(root), "--json", "--no-judge", clock=FixedClock(at))
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def sections(text: str) -> dict[str, str]:
    """inbox path -> its section id, as the note shows them."""
    found = re.findall(
        r"^%% mc:begin ([0-9a-f]{12}) %%\r?\n\r?\n## .* · `(_inbox/[^`]+)`\r?$", text.removeprefix("\ufeff"), re.M
    )
    return dict((path, sid) for sid, path in found)


def obsidian_save(path: Path, text: str) -> None:
    """As a phone's Obsidian may write it: CRLF, a BOM, through a temp file renamed into place,
    settled (older than the settle window)."""
    body = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\n", "\r\n")
    temp = path.with_name(".obsidian-save.tmp")
    temp.write_bytes(b"\xef\xbb\xbf" + body.encode("utf-8"))
    os.replace(temp, path)
    age(path)


def ticked(text: str, inbox: str, verb: str, reason: str | None = None) -> str:
    """`text` with the box of `verb` ticked in `inbox`'s section (a drop's reason typed after it)."""
    sid = sections(text)[inbox]
    pattern = re.compile(rf"^- \[ \] (.*?)( \^mc-{sid}-{verb})(\r?)$", re.M)
    assert pattern.search(text), f"{verb} not offered for {inbox}"
    words = (lambda m: f"- [x] {m.group(1)}: {reason}{m.group(2)}{m.group(3)}") if reason else r"- [x] \1\2\3"
    return pattern.sub(words, text, count=1)


def decision_records(state: Path, runs: set[str]) -> list[dict]:
    """The begin records of `runs`, each with its end, without run id, seq, time and `by`."""
    begins: dict[tuple[str, int], dict] = {}
    for line in (state / "journal.jsonl").read_text().splitlines():
        r = json.loads(line)
        key = (r.get("run"), r.get("seq"))
        if r.get("run") not in runs:
            continue
        if r.get("event") == "begin":
            begins[key] = {k: v for k, v in r.items() if k not in ("run", "seq", "time", "by")}
        elif r.get("event") == "end":
            begins[key]["end"] = {k: v for k, v in r.items() if k not in ("run", "seq", "time")}
    return sorted(begins.values(), key=lambda r: r.get("inbox") or "")


def state_of(root: Path) -> Path:
    return build_context(root).state


def test_a_queue_cleared_in_the_note_equals_the_same_decisions_in_review(
    tmp_path: Path, invoke, queue_model: Path
) -> None:
    by_note = make_vault(tmp_path / "note", invoke, queue_model)
    by_review = make_vault(tmp_path / "review", invoke, queue_model)
    assert snapshot(by_note) == snapshot(by_review)
    note = by_note / REVIEW_NOTE
    text = note.read_text("utf-8")
    files = sorted((by_note / "_inbox/agent-a").iterdir(), key=lambda p: (p.stat().st_mtime, p.name), reverse=True)
    assert list(sections(text)) == [f"_inbox/agent-a/{p.name}" for p in files]  # newest first
    for name, (_, _, (verb, reason)) in QUEUE.items():
        text = ticked(text, f"_inbox/agent-a/{name}", verb, reason)
    obsidian_save(note, text)

    out = sweep(invoke, by_note, T1)
    applied = [n for n in out.get("notes", []) if "ticked action(s) applied" in n]
    assert applied, out
    state_note = state_of(by_note)
    note_runs = {
        json.loads(line)["run"]
        for line in (state_note / "journal.jsonl").read_text().splitlines()
        if json.loads(line).get("by") == review_note.BY
    }
    assert len(note_runs) == 1

    desk = Desk(build_context(by_review, seams=Seams(clock=FixedClock(T1))))
    review_runs = set()
    order = [rel.rsplit("/", 1)[1] for rel in sections(text)]  # the note's order: folders made by the same item
    for name in order:  # what review's keys call (cli/review.py `act`)
        verb, reason = QUEUE[name][2]
        rel = str(by_review / "_inbox/agent-a" / name)
        if verb == "promote":
            done = desk.promote(rel)
        elif verb == "patch":
            done = patch_confirmed(desk, rel, TARGETS[name], None)
        elif verb in ("new", "old", "both"):
            preview = desk.preview(rel, TARGETS[name], verb)
            done = desk.patch(rel, preview.target, confirmed=preview.persons, seen=preview.seen, settle=verb)
        elif verb == "drop":
            done = desk.drop(rel, reason or "dropped in review")
        else:
            continue
        review_runs.add(done.run_id)

    assert snapshot(by_note) == snapshot(by_review)  # the same vault bytes (the note aside)
    state_review = state_of(by_review)
    mine, theirs = decision_records(state_note, note_runs), decision_records(state_review, review_runs)
    for a, b in zip(mine, theirs, strict=True):  # the keys that differ, named
        assert {k: a.get(k) for k in a.keys() | b.keys() if a.get(k) != b.get(k)} == {}, a["inbox"]
    decided = sum(1 for _, _, (verb, _) in QUEUE.values() if verb != "leave")
    assert len(decision_records(state_note, note_runs)) == decided

    # the note now holds only what was left, and says nothing was refused
    left = sections(note.read_text("utf-8"))
    assert sorted(left) == sorted(f"_inbox/agent-a/{n}" for n, (_, _, (v, _)) in QUEUE.items() if v == "leave")
    assert "Not applied" not in note.read_text("utf-8")

    # the same undo results
    undone_note = json.loads(invoke("undo", note_runs.pop(), "--vault", str(by_note), "--json").output)["data"]
    undone_review = 0
    for run in sorted(review_runs, reverse=True):
        undone = json.loads(invoke("undo", run, "--vault", str(by_review), "--json").output)["data"]["undone"]
        undone_review += len(undone)
    assert len(undone_note["undone"]) == undone_review == decided and undone_note["left"] == []
    assert snapshot(by_note) == snapshot(by_review)


def test_log_names_the_note_as_the_way_a_person_decided(tmp_path: Path, invoke, queue_model: Path) -> None:
    root = make_vault(tmp_path / "v", invoke, queue_model)
    note = root / REVIEW_NOTE
    obsidian_save(note, ticked(note.read_text("utf-8"), "_inbox/agent-a/memo.md", "drop"))
    sweep(invoke, root, T1)
    entries = json.loads(invoke("log", "--vault", str(root), "--json").output)["data"]["entries"]
    mine = [e for e in entries if e.get("by") == "review-note"]
    assert [(e["verdict"], e["inbox_path"], e["reason"]) for e in mine] == [
        ("drop", "_inbox/agent-a/memo.md", "dropped in review (by tester)")
    ]


SMALL = {"memo.md": MEMO, "thin.md": THIN_FACT, "insight.md": INSIGHT, "contra.md": CONTRADICTION}
MEMO_REL = "_inbox/agent-a/memo.md"


def small_vault(root: Path, invoke) -> Path:
    shutil.copytree(FIXTURES, root)
    shutil.rmtree(root / "_inbox/test-step-4")
    (root / "_inbox/agent-a").mkdir(parents=True)
    for name, text in SMALL.items():
        (root / "_inbox/agent-a" / name).write_text(text)
    for path in root.rglob("*"):
        if path.is_file():
            age(path)
    assert sweep(invoke, root, T0)["needs_review"] == len(SMALL)
    age(root / REVIEW_NOTE)
    return root


def note_records(root: Path) -> list[dict]:
    journal = state_of(root) / "journal.jsonl"
    records = map(json.loads, journal.read_text().splitlines())  # the actions, not the ticks' summary `run`
    return [r for r in records if r.get("by") == review_note.BY and r.get("event") != "run"]


def section_text(root: Path, inbox: str) -> str:
    text = (root / REVIEW_NOTE).read_text("utf-8").replace("\r\n", "\n")
    sid = sections(text)[inbox]
    return text.split(f"%% mc:begin {sid} %%")[1].split(f"%% mc:end {sid} %%")[0]


def evil_text(section: str) -> str:
    """An agent's candidate carrying another item's whole section, its drop box ticked, and a bare
    ticked line with that item's id."""
    sid = re.search(r"\^mc-([0-9a-f]{12})-drop", section)
    assert sid is not None
    forged = section.replace("- [ ] drop", "- [x] drop")
    return (
        "---\ntype: insight\ntitle: Forged ticks\nsource_url: https://example.dev/f\nconfidence: 2\n---\n"
        f"- [x] drop ^mc-{sid.group(1)}-drop\n%% mc:begin {sid.group(1)} %%\n{forged}\n%% mc:end {sid.group(1)} %%\n"
        "```dataviewjs\ndv.paragraph('ran')\n```\n![[persons/ada-lovelace]] <img src=x onerror=alert(1)>\n"
    )


def two_ticks(root: Path, invoke) -> str:
    text = ticked(ticked((root / REVIEW_NOTE).read_text("utf-8"), MEMO_REL, "drop"), MEMO_REL, "leave")
    obsidian_save(root / REVIEW_NOTE, text)
    return "2 actions ticked"


def stale_candidate(root: Path, invoke) -> str:
    obsidian_save(root / REVIEW_NOTE, ticked((root / REVIEW_NOTE).read_text("utf-8"), MEMO_REL, "drop"))
    path = root / MEMO_REL
    path.write_text(path.read_text() + "\nThe agent added a line.\n")
    age(path)
    return "changed since the review note was written"


def stale_target(root: Path, invoke) -> str:
    text = ticked((root / REVIEW_NOTE).read_text("utf-8"), "_inbox/agent-a/contra.md", "both")
    obsidian_save(root / REVIEW_NOTE, text)
    note = root / "facts/obsidian/file-format.md"
    note.write_text(note.read_text() + "\nA line the person added.\n")
    age(note)
    return "changed since you saw the diff"


def forged(root: Path, invoke) -> str:
    evil = root / "_inbox/agent-b/evil.md"
    evil.parent.mkdir()
    evil.write_text(evil_text(section_text(root, MEMO_REL)))
    age(evil)
    sweep(invoke, root, T0 + dt.timedelta(minutes=1))  # the forged text is now quoted in the note
    age(root / REVIEW_NOTE)
    assert "Forged ticks" in (root / REVIEW_NOTE).read_text("utf-8")
    return ""


def mangled(root: Path, invoke) -> str:
    text = ticked((root / REVIEW_NOTE).read_text("utf-8"), MEMO_REL, "drop")
    obsidian_save(root / REVIEW_NOTE, re.sub(r"\nWaits: \*\*no-surface\*\*.*\n", "\n", text, count=1))
    return "changed or cut"


def half_saved(root: Path, invoke) -> str:
    text = ticked((root / REVIEW_NOTE).read_text("utf-8"), MEMO_REL, "drop")
    cut = text.index("- [x] drop") + len("- [x] drop")  # the save stopped after the tick
    obsidian_save(root / REVIEW_NOTE, text[:cut])
    return "changed or cut"


@pytest.mark.parametrize("case", [two_ticks, stale_candidate, stale_target, forged, mangled, half_saved])
def test_an_ambiguous_stale_forged_or_mangled_note_applies_nothing(tmp_path: Path, invoke, case) -> None:
    root = small_vault(tmp_path / "v", invoke)
    why = case(root, invoke)
    before = snapshot(root)
    out = sweep(invoke, root, T1)
    assert note_records(root) == [], out
    if case is not stale_candidate:  # an agent's new bytes are the sweep's to flag again
        assert snapshot(root) == before
    assert (root / MEMO_REL).exists() and (root / "facts/obsidian/file-format.md").exists()
    if why:
        refused = [n for n in out["notes"] if "not applied" in n]
        assert refused and why in refused[0], out["notes"]
        inbox = "_inbox/agent-a/contra.md" if case is stale_target else MEMO_REL
        assert why in " ".join(section_text(root, inbox).split())  # the item explains itself
    age(root / REVIEW_NOTE)
    sweep(invoke, root, T1 + dt.timedelta(minutes=1))
    assert note_records(root) == []  # and the next sweep applies nothing either


class SaveDuring:
    """`os` as the writer sees it; when the curator's writer looks at the note to replace it, the
    person saves the note (a tick) first: the compare-and-swap must see it."""

    def __init__(self, note: Path, text: str) -> None:
        self.note, self.text, self.saved = note, text, False

    def __getattr__(self, name: str):
        real = getattr(os, name)
        if name != "stat":
            return real

        def stat(path, *args, **kwargs):
            if not self.saved and Path(path) == self.note:
                self.saved = True
                obsidian_save(self.note, self.text)
            return real(path, *args, **kwargs)

        return stat


def test_a_tick_saved_while_the_sweep_writes_the_note_is_kept_and_applied_once_next_time(
    tmp_path: Path, invoke
) -> None:
    from memory_curator.store.writer import Files

    root = small_vault(tmp_path / "v", invoke)
    note = root / REVIEW_NOTE
    (root / "_inbox/agent-a/new.md").write_text(insight("A new item makes the note change"))
    age(root / "_inbox/agent-a/new.md")
    person = ticked(note.read_text("utf-8"), MEMO_REL, "drop")
    hook = SaveDuring(note, person)
    result = invoke(
        "run", "--vault", str(root), "--json", "--no-judge", seams=Seams(clock=FixedClock(T1), files=Files(hook))
    )
    assert result.exit_code == 0 and hook.saved, result.output
    assert note.read_bytes().decode("utf-8-sig").replace("\r\n", "\n") == person  # the person's save won
    assert (root / MEMO_REL).exists() and note_records(root) == []
    sweep(invoke, root, T1 + dt.timedelta(minutes=1))
    assert not (root / MEMO_REL).exists()
    assert [r["verdict"] for r in note_records(root) if r["event"] == "begin"] == ["drop"]
    age(note)
    sweep(invoke, root, T1 + dt.timedelta(minutes=2))
    assert len(note_records(root)) == 1  # the drop's begin record: once


def test_a_sweep_with_nothing_new_leaves_the_note_untouched(tmp_path: Path, invoke) -> None:
    root = small_vault(tmp_path / "v", invoke)
    note = root / REVIEW_NOTE
    before = (note.read_bytes(), note.stat().st_mtime_ns)
    sweep(invoke, root, T1)
    assert (note.read_bytes(), note.stat().st_mtime_ns) == before


def test_a_sweep_with_nothing_new_asks_the_index_nothing_and_a_changed_note_asks_it_again(
    tmp_path: Path, invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = small_vault(tmp_path / "v", invoke)
    contra = "_inbox/agent-a/contra.md"
    before = sections((root / REVIEW_NOTE).read_text("utf-8"))
    asked: list[str] = []
    real = review_items.evaluate
    monkeypatch.setattr(
        review_items, "evaluate", lambda desk, q, c, **kw: asked.append(c.inbox_path) or real(desk, q, c, **kw)
    )
    sweep(invoke, root, T1)
    assert asked == []  # every section came from the state directory's cache
    target = root / "facts/obsidian/file-format.md"
    target.write_text(target.read_text() + "\nA line the person added.\n")
    age(target)
    sweep(invoke, root, T1 + dt.timedelta(minutes=1))
    assert sorted(asked) == sorted(before)  # a note changed: the index may answer otherwise for any item
    after = sections((root / REVIEW_NOTE).read_text("utf-8"))
    assert after[contra] != before[contra] and {k: v for k, v in after.items() if k != contra} == {
        k: v for k, v in before.items() if k != contra
    }  # the contradiction's section is bound to the note's new bytes
    asked.clear()
    unrelated = root / "insights/agents-need-a-curator.md"
    unrelated.write_text(unrelated.read_text() + "\nAnother line.\n")
    age(root / REVIEW_NOTE)
    sweep(invoke, root, T1 + dt.timedelta(minutes=2))
    assert sorted(asked) == sorted(before)  # any note: a new neighbour, a near-duplicate
    asked.clear()
    age(root / REVIEW_NOTE)
    sweep(invoke, root, T1 + dt.timedelta(minutes=3))
    assert asked == []  # and quiet again


@pytest.mark.parametrize("kept", [b"not json", b'{"notes": 1, "items": []}', b"[]", None])
def test_a_broken_or_foreign_item_cache_is_read_again_not_trusted(tmp_path: Path, invoke, kept: bytes | None) -> None:
    root = small_vault(tmp_path / "v", invoke)
    note = root / REVIEW_NOTE
    before = (note.read_bytes(), note.stat().st_mtime_ns)
    cache = state_of(root) / review_memory.CACHE
    seen = json.loads(cache.read_bytes())["notes"]
    if kept is None:  # the right vault, but every entry malformed
        entries = json.loads(cache.read_bytes())["items"]
        kept = json.dumps({"notes": seen, "items": {k: {"item": {"bad": 1}, "deps": {}} for k in entries}}).encode()
    cache.write_bytes(kept)
    out = sweep(invoke, root, T1)
    assert not [n for n in out.get("notes", []) if n.startswith("review note")], out
    assert (note.read_bytes(), note.stat().st_mtime_ns) == before  # the same note, read afresh
    assert json.loads(cache.read_bytes())["notes"] == seen


def test_a_note_made_at_an_items_promote_target_takes_the_promote_box_away_though_the_item_is_cached(
    tmp_path: Path, invoke
) -> None:
    root = small_vault(tmp_path / "v", invoke)
    rel = "_inbox/agent-a/insight.md"
    assert "promote to `insights/agents-should-batch-writes.md`" in section_text(root, rel)
    taken = root / "insights/agents-should-batch-writes.md"
    taken.write_text("---\ntitle: Mine\nauthor: user\n---\nA note of mine.\n")
    age(taken)
    sweep(invoke, root, T1)
    assert "promote to" not in section_text(root, rel)


def test_an_item_whose_reading_met_a_bug_is_read_again_at_the_next_sweep(
    tmp_path: Path, invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = small_vault(tmp_path / "v", invoke)
    rel = "_inbox/agent-a/contra.md"
    (root / "_inbox/agent-a/new.md").write_text(insight("A new item makes the note change"))
    age(root / "_inbox/agent-a/new.md")
    real = review_items.evaluate

    def broken(desk, querier, candidate):
        if candidate.inbox_path == "_inbox/agent-a/new.md":
            raise RuntimeError("index hiccup")
        return real(desk, querier, candidate)

    monkeypatch.setattr(review_items, "evaluate", broken)
    sweep(invoke, root, T1)
    assert "Concerns:" not in section_text(root, "_inbox/agent-a/new.md")  # no view: no note named
    monkeypatch.setattr(review_items, "evaluate", real)
    age(root / REVIEW_NOTE)
    sweep(invoke, root, T1 + dt.timedelta(minutes=1))
    assert "Concerns:" in section_text(root, "_inbox/agent-a/new.md")  # not kept: asked again
    assert "take the new value into" in section_text(root, rel)


def test_a_note_typed_into_within_the_settle_window_is_left_alone(tmp_path: Path, invoke) -> None:
    root = small_vault(tmp_path / "v", invoke)
    note = root / REVIEW_NOTE
    note.write_text(ticked(note.read_text("utf-8"), MEMO_REL, "drop"))  # saved just now
    os.utime(note, (T1.timestamp(), T1.timestamp()))
    before = snapshot(root, note=True)
    sweep(invoke, root, T1)
    assert snapshot(root, note=True) == before and note_records(root) == []


def test_the_note_renders_as_task_lists_whose_links_resolve(tmp_path: Path, invoke, queue_model: Path) -> None:
    from markdown_it import MarkdownIt
    from mdit_py_plugins.tasklists import tasklists_plugin

    root = make_vault(tmp_path / "v", invoke, queue_model)
    evil = root / "_inbox/agent-b/evil.md"
    evil.parent.mkdir()
    evil.write_text(evil_text(section_text(root, MEMO_REL)))
    age(evil)
    age(root / REVIEW_NOTE)
    sweep(invoke, root, T1)
    text = (root / REVIEW_NOTE).read_text("utf-8")
    tokens = MarkdownIt("commonmark").use(tasklists_plugin).parse(text)
    tasks = [t for t in tokens if t.type == "list_item_open" and "task-list-item" in str(t.attrs.get("class"))]
    fenced = {n for t in tokens if t.type == "fence" and t.map for n in range(*t.map)}
    ours = [n for n, line in enumerate(text.splitlines()) if line.startswith("- [ ] ") and n not in fenced]
    assert len(tasks) == len(ours) > 2 * len(QUEUE)  # every task line of ours is a task; none quoted is
    assert not [t for t in tokens if t.type in ("html_block", "html_inline")]  # nothing that runs
    assert not [t for t in tokens if t.type == "fence" and t.info.strip() != "text"]  # dataviewjs only quoted
    assert len([t for t in tokens if t.type == "fence"]) == len(QUEUE) + 1
    inline = "\n".join(t.content for t in tokens if t.type == "inline")  # outside every fence
    assert "![[" not in inline and "<img" not in inline
    links = re.findall(r"\[\[([^\]|]+)", inline)
    assert len(links) > len(QUEUE)
    missing = [target for target in links if not (root / f"{target}.md").is_file()]
    assert missing == []


def test_the_note_is_never_indexed_and_can_be_turned_off(tmp_path: Path, invoke) -> None:
    import sqlite3

    root = small_vault(tmp_path / "v", invoke)
    copy = (root / REVIEW_NOTE).with_name("Inbox review.sync-conflict-20261120-1.md")
    shutil.copy(root / REVIEW_NOTE, copy)
    assert invoke("index", "rebuild", "--vault", str(root)).exit_code == 0
    with sqlite3.connect(state_of(root) / "index.sqlite3") as db:
        indexed = {path for (path,) in db.execute("SELECT path FROM notes")}
    assert "_meta/inbox-rules.md" in indexed and not {REVIEW_NOTE, copy.relative_to(root).as_posix()} & indexed
    copy.unlink()
    rules = root / "_meta/inbox-rules.md"
    rules.write_text(rules.read_text().replace("settings:\n", "settings:\n  review_note: false\n", 1))
    (root / REVIEW_NOTE).unlink()
    sweep(invoke, root, T1)
    assert not (root / REVIEW_NOTE).exists()


def test_a_sync_conflict_copy_is_read_for_ticks_and_never_deleted(tmp_path: Path, invoke) -> None:
    root = small_vault(tmp_path / "v", invoke)
    note = root / REVIEW_NOTE
    copy = note.with_name("Inbox review (conflicted copy 2026-11-20).md")
    obsidian_save(copy, ticked(note.read_text("utf-8"), MEMO_REL, "drop"))
    sweep(invoke, root, T1)
    assert not (root / MEMO_REL).exists() and copy.exists()
    status = json.loads(invoke("status", "--vault", str(root), "--json").output)["data"]
    assert status["review_note"]["conflicts"] == [copy.relative_to(root).as_posix()]


KILL_ITEMS = 12
KILL_TRIALS = 6


def _kill_fact(n: int) -> str:
    return (
        f"---\ntype: fact\nentity: k{n:02}\npredicate: claim\nvalue: A claim {n}.\n"
        f"source_url: https://example.dev/k{n:02}\nconfidence: 1\n---\nmarker k{n:02}\nend k{n:02}\n"
    )


def _kill_template(root: Path, state: Path) -> None:
    """A vault whose note has every one of KILL_ITEMS items ticked: promote the even, drop the odd."""
    from memory_curator.commands import sweep as sweep_mod

    shutil.copytree(FIXTURES, root)
    shutil.rmtree(root / "_inbox/test-step-4")
    (root / "_inbox/agent-a").mkdir(parents=True)
    for n in range(KILL_ITEMS):
        (root / f"_inbox/agent-a/k{n:02}.md").write_text(_kill_fact(n))
    for path in root.rglob("*"):
        if path.is_file():
            age(path)
    sweep_mod.run(build_context(root, str(state)), None, sweep_mod.Options(use_judge=False))
    text = (root / REVIEW_NOTE).read_text("utf-8")
    for n in range(KILL_ITEMS):
        text = ticked(text, f"_inbox/agent-a/k{n:02}.md", "drop" if n % 2 else "promote")
    obsidian_save(root / REVIEW_NOTE, text)


@pytest.mark.slow
def test_sigkill_while_a_ticked_note_is_applied_does_each_action_once_or_not_at_all(tmp_path: Path) -> None:
    import random
    import signal
    import subprocess
    import sys
    import time

    from safety_kit import files, normalized, temps

    from memory_curator.commands.desk import locked

    seed = int(os.environ.get("MC_KILL_SEED") or time.time_ns() % 1_000_000)
    rng = random.Random(seed)
    template, template_state = tmp_path / "template", tmp_path / "template-state"
    _kill_template(template, template_state)

    def copy(name: str) -> tuple[Path, Path]:
        shutil.copytree(template, tmp_path / name)
        shutil.copytree(template_state, tmp_path / f"{name}-state")
        return tmp_path / name, tmp_path / f"{name}-state"

    def run(root: Path, state: Path) -> subprocess.Popen[bytes]:
        argv = [sys.executable, "-m", "memory_curator", "run", "--no-judge", "--vault", str(root)]
        return subprocess.Popen([*argv, "--state-dir", str(state)], stdout=subprocess.DEVNULL, cwd=root)

    def begun(state: Path) -> int:
        journal = state / "journal.jsonl"
        lines = journal.read_bytes().splitlines() if journal.exists() else []  # the actions, not the ticks' `run`
        return sum(b'"by": "review-note"' in line and b'"event": "run"' not in line for line in lines)

    def outside_note(root: Path) -> dict[str, bytes]:
        return {k: v for k, v in normalized(root).items() if k != REVIEW_NOTE}

    done_root, done_state = copy("done")
    assert run(done_root, done_state).wait(timeout=120) == 0 and begun(done_state) == KILL_ITEMS
    histories = [outside_note(template), outside_note(done_root)]
    landed = []
    for trial in range(KILL_TRIALS):
        where = f"seed {seed} (MC_KILL_SEED), trial {trial}"
        root, state = copy(f"t{trial}")
        proc, plans = run(root, state), rng.randrange(KILL_ITEMS)
        deadline = time.monotonic() + 60
        while begun(state) < plans and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.0005)
        time.sleep(rng.uniform(0, 0.003))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        landed.append(begun(state))
        with locked(build_context(root, str(state))):  # the next command's recovery
            pass
        for rel, data in outside_note(root).items():  # each item as one history or the other has it
            assert any(h.get(rel) == data for h in histories), f"{where}: {rel} is in neither history"
        for n in range(KILL_ITEMS):
            mark = f"marker k{n:02}\nend k{n:02}\n".encode()
            holders = [p for p in files(root) if mark in p.read_bytes()]
            assert len(holders) == 1, f"{where}: k{n:02} in {holders}"
        assert temps(root, state) == [], f"{where}: temp files left"
        age(root / REVIEW_NOTE)
        assert run(root, state).wait(timeout=120) == 0  # the next sweep applies what is left, once
        assert outside_note(root) == histories[1], where
    assert any(0 < n < KILL_ITEMS for n in landed), f"no kill landed mid-way: {landed}"


@pytest.mark.slow
def test_watch_applies_a_tick_once_the_note_settles(empty_vault: Path) -> None:
    import time

    from test_watch import set_rules, wait_for, watching

    set_rules(empty_vault)
    (empty_vault / "_inbox/agent-a").mkdir(parents=True)
    memo = empty_vault / MEMO_REL
    memo.write_text(MEMO)
    note = empty_vault / REVIEW_NOTE
    with watching(empty_vault):
        wait_for(lambda: note.exists() and MEMO_REL[:-3] in note.read_text("utf-8"))
        time.sleep(0.6)  # the note's own write settles (and is seen to change nothing)
        text = ticked(note.read_text("utf-8"), MEMO_REL, "drop", "not for this vault")
        temp = note.with_name(".obsidian-save.tmp")
        temp.write_text(text)
        os.replace(temp, note)  # a fresh save: applied once it has been quiet for the settle window
        wait_for(lambda: not memo.exists())
    assert [r["reason"] for r in note_records(empty_vault)] == ["not for this vault (by tester)"]


@pytest.mark.slow
def test_a_candidate_gathering_its_batch_when_the_note_settles_is_still_swept(empty_vault: Path) -> None:
    """Seen: the note's own sweep emptied the batch being gathered, and the tracker had already let
    go of its files: a candidate that settled just before the note did waited for the reconcile
    scan (300 s here). Now the note's sweep leaves that batch to gather and be swept."""
    import time

    from test_watch import fact, set_rules, wait_for, watching

    set_rules(empty_vault, settle=0.5, reconcile=300)
    (empty_vault / "_inbox/agent-a").mkdir(parents=True)
    memo = empty_vault / MEMO_REL
    memo.write_text(MEMO)
    note = empty_vault / REVIEW_NOTE
    with watching(empty_vault, gather=2.0) as (watcher, _):  # wide enough for the note to settle inside it
        wait_for(lambda: note.exists() and MEMO_REL[:-3] in note.read_text("utf-8"))
        time.sleep(0.6)  # the note's own write settles
        candidate = empty_vault / "_inbox/agent-a/acme.md"
        candidate.write_text(fact("acme"))
        wait_for(lambda: watcher.ready)  # settled, gathering its batch
        obsidian_save(note, note.read_text("utf-8") + "\nA line of my own.\n")  # settles inside the gather
        wait_for(lambda: not candidate.exists(), timeout=8)
    assert (empty_vault / "facts/acme/headquarters.md").exists()
    assert "A line of my own." in note.read_text("utf-8")


def test_a_run_counts_as_waiting_only_what_still_waits_once_the_notes_ticks_are_applied(tmp_path: Path, invoke) -> None:
    """The sweep's one line of what waits is said after the note's ticks are applied: an item a
    tick dropped is not "waiting for review" in the same output that says it was applied."""
    root = small_vault(tmp_path / "v", invoke)
    note = root / REVIEW_NOTE
    obsidian_save(note, ticked(note.read_text("utf-8"), MEMO_REL, "drop", "not a note"))
    out = invoke("run", "--vault", str(root), "--no-judge", clock=FixedClock(T1)).output
    assert "review note: 1 ticked action(s) applied" in out and not (root / MEMO_REL).exists()
    assert f"{len(SMALL) - 1} wait for review: `memory-curator review`" in out, out


def test_a_drop_ticked_in_the_note_can_be_restored_from_the_head_but_a_private_one_is_not_offered(
    tmp_path: Path, invoke
) -> None:
    root = small_vault(tmp_path / "v", invoke)
    private = root / "_inbox/agent-a/private.md"
    private.write_text(PRIVATE)
    age(private)
    sweep(invoke, root, T0 + dt.timedelta(minutes=1))
    note = root / REVIEW_NOTE
    text = ticked(note.read_text("utf-8"), MEMO_REL, "drop", "wrong vault")
    obsidian_save(note, ticked(text, "_inbox/agent-a/private.md", "drop"))
    sweep(invoke, root, T1)
    head = (root / REVIEW_NOTE).read_text("utf-8").split("%% mc:end head %%")[0]
    restores = re.findall(r"^- \[ \] restore `([^`]+)`.*\^mc-(\w+)-restore$", head, re.M)
    assert [path.rsplit("-", 1)[-1] for path, _ in restores] == ["memo.md"]  # the private drop is not offered
    obsidian_save(note, note.read_text("utf-8").replace("- [ ] restore", "- [x] restore"))
    sweep(invoke, root, T1 + dt.timedelta(minutes=1))
    assert (root / MEMO_REL).exists() and not (root / restores[0][0]).exists()
    restored = [r for r in note_records(root) if r.get("verdict") == "restore"]
    assert [(r["event"], r["inbox"]) for r in restored] == [("begin", MEMO_REL)]  # journalled as the note's
    assert "restore `" not in (root / REVIEW_NOTE).read_text("utf-8").split("%% mc:end head %%")[0]
    assert MEMO_REL[:-3] in (root / REVIEW_NOTE).read_text("utf-8")  # back in the queue, held


@pytest.mark.parametrize("value", ["_inbox/review.md", ".hidden/review.md", "notes/review.txt", "../out.md"])
def test_a_review_note_path_inside_the_inbox_or_outside_the_vault_is_a_rules_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    root = tmp_path / "v"
    shutil.copytree(FIXTURES, root)
    rules = root / "_meta/inbox-rules.md"
    rules.write_text(rules.read_text().replace("settings:\n", f"settings:\n  review_note: {value}\n", 1))
    code, err = fail(capsys, "rules", "check", str(rules))
    assert code == 1 and f"{rules}:134: setting 'review_note' must" in err and len(err.splitlines()) == 1, err


def test_status_log_and_review_print_the_link_that_opens_the_note(tmp_path: Path, invoke) -> None:
    root = small_vault(tmp_path / "v", invoke)
    url = "obsidian://open?vault=v&file=_meta%2FInbox%20review"
    for args, given in ((("status",), None), (("log",), None), (("review",), "q\n")):
        out = invoke(*args, "--vault", str(root), input=given).output
        assert f"review note: {REVIEW_NOTE}  {url}" in out, (args, out)
        assert "\x1b]8;" not in out  # piped: plain text, no terminal hyperlink


def test_no_agent_reads_the_note_and_a_private_item_is_not_quoted_in_it(tmp_path: Path, invoke) -> None:
    from memory_curator.commands import agent
    from memory_curator.core.errors import CuratorError

    root = small_vault(tmp_path / "v", invoke)
    secret = root / "_inbox/agent-a/secret.md"
    secret.write_text(PRIVATE.replace("Batching writes keeps the inbox calm.", "The launch code is 0000."))
    age(secret)
    sweep(invoke, root, T1)
    text = (root / REVIEW_NOTE).read_text("utf-8")
    assert "_inbox/agent-a/secret" in text and "launch code" not in text  # listed, its content not quoted
    assert "Batching writes keeps the inbox calm." in text  # an ordinary item's is
    with pytest.raises(CuratorError, match="not served to agents"):
        agent.read_note(build_context(root), REVIEW_NOTE)
