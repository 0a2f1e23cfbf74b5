"""Issue 38, "its answers can settle": what the judge says of the notes it was shown decides, in
the pure core, through the real SDK over httpx2's MockTransport (`test_judge`'s fake provider).

- `duplicate` of any note it was shown, a person's too, drops (restorable, no note touched),
  naming that note;
- `distinct` with every criterion true promotes a near-duplicate or subject-note item;
- `contradicts` is flagged `contradiction`, whatever the rules said;
- `extends` a person's note waits for that person, naming the note;
- a candidate that waits only because a person's note has its key is sent too.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from test_judge import (
    NEIGHBOUR,
    FakeModel,
    NeighbourQuerier,
    answer,
    answering,
    by_name,
    insight,
    judged,
    wire_fake_api,
)

from memory_curator.cli.app import cli
from memory_curator.commands.context import Seams
from memory_curator.core.decide import NAMESAKE
from memory_curator.core.facts import ExistingNote

__all__ = ["judged"]  # the fixture, used by name

PERSONS = "insights/agents-need-a-curator.md"  # `author: user`: the person's note (vault_fixtures)


def relate(relation: str, **extra: Any):
    """A model that answers `relation` of the first note each candidate was shown."""
    return answering(lambda title, cid, notes: [answer(cid, relation, notes[0] if notes else None, **extra)])


def test_a_duplicate_of_a_persons_note_drops_naming_it(judged, write_candidate) -> None:
    write_candidate(
        judged.vault, "insight-01.md", AGENTS_NEED.replace("source_url: https://example.dev/curators\n", "")
    )
    judged.links["insight-01.md"] = [PERSONS]
    judged.model.reply = relate("duplicate", reason="says what the note says")
    before = (judged.vault / PERSONS).read_bytes()
    result, out = judged.run()
    assert result.exit_code == 0, result.output
    action = by_name(out)["insight-01.md"]
    assert (action["verdict"], action.get("rule")) == ("drop", "known-unchanged"), action
    assert action["reason"].startswith(f"already known and unchanged ({PERSONS})"), action["reason"]
    assert (judged.vault / PERSONS).read_bytes() == before, "a drop touches no note"
    assert (judged.vault / action["moved_to"]).is_file(), "restorable: kept under _inbox/.dropped/"
    assert not (judged.vault / "_inbox/agent-a/insight-01.md").exists()


def test_a_duplicate_of_the_rules_file_is_still_refused(judged) -> None:
    """A note outside the vault's notes (`_meta/`, `_inbox/`, digests, dot-folders) is never named."""
    judged.candidates(1)
    judged.links["insight-01.md"] = ["_meta/inbox-rules.md"]
    judged.model.reply = relate("duplicate")
    _, out = judged.run()
    action = by_name(out)["insight-01.md"]
    assert action["verdict"] == "needs_review" and "is not one of the notes it may" in action["reason"], action


def test_distinct_with_every_criterion_true_promotes_a_near_duplicate(judged) -> None:
    judged.candidates(1)
    judged.links["insight-01.md"] = [NEIGHBOUR]  # scored 1.0: a near-duplicate, novelty open
    judged.model.reply = relate("distinct")
    _, out = judged.run()
    action = by_name(out)["insight-01.md"]
    assert action["verdict"] == "promote", action
    assert (judged.vault / action["target_path"]).is_file()


@dataclasses.dataclass
class SubjectQuerier(NeighbourQuerier):
    """The neighbour querier plus fixed subject notes per candidate file name."""

    about: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    found_by: str = "topic"

    def subject_notes(self, candidate: Any) -> list[ExistingNote]:
        found = (self.note_at(p) for p in self.about.get(Path(candidate.inbox_path).name, []))
        return [dataclasses.replace(n, found_by=self.found_by) for n in found if n is not None]


def subject_seams(model: FakeModel, about: dict[str, list[str]], found_by: str = "topic") -> Seams:
    seams = wire_fake_api(model, {})
    querier = lambda ctx, rules: SubjectQuerier(ctx.root, rules, about=about, found_by=found_by)  # noqa: E731
    return dataclasses.replace(seams, querier=querier, env={**os.environ, "ANTHROPIC_API_KEY": "test-key"})


@pytest.mark.parametrize("answered", ["distinct", "extends"])
def test_a_subject_note_item_is_sent_and_settled(vault: Path, write_candidate, tmp_path: Path, answered: str) -> None:
    write_candidate(vault, "insight-01.md", insight(1))
    model = FakeModel(relate(answered))
    seams = subject_seams(model, {"insight-01.md": [PERSONS]})
    args = ["run", "_inbox/agent-a", "--vault", str(vault), "--json", "--state-dir", str(tmp_path / "s")]
    result = CliRunner().invoke(cli, [*args, "--judge-set", "max_retries=0"], obj=seams, catch_exceptions=False)
    (action,) = json.loads(result.stdout)["actions"]
    assert len(model.requests) == 1, "a subject-note item is asked about"
    if answered == "distinct":
        assert action["verdict"] == "promote", action
    else:
        assert (action["verdict"], action["reason_code"]) == ("needs_review", "persons-note"), action
        assert PERSONS in action["reason"] and "extends" in action["reason"]


