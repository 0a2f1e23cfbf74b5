"""The rules file: validation with line numbers, and edits that change verdicts."""

from __future__ import annotations

import functools
import json
import os
import re
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_curator.core import candidate as cand
from memory_curator.core.conditions import FACTS, OPERATORS, evaluate
from memory_curator.core.decide import decide, subject_of
from memory_curator.core.errors import RulesError
from memory_curator.core.facts import Facts
from memory_curator.core.rules import Rules, parse
from memory_curator.store.rules_file import DEFAULT_RULES, load

from conftest import REPO, examples, snapshot

DEFAULT_TEXT = DEFAULT_RULES.read_text(encoding="utf-8")
FACT = """---
type: fact
entity: copilot
predicate: data-handling
value: Does not retain prompts.
source_url: https://example.dev/trust
confidence: 2
tags: [ai-tools]
---
evidence
"""


def line_of(text: str, needle: str) -> int:
    return text[: text.rindex(needle)].count("\n") + 1


def test_default_rules_load() -> None:
    rules = load(DEFAULT_RULES)
    assert [s.name for s in rules.surfaces] == [
        "facts",
        "events",
        "decisions",
        "insights",
        "research",
        "persons",
        "projects",
    ]
    assert [r.id for r in rules.drop_rules] == [
        "known-unchanged",
        "exact-duplicate",
        "low-confidence-unsourced",
        "do-not-share",
        "tier-1",
        "marketing-claim",
        "chatter",
    ]
    assert [r.id for r in rules.drop_rules if r.judge_only] == ["marketing-claim", "chatter"]
    assert rules.settings.settle_seconds == 3
    assert "The guardrail" in rules.prose and "drop_rules:" not in rules.prose


@pytest.mark.parametrize(
    "old,new,message",
    [
        ("    when: known_unchanged", "    when: known_unchanged_typo", "unknown condition 'known_unchanged_typo'"),
        ("    when: known_unchanged", "    when: {within: 3}", "unknown condition 'within'"),
        ('path: "facts/{entity}/{predicate}.md"', 'path: "facts/{entity}/{colour}.md"', "unknown placeholder {colour}"),
        ("    when: known_unchanged", "    when: {matches: {value: '(unclosed'}}", "bad regular expression"),
        ("  - id: tier-1", "  - id: do-not-share", "duplicate drop rule id 'do-not-share'"),
        (
            "    when: known_unchanged",
            "    when: {any: [known_unchanged, near_duplicate]}",
            "uses near_duplicate: similarity alone never drops",
        ),
        ("    when: known_unchanged", "    when: {at_least: {confidence: high}}", "needs a number"),
        ("  settle_seconds: 3", "  settle_seconds: soon", "setting 'settle_seconds' must be a number"),
        ("  settle_seconds: 3", "  setle_seconds: 3", "unknown setting 'setle_seconds'"),
        ("    when: known_unchanged", "    when: [known_unchanged", "YAML error"),
    ],
)
def test_validation_errors_name_file_and_line(old: str, new: str, message: str) -> None:
    assert old in DEFAULT_TEXT
    text = DEFAULT_TEXT.replace(old, new, 1)
    with pytest.raises(RulesError) as info:
        parse(text, "rules.md")
    err = info.value
    assert message in err.message
    assert err.line is not None
    changed = line_of(text, new.strip().splitlines()[0])
    assert abs(err.line - changed) <= 1, (err.line, changed)
    assert str(err).startswith(f"rules.md:{err.line}: ")


def test_missing_or_doubled_block() -> None:
    with pytest.raises(RulesError, match="no ```yaml curator-rules``` block"):
        parse("# just prose\n", "r.md")
    block = DEFAULT_TEXT[DEFAULT_TEXT.index("```yaml curator-rules") :]
    with pytest.raises(RulesError, match="more than one curator-rules block"):
        parse(DEFAULT_TEXT + "\n" + block, "r.md")


def test_other_fenced_blocks_are_examples() -> None:
    text = "Example:\n```yaml\ndrop_rules: [nonsense]\n```\n" + DEFAULT_TEXT
    assert len(parse(text, "r.md").drop_rules) == 7


