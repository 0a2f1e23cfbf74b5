"""The pure check behind a contradiction read from prose (`core.conflict`, issue 38): numbers in
one unit, a negation flipped, English and Spanish; a claim aligned with no sentence says nothing."""

from __future__ import annotations

import pytest

from memory_curator.core import conflict as c


def clash(mine: str, theirs: str, language: str = "english", title: str = "") -> c.Conflict | None:
    """The candidate (its value, then its body) against one note (its title, then its body)."""
    value, _, body = mine.partition("\n")
    candidate = c.of_candidate({"value": value}, body)
    note = c.of_note({"title": title} if title else {}, theirs)
    return c.conflict(candidate, [("note.md", note)], language, mine)


@pytest.mark.parametrize(
    "mine,theirs,here,there",
    [
        (
            "Education discount: 25% off Obsidian Sync",
            "The education discount gives 40% off Obsidian Sync.",
            "25%",
            "40%",
        ),
        ("Sync Standard has a 5 MB file size limit", "Sync Standard allows a file size of up to 20mb.", "5 MB", "20mb"),
        ("Refunds for Publish within 30 days", "Publish refunds are offered within 14 days.", "30 days", "14 days"),
        ("La cuota mensual de Supabase es 25 €", "La cuota mensual de Supabase: 20 € fijos.", "25 €", "20 €"),
    ],
)
def test_another_amount_in_the_same_unit_clashes(mine: str, theirs: str, here: str, there: str) -> None:
    found = clash(mine, theirs, "spanish" if "Supabase" in mine else "english")
    assert found is not None and found.kind == "amount"
    assert here in found.mine and there in found.theirs


@pytest.mark.parametrize(
    "mine,theirs",
    [
        ("Education discount: 25 days of Obsidian Sync", "The education discount gives 40% off Obsidian Sync."),
        ("Education discount: 40% off Obsidian Sync", "The education discount gives 40% off Obsidian Sync."),
        ("Education discount: 40% off Obsidian Sync", "The education discount gives 40% off, 25% for Publish."),
    ],
    ids=["another unit", "the same amount", "the note holds it too"],
)
def test_the_same_amount_or_another_unit_does_not(mine: str, theirs: str) -> None:
    assert clash(mine, theirs) is None


def test_a_candidate_stating_the_notes_number_too_reports_an_update() -> None:
    update = "Publish upload limit is 100 MB per file\nIt was raised from 50 MB to 100 MB."
    assert clash(update, "The Publish upload limit is 50 MB per file.") is None
    assert clash("Publish upload limit is 100 MB per file", "The Publish upload limit is 50 MB per file.") is not None


@pytest.mark.parametrize(
    "mine,theirs",
    [
        ("Obsidian Sync is not end-to-end encrypted", "Obsidian Sync provides end-to-end encrypted syncing."),
        ("Obsidian keeps notes in a database, not plain files", "Obsidian stores your notes as plain text files."),
        ("Catalyst licenses can be refunded", "Catalyst licenses and Commercial licenses are not refundable."),
        ("The plugin doesn't support mobile sync", "The plugin supports mobile sync."),
    ],
)
def test_a_negation_of_what_the_note_asserts_clashes(mine: str, theirs: str) -> None:
    found = clash(mine, theirs)
    assert found is not None and found.kind == "negation"
    assert found.mine == mine and found.theirs == theirs


@pytest.mark.parametrize(
    "mine,theirs",
    [
        ("URLSearchParams funciona en el Code node de n8n", "El Code node de n8n no expone URLSearchParams."),
        ("La tabla profiles usa id como PK", "La tabla profiles usa user_id como PK, no id."),
        (
            "Una factura recibida duplicada se anula, no se elimina",
            "Una factura recibida duplicada se elimina, no se anula.",
        ),
        (
            "El cliente acepta el literal sin codificar",
            "El cliente acepta el literal codificado y codificar es obligatorio.",
        ),
    ],
)
def test_spanish_negations_clash(mine: str, theirs: str) -> None:
    assert clash(mine, theirs, "spanish") is not None


@pytest.mark.parametrize(
    "mine,theirs,language",
    [
        (
            "Obsidian Sync is not end-to-end encrypted",
            "Some metadata of Obsidian Sync is not end-to-end encrypted.",
            "english",
        ),
        (
            "Word count works for CJK, which don't separate words with spaces",
            "Word count supports CJK, which don't use spaces to separate words.",
            "english",
        ),
        (
            "Dependabot no avisa cuando el runtime llega a fin de soporte",
            "Dependabot no avisa del fin de soporte.",
            "spanish",
        ),
        ("Obsidian Sync encrypts your vault", "Obsidian Sync encrypts your remote vault.", "english"),
    ],
    ids=["both negate", "both negate, reworded", "both negate, Spanish", "no negation"],
)
def test_the_same_polarity_does_not(mine: str, theirs: str, language: str) -> None:
    assert clash(mine, theirs, language) is None


