"""A candidate that says otherwise than a person's prose waits as a `contradiction` (issue 38),
without a judge: `decide` over a neighbour note's text (`core.conflict` reads it)."""

from __future__ import annotations

from pathlib import Path

from memory_curator.core import candidate as cand
from memory_curator.core.decide import JudgeVerdict, decide
from memory_curator.core.facts import ExistingNote, Facts, Neighbour
from memory_curator.core.notes import parse
from memory_curator.store.rules_file import load_for_vault

LIMITS = "Publish limitations.md"
LIMITS_TEXT = (
    "---\npermalink: publish/limitations\n---\n## Media files\n\n"
    "Obsidian Publish is not optimized for streaming video or large audio files.\n\n"
    "You can upload files **up to 50mb** in size to your Publish site.\n"
)
NO_LIMIT = (
    "---\ntype: fact\nentity: obsidian-publish\npredicate: media-size-cap\n"
    "value: Publish has no size limit for uploaded media files\n"
    "source_url: https://notetaking-reviews.net/obsidian-publish-review\nconfidence: 2\n"
    "captured_at: 2026-11-25T12:00:00Z\n---\n"
    "Upload as much video as you like.\n"
)
RAISED = NO_LIMIT.replace("value: Publish has no size limit for uploaded media files", "value: 100 MB per file")
RAISED = RAISED.replace("Upload as much video as you like.", "Publish raised its upload limit from 50 MB to 100 MB.")


def decided(vault: Path, text: str, *notes: Neighbour, judge: JudgeVerdict | None = None, subjects=()):
    rules = load_for_vault(vault)
    candidate = cand.build(text, "_inbox/web/x.md", "web", rules)
    return decide(candidate, rules, Facts(neighbours=tuple(notes), subjects=tuple(subjects)), judge)


def limits(text: str = LIMITS_TEXT, score: float = 0.69) -> Neighbour:
    return Neighbour(LIMITS, "Publish limitations", score, text)


def test_a_fact_negating_a_persons_sentence_waits_as_a_contradiction_quoting_both(vault: Path) -> None:
    decision = decided(vault, NO_LIMIT, limits())
    assert (decision.verdict, decision.code, decision.contradiction) == ("needs_review", "contradiction", True)
    assert decision.target == LIMITS
    assert "contradicts your note Publish limitations.md" in decision.reason
    assert '"You can upload files up to 50mb in size to your Publish site." there' in decision.reason
    assert '"Publish has no size limit for uploaded media files" here' in decision.reason


def test_the_same_candidate_beside_a_note_that_agrees_is_promoted(vault: Path) -> None:
    agrees = LIMITS_TEXT.replace(
        "You can upload files **up to 50mb** in size", "There is no size limit on files you upload"
    )
    decision = decided(vault, NO_LIMIT, limits(agrees))
    assert decision.verdict == "promote", decision.reason


def test_an_update_stating_the_old_value_keeps_its_verdict(vault: Path) -> None:
    """ "from 50 MB to 100 MB": the candidate holds the note's number, it reports a change."""
    decision = decided(vault, RAISED, limits())
    assert decision.code != "contradiction", decision.reason


def test_a_newer_observation_than_the_notes_time_is_an_update_not_a_contradiction(vault: Path) -> None:
    dated = LIMITS_TEXT.replace("permalink:", "date: 2026-01-10\npermalink:")
    assert decided(vault, NO_LIMIT, limits(dated)).code != "contradiction"
    later = LIMITS_TEXT.replace("permalink:", "date: 2026-12-01\npermalink:")
    assert decided(vault, NO_LIMIT, limits(later)).code == "contradiction"


def test_a_note_that_shares_words_not_a_subject_is_not_read(vault: Path) -> None:
    """A lexical neighbour under half the near-duplicate score is not about the candidate's subject."""
    assert decided(vault, NO_LIMIT, limits(score=0.2)).verdict == "promote"


def test_a_subject_note_is_read_and_the_wait_keeps_what_held_it(vault: Path) -> None:
    subject = ExistingNote(LIMITS, LIMITS_TEXT, parse(LIMITS_TEXT), curator_owned=False, found_by="name")
    decision = decided(vault, NO_LIMIT, subjects=[subject])
    assert decision.code == "contradiction"
    assert decision.reason.endswith("the vault has a note about it: your note Publish limitations.md)"), decision.reason


def test_a_drop_stays_a_drop(vault: Path) -> None:
    unsourced = NO_LIMIT.replace(
        "source_url: https://notetaking-reviews.net/obsidian-publish-review\nconfidence: 2", "confidence: 1"
    )
    assert decided(vault, unsourced, limits()).verdict == "drop"


def test_a_judge_that_found_an_update_keeps_its_verdict(vault: Path) -> None:
    judge = JudgeVerdict(relation="extends", target=LIMITS, reason="a newer limit", yours=True)
    decision = decided(vault, NO_LIMIT, limits(), judge=judge)
    assert decision.code == "persons-note", decision.reason


def test_a_private_note_is_never_quoted(vault: Path) -> None:
    private = LIMITS_TEXT.replace("permalink: publish/limitations", "tags: [private]")
    decision = decided(vault, NO_LIMIT, limits(private))
    assert decision.code != "contradiction" and "50mb" not in decision.reason