def test_rules_check_command(tmp_path: Path, invoke) -> None:
    good = invoke("rules", "check", str(DEFAULT_RULES))
    assert good.exit_code == 0 and "valid" in good.output
    bad = tmp_path / "bad.md"
    bad.write_text(DEFAULT_TEXT.replace("    when: known_unchanged", "    when: nope", 1))
    from memory_curator.cli.app import main

    with pytest.raises(SystemExit) as exit_info:
        main(["rules", "check", str(bad)])
    assert exit_info.value.code == 1


def test_rules_check_prints_one_line(tmp_path: Path, capsys) -> None:
    from memory_curator.cli.app import main

    bad = tmp_path / "bad.md"
    bad.write_text(DEFAULT_TEXT.replace("    when: known_unchanged", "    when: nope", 1))
    with pytest.raises(SystemExit):
        main(["rules", "check", str(bad)])
    err = capsys.readouterr().err.strip().splitlines()
    line = line_of(bad.read_text(), "    when: nope")
    assert err == [f"memory-curator: {bad}:{line}: unknown condition 'nope' (facts: {', '.join(FACTS)})"]


def test_sweep_with_invalid_rules_changes_nothing(vault: Path, capsys) -> None:
    from memory_curator.cli.app import main

    rules = vault / "_meta/inbox-rules.md"
    rules.write_text(rules.read_text().replace("  - id: tier-1", "  - id: known-unchanged"))
    before = snapshot(vault)
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "--vault", str(vault), "--json"])
    assert exit_info.value.code == 1
    assert "duplicate drop rule id 'known-unchanged'" in capsys.readouterr().err
    assert snapshot(vault) == before


def sweep_one(vault: Path, invoke, write_candidate, text: str) -> dict:
    write_candidate(vault, "c.md", text, agent="bot")
    out = json.loads(invoke("run", "_inbox/bot", "--vault", str(vault), "--json").output)
    return out["actions"][0]


def edit_rules(vault: Path, old: str, new: str) -> None:
    path = vault / "_meta/inbox-rules.md"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_editing_a_threshold_changes_the_verdict(vault: Path, invoke, write_candidate) -> None:
    edit_rules(vault, "        - {at_least: {confidence: 2}}", "        - {at_least: {confidence: 3}}")
    action = sweep_one(vault, invoke, write_candidate, FACT)
    assert action["verdict"] == "needs_review"
    assert "not future-useful" in action["reason"]


def test_a_new_drop_rule_drops(vault: Path, invoke, write_candidate) -> None:
    edit_rules(
        vault,
        "drop_rules:\n",
        'drop_rules:\n  - id: no-ai-tools\n    reason: "we do not track AI tools"\n'
        "    when: {has_tag: '#AI-Tools'}\n",
    )
    action = sweep_one(vault, invoke, write_candidate, FACT)
    assert (action["verdict"], action["reason"], action["rule"]) == ("drop", "we do not track AI tools", "no-ai-tools")
    assert (vault / action["moved_to"]).read_text().startswith(FACT)


def test_a_renamed_surface_folder_moves_the_target(vault: Path, invoke, write_candidate) -> None:
    edit_rules(vault, 'path: "facts/{entity}/{predicate}.md"', 'path: "knowledge/{entity}/{predicate}.md"')
    action = sweep_one(vault, invoke, write_candidate, FACT)
    assert (action["verdict"], action["target_path"]) == ("promote", "knowledge/copilot/data-handling.md")
    assert (vault / "knowledge/copilot/data-handling.md").is_file()


def test_vault_rules_win_over_defaults(vault: Path, invoke, write_candidate) -> None:
    edit_rules(vault, "  settle_seconds: 3", "  settle_seconds: 86400")  # a day (at most 30 days)
    path = write_candidate(vault, "c.md", FACT, agent="bot")
    an_hour_ago = time.time() - 3600  # settled by the default 3 s, not by the vault's day
    os.utime(path, (an_hour_ago, an_hour_ago))
    out = json.loads(invoke("run", "_inbox/bot", "--vault", str(vault), "--json").output)
    assert out["processed"] == 0 and out["skipped"][0]["reason"].startswith("still being written")


