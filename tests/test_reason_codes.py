"""Reason codes are carried by the decision, never read back from its words (issue 40): every
place that makes a needs_review verdict (the decision core, the planner turning a verdict
into needs_review on the way to the disk, the sweep's forced and internal-error verdicts)
gives its code; a reason reworded everywhere leaves every code as it was."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memory_curator.commands import check, planning, sweep
from memory_curator.core import candidate as cand
from memory_curator.core import decide as decide_mod
from memory_curator.core.comparison import Comparison
from memory_curator.core.decide import Decision, JudgeVerdict, decide
from memory_curator.core.facts import ExistingNote, Facts, Neighbour
from memory_curator.core.notes import parse
from memory_curator.core.reasons import CODES
from memory_curator.store.rules_file import load_for_vault
from memory_curator.store.writer import FILES


@dataclasses.dataclass(frozen=True)
class Reworded(Decision):
    """A Decision whose every reason is worded otherwise: a prefix, and every letter capital."""

    def __post_init__(self) -> None:
        checked = getattr(super(), "__post_init__", None)
        if checked is not None:
            checked()
        object.__setattr__(self, "reason", "(reworded) " + self.reason.upper())


@pytest.fixture(params=["as written", "reworded"])
def wording(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Each test runs twice: with the reasons as written, then with every reason reworded
    (wherever one is made: the core, the planner, the sweep, `check`)."""
    if request.param == "reworded":
        monkeypatch.setattr(decide_mod, "Decision", Reworded)
        monkeypatch.setattr(planning, "Decision", Reworded)
        monkeypatch.setattr(sweep, "Decision", Reworded)
        monkeypatch.setattr(check, "Decision", Reworded)
    yield request.param


def text(**fm: object) -> str:
    return "\n".join(["---", *(f"{k}: {v}" for k, v in fm.items()), "---", "Some evidence.", ""])


FACT = dict(
    type="fact",
    entity="copilot",
    predicate="data-handling",
    value="Does not retain prompts.",
    source_url="https://example.dev/trust",
    confidence=2,
    captured_at="2026-06-20T15:30:00Z",
)
INSIGHT = dict(type="insight", title="Agents repeat themselves", source_url="https://x.example.dev", confidence=2)
NOTE = "facts/copilot/data-handling.md"


def existing(owned: bool) -> ExistingNote:
    body = "---\ntype: fact\nvalue: Retains prompts.\n---\nx\n"
    return ExistingNote(NOTE, body, parse(body), curator_owned=owned)


def comparison(value_changed: bool = False, order: str = "unknown", sources: tuple[str, ...] = ()) -> Comparison:
    return Comparison(sources, (), (), (), value_changed, order)


def near(path: str = "notes/alike.md", score: float = 0.9) -> Neighbour:
    return Neighbour(path, "Alike", score)


def without(rule: str) -> Callable[[Any], Any]:
    """The rules without the drop rule `rule` (a vault that renamed or removed it)."""
    return lambda rules: dataclasses.replace(rules, drop_rules=tuple(r for r in rules.drop_rules if r.id != rule))


# (id, candidate text, facts, judge, rules changed, the code)
CORE: list[tuple[str, str, Facts, JudgeVerdict | None, Callable[[Any], Any] | None, str]] = [
    ("unreadable", "---\ntype: fact\nvalue: [unclosed\n---\nbody\n", Facts(), None, None, "unreadable"),
    ("private", text(**FACT, tags="[Private]"), Facts(), None, None, "private"),
    (
        "secret",
        text(**FACT).replace("Some evidence.", "token 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"),
        Facts(),
        None,
        None,
        "secret",
    ),
    ("no surface", text(type="nonsense", title="A memo"), Facts(), None, None, "no-surface"),
    ("incomplete", text(**{k: v for k, v in FACT.items() if k != "predicate"}), Facts(), None, None, "incomplete"),
    (
        "not sourced",
        text(**{k: v for k, v in FACT.items() if k != "source_url"}),
        Facts(),
        None,
        None,
        "criteria-failed",
    ),
    ("undecided", text(**INSIGHT), Facts(), None, None, "undecided"),
    (
        "near",
        text(**INSIGHT),
        Facts(near_duplicate=True, near=(near(),), neighbours=(near(),)),
        None,
        None,
        "near-duplicate",
    ),
    (
        "duplicate",
        text(**INSIGHT),
        Facts(exact_duplicate=True, duplicate_of="notes/same.md"),
        None,
        without("exact-duplicate"),
        "duplicate",
    ),
    (
        "subject",
        text(**INSIGHT),
        Facts(subjects=(dataclasses.replace(existing(False), path="persons/someone.md"),)),
        None,
        None,
        "subject-note",
    ),
    ("semantic", text(**INSIGHT), Facts(close=(near("notes/said.md", 0.8),)), None, None, "semantic-neighbour"),
    ("exists", text(**FACT), Facts(exact_key_exists=True, existing=existing(True)), None, None, "exists"),
    (
        "person's note",
        text(**FACT),
        Facts(exact_key_exists=True, existing=existing(False), comparison=comparison(sources=("https://a.dev",))),
        None,
        None,
        "persons-note",
    ),
    (
        "person's note, contradicted",
        text(**FACT),
        Facts(exact_key_exists=True, existing=existing(False), comparison=comparison(True, sources=("https://a.dev",))),
        None,
        None,
        "contradiction",
    ),
    (
        "contradiction",
        text(**FACT),
        Facts(exact_key_exists=True, existing=existing(True), comparison=comparison(True, sources=("https://a.dev",))),
        None,
        None,
        "contradiction",
    ),
    (
        "judge: contradicts",
        text(**INSIGHT),
        Facts(),
        JudgeVerdict(relation="contradicts", target=NOTE),
        None,
        "contradiction",
    ),
    (
        "judge: duplicate",
        text(**INSIGHT),
        Facts(),
        JudgeVerdict(relation="duplicate", target=NOTE),
        without(decide_mod.KNOWN_RULE),
        "judge",
    ),
    ("judge: cited rule", text(**INSIGHT), Facts(), JudgeVerdict(drop_rule="tier-1", reason="r"), None, "judge"),
]


