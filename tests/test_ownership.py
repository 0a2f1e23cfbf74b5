"""Whose note is it (design §3, §6 invariants 5 and 7): one ownership test for sweep, judge,
merge, review and resolve; the judge's reach; an inbox file cannot make itself the person's.

Each test is named after an item of the issue and fails on the commit before that work.
"""

from __future__ import annotations

import io
import json
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from loop_kit import ADA, fail
from test_judge import FakeModel, answer, answering, insight, wire_fake_api

from memory_curator.cli.app import cli
from memory_curator.cli.machine import build_context, here
from memory_curator.commands import sweep as sweep_mod
from memory_curator.commands.context import Seams, fixed_judge
from memory_curator.core.decide import JudgeVerdict
from memory_curator.core.notes import parse
from memory_curator.store.rules_file import DEFAULT_RULES, load, load_for_vault

from conftest import REPO, snapshot

RULES = "_meta/inbox-rules.md"
DIARY = "journal/diary.md"
DAILY = "daily/2026-01-01.md"
DIARY_TEXT = "---\ntags: [diary]\n---\nDear diary: today I read about Ada and her engine.\n"
DAILY_TEXT = "# 2026-01-01\n\n- walked the dog\n- read about sweeps\n"


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "state"
    monkeypatch.setenv("MEMORY_CURATOR_STATE", str(folder))
    return folder


def persons_notes(vault: Path) -> None:
    """Notes of the person's that carry no marker at all: a real vault is full of these."""
    for rel, text in ((DIARY, DIARY_TEXT), (DAILY, DAILY_TEXT)):
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")


def fake_api(links: dict[str, list[str]], relation: str) -> tuple[FakeModel, Seams]:
    """The real judge over a fake provider that answers `relation` of the first note it was
    shown; the neighbours each candidate is shown are fixed by `links` (file name -> paths)."""

    def plan(title: str, cid: str, notes: list[str]) -> list[dict[str, Any]]:
        return [answer(cid, relation, notes[0] if notes else None, reason="the first note I was shown")]

    model = FakeModel(answering(plan))
    return model, wire_fake_api(model, links)


