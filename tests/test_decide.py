"""Table-driven verdicts under the default rules: one or more cases per rule, criterion and
surface, each asserting the verdict, the target path and the reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_curator.cli.machine import build_context
from memory_curator.commands.check import check_text
from memory_curator.core import candidate as cand
from memory_curator.core.decide import JudgeVerdict, decide
from memory_curator.core.facts import ExistingNote, Facts, Neighbour, gather_facts
from memory_curator.core.notes import parse
from memory_curator.index.file_querier import FileQuerier
from memory_curator.store.rules_file import load_for_vault

PROMOTE_REASON = "novel + sourced + specific + future-useful + load-bearing"


def note(**fm: object) -> str:
    lines = ["---"]
    for key, value in fm.items():
        lines.append(f"{key}: {value}")
    return "\n".join([*lines, "---", "Some evidence.", ""])


FACT = dict(
    type="fact",
    entity="copilot",
    predicate="data-handling",
    value="Does not retain prompts.",
    source_url="https://example.dev/trust",
    confidence=2,
    captured_at="2026-06-20T15:30:00Z",
)

CASES = [
    # (id, frontmatter, verdict, target, reason fragment)
    ("fact promotes", FACT, "promote", "facts/copilot/data-handling.md", PROMOTE_REASON),
    (
        "fact inferred without type",
        {k: v for k, v in FACT.items() if k != "type"},
        "promote",
        "facts/copilot/data-handling.md",
        PROMOTE_REASON,
    ),
    (
        "drop: low confidence, no source",
        {**FACT, "source_url": "''", "confidence": 1},
        "drop",
        None,
        "confidence=1 AND no source_url",
    ),
    (
        "confidence 1 but sourced is not dropped",
        {**FACT, "confidence": 1},
        "needs_review",
        "facts/copilot/data-handling.md",
        "not future-useful",
    ),
    (
        "drop: known and unchanged",
        dict(
            type="fact",
            entity="obsidian",
            predicate="file-format",
            value="obsidian stores notes as plain markdown files in a local folder",
            source_url="https://help.obsidian.md/Files+and+folders/How+Obsidian+stores+data/",
            confidence=2,
        ),
        "drop",
        None,
        "already known and unchanged (facts/obsidian/file-format.md)",
    ),
    (
        "drop: do-not-share internal",
        {**FACT, "source_kind": "internal", "tags": "[do-not-share]"},
        "drop",
        None,
        "do-not-share from an internal source without user_approved",
    ),
    (
        # issue 25: an agent's own approval is a claim, never read (only a person approves, in review)
        "do-not-share approving itself is still dropped",
        {**FACT, "source_kind": "internal", "tags": "[do-not-share]", "user_approved": "true"},
        "drop",
        None,
        "do-not-share from an internal source without user_approved",
    ),
    (
        "do-not-share not marked internal waits for a person",
        {**FACT, "tags": "[do-not-share]", "user_approved": "true", "approved_by": "me"},
        "needs_review",
        "facts/copilot/data-handling.md",
        "private content (#do-not-share): only a person may approve sharing it (`memory-curator review`)",
    ),
    (
        "another privacy tag waits for a person",
        {**FACT, "tags": "[Private]", "reviewed": "true"},
        "needs_review",
        "facts/copilot/data-handling.md",
        "private content (#private): only a person may approve sharing it (`memory-curator review`)",
    ),
    ("drop: tier-1 identity", dict(type="identity", name="me", confidence=3), "drop", None, "Tier-1 content"),
    ("drop: tier-1 preference", dict(type="preference", value="dark mode"), "drop", None, "Tier-1 content"),
    ("drop: tier-1 feedback", dict(type="feedback", value="too verbose"), "drop", None, "Tier-1 content"),
    (
        "not sourced",
        {k: v for k, v in FACT.items() if k != "source_url"},
        "needs_review",
        "facts/copilot/data-handling.md",
        "not sourced",
    ),
    (
        "sourced by sources list",
        {**{k: v for k, v in FACT.items() if k != "source_url"}, "sources": "[https://a.example.dev]"},
        "promote",
        "facts/copilot/data-handling.md",
        PROMOTE_REASON,
    ),
    (
        # an inbox file's own "a person wrote me" is ignored (design §3): it is agent-written
        "claiming to be the owner's is not a source",
        {**{k: v for k, v in FACT.items() if k != "source_url"}, "source_skill": "human", "author": "user"},
        "needs_review",
        "facts/copilot/data-handling.md",
        "not sourced",
    ),
    (
        "not specific: missing value",
        {k: v for k, v in FACT.items() if k != "value"},
        "needs_review",
        "facts/copilot/data-handling.md",
        "not specific (missing required fields for facts: value)",
    ),
    (
        "not specific: no entity",
        {k: v for k, v in FACT.items() if k != "entity"},
        "needs_review",
        None,
        "not specific (missing required fields for facts: entity)",
    ),
    (
        "ephemeral is not future-useful",
        {**FACT, "ephemeral": "true"},
        "needs_review",
        "facts/copilot/data-handling.md",
        "not future-useful",
    ),
    (
        "load_bearing false",
        {**FACT, "load_bearing": "false"},
        "needs_review",
        "facts/copilot/data-handling.md",
        "not load-bearing",
    ),
    (
        "agent insight is undecided",
        dict(type="insight", title="Agents repeat themselves", source_url="https://x.example.dev", confidence=2),
        "needs_review",
        "insights/agents-repeat-themselves.md",
        "load-bearing undecided",
    ),
    (
        "insight marked load-bearing promotes",
        dict(
            type="insight",
            title="Agents repeat themselves",
            source_url="https://x.example.dev",
            confidence=2,
            load_bearing="true",
        ),
        "promote",
        "insights/agents-repeat-themselves.md",
        PROMOTE_REASON,
    ),
    (
        "decision marked surprise promotes",
        dict(
            type="decision",
            title="Use SQLite for the index",
            source_url="https://x.example.dev",
            confidence=3,
            surprise="yes",
        ),
        "promote",
        "decisions/use-sqlite-for-the-index.md",
        PROMOTE_REASON,
    ),
    (
        "event",
        dict(type="event", date="2026-06-20", title="Launch day!", source_url="https://x.example.dev", confidence=2),
        "promote",
        "events/2026/2026-06-20-launch-day.md",
        PROMOTE_REASON,
    ),
    (
        "event with a bad date",
        dict(type="event", date="20 June", title="Launch", source_url="https://x.example.dev", confidence=2),
        "needs_review",
        None,
        "date '20 June' is not YYYY-MM-DD",
    ),
    (
        "research",
        dict(
            type="research",
            topic="AI tools",
            title="Café & Co survey",
            source_url="https://x.example.dev",
            confidence=2,
        ),
        "promote",
        "research/ai-tools/cafe-co-survey.md",
        PROMOTE_REASON,
    ),
    (
        "person",
        dict(type="person", name="Grace Hopper", source_url="https://x.example.dev", confidence=2),
        "promote",
        "persons/grace-hopper.md",
        PROMOTE_REASON,
    ),
    (
        "project",
        dict(type="project", name="Memory Curator", source_url="https://x.example.dev", confidence=2),
        "promote",
        "projects/memory-curator.md",
        PROMOTE_REASON,
    ),
    (
        "unknown type",
        dict(type="recipe", title="Soup", source_url="https://x.example.dev", confidence=2),
        "needs_review",
        None,
        "the surface cannot be inferred: unknown type 'recipe'",
    ),
    (
        "unsafe slug",
        dict(
            type="insight",
            title="x",
            slug="../../etc/passwd",
            source_url="https://x.example.dev",
            confidence=2,
            load_bearing="true",
        ),
        "needs_review",
        None,
        "unsafe slug",
    ),
    (
        "a title with a slash is slugged, not refused",
        dict(
            type="research",
            topic="verifactu",
            title="VeriFactu se aplaza a 2027 por el RDL 15/2025",
            source_url="https://www.boe.es/x",
            confidence=3,
        ),
        "promote",
        "research/verifactu/verifactu-se-aplaza-a-2027-por-el-rdl-15-2025.md",
        PROMOTE_REASON,
    ),
    (
        "a title naming folders is a title: its slug stays in the surface's folder",
        dict(
            type="insight",
            title="../../etc/passwd",
            source_url="https://x.example.dev",
            confidence=2,
            load_bearing="true",
        ),
        "promote",
        "insights/etc-passwd.md",
        PROMOTE_REASON,
    ),
    (
        "human-authored decision is never patched",
        dict(
            type="decision",
            title="Keep notes in Markdown",
            source_url="https://x.example.dev",
            confidence=2,
            tags="[new-tag]",
        ),
        "needs_review",
        "decisions/keep-notes-in-markdown.md",
        "matches your note decisions/keep-notes-in-markdown.md",
    ),
    (
        "contradiction without times",
        dict(
            type="fact",
            entity="obsidian",
            predicate="file-format",
            value="Obsidian stores notes in a database.",
            source_url="https://x.example.dev",
            confidence=2,
        ),
        "needs_review",
        "facts/obsidian/file-format.md",
        "contradiction",
    ),
]


@pytest.mark.parametrize("name,fm,verdict,target,reason", CASES, ids=[c[0] for c in CASES])
def test_default_rules(vault: Path, name: str, fm: dict, verdict: str, target: str | None, reason: str) -> None:
    out = check_text(build_context(vault), note(**fm), f"_inbox/agent/{name}.md", agent="agent").to_json()
    assert out["verdict"] == verdict, out
    if verdict != "drop":
        assert out["target_path"] == target
    assert reason in out["reason"]
    if verdict == "drop":
        assert out["rule"], "every drop names its rule"


def build(vault: Path, fm: dict) -> tuple[cand.Candidate, object]:
    rules = load_for_vault(vault)
    candidate = cand.build(note(**fm), "_inbox/a/x.md", "a", rules)
    return candidate, rules


def test_patch_when_the_candidate_adds_a_source(vault: Path) -> None:
    fm = dict(
        type="fact",
        entity="obsidian",
        predicate="file-format",
        value="Obsidian stores notes as plain Markdown files in a local folder.",
        source_url="https://obsidian.md/about",
        confidence=2,
    )
    candidate, rules = build(vault, fm)
    decision = decide(candidate, rules, gather_facts(candidate, FileQuerier(vault, rules)))
    assert decision.verdict == "patch"
    assert decision.target == "facts/obsidian/file-format.md"
    assert decision.reason == "adds source https://obsidian.md/about to facts/obsidian/file-format.md"


def test_newer_value_patches_instead_of_contradicting(vault: Path) -> None:
    fm = dict(
        type="fact",
        entity="obsidian",
        predicate="file-format",
        value="Obsidian now uses a database.",
        source_url="https://x.example.dev",
        confidence=2,
        observed_at="2026-09-01",
    )
    candidate, rules = build(vault, fm)
    decision = decide(candidate, rules, gather_facts(candidate, FileQuerier(vault, rules)))
    assert decision.verdict == "patch"
    assert "a changed value" in decision.reason


def test_marketing_rule_drops_only_when_the_judge_cites_it(vault: Path) -> None:
    fm = dict(type="insight", title="Best tool ever", source_url="https://x.example.dev", confidence=2)
    candidate, rules = build(vault, fm)
    facts = gather_facts(candidate, FileQuerier(vault, rules))
    assert decide(candidate, rules, facts).verdict == "needs_review"
    cited = decide(candidate, rules, facts, JudgeVerdict(drop_rule="marketing-claim", reason="puffery"))
    assert (cited.verdict, cited.rule) == ("drop", "marketing-claim")
    failed = JudgeVerdict(drop_rule="marketing-claim", failure="timeout")
    assert decide(candidate, rules, facts, failed).verdict == "needs_review"


def test_judge_settles_only_undecided_criteria(vault: Path) -> None:
    fm = dict(type="insight", title="Agents repeat themselves", source_url="https://x.example.dev", confidence=2)
    candidate, rules = build(vault, fm)
    facts = gather_facts(candidate, FileQuerier(vault, rules))
    yes = JudgeVerdict(criteria={"surprise_or_load_bearing": True, "sourced": False})
    decision = decide(candidate, rules, facts, yes)
    assert decision.verdict == "promote", "sourced stays true: the judge cannot overrule a decided criterion"


def test_bad_yaml_is_needs_review_never_drop(vault: Path) -> None:
    out = check_text(
        build_context(vault), "---\nconfidence: 1\nvalue: [unclosed\n---\nbody\n", "_inbox/a/bad.md"
    ).to_json()
    assert out["verdict"] == "needs_review"
    assert "the frontmatter does not parse" in out["reason"]


def _held_insight(vault: Path) -> tuple[cand.Candidate, object]:
    """An insight no criterion fails but load-bearing, which only a judge or a person settles."""
    return build(vault, dict(type="insight", title="Gates deadlock producers", source_url="https://x.example.dev"))


def test_a_review_held_by_criteria_names_the_closest_notes_with_their_scores(vault: Path) -> None:
    candidate, rules = _held_insight(vault)
    near = [Neighbour("insights/gates.md", "Gates", 0.55), Neighbour("notes/far.md", "Far", 0.29)]
    decision = decide(candidate, rules, Facts(neighbours=tuple(near)))
    assert decision.verdict == "needs_review"
    assert decision.reason.endswith("; closest: insights/gates.md (0.55)"), decision.reason
    assert "notes/far.md" not in decision.reason, "under half the near-duplicate score: shares words, not a subject"


def test_a_review_that_names_its_notes_already_adds_no_closest_line(vault: Path) -> None:
    candidate, rules = _held_insight(vault)
    near = (Neighbour("insights/gates.md", "Gates", 0.55),)
    subject = ExistingNote("Gates.md", "x", parse("x"), curator_owned=False)
    decision = decide(candidate, rules, Facts(neighbours=near, subjects=(subject,)))
    assert "your note Gates.md" in decision.reason
    assert "closest" not in decision.reason


def test_a_review_with_no_close_note_says_nothing_more(vault: Path) -> None:
    candidate, rules = _held_insight(vault)
    decision = decide(candidate, rules, Facts(neighbours=(Neighbour("notes/far.md", "Far", 0.1),)))
    assert decision.verdict == "needs_review"
    assert "closest" not in decision.reason and "notes/far.md" not in decision.reason
