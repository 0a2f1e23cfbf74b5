"""Patches through a sweep: the note on disk, the journal, the pre-image, the dry-run diff,
and the notes a sweep must never touch."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
from safety_kit import FaultyOS

from memory_curator.cli.machine import build_context
from memory_curator.commands import sweep as sweep_mod
from memory_curator.commands.context import Seams, fixed_judge
from memory_curator.core.decide import JudgeVerdict
from memory_curator.core.notes import parse
from memory_curator.store.writer import Files

from conftest import snapshot

ADDS_SOURCE = """---
type: fact
entity: obsidian
predicate: file-format
value: Obsidian stores notes as plain Markdown files in a local folder.
source_url: https://obsidian.md/help/data
source_skill: web-research
confidence: 2
captured_at: 2026-11-01T10:00:00Z
tags: [obsidian, local-first]
---
Confirmed by the help pages.
"""
NOTE = "facts/obsidian/file-format.md"
PATCHED = """---
type: fact
entity: obsidian
predicate: file-format
value: Obsidian stores notes as plain Markdown files in a local folder.
source_url: https://help.obsidian.md/Files+and+folders/How+Obsidian+stores+data
sources:
  - https://obsidian.md/help/data
confidence: 3
observed_at: 2026-03-01
tags:
  - obsidian
  - local-first
curated_from:
  - inbox: _inbox/web-research/obsidian-format.md
    sha256: 5f1c0e0d9a0c3b1a2e4f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d
    curated_at: 2026-03-02T09:00:00Z
  - inbox: _inbox/agent-a/more.md
    sha256: SHA
    curated_at: NOW
updated_at: NOW
---
Notes are plain text; the vault is just a folder. See [[decisions/keep-notes-in-markdown]].

## Update DAY (from agent-a)

*From `_inbox/agent-a/more.md` (source_skill web-research, captured_at 2026-11-01T10:00:00Z).*