def test_nothing_aligned_nothing_found() -> None:
    """Sharing words is not enough: more than half of the claim's, three at least for a negation."""
    assert clash("Obsidian Publish is not free", "Obsidian Sync encrypts your remote vault with AES-256.") is None
    assert clash("Sync is not encrypted", "Sync encrypts.") is None  # two words shared
    assert clash("Education discount: 25% off", "Refunds are 40% of the price within a week.") is None


def test_the_best_aligned_sentence_decides() -> None:
    """A sentence saying the same beside one saying otherwise, less aligned: nothing found."""
    note = "Catalyst licenses are not refunded after a month.\n\nCatalyst supporter licenses are not refundable at all."
    assert clash("Catalyst supporter licenses are not refundable", note) is None


def test_a_claim_saying_it_is_news_is_an_update() -> None:
    assert clash("Obsidian Sync is now end-to-end encrypted", "Obsidian Sync is not end-to-end encrypted.") is None
    assert (
        clash("Chatwoot ya incluye labels en el webhook", "Chatwoot no incluye labels en el webhook.", "spanish")
        is None
    )


def test_a_headline_against_the_notes_title_whatever_its_body_weighs() -> None:
    """An ADR's body lists the option it turned down; its title says what it decided."""
    body = "Options: A, Flex Mode with cascading; C, Rigid Mode. Decided: C."
    candidate = c.of_candidate({"entity": "ecobox-agent", "predicate": "flow-mode", "value": "Flex Mode"}, "")
    note = c.of_note({"title": "ADR-013: EcoBox agent flow in Rigid Mode (no Flex)"}, body)
    found = c.conflict(candidate, [("adr.md", note)], "english", "Flex Mode")
    assert found is not None and found.theirs.startswith("ADR-013")


def test_a_question_asserts_nothing() -> None:
    assert clash("Obsidian Sync is not end-to-end encrypted", "Is Obsidian Sync end-to-end encrypted?") is None


def test_links_and_emphasis_are_read_as_shown() -> None:
    found = clash(
        "Publish has no size limit for uploaded files",
        "You can upload [[Media|files]] **up to 50mb** in size to Publish.",
    )
    assert found is not None and found.theirs == "You can upload files up to 50mb in size to Publish."


@pytest.mark.parametrize(
    "mine,theirs,newer",
    [
        ({"observed_at": "2026-09-01"}, {"date": "2026-08-01"}, True),
        ({"Observed_At": "2026-09-01"}, {"date": "2026-08-01"}, True),
        ({"captured_at": "2026-09-01T10:00:00Z"}, {"updated_at": "2026-10-01"}, False),
        ({"date": "2026-09-01"}, {"date": "2026-08-01"}, False),  # a candidate's date says when it was written
        ({"observed_at": "2026-09-01"}, {}, False),  # no time: nothing says which is current
    ],
)
def test_newer_needs_an_observation_later_than_the_notes_time(mine: dict, theirs: dict, newer: bool) -> None:
    assert c.newer(mine, theirs) is newer


def test_long_texts_are_read_in_linear_time() -> None:
    """A claim list is bounded (`CLAIM_CHARS`), so a note of 1 MiB costs one pass."""
    import time

    note = c.of_note({}, "Obsidian Sync encrypts your remote vault and its history. " * 18_000)
    candidate = c.of_candidate({"value": "x"}, "Obsidian Sync does not encrypt your vault history. " * 20_000)
    started = time.process_time()
    c.conflict(candidate, [("n.md", note)], "english", "")
    assert time.process_time() - started < 3.0


def test_a_claim_another_note_states_is_the_vaults_own() -> None:
    """Two notes disagree; the candidate restating one of them is not the one contradicting."""
    candidate = c.of_candidate({"value": "Catalyst licenses are not refundable"}, "")
    refunds = c.of_note({}, "Catalyst licenses can be refunded on request.")
    policy = c.of_note({}, "Catalyst licenses are not refundable, as they support development.")
    assert c.conflict(candidate, [("faq.md", refunds)], "english", "") is not None
    assert c.conflict(candidate, [("faq.md", refunds), ("policy.md", policy)], "english", "") is None


