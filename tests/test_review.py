"""`review` driven by scripted key presses (CliRunner), and its non-interactive twin `resolve`:
every action, the files on disk after each, and a quit midway that leaves the rest alone."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest
from loop_kit import ADA, CONTRADICTION, INSIGHT, MEMO, THIN_FACT, fail, flag

from memory_curator.core.errors import CuratorError
from memory_curator.core.notes import parse
from memory_curator.core.reasons import CODES

from conftest import FIXTURES, snapshot


def review(invoke, root: Path, keys: str, *extra: str):
    result = invoke("review", "--vault", str(root), "--by", "tester", *extra, input=keys)
    assert result.exit_code == 0, result.output
    return result


def journal(state: Path) -> list[dict]:
    return [json.loads(line) for line in (state / "journal.jsonl").read_text().splitlines()]


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "state"
    monkeypatch.setenv("MEMORY_CURATOR_STATE", str(folder))
    return folder


def test_review_walks_every_action_with_the_files_checked_after_each(
    vault: Path, invoke, write_candidate, state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ada, insight, memo, thin = flag(vault, write_candidate, invoke)
    inbox = vault / "_inbox/agent-a"

    # 1. m: patch the oldest (ada.md) into a neighbour the person names
    before_note = (vault / "persons/ada-lovelace.md").read_bytes()
    out = review(invoke, vault, "m\npersons/ada-lovelace.md\nq\n").output
    assert "1/4  _inbox/agent-a/ada.md" in out
    assert "curator uncertainty:" in out and "not future-useful" in out  # the reason
    assert "future_useful" in out and "criterion" in out  # the criteria table
    assert not ada.exists()
    note = (vault / "persons/ada-lovelace.md").read_text()
    assert "https://example.dev/ada-new" in note and "inbox: _inbox/agent-a/ada.md" in note
    assert note.startswith(before_note.decode().split("sources:")[0])  # the untouched keys keep their bytes
    assert sorted(p.name for p in inbox.iterdir()) == ["insight.md", "memo.md", "thin.md"]

    # 2. p: promote to the computed target; the uncertainty line and the tag stay behind
    out = review(invoke, vault, "p\nq\n").output
    assert "1/3  _inbox/agent-a/insight.md" in out
    promoted = vault / "insights/agents-should-batch-writes.md"
    text = promoted.read_text()
    assert not insight.exists() and "curator uncertainty" not in text and "needs-review" not in text
    assert parse(text).frontmatter["title"] == "Agents should batch writes" and "curated_from:" in text
    assert parse(text).body == parse(INSIGHT).body

    # 3. p on an item with no surface asks for one
    out = review(invoke, vault, "p\ninsights\nq\n").output
    assert "Surface" in out
    kept = parse((vault / "insights/a-memo-worth-keeping.md").read_text())
    assert kept.frontmatter["type"] == "insight" and kept.body == parse(MEMO).body
    assert not memo.exists()

    # 4. e: edit in $EDITOR (raise the confidence), which re-evaluates; then s skips
    editor = tmp_path / "editor.py"
    editor.write_text(
        "import pathlib, sys\np = pathlib.Path(sys.argv[1])\n"
        "p.write_text(p.read_text().replace('confidence: 1', 'confidence: 3'))\n"
    )
    monkeypatch.setenv("EDITOR", f"{sys.executable} {editor}")
    out = review(invoke, vault, "e\ns\n").output
    assert re.findall(r"future_useful\s+│\s+(\w+)", out) == ["no", "yes"]  # before and after the edit
    assert "confidence: 3" in thin.read_text()
    assert "review: 0 decided (0 promoted, 0 patched, 0 dropped), 1 skipped, 0 left\n" in out

    # 5. d: drop with a reason, then o: promote as another surface the person picks
    thin.unlink()
    write_candidate(vault, "other.md", ADA.replace("Ada King", "Ada Byron"))
    write_candidate(vault, "project.md", ADA.replace("Ada King", "Analytical Engine"))
    swept = json.loads(invoke("run", "--vault", str(vault), "--json").output)
    assert swept["needs_review"] == 2
    for age, name in enumerate(["other.md", "project.md"]):
        os.utime(inbox / name, (1_700_000_000 + age, 1_700_000_000 + age))
    out = review(invoke, vault, "d\nnot worth keeping\no\nprojects\n").output
    assert "review: 2 decided (1 promoted, 0 patched, 1 dropped), 0 skipped, 0 left;" in out
    dropped = list((vault / "_inbox/.dropped/agent-a").glob("*-other.md"))
    assert len(dropped) == 1
    assert "> 🗑 dropped by memory-curator: not worth keeping (by tester) (" in dropped[0].read_text()
    project = parse((vault / "projects/analytical-engine.md").read_text())
    assert project.frontmatter["type"] == "project" and project.frontmatter["name"] == "Analytical Engine"
    assert list(inbox.iterdir()) == []

    # every choice was journalled at once, under the person's name, as its own run
    people = [r for r in journal(state) if r.get("event") == "begin" and "tester" in str(r.get("reason"))]
    assert [r["verdict"] for r in people] == ["patch", "promote", "promote", "drop", "promote"]
    assert len({r["run"] for r in people}) == 5


def test_quitting_midway_loses_nothing_and_leaves_the_rest_untouched(
    vault: Path, invoke, write_candidate, state: Path
) -> None:
    _, insight, memo, thin = flag(vault, write_candidate, invoke)
    before = snapshot(vault)
    out = review(invoke, vault, "d\nduplicate\nq\n").output
    assert "review: 1 decided (0 promoted, 0 patched, 1 dropped), 0 skipped, 3 left;" in out
    after = snapshot(vault)
    changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
    [dropped] = [k for k in changed if k.startswith("_inbox/.dropped/agent-a/")]
    assert changed == {"_inbox/agent-a/ada.md", dropped}
    assert after[dropped].startswith(before["_inbox/agent-a/ada.md"])  # original bytes + the audit line
    for path in (insight, memo, thin):
        assert path.read_bytes() == before[path.relative_to(vault).as_posix()]


def test_review_one_agent_or_one_file_and_refusals(vault: Path, invoke, write_candidate, state: Path) -> None:
    flag(vault, write_candidate, invoke)
    write_candidate(vault, "b.md", THIN_FACT.replace("rust", "go"), agent="agent-b")
    invoke("run", "--vault", str(vault))
    out = review(invoke, vault, "q\n", str(vault / "_inbox/agent-b")).output
    assert "1/1  _inbox/agent-b/b.md" in out
    out = review(invoke, vault, "q\n", str(vault / "_inbox/agent-a/memo.md")).output
    assert "1/1  _inbox/agent-a/memo.md" in out
    # promoting without a required field is refused with the reason, and the item stays
    (vault / "_inbox/agent-a/thin.md").write_text(
        THIN_FACT.replace("value: Rust prevents data races in safe code.\n", "")
    )
    out = review(invoke, vault, "p\nq\n", str(vault / "_inbox/agent-a/thin.md")).output
    assert "not done: _inbox/agent-a/thin.md: missing required fields for facts: value" in out
    assert (vault / "_inbox/agent-a/thin.md").exists()


def test_empty_queue(vault: Path, invoke, state: Path) -> None:
    invoke("run", "--vault", str(vault))
    assert "nothing waits for review" in review(invoke, vault, "").output


# --- resolve: the same actions for scripts and agents ---------------------------------------------


def test_resolve_promote_patch_drop(vault: Path, invoke, write_candidate, state: Path) -> None:
    ada, insight, _, _ = flag(vault, write_candidate, invoke)
    out = json.loads(invoke("resolve", str(insight), "--promote", "--by", "bot", "--json").output)["data"]
    assert out["verdict"] == "promote" and out["target_path"] == "insights/agents-should-batch-writes.md"
    assert out["reason"] == "promoted by bot" and out["run_id"]
    assert (vault / out["target_path"]).is_file() and not insight.exists()

    out = json.loads(invoke("resolve", str(ada), "--patch", "persons/ada-lovelace", "--json").output)["data"]
    assert out["verdict"] == "patch" and out["target_path"] == "persons/ada-lovelace.md"
    assert "https://example.dev/ada-new" in (vault / "persons/ada-lovelace.md").read_text()

    result = invoke("resolve", "_inbox/agent-a/thin.md", "--vault", str(vault), "--drop", "stale\nnews", "--by", "bot")
    assert "drop _inbox/agent-a/thin.md -> _inbox/.dropped/agent-a/" in result.output
    [copy] = (vault / "_inbox/.dropped/agent-a").iterdir()
    assert copy.read_bytes().decode().rstrip().endswith(")") and "stale news (by bot) (" in copy.read_text()


def test_resolve_refusals_are_one_line_errors(vault: Path, invoke, write_candidate, state: Path, capsys) -> None:
    ada, insight, memo, thin = flag(vault, write_candidate, invoke)
    before = snapshot(vault)
    cases = [
        (["resolve", str(memo), "--surface", "research"], 1, "missing required fields for research: topic"),
        (["resolve", str(memo), "--promote"], 1, "the surface cannot be inferred"),
        (["resolve", str(ada), "--patch", "decisions/keep-notes-in-markdown.md"], 1, "written by a person"),
        (["resolve", str(ada), "--patch", "persons/nobody.md"], 1, "persons/nobody.md: no such note"),
        (["resolve", str(ada), "--patch", "_inbox/agent-a/memo.md"], 1, "not a durable note"),
        (["resolve", str(thin), "--drop", "  "], 1, "a drop needs a reason"),
        (["resolve", str(thin), "--promote", "--drop", "x"], 2, "give exactly one of"),
        (["resolve", str(vault / "facts/obsidian/file-format.md"), "--promote"], 1, "not a candidate in _inbox/"),
        (["resolve", str(vault / "_inbox/agent-a/nope.md"), "--promote"], 1, "no such file"),
    ]
    for args, code, message in cases:
        got, err = fail(capsys, *args)
        assert got == code and message in err, (args, err)
        assert len(err.strip().splitlines()) == 1 or code == 2
    assert snapshot(vault) == before
    # a target that already exists is refused, never overwritten
    (vault / "insights/agents-should-batch-writes.md").write_text("mine\n")
    got, err = fail(capsys, "resolve", str(insight), "--promote")
    assert got == 1 and "insights/agents-should-batch-writes.md already exists" in err
    assert (vault / "insights/agents-should-batch-writes.md").read_text() == "mine\n" and insight.exists()


def test_review_never_prints_a_raw_escape_sequence_from_a_file_name(
    vault: Path, invoke, write_candidate, state: Path
) -> None:
    """A name is shown escaped on every review line (the header, the verdict line)."""
    write_candidate(vault, "evil\x1b]0;owned\x07\x1b[31m.md", MEMO)
    invoke("run", "--vault", str(vault))
    out = review(invoke, vault, "d\nnoise\nq\n").output
    assert "evil\\x1b]0;owned\\x07\\x1b[31m.md" in out
    assert "\x1b" not in out and "\x07" not in out


# --- quiet, useful runs: one line for what waits, a stable reason code -------------------------------


def test_a_run_sums_up_what_waits_in_one_line_with_the_judge_hint(
    vault: Path, invoke, write_candidate, state: Path
) -> None:
    flag(vault, write_candidate, invoke)
    out = invoke("run", "--vault", str(vault)).output
    assert "skipped" not in out  # no line per waiting item
    assert "4 wait for review: `memory-curator review`; set ANTHROPIC_API_KEY" in out
    assert out.count("wait for review") == 1
    quiet = invoke("run", "--vault", str(vault), "--no-judge").output
    assert "4 wait for review: `memory-curator review`\n" in quiet  # no judge wanted: no hint


def test_items_put_back_by_undo_are_named_as_such(vault: Path, invoke, write_candidate, state: Path) -> None:
    """An item a sweep promoted, put back by undo, was never flagged: it is held, and said so."""
    flag(vault, write_candidate, invoke)
    promotable = (FIXTURES / "_inbox/test-step-4/promotable-fact.md").read_text()
    write_candidate(vault, "good.md", promotable, agent="agent-b")
    swept = json.loads(invoke("run", "--vault", str(vault), "--json").output)
    assert swept["promoted"] == 1
    assert invoke("undo", swept["run_id"], "--vault", str(vault)).exit_code == 0
    out = invoke("run", "--vault", str(vault)).output
    assert "5 wait for review: `memory-curator review` (1 put back by undo)" in out
    again = json.loads(invoke("run", "--vault", str(vault), "--json").output)
    skipped = {s["inbox_path"]: s for agent in again["agents"] for s in agent["skipped"]}
    assert skipped["_inbox/agent-b/good.md"]["waiting"] == "held"
    assert skipped["_inbox/agent-b/good.md"]["reason"].startswith("held for review (put back by undo")
    assert skipped["_inbox/agent-a/thin.md"]["waiting"] == "flagged"
    assert "held for review" in review(invoke, vault, "q\n", "--reason", "held").output


def test_needs_review_carries_a_stable_reason_code_in_json_and_journal(
    vault: Path, invoke, write_candidate, state: Path
) -> None:
    shutil.rmtree(vault / "_inbox/test-step-4")
    texts = {
        "memo.md": (MEMO, "no-surface"),
        "thin.md": (THIN_FACT, "criteria-failed"),
        "contra.md": (CONTRADICTION, "contradiction"),
        "insight.md": (INSIGHT, "undecided"),
        "mine.md": (
            INSIGHT.replace("type: insight", "type: decision").replace(
                "Agents should batch writes", "Keep notes in markdown"
            ),
            "persons-note",
        ),
        "empty.md": ("", "empty"),
        "broken.md": ("---\ntype: fact\nvalue: [unclosed\n---\nbody\n", "unreadable"),
    }
    for name, (text, _) in texts.items():
        write_candidate(vault, name, text)
    out = json.loads(invoke("run", "--vault", str(vault), "--json", "--settle", "0").output)
    got = {Path(a["inbox_path"]).name: a["reason_code"] for agent in out["agents"] for a in agent["actions"]}
    assert got == {name: code for name, (_, code) in texts.items()}
    flags = [r for r in journal(state) if r.get("event") == "begin" and r.get("verdict") == "needs_review"]
    assert {Path(r["inbox"]).name: r["reason_code"] for r in flags} == got
    assert set(got.values()) <= set(CODES)


def test_review_reason_filters_the_queue_and_refuses_an_unknown_code(
    vault: Path, invoke, write_candidate, state: Path, capsys
) -> None:
    flag(vault, write_candidate, invoke)
    out = review(invoke, vault, "q\n", "--reason", "no-surface").output
    assert "1/1  _inbox/agent-a/memo.md" in out
    assert (
        "nothing waits for review with the reason contradiction"
        in review(invoke, vault, "", "--reason", "contradiction").output
    )
    code, err = fail(capsys, "review", "--vault", str(vault), "--reason", "bogus")
    assert code == 2 and "not a reason code" in err


# --- a contradiction settled by a person: the merge, pure ---------------------------------------------


NOTE = """---
value: Old value.
observed_at: 2026-03-01
source_url: https://example.dev/old
tags: [x]
---
Body.
"""


@pytest.mark.parametrize(
    ("how", "current", "kept"),
    [
        ("new", "New value.", ("history", "Old value.")),
        ("old", "Old value.", ("history", "New value.")),
        ("both", "Old value.", ("contradictions", "New value.")),
    ],
)
def test_settled_merge_keeps_the_loser(how: str, current: str, kept: tuple[str, str]) -> None:
    import datetime as dt

    from memory_curator.core import candidate as cand
    from memory_curator.core import merge
    from memory_curator.store import rules_file

    text = (
        "---\ntype: fact\nentity: e\npredicate: p\nvalue: New value.\nsource_url: https://example.dev/new\n---\nNew.\n"
    )
    candidate = cand.build(text.encode(), "_inbox/a/x.md", "a", rules_file.load(rules_file.DEFAULT_RULES))
    now = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)
    assert merge.merge(NOTE, candidate, now).refused  # a sweep cannot tell which is current
    merged = merge.merge(NOTE, candidate, now, settle=how)  # type: ignore[arg-type]
    fm = parse(merged.text).frontmatter
    assert merged.refused is None and fm["value"] == current
    assert [e["value"] for e in fm[kept[0]]] == [kept[1]]
    assert ("contradiction" in fm["tags"]) == (how == "both")


# --- bulk, below the screen: one run, one plan per item, refusals named ---------------------------------


def test_bulk_is_one_run_and_leaves_what_cannot_take_the_choice(
    vault: Path, invoke, write_candidate, state: Path
) -> None:
    from memory_curator.cli.machine import build_context
    from memory_curator.commands.desk import Desk

    ada, insight, memo, thin = flag(vault, write_candidate, invoke)
    desk = Desk(build_context(vault, None, user="tester"))
    before_memo = memo.read_bytes()
    ticks: list[int] = []
    result = desk.bulk([str(insight), str(memo)], ("promote", None), lambda: ticks.append(1))
    assert [d.action.inbox_path for d in result.done] == ["_inbox/agent-a/insight.md"]
    assert [rel for rel, _ in result.refused] == [str(memo)] and "surface" in result.refused[0][1]
    assert memo.read_bytes() == before_memo and not insight.exists() and len(ticks) == 2
    assert {d.run_id for d in result.done} == {result.run_id}
    with pytest.raises(CuratorError, match="one item at a time"):
        desk.bulk([str(ada)], ("patch", "decisions/keep-notes-in-markdown.md"))
    with pytest.raises(CuratorError, match="a drop needs a reason"):
        desk.bulk([str(thin)], ("drop", "  "))
    assert ada.exists() and thin.exists()


def test_resolve_settles_a_contradiction_for_scripts(vault: Path, invoke, write_candidate, state: Path, capsys) -> None:
    contra = write_candidate(vault, "contra.md", CONTRADICTION)
    invoke("run", "--vault", str(vault))
    note = vault / "facts/obsidian/file-format.md"
    code, err = fail(capsys, "resolve", str(contra), "--patch", "facts/obsidian/file-format.md")
    assert code == 1 and "review: n takes the new value, k keeps the old, b keeps both" in err
    code, err = fail(capsys, "resolve", str(contra), "--drop", "x", "--settle", "new")
    assert code == 2 and "--settle goes with --patch" in err
    out = json.loads(
        invoke("resolve", str(contra), "--patch", "facts/obsidian/file-format.md", "--settle", "old", "--json").output
    )["data"]
    assert out["verdict"] == "patch" and "the old value kept, the new one in history" in out["reason"]
    fm = parse(note.read_text()).frontmatter
    assert str(fm["value"]).startswith("Obsidian stores notes as plain Markdown")
    assert fm["history"][0]["value"] == "Obsidian stores notes in a proprietary database." and not contra.exists()


def test_bulk_off_a_terminal_has_no_bar_and_exact_counts(vault: Path, invoke, write_candidate, state: Path) -> None:
    shutil.rmtree(vault / "_inbox/test-step-4")
    for n in range(3):
        write_candidate(vault, f"t{n}.md", THIN_FACT.replace("entity: rust", f"entity: lang-{n}"), agent="bulk")
    invoke("run", "--vault", str(vault))
    out = review(invoke, vault, "a\nd\nnoise\ny\n", "--agent", "bulk").output
    assert "applying" not in out and "drop: 3 items in run " in out
    assert "review: 3 decided (0 promoted, 0 patched, 3 dropped), 0 skipped, 0 left" in out