Confirmed by the help pages.
"""


@pytest.fixture
def run(vault: Path, invoke, tmp_path: Path):
    """`memory-curator run _inbox/agent-a --json` with a known state folder."""
    state = tmp_path / "state"

    def go(*extra: str, agent: str = "agent-a", seams: Seams | None = None) -> dict:
        result = invoke(
            "run",
            str(vault / "_inbox" / agent),
            "--vault",
            str(vault),
            "--state-dir",
            str(state),
            "--json",
            "--no-judge",
            *extra,
            seams=seams,
        )
        assert result.exit_code == 0, result.output
        return json.loads(result.output)

    go.state = state  # type: ignore[attr-defined]
    return go


def test_patch_through_the_cli(vault: Path, write_candidate, run) -> None:
    before = (vault / NOTE).read_bytes()
    inbox = write_candidate(vault, "more.md", ADDS_SOURCE)
    out = run()
    assert (out["patched"], out["processed"]) == (1, 1)
    action = out["actions"][0]
    assert action["verdict"] == "patch" and action["target_path"] == NOTE
    assert action["reason"] == f"adds source https://obsidian.md/help/data, tag local-first to {NOTE}"
    assert "diff" not in action, "only a dry run carries the diff"
    after = (vault / NOTE).read_text()
    now = after.split("updated_at: ")[1].split("\n")[0]
    digest = hashlib.sha256(ADDS_SOURCE.encode()).hexdigest()
    assert after == PATCHED.replace("NOW", now).replace("SHA", digest).replace("DAY", now[:10])
    assert after.startswith(before.decode().split("confidence:")[0])
    assert not inbox.exists()


def test_the_journal_and_the_preimage_let_undo_restore_the_note(vault: Path, write_candidate, run) -> None:
    before = (vault / NOTE).read_bytes()
    write_candidate(vault, "more.md", ADDS_SOURCE)
    run()
    records = [json.loads(line) for line in (run.state / "journal.jsonl").read_text().splitlines()]
    begin = next(r for r in records if r.get("event") == "begin" and r["verdict"] == "patch")
    hex_before = hashlib.sha256(before).hexdigest()
    assert begin["before_hash"] == f"sha256:{hex_before}"
    assert begin["after_hash"] == "sha256:" + hashlib.sha256((vault / NOTE).read_bytes()).hexdigest()
    assert begin["dest"] == NOTE
    assert (run.state / "preimages" / hex_before).read_bytes() == before
    assert any(r.get("event") == "end" and r["seq"] == begin["seq"] and r["ok"] for r in records)


def test_rerun_changes_nothing(vault: Path, write_candidate, run) -> None:
    write_candidate(vault, "more.md", ADDS_SOURCE)
    run()
    settled = snapshot(vault)
    write_candidate(vault, "again.md", ADDS_SOURCE)  # the same content sent again
    out = run()
    assert out["actions"][0]["verdict"] == "drop" and out["actions"][0]["rule"] == "known-unchanged"
    assert (vault / NOTE).read_bytes() == settled[NOTE]


def test_dry_run_shows_a_diff_and_writes_nothing(vault: Path, write_candidate, run, invoke) -> None:
    write_candidate(vault, "more.md", ADDS_SOURCE)
    before = snapshot(vault)
    out = run("--dry-run")
    diff = out["actions"][0]["diff"]
    assert diff.startswith(f"--- a/{NOTE}\n+++ b/{NOTE}\n@@ ")
    assert "+sources:\n+  - https://obsidian.md/help/data\n" in diff
    assert "+  - local-first\n" in diff and "+Confirmed by the help pages.\n" in diff
    assert snapshot(vault) == before
    text = invoke("run", str(vault / "_inbox/agent-a"), "--vault", str(vault), "--dry-run", "--no-judge")
    assert f"+++ b/{NOTE}" in text.output and "+  - https://obsidian.md/help/data" in text.output
    assert snapshot(vault) == before


def fact(value: str, day: str, url: str, body: str = "") -> str:
    return (
        f"---\ntype: fact\nentity: acme\npredicate: ceo\nvalue: {value}\nsource_url: {url}\nconfidence: 2\n"
        f"observed_at: {day}\n---\n{body}"
    )


def test_two_candidates_with_the_same_new_key_in_one_sweep(vault: Path, write_candidate, run) -> None:
    write_candidate(vault, "a.md", fact("Quentin Zorblatt", "2026-05-01", "https://a.io", "First.\n"))
    write_candidate(vault, "b.md", fact("Quentin Zorblatt", "2026-05-01", "https://b.io", "Second.\n"))
    write_candidate(vault, "c.md", fact("Quentin Zorblatt", "2026-05-01", "https://b.io", "Second.\n"))
    out = run()
    assert [a["verdict"] for a in out["actions"]] == ["promote", "patch", "drop"]
    assert out["actions"][2]["rule"] == "known-unchanged"
    note = (vault / "facts/acme/ceo.md").read_text()
    fm = parse(note).frontmatter
    assert (fm["source_url"], fm["sources"]) == ("https://a.io", ["https://b.io"])
    assert [e["inbox"] for e in fm["curated_from"]] == ["_inbox/agent-a/a.md", "_inbox/agent-a/b.md"]
    assert "First.\n" in note and note.endswith("Second.\n")
    assert not list((vault / "_inbox/agent-a").glob("*.md"))


def test_same_key_in_a_dry_run_diffs_against_the_planned_note(vault: Path, write_candidate, run) -> None:
    write_candidate(vault, "a.md", fact("Quentin Zorblatt", "2026-05-01", "https://a.io"))
    write_candidate(vault, "b.md", fact("Quentin Zorblatt", "2026-05-01", "https://b.io"))
    out = run("--dry-run")
    assert [a["verdict"] for a in out["actions"]] == ["promote", "patch"]
    assert "+sources:\n+  - https://b.io\n" in out["actions"][1]["diff"]
    assert not (vault / "facts/acme/ceo.md").exists()


def test_newer_observation_first_then_older_in_one_sweep(vault: Path, write_candidate, run) -> None:
    write_candidate(vault, "a-newer.md", fact("Wilhelmina Vexley", "2026-09-01", "https://new.io"))
    write_candidate(vault, "b-older.md", fact("Quentin Zorblatt", "2026-05-01", "https://old.io"))
    out = run()
    assert [a["verdict"] for a in out["actions"]] == ["promote", "patch"]
    fm = parse((vault / "facts/acme/ceo.md").read_bytes()).frontmatter
    assert fm["value"] == "Wilhelmina Vexley" and fm["source_url"] == "https://new.io"
    assert [(h["value"], h["source_url"]) for h in fm["history"]] == [("Quentin Zorblatt", "https://old.io")]


def test_contradiction_without_times_is_flagged_and_the_note_untouched(vault: Path, write_candidate, run) -> None:
    before = (vault / NOTE).read_bytes()
    write_candidate(
        vault,
        "db.md",
        ADDS_SOURCE.replace("plain Markdown files in a local folder", "a database").replace(
            "captured_at: 2026-11-01T10:00:00Z\n", ""
        ),
    )
    out = run()
    action = out["actions"][0]
    assert action["verdict"] == "needs_review" and action.get("contradiction") is True
    assert action["reason"].startswith(f"contradiction: a different value for {NOTE}")
    assert (vault / NOTE).read_bytes() == before


HUMAN_NOTES = {
    "decisions/keep-notes-in-markdown.md": "---\ntype: decision\ntitle: Keep notes in Markdown\n",
    "insights/agents-need-a-curator.md": "---\ntype: insight\ntitle: Agents need a curator\n",
    "decisions/no-frontmatter-marks.md": "---\ntype: decision\ntitle: No frontmatter marks\n",
    "facts/acme/founded.md": "---\ntype: fact\nentity: acme\npredicate: founded\n",
}


def test_human_authored_notes_are_byte_identical_after_agreeing_and_conflicting_candidates(
    vault: Path, write_candidate, run
) -> None:
    (vault / "decisions/no-frontmatter-marks.md").write_text(
        "---\ntype: decision\ntitle: No frontmatter marks\n---\nMine.\n"
    )
    (vault / "facts/acme").mkdir(parents=True)
    (vault / "facts/acme/founded.md").write_bytes(
        b"\xef\xbb\xbf---\r\ntype: fact\r\nentity: acme\r\npredicate: founded\r\nvalue: '1999'\r\nauthor: user\r\n"
        b"observed_at: 2020-01-01\r\n---\r\nI know this.\r\n"
    )
    before = {rel: (vault / rel).read_bytes() for rel in HUMAN_NOTES}
    for n, head in enumerate(HUMAN_NOTES.values()):
        agree = head + "source_url: https://agree.io\nconfidence: 3\ntags: [new-tag]\n---\nMore.\n"
        conflict = (
            head + "value: something else\nobserved_at: 2026-09-01\nsource_url: https://x.io\nconfidence: 3\n---\n"
        )
        write_candidate(vault, f"{n}-agree.md", agree)
        write_candidate(vault, f"{n}-conflict.md", conflict)
    out = run()
    assert out["processed"] == 8 and out["needs_review"] == 8, out
    for action in out["actions"]:
        assert action["reason"].startswith("matches your note "), action  # said to the person: not a note about one
        assert action["reason_code"] == ("contradiction" if action.get("contradiction") else "persons-note"), action
    flagged = {a["inbox_path"].split("/")[-1]: a.get("contradiction", False) for a in out["actions"]}
    assert flagged["3-conflict.md"] is True and flagged["3-agree.md"] is False
    assert {rel: (vault / rel).read_bytes() for rel in HUMAN_NOTES} == before
    out = run()  # and again: the flagged candidates are skipped, the notes still untouched
    assert {rel: (vault / rel).read_bytes() for rel in HUMAN_NOTES} == before


def test_crlf_and_bom_note_is_patched_in_its_own_style(vault: Path, write_candidate, run) -> None:
    (vault / "persons/grace-hopper.md").write_bytes(
        b"\xef\xbb\xbf---\r\ntype: person\r\nname: Grace Hopper\r\naliases: [Amazing Grace]\r\n"
        b"source_url: https://en.wikipedia.org/wiki/Grace_Hopper\r\n---\r\nCOBOL.\r\n"
    )
    write_candidate(
        vault,
        "g.md",
        "---\ntype: person\nname: Grace Hopper\naliases: [Grandma COBOL]\n"
        "source_url: https://en.wikipedia.org/wiki/Grace_Hopper\nconfidence: 2\n---\n",
    )
    assert run()["patched"] == 1
    raw = (vault / "persons/grace-hopper.md").read_bytes()
    assert raw.startswith(
        b"\xef\xbb\xbf---\r\ntype: person\r\nname: Grace Hopper\r\naliases: [Amazing Grace, Grandma COBOL]\r\n"
    )
    assert b"\n" not in raw.replace(b"\r\n", b"") and raw.endswith(b"---\r\nCOBOL.\r\n")


class SavedMeanwhile:
    """`os` as the curator's writer sees it, where a person saves `path` (`data`) the moment the
    writer first looks at it: after the curator read the note, before it writes."""

    def __init__(self, path: Path, data: bytes) -> None:
        self.path, self.data, self.saved = path, data, False

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    def stat(self, path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        if not self.saved and Path(path) == self.path:
            self.path.write_bytes(self.data)  # the person's editor, not the writer
            self.saved = True
        return os.stat(path, *args, **kwargs)


def test_a_person_saving_the_note_mid_patch_wins(vault: Path, write_candidate, run) -> None:
    """Compare-and-swap: the note changed between our read and our write, so nothing is written."""
    edited = b"---\ntype: fact\nentity: obsidian\npredicate: file-format\n---\nI rewrote this in Obsidian.\n"
    meanwhile = SavedMeanwhile(vault / NOTE, edited)
    inbox = write_candidate(vault, "more.md", ADDS_SOURCE)
    out = run(seams=Seams(files=Files(meanwhile)))
    assert meanwhile.saved and out["patched"] == 0
    assert [e["inbox_path"] for e in out["errors"]] == ["_inbox/agent-a/more.md"]
    assert "changed since it was read" in out["errors"][0]["error"]
    assert (vault / NOTE).read_bytes() == edited and inbox.read_text() == ADDS_SOURCE


def test_a_patch_cut_before_the_inbox_file_went_is_finished_not_merged_twice(vault: Path, write_candidate, run) -> None:
    inbox = write_candidate(vault, "more.md", ADDS_SOURCE)
    failing = FaultyOS("unlink", 1, lambda: OSError(5, "Input/output error"), when=lambda path: Path(path) == inbox)
    out = run(seams=Seams(files=Files(failing)))
    assert out["errors"] and inbox.exists()
    patched = (vault / NOTE).read_bytes()
    run()
    assert not inbox.exists() and (vault / NOTE).read_bytes() == patched
    assert not (vault / "_inbox/.dropped").exists()


def test_a_note_that_is_not_utf8_is_not_patched(vault: Path, write_candidate, run) -> None:
    bad = (vault / NOTE).read_bytes().replace(b"plain text", b"plain \xff text")
    (vault / NOTE).write_bytes(bad)
    write_candidate(vault, "more.md", ADDS_SOURCE)
    action = run()["actions"][0]
    assert action["verdict"] == "needs_review"
    assert action["reason"] == f"cannot patch {NOTE}: the note is not UTF-8 text"
    assert (vault / NOTE).read_bytes() == bad


INSIGHT = """---
type: insight
title: Curators should read sources twice
source_url: https://blog.example.dev/read-twice
confidence: 2
---
Reading a source twice catches half the copying mistakes.
"""


def judged(target: str):
    """A fake judge: every candidate it is shown "extends" `target`."""

    def judge(candidates, rules, querier):
        verdicts = {
            c.inbox_path: JudgeVerdict(relation="extends", target=target, reason="same topic") for c in candidates
        }
        return verdicts, {"requests": 1}

    return judge


def test_a_judge_extends_verdict_patches_the_neighbour_it_named(vault: Path, write_candidate, tmp_path: Path) -> None:
    write_candidate(vault, "i.md", INSIGHT)
    judge = fixed_judge(judged("research/ai-tools/coding-assistants.md"))
    ctx = build_context(vault, str(tmp_path / "state"), Seams(judge=judge))
    result = sweep_mod.run(ctx, vault / "_inbox/agent-a", sweep_mod.Options())
    (action,) = result.agents[0].actions
    assert (action.verdict, action.target_path) == ("patch", "research/ai-tools/coding-assistants.md")
    text = (vault / "research/ai-tools/coding-assistants.md").read_text()
    fm = parse(text).frontmatter
    assert fm["title"] == "Coding assistants" and fm["type"] == "research", "the neighbour keeps its identity"
    assert fm["sources"] == ["https://example.com/coding-assistants-survey", "https://blog.example.dev/read-twice"]
    assert "Also reported: `title: Curators should read sources twice`." in text
    assert text.endswith("Reading a source twice catches half the copying mistakes.\n")


def test_a_judge_never_gets_a_human_authored_note_patched(vault: Path, write_candidate, tmp_path: Path) -> None:
    human = "insights/agents-need-a-curator.md"
    before = (vault / human).read_bytes()
    inbox = write_candidate(vault, "i.md", INSIGHT)
    ctx = build_context(vault, str(tmp_path / "state"), Seams(judge=fixed_judge(judged(human))))
    (action,) = sweep_mod.run(ctx, vault / "_inbox/agent-a", sweep_mod.Options()).agents[0].actions
    assert action.verdict == "needs_review"
    assert action.reason.endswith(f"judge unavailable: target {human} is not one of the notes it may change")
    assert (vault / human).read_bytes() == before and inbox.exists()