def test_always_or_only_is_not_stated_by_a_sentence_without_it() -> None:
    """The note says it listens on 0.0.0.0 when HOSTNAME is unset, and that it does not by default."""
    title = "Next standalone binds to HOSTNAME, not to 0.0.0.0"
    body = "The Next standalone server listens on HOSTNAME or 0.0.0.0 when unset."
    note = c.of_note({"title": title}, body)
    always = c.of_candidate({"title": "Next standalone always listens on 0.0.0.0"}, "")
    bare = c.of_candidate({"title": "Next standalone listens on 0.0.0.0"}, "")
    assert c.conflict(always, [("next.md", note)], "english", "") is not None
    assert c.conflict(bare, [("next.md", note)], "english", "") is None


def test_a_sentence_lacking_the_candidates_value_does_not_state_it() -> None:
    """Written earlier in the same sweep: "The voice agent of EcoBox runs Conversation Flow in
    Rigid Mode" holds six of the seven words of `ecobox agent conversation flow mode: Flex Mode`."""
    candidate = c.of_candidate(
        {"entity": "ecobox-agent", "predicate": "conversation-flow-mode", "value": "Flex Mode"}, ""
    )
    adr = c.of_note({"title": "ADR-013: EcoBox agent Conversation Flow in Rigid Mode (no Flex)"}, "")
    project = c.of_note({}, "The EcoBox agent runs its Conversation Flow in Rigid Mode.")
    assert c.conflict(candidate, [("project.md", project), ("adr.md", adr)], "english", "Flex Mode") is not None


def test_a_note_stating_most_of_the_claims_is_restated_not_contradicted() -> None:
    """A restatement titled from the note's file name, which lost its "without": a wording."""
    candidate = c.of_candidate(
        {"title": "internal fetch res.ok silent errors"},
        "Callee errors arrive as valid data to the caller. The caller parses the error body as a result.",
    )
    note = c.of_note(
        {"title": "internal fetch without res.ok check: callee errors arrive as valid data"},
        "Callee errors arrive as valid data to the caller.\n\nThe caller parses the error body as a result.",
    )
    assert c.conflict(candidate, [("fetch.md", note)], "english", "") is None
    alone = c.of_candidate({"title": "internal fetch res.ok silent errors"}, "")
    assert c.conflict(alone, [("fetch.md", note)], "english", "") is not None


def test_a_file_name_is_a_name_not_a_claim() -> None:
    """ "Related: a-prompt-is-no-document" names a note: its `no` negates nothing."""
    note = c.of_note({}, "Related: a-prompt-is-no-document · the-prompt-block-assumes-a-fixed-role.")
    candidate = c.of_candidate({"title": "the prompt block is a document assuming a fixed role"}, "")
    assert c.conflict(candidate, [("related.md", note)], "english", "") is None
    assert c.read("Obsidian Sync is not end-to-end encrypted", "english").negated == {"end"}


def test_an_identifier_with_a_negation_in_it_reads_as_its_words() -> None:
    """`is_not_present` negates as "not present" does; `user_id` stays one name."""
    note = c.of_note({"title": "chatwoot automation rule assignee_id is_not_present fires on every update"}, "")
    candidate = c.of_candidate({"title": "chatwoot automation rule assignee not present fires always"}, "")
    assert c.conflict(candidate, [("rule.md", note)], "english", "") is None
    assert c.read("the pk is user_id, no id", "english").negated == {"id"}


def test_a_negation_the_note_makes_itself_is_no_contradiction_of_it() -> None:
    """Its title says what blind removal does; its body says "do not remove it blindly"."""
    note = c.of_note(
        {"title": "a privilege granted by environment is invisible, and removing it blindly revokes silently"},
        "Two lessons.\n\nDo not remove it blindly.",
    )
    candidate = c.of_candidate({"title": "privilege granted by env is invisible and not removed blindly"}, "")
    assert c.conflict(candidate, [("env.md", note)], "english", "") is None
    alone = c.of_note({"title": note.headlines[0]}, "Two lessons.")
    assert c.conflict(candidate, [("env.md", alone)], "english", "") is not None


def test_a_sentence_is_read_once_and_a_long_one_is_never_kept() -> None:
    """A neighbour's sentences are read once per process (`KEPT`), as a fresh reading reads them;
    a sentence of `KEPT_UNDER` characters or more is read anew, so the kept ones stay small."""
    short = "Obsidian Sync does not keep more than 12 months of history."
    assert c.read(short, "english") is c.read(short, "english")
    assert c.read(short, "english") == c._read(short, "english")
    assert c.read(short, "spanish") is not c.read(short, "english")
    long = "Sync keeps your vault history. " * (c.KEPT_UNDER // 20)
    assert len(long) >= c.KEPT_UNDER
    assert c.read(long, "english") is not c.read(long, "english")
    assert c.read(long, "english") == c._read(long, "english")