def test_distinct_never_promotes_a_namesake_of_a_persons_note(vault: Path, write_candidate, tmp_path: Path) -> None:
    """Seen on the judge-on replay of both labeled sets: the judge said distinct of facts/logseq/themes.md
    and it was promoted, making the person's [[Themes]] ambiguous. A file name is no question of novelty."""
    from test_sameness import LOGSEQ, THEMES

    (vault / "Appearance").mkdir()
    (vault / "Appearance/Themes.md").write_text(THEMES, encoding="utf-8")
    write_candidate(vault, "logseq-themes.md", LOGSEQ)
    model = FakeModel(relate("distinct", reason="about Logseq themes, not Obsidian's"))
    seams = subject_seams(model, {"logseq-themes.md": ["Appearance/Themes.md"]}, found_by=NAMESAKE)
    args = ["run", "_inbox/agent-a", "--vault", str(vault), "--json", "--state-dir", str(tmp_path / "s")]
    result = CliRunner().invoke(cli, [*args, "--judge-set", "max_retries=0"], obj=seams, catch_exceptions=False)
    (action,) = json.loads(result.stdout)["actions"]
    assert len(model.requests) == 1, "novelty was open: the judge was asked"
    assert (action["verdict"], action["reason_code"]) == ("needs_review", "subject-note"), action
    assert "[[Themes]] would be ambiguous" in action["reason"] and "Appearance/Themes.md" in action["reason"]
    assert "(judge: about Logseq themes" in action["reason"]
    assert not (vault / "facts/logseq/themes.md").exists()


def test_contradicts_is_flagged_contradiction_whatever_the_rules_said(judged, write_candidate) -> None:
    """A note with no surface the rules could infer (they say `no-surface`) that contradicts a note."""
    text = "---\ntitle: Sweep cadence\nsource_url: https://example.dev/cadence\n---\nSweeping monthly is enough.\n"
    write_candidate(judged.vault, "cadence.md", text)
    judged.links["cadence.md"] = [NEIGHBOUR]
    judged.model.reply = relate("contradicts", reason="monthly, not weekly")
    _, out = judged.run()
    assert len(judged.model.requests) == 1
    action = by_name(out)["cadence.md"]
    assert (action["verdict"], action["reason_code"], action.get("contradiction")) == (
        "needs_review",
        "contradiction",
        True,
    ), action
    assert NEIGHBOUR in action["reason"]


@pytest.mark.parametrize(
    ("relation", "reason", "said"),
    [
        ("extends", "adds a point", "adds a point"),
        # seen on the judge-on replay of tests/novelty_es: "only adds the PR link", yet duplicate, and dropped;
        # its source_url, https://example.dev/insight-01, is not in the person's note
        ("duplicate", "only adds a link", "only adds a link; the note does not hold https://example.dev/insight-01"),
    ],
)
def test_extends_a_persons_note_waits_for_the_person_naming_it(judged, relation: str, reason: str, said: str) -> None:
    judged.candidates(1)
    judged.links["insight-01.md"] = [PERSONS]
    judged.model.reply = relate(relation, reason=reason)
    before = (judged.vault / PERSONS).read_bytes()
    _, out = judged.run()
    action = by_name(out)["insight-01.md"]
    assert (action["verdict"], action["reason_code"]) == ("needs_review", "persons-note"), action
    assert action["reason"] == f"extends your note {PERSONS} (judge: {said})", action["reason"]
    assert (judged.vault / PERSONS).read_bytes() == before
    assert (judged.vault / "_inbox/agent-a/insight-01.md").is_file()


AGENTS_NEED = """---
type: insight
title: Agents need a curator
source_url: https://example.dev/curators
confidence: 2
---
Agents left alone write one fact five times in five shapes; a sweep keeps the vault worth reading.
"""


def test_a_candidate_with_a_persons_note_at_its_key_is_sent(judged, write_candidate) -> None:
    """Without the judge it waits (`persons-note`); the judge, shown that note, calls it a duplicate."""
    write_candidate(judged.vault, "agents.md", AGENTS_NEED)
    judged.model.reply = relate("duplicate", reason="the same point")
    _, out = judged.run()
    assert len(judged.model.requests) == 1, "sent: it waited only for novelty against the person's note"
    action = by_name(out)["agents.md"]
    # its source is not in the person's note: not unchanged, so it waits for the person, naming the note
    assert (action["verdict"], action["reason_code"], action["target_path"]) == (
        "needs_review",
        "persons-note",
        PERSONS,
    )


def test_chatter_with_no_surface_is_sent_and_dropped_by_the_chatter_rule(judged, write_candidate) -> None:
    """Seen on the judge-on replay: "ok", "test", "Task completed…" waited for a person (no `type`, so
    no surface: never sent). The shipped rules' judge-only `chatter` lets the judge drop them,
    restorably; anything else without a surface still waits, saying what it lacks."""
    write_candidate(judged.vault, "ok.md", "---\ntitle: ok\n---\nok\n")
    write_candidate(judged.vault, "ana.md", "Ana prefers tea.\n")

    def plan(title: str, cid: str, notes: list[str]) -> list[dict[str, Any]]:
        if title == "ok":
            return [answer(cid, drop_rule="chatter", reason="an acknowledgement")]
        return [answer(cid, reason="a preference")]

    judged.model.reply = answering(plan)
    _, out = judged.run()
    assert len(judged.model.requests) == 1
    assert "- chatter: " in judged.model.requests[0]["system"][0]["text"]
    actions = by_name(out)
    assert (actions["ok.md"]["verdict"], actions["ok.md"]["rule"]) == ("drop", "chatter"), actions["ok.md"]
    assert (judged.vault / actions["ok.md"]["moved_to"]).is_file(), "restorable"
    assert (actions["ana.md"]["verdict"], actions["ana.md"]["reason_code"]) == ("needs_review", "no-surface")