# --- the guardrail, as a property --------------------------------------------------------------

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 5),
    st.text(max_size=12),
    st.sampled_from(
        [
            "fact",
            "insight",
            "identity",
            "event",
            "human",
            "user",
            "internal",
            "https://x.example.dev",
            "2026-06-20",
            "true",
            "1",
        ]
    ),
)
keys = st.sampled_from(
    [
        "type",
        "entity",
        "predicate",
        "value",
        "title",
        "slug",
        "date",
        "topic",
        "name",
        "source_url",
        "sources",
        "source_skill",
        "author",
        "source_kind",
        "user_approved",
        "confidence",
        "captured_at",
        "observed_at",
        "tags",
        "load_bearing",
        "surprise",
        "ephemeral",
        "unknown_key",
    ]
)
frontmatters = st.dictionaries(keys, st.one_of(scalars, st.lists(scalars, max_size=3)), max_size=12)
fact_flags = st.fixed_dictionaries(
    {f: st.booleans() for f in ("known_unchanged", "exact_duplicate", "near_duplicate", "links_to_durable_note")}
)


@functools.cache
def _default_rules() -> Rules:
    return load(DEFAULT_RULES)


@settings(max_examples=examples(300), suppress_health_check=[HealthCheck.too_slow])
@given(fm=frontmatters, body=st.text(max_size=80), flags=fact_flags)
def test_no_drop_without_a_named_matching_rule(fm: dict, body: str, flags: dict) -> None:
    from memory_curator.core.notes import render

    rules = _default_rules()  # immutable: loaded once, not once per example
    try:
        text = render(fm, body)
    except Exception:  # unrepresentable YAML is not this property's concern
        return
    candidate = cand.build(text, "_inbox/a/x.md", "a", rules)
    facts = Facts(**flags)
    decision = decide(candidate, rules, facts)
    assert decision.reason.strip(), "every verdict names its reason"
    if decision.verdict == "drop":
        rule = rules.drop_rule(decision.rule or "")
        assert rule is not None and rule.when is not None and not rule.judge_only
        assert evaluate(rule.when, subject_of(candidate, facts))
        assert "near_duplicate" not in rule.when.facts()


# --- docs and code agree ---------------------------------------------------------------------


def test_every_condition_is_documented_and_every_documented_one_exists() -> None:
    doc = (REPO / "docs/rules.md").read_text()
    section = doc[doc.index("## Conditions") : doc.index("## Querier facts")]
    facts_section = doc[doc.index("## Querier facts") : doc.index("## Settings")]
    documented_ops = set(re.findall(r"^\| `([a-z_]+)` \|", section, re.MULTILINE))
    documented_facts = set(re.findall(r"^\| `([a-z_]+)` \|", facts_section, re.MULTILINE))
    assert documented_ops == set(OPERATORS)
    assert documented_facts == set(FACTS)


def test_the_same_rules_text_is_parsed_once_and_each_file_keeps_its_own_path() -> None:
    """A command reads the rules two or three times (and `watch` every sweep): ruamel reads the
    default block in ~17 ms, so the same text is read once per process; each file still gets
    Rules named after it, and an error still names the file it is in."""
    first = parse(DEFAULT_TEXT, "/a/_meta/inbox-rules.md")
    again = parse(DEFAULT_TEXT, "/a/_meta/inbox-rules.md")
    assert again == first and again.surfaces is first.surfaces and again.settings is first.settings
    other = parse(DEFAULT_TEXT, "/b/_meta/inbox-rules.md")
    assert other.path == "/b/_meta/inbox-rules.md" and first.path == "/a/_meta/inbox-rules.md"
    assert other.criteria is first.criteria and other.digest == first.digest
    edited = parse(DEFAULT_TEXT.replace("settle_seconds: 3", "settle_seconds: 7"), "/a/_meta/inbox-rules.md")
    assert edited.settings.settle_seconds == 7 and first.settings.settle_seconds != 7
    bad = DEFAULT_TEXT.replace("```yaml curator-rules", "```yaml curator-rules\nnonsense: [", 1)
    for origin in ("/a/bad.md", "/b/bad.md"):
        with pytest.raises(RulesError) as raised:
            parse(bad, origin)
        assert str(raised.value).startswith(origin), raised.value