@pytest.mark.parametrize(("name", "raw", "facts", "judge", "change", "code"), CORE, ids=[c[0] for c in CORE])
def test_the_core_carries_each_code_whatever_the_words(
    vault: Path, wording: str, name: str, raw: str, facts: Facts, judge: JudgeVerdict | None, change: Any, code: str
) -> None:
    rules = load_for_vault(vault)
    rules = change(rules) if change else rules
    candidate = cand.build(raw, "_inbox/a/x.md", "a", rules)
    decision = decide(candidate, rules, facts, judge)
    assert decision.verdict == "needs_review", decision
    assert decision.reason.startswith("(reworded)") == (wording == "reworded")
    assert planning.action(candidate, decision).reason_code == code


PERSONS = "decisions/keep-notes-in-markdown.md"  # a person's note in the fixture vault


def planned_code(vault: Path, target: str, verdict: str = "patch", by_judge: bool = False) -> tuple[str, str]:
    """(verdict, code) of FACT's plan when its decision says `verdict` into `target`."""
    rules = load_for_vault(vault)
    candidate = cand.build(text(**FACT), "_inbox/a/x.md", "a", rules)
    now = dt.datetime(2026, 7, 1, tzinfo=dt.UTC)
    p = planning.Planning(vault, rules, now, "20260701T000000Z-abcd", FILES)
    asked = decide_mod.Decision(verdict, f"{verdict} into {target}", "facts", target, by_judge=by_judge)
    decision, _ = planning.plan_for(p, candidate, asked, 1)
    return decision.verdict, str(planning.action(candidate, decision).reason_code)


def test_the_planner_carries_each_code_whatever_the_words(vault: Path, wording: str) -> None:
    (vault / "facts/copilot").mkdir(parents=True)
    (vault / NOTE).symlink_to(vault / "facts/obsidian/file-format.md")
    assert planned_code(vault, NOTE, "promote") == ("needs_review", "cannot-write")
    assert planned_code(vault, NOTE) == ("needs_review", "cannot-write")
    (vault / "facts/copilot/raw.md").write_bytes(b"---\nvalue: \xff\n---\n")
    assert planned_code(vault, "facts/copilot/raw.md") == ("needs_review", "cannot-write")
    assert planned_code(vault, PERSONS) == ("needs_review", "persons-note")
    assert planned_code(vault, PERSONS, by_judge=True) == ("needs_review", "judge")


def test_the_sweep_carries_each_code_whatever_the_words(
    vault: Path, wording: str, write_candidate: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its forced verdicts (empty, never settled, unreadable by a bug) and a bug met deciding,
    in the JSON and in the journal alike."""
    from memory_curator.cli.machine import build_context

    shutil.rmtree(vault / "_inbox/test-step-4", ignore_errors=True)
    for name, body in {"empty.md": "", "busy.md": text(**INSIGHT), "boom.md": text(**INSIGHT)}.items():
        write_candidate(vault, name, body)
    write_candidate(vault, "unread.md", text(**FACT))
    build, decided = cand.build, sweep.decide

    def build_or_fail(raw: Any, inbox_path: str, *args: Any) -> cand.Candidate:
        if inbox_path.endswith("unread.md"):
            raise ValueError("planted bug while reading")
        return build(raw, inbox_path, *args)

    def decide_or_fail(candidate: cand.Candidate, *args: Any) -> Decision:
        if candidate.inbox_path.endswith("boom.md"):
            raise ValueError("planted bug while deciding")
        return decided(candidate, *args)

    monkeypatch.setattr(cand, "build", build_or_fail)
    monkeypatch.setattr(sweep, "decide", decide_or_fail)
    ctx = build_context(vault)
    options = sweep.Options(use_judge=False, settle=0, overdue=frozenset({"_inbox/agent-a/busy.md"}))
    result = sweep.run(ctx, None, options)
    got = {Path(a.inbox_path).name: a.reason_code for r in result.agents for a in r.actions}
    want = {"empty.md": "empty", "busy.md": "unsettled", "boom.md": "internal-error", "unread.md": "internal-error"}
    assert {k: got.get(k) for k in want} == want
    records = [json.loads(line) for line in (ctx.state / "journal.jsonl").read_text().splitlines()]
    flags = {Path(r["inbox"]).name: r["reason_code"] for r in records if r.get("verdict") == "needs_review"}
    assert {k: flags.get(k) for k in want} == want
    assert set(got.values()) <= set(CODES)