def sweep_json(vault: Path, *extra: str, seams: Seams | None = None) -> dict[str, Any]:
    args = ["run", "_inbox/agent-a", "--vault", str(vault), "--json", "--judge-set", "max_retries=0", *extra]
    result = CliRunner().invoke(cli, args, obj=seams, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


# --- High: the judge can patch any note not marked human ------------------------------------------


def test_the_judge_cannot_patch_any_note_not_marked_human(
    vault: Path, write_candidate, monkeypatch: pytest.MonkeyPatch, state: Path
) -> None:
    persons_notes(vault)
    targets = [RULES, DIARY, DAILY, "decisions/keep-notes-in-markdown.md"]
    links = {f"insight-{n:02d}.md": [target] for n, target in enumerate(targets, 1)}
    model, seams = fake_api(links, "extends")
    for number in range(1, len(targets) + 1):
        write_candidate(vault, f"insight-{number:02d}.md", insight(number))
    before = {rel: (vault / rel).read_bytes() for rel in targets}

    out = sweep_json(vault, seams=seams)
    assert len(model.requests) == 1 and out["patched"] == 0
    for action in out["actions"]:
        assert action["verdict"] == "needs_review", action
    rules_file, *persons = sorted(out["actions"], key=lambda a: a["inbox_path"])
    assert "is not one of the notes it may change" in rules_file["reason"], rules_file
    for action, target in zip(persons, targets[1:], strict=True):  # issue 38: the person's notes wait for them
        assert action["reason"].startswith(f"extends your note {target}"), action
        assert action["reason_code"] == "persons-note"
    assert {rel: (vault / rel).read_bytes() for rel in targets} == before
    load_for_vault(vault)  # the rules file still loads: later sweeps are not broken


def test_the_judge_cannot_call_a_duplicate_of_a_note_it_may_not_change(
    vault: Path, write_candidate, monkeypatch: pytest.MonkeyPatch, state: Path
) -> None:
    """Three unrelated insights, each "a duplicate" of the rules file: under the breaker's
    minimum, yet none is dropped."""
    links = {f"insight-{n:02d}.md": [RULES] for n in (1, 2, 3)}
    _, seams = fake_api(links, "duplicate")
    for number in (1, 2, 3):
        write_candidate(vault, f"insight-{number:02d}.md", insight(number))
    out = sweep_json(vault, seams=seams)
    assert out["dropped"] == 0 and out["needs_review"] == 3, out
    assert all("is not one of the notes it may change" in a["reason"] for a in out["actions"])
    assert not (vault / "_inbox/.dropped").exists()


def test_a_rules_surface_pointing_into_meta_obsidian_or_the_inbox_is_refused(tmp_path: Path, capsys) -> None:
    default = DEFAULT_RULES.read_text(encoding="utf-8")
    line = '  projects:  {type: project,  path: "projects/{slug}.md",'
    assert line in default
    for path in ("_meta/{slug}.md", ".obsidian/{slug}.md", "_inbox/.dropped/{slug}.md", "_Inbox/{slug}.md"):
        bad = tmp_path / "rules.md"
        bad.write_text(default.replace(line, f'  projects:  {{type: project,  path: "{path}",'), encoding="utf-8")
        code, err = fail(capsys, "rules", "check", str(bad))
        assert code == 1 and "surface 'projects'" in err and "may not point into" in err, (path, err)


def test_the_circuit_breaker_withholds_a_judge_drop_outside_its_reach_whatever_the_count(
    vault: Path, write_candidate, tmp_path: Path
) -> None:
    """Two drops are far under `breaker_min`; still, a drop naming the rules file, or citing a drop
    rule against a note the judge may not change, is withheld (here a judge that skips the
    prompt's own checks, as a cache could). A duplicate of the person's note drops (issue 38):
    it touches no note."""
    persons_notes(vault)
    named = {
        "insight-01.md": JudgeVerdict(relation="duplicate", target=RULES, reason="same"),
        "insight-02.md": JudgeVerdict(relation="duplicate", target=DIARY, reason="same"),
        "insight-03.md": JudgeVerdict(drop_rule="marketing-claim", target=DAILY, reason="puffery"),
    }
    for number in (1, 2, 3):
        write_candidate(vault, f"insight-{number:02d}.md", insight(number))

    def judge(candidates, rules, querier):
        return {c.inbox_path: named[Path(c.inbox_path).name] for c in candidates}, {"requests": 1}

    ctx = build_context(vault, str(tmp_path / "state"), Seams(judge=fixed_judge(judge)))
    result = sweep_mod.run(ctx, vault / "_inbox/agent-a", sweep_mod.Options())
    actions = result.agents[0].actions
    assert [a.verdict for a in actions] == ["needs_review", "drop", "needs_review"], actions
    withheld = (actions[0], actions[2])
    assert all("is not one of the notes it may change" in a.reason for a in withheld)
    assert actions[1].reason.startswith(f"already known and unchanged ({DIARY})")
    assert any("not one of the notes it may change" in p for p in (result.judge or {}).get("problems", []))


# --- one ownership test, used by sweep, judge, merge, review and resolve --------------------------


def test_one_ownership_test_decides_whose_note_it_is(vault: Path, tmp_path: Path) -> None:
    from memory_curator.core.ownership import curator_owned, judge_may_change

    rules = load_for_vault(vault)
    curated = {"curated_from": [{"inbox": "_inbox/a/x.md", "sha256": "00"}]}
    cases = [  # (path, frontmatter, curator-owned, the judge may change it)
        ("facts/acme/ceo.md", {}, True, True),  # a folder handed over to the curator
        ("persons/ada.md", {"name": "Ada"}, True, True),
        ("facts/acme/ceo.md", {"author": "user"}, False, False),  # marked as the person's
        ("facts/acme/ceo.md", {**curated, "source_skill": "Human"}, False, False),
        ("insights/mine.md", {}, False, False),  # insights/ and decisions/ are the person's
        ("insights/agents.md", curated, True, True),  # ... unless the curator wrote the note
        (DIARY, {}, False, False),  # outside every surface
        (DIARY, curated, True, False),  # the curator's, but not on a declared surface
        (RULES, curated, False, False),  # _meta/, _inbox/, dot-folders: never the curator's
        ("_inbox/agent-a/x.md", curated, False, False),
        ("_inbox/.dropped/agent-a/x.md", curated, False, False),
        (".obsidian/workspace.md", curated, False, False),
        ("facts/../_meta/inbox-rules.md", curated, False, False),
    ]
    for rel, fm, owned, reach in cases:
        assert curator_owned(rel, fm, rules) is owned, (rel, fm)
        assert judge_may_change(rel, fm, rules) is reach, (rel, fm)

    # the hand-over is the rules' to change: `curated: false` keeps facts/ the person's
    text = (vault / RULES).read_text(encoding="utf-8")
    facts, insights = "value], curated: true}", "[title],                   curated: false}\n  research"
    assert facts in text and insights in text
    text = text.replace(facts, "value], curated: false}", 1).replace(insights, "[title], curated: true}\n  research")
    (vault / RULES).write_text(text, encoding="utf-8")
    rules = load_for_vault(vault)
    assert not curator_owned("facts/acme/ceo.md", {}, rules) and curator_owned("facts/acme/ceo.md", curated, rules)
    assert curator_owned("insights/mine.md", {}, rules)


def test_a_sweep_never_patches_a_persons_note_with_the_same_key(vault: Path, write_candidate, state: Path) -> None:
    """A typed note of the person's outside facts/ has a fact's key; a candidate about it waits
    for the person, naming it, flagged as a contradiction when the values differ."""
    mine = "notes/copilot.md"
    (vault / "notes").mkdir()
    text = "---\ntype: fact\nentity: copilot\npredicate: data-handling\nvalue: Keeps nothing.\n---\nMy notes.\n"
    (vault / mine).write_text(text, encoding="utf-8")
    write_candidate(
        vault,
        "c.md",
        "---\ntype: fact\nentity: copilot\npredicate: data-handling\nvalue: Keeps prompts for 30 days.\n"
        "source_url: https://example.dev/c\nconfidence: 2\nobserved_at: 2026-06-01\n---\nNews.\n",
    )
    out = sweep_json(vault, "--no-judge")
    (action,) = out["actions"]
    assert action["verdict"] == "needs_review", action
    assert action["reason"].startswith(f"matches your note {mine}") and action["contradiction"] is True
    assert (vault / mine).read_text(encoding="utf-8") == text


def test_rules_hand_over_setting_is_validated(tmp_path: Path, capsys) -> None:
    default = DEFAULT_RULES.read_text(encoding="utf-8")
    bad = tmp_path / "rules.md"
    for surface, message in [
        ('{type: note, path: "notes/{slug}.md", key: [slug], curated: "yes"}', "curated must be true or false"),
        ('{type: note, path: "{slug}.md", key: [slug], curated: true}', "curated: true needs a fixed folder"),
    ]:
        bad.write_text(default.replace("\nsurfaces:\n", f"\nsurfaces:\n  notes: {surface}\n", 1), encoding="utf-8")
        code, err = fail(capsys, "rules", "check", str(bad))
        assert code == 1 and message in err, err


# --- a write into a person's note happens only when a person confirms it, seeing the diff --------


def test_resolve_patch_into_a_persons_plain_note_needs_a_terminal_or_yes(
    vault: Path, invoke, write_candidate, state: Path, capsys
) -> None:
    persons_notes(vault)
    ada = write_candidate(vault, "ada.md", ADA)
    before = snapshot(vault)
    code, err = fail(capsys, "resolve", str(ada), "--patch", DIARY)  # no terminal here, and no --yes
    assert code == 1 and "written by a person" in err and "--yes" in err and len(err.strip().splitlines()) == 1
    assert snapshot(vault) == before

    out = json.loads(invoke("resolve", str(ada), "--patch", DIARY, "--yes", "--json").output)["data"]
    assert out["verdict"] == "patch" and out["target_path"] == DIARY and not ada.exists()
    fm = parse((vault / DIARY).read_text(encoding="utf-8")).frontmatter
    assert "https://example.dev/ada-new" in str(fm) and fm["tags"] == ["diary"]
    assert "curated_from" not in fm and "updated_at" not in fm, "a confirmed write leaves the note the person's"

    # a note marked as the person's is written the same way, and stays marked
    decision = "decisions/keep-notes-in-markdown.md"
    again = write_candidate(vault, "again.md", ADA.replace("ada-new", "ada-again"))
    invoke("resolve", str(again), "--patch", decision, "--yes")
    fm = parse((vault / decision).read_text(encoding="utf-8")).frontmatter
    assert "https://example.dev/ada-again" in str(fm) and fm["author"] == "user" and "curated_from" not in fm


def test_resolve_on_a_terminal_shows_the_diff_and_asks(vault: Path, invoke, write_candidate, state: Path) -> None:
    persons_notes(vault)
    at_a_terminal = Seams(machine=replace(here(), terminal=True))  # a person at stdin and stderr
    ada = write_candidate(vault, "ada.md", ADA)
    result = CliRunner().invoke(cli, ["resolve", str(ada), "--patch", DIARY], input="n\n", obj=at_a_terminal)
    assert result.exit_code == 1 and "+source_url: https://example.dev/ada-new" in result.output
    assert (vault / DIARY).read_text(encoding="utf-8") == DIARY_TEXT and ada.exists()
    result = CliRunner().invoke(cli, ["resolve", str(ada), "--patch", DIARY], input="y\n", obj=at_a_terminal)
    assert result.exit_code == 0, result.output
    assert "curated_from" not in (vault / DIARY).read_text(encoding="utf-8") and not ada.exists()


def test_the_machine_says_terminal_only_where_stdin_and_stderr_are_one(monkeypatch: pytest.MonkeyPatch) -> None:
    leader, follower = os.openpty()
    with open(follower, "w", encoding="utf-8") as tty:
        monkeypatch.setattr(sys, "stdin", tty)
        monkeypatch.setattr(sys, "stderr", tty)
        assert here().terminal
        monkeypatch.setattr(sys, "stderr", io.StringIO())  # stderr piped: no one sees a diff
        assert not here().terminal
        tty.close()
        monkeypatch.setattr(sys, "stdin", tty)  # a closed stdin is no terminal either, and no error
        assert not here().terminal
    os.close(leader)


def test_review_writes_into_a_persons_note_only_after_a_second_key(
    vault: Path, invoke, write_candidate, state: Path
) -> None:
    persons_notes(vault)
    ada = write_candidate(vault, "ada.md", ADA)
    keys = f"m\n{DIARY}\n"
    out = invoke("review", str(ada), "--vault", str(vault), "--by", "tester", input=keys + "n\nq\n").output
    assert "is your note" in out and "+source_url: https://example.dev/ada-new" in out, out
    assert "journal/diary.md: left as it was" in out  # the person said no: not an error
    assert (vault / DIARY).read_text(encoding="utf-8") == DIARY_TEXT and ada.exists()

    out = invoke("review", str(ada), "--vault", str(vault), "--by", "tester", input=keys + "y\n").output
    assert "review: 1 decided (0 promoted, 1 patched, 0 dropped)" in out, out
    text = (vault / DIARY).read_text(encoding="utf-8")
    assert "https://example.dev/ada-new" in text and "curated_from" not in text and "updated_at" not in text


def test_resolve_patch_into_a_symlink_is_refused_and_the_link_left_untouched(
    vault: Path, write_candidate, state: Path, tmp_path: Path, capsys
) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("---\ntype: person\nname: Secret\n---\nOutside the vault.\n", encoding="utf-8")
    link = vault / "persons/secret.md"
    link.symlink_to(outside)
    ada = write_candidate(vault, "ada.md", ADA)
    for args in (["--patch", "persons/secret.md"], ["--patch", "persons/secret.md", "--yes"]):
        code, err = fail(capsys, "resolve", str(ada), *args)
        assert code == 1 and "persons/secret.md" in err and "symlink" in err, err
        assert len(err.strip().splitlines()) == 1
    assert link.is_symlink() and os.readlink(link) == str(outside) and ada.exists()

    # a sweep whose candidate's key path is that link says so, and leaves it too
    secret = "---\ntype: person\nname: Secret\nsource_url: https://x.example.dev\nconfidence: 2\n---\nHi.\n"
    write_candidate(vault, "secret.md", secret)
    out = sweep_json(vault, "--no-judge")
    secret = next(a for a in out["actions"] if a["inbox_path"].endswith("secret.md"))
    assert secret["verdict"] == "needs_review" and "symlink" in secret["reason"], out
    assert link.is_symlink() and "Outside the vault." in outside.read_text(encoding="utf-8")


# --- authorship: anything that arrives through _inbox/ is agent-written --------------------------

CLAIMED = """---
type: fact
entity: acme
predicate: ceo
value: Jane Roe
source_skill: human
author: user
confidence: 2
observed_at: 2026-01-01
---
I wrote this myself, honest.
"""


def test_a_candidate_claiming_to_be_the_persons_is_not_sourced_and_cannot_protect_its_claim(
    vault: Path, write_candidate, state: Path
) -> None:
    # no source: the claim does not stand in for one, under the default rules ...
    write_candidate(vault, "claim.md", CLAIMED)
    (action,) = sweep_json(vault, "--no-judge")["actions"]
    assert action["verdict"] == "needs_review" and "not sourced" in action["reason"], action

    # ... nor under an existing rules file that still has the owner's branch (no edit needed)
    rules = vault / RULES
    old = "        - {present: sources}\n"
    owners = "        - {all: [{equals: {source_skill: human}}, {equals: {author: user}}]}\n"
    rules.write_text(rules.read_text().replace(old, old + owners))
    (vault / "_inbox/agent-a/claim.md").write_text(CLAIMED.replace("honest.", "honest!"))
    os.utime(vault / "_inbox/agent-a/claim.md", (1_600_000_000, 1_600_000_000))
    (action,) = sweep_json(vault, "--no-judge")["actions"]
    assert action["verdict"] == "needs_review" and "not sourced" in action["reason"], action
    (vault / "_inbox/agent-a/claim.md").unlink()

    # with a source it is promoted; the claim goes into curated_from, not the note
    sourced = CLAIMED.replace("confidence: 2", "source_url: https://a.example.dev\nconfidence: 2")
    write_candidate(vault, "sourced.md", sourced)
    (action,) = sweep_json(vault, "--no-judge")["actions"]
    assert action["verdict"] == "promote", action
    fm = parse((vault / "facts/acme/ceo.md").read_text(encoding="utf-8")).frontmatter
    assert "author" not in fm and "source_skill" not in fm
    assert fm["curated_from"][0]["author"] == "user" and fm["curated_from"][0]["source_skill"] == "human"

    # so a later sourced correction patches it, as any curator note
    write_candidate(
        vault,
        "fix.md",
        "---\ntype: fact\nentity: acme\npredicate: ceo\nvalue: John Doe\nsource_url: https://b.example.dev\n"
        "confidence: 2\nobserved_at: 2026-06-01\n---\nNew CEO.\n",
    )
    (action,) = sweep_json(vault, "--no-judge")["actions"]
    assert action["verdict"] == "patch", action
    assert parse((vault / "facts/acme/ceo.md").read_text(encoding="utf-8")).frontmatter["value"] == "John Doe"


def test_the_default_rules_and_docs_drop_the_owners_branch_of_sourced_and_future_useful() -> None:
    rules = load(DEFAULT_RULES)
    for criterion in rules.criteria:
        if criterion.name in ("sourced", "future_useful"):
            text = criterion.passes.text if criterion.passes else ""
            assert "source_skill" not in text and "author" not in text, (criterion.name, text)
    docs = (REPO / "docs/rules.md").read_text(encoding="utf-8")
    assert "{equals: {source_skill: human}}" not in docs and "author: user" not in docs.split("## Criteria")[1]
