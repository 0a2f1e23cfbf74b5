"""`review` driven by scripted key presses (CliRunner), and its non-interactive twin `resolve`:
every action, the files on disk after each, and a quit midway that leaves the rest alone."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest
from loop_kit import ADA, INSIGHT, MEMO, THIN_FACT, fail, flag

from memory_curator.core.notes import parse

from conftest import snapshot


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
    assert "https://example.com/ada-new" in note and "inbox: _inbox/agent-a/ada.md" in note
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
    assert "confidence: 3" in thin.read_text() and "review: 0 promoted, 0 patched, 0 dropped, 1 skipped" in out

    # 5. d: drop with a reason, then o: promote as another surface the person picks
    thin.unlink()
    write_candidate(vault, "other.md", ADA.replace("Ada King", "Ada Byron"))
    write_candidate(vault, "project.md", ADA.replace("Ada King", "Analytical Engine"))
    swept = json.loads(invoke("run", "--vault", str(vault), "--json").output)
    assert swept["needs_review"] == 2
    for age, name in enumerate(["other.md", "project.md"]):
        os.utime(inbox / name, (1_700_000_000 + age, 1_700_000_000 + age))
    out = review(invoke, vault, "d\nnot worth keeping\no\nprojects\n").output
    assert "review: 1 promoted, 0 patched, 1 dropped, 0 skipped\n" in out
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
    assert "review: 0 promoted, 0 patched, 1 dropped, 0 skipped, quit with 3 not looked at" in out
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
    assert "https://example.com/ada-new" in (vault / "persons/ada-lovelace.md").read_text()

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
