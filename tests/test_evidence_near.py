"""Evidence beyond words (issue 28): the same normalised source, the same day for events, the same
entity and value for facts, together with a close title or text, make a near-duplicate named in the
review; a note a research topic names, close in text, is its subject. Evidence alone is not enough:
distinct facts from one page, sharing a value, are promoted."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_curator.cli.machine import build_context
from memory_curator.commands.check import check_text
from memory_curator.core import evidence
from memory_curator.core.comparison import norm_url
from memory_curator.core.settings import Settings
from tests.test_subjects import vault_with

SETTINGS = Settings()
PR = "https://github.com/acme/shop/pull/88"


def check(vault: Path, text: str) -> dict:
    return check_text(build_context(vault), text, "_inbox/agent/c.md", agent="agent").to_json()


# --- one source, however it is written -------------------------------------------------------------


@pytest.mark.parametrize(
    "written",
    [
        "https://www.acme.com/docs/page",
        "http://acme.com/docs/page/",
        "https://ACME.com:443/docs/page#install",
        "https://acme.com/docs/page?utm_source=newsletter&fbclid=x",
        "acme.com/docs/page",
    ],
)
def test_one_source_however_written(written: str) -> None:
    assert norm_url(written) == norm_url("https://acme.com/docs/page")


@pytest.mark.parametrize(
    "other",
    [
        "https://acme.com/docs/Page",
        "https://acme.com/docs/page?v=2",
        "https://acme.com:8443/docs/page",
        "https://docs.acme.com/docs/page",
    ],
)
def test_another_page_is_another_source(other: str) -> None:
    assert norm_url(other) != norm_url("https://acme.com/docs/page?v=1")


def test_query_order_is_no_new_source() -> None:
    assert norm_url("https://a.io/x?b=2&a=1") == norm_url("https://a.io/x?a=1&b=2")


# --- what agrees, and when it is enough (pure) ----------------------------------------------------


def test_agreement_is_named_field_by_field() -> None:
    mine = {"type": "event", "date": "2026-08-12", "source_url": PR, "entity": "shop", "value": "v2"}
    theirs = {"type": "event", "date": "2026-08-12", "sources": [PR + "/"], "entity": "Shop", "value": "V2"}
    assert evidence.agreed(mine, theirs, SETTINGS) == (evidence.SOURCE, evidence.DAY, evidence.ENTITY_VALUE)
    assert evidence.agreed(mine, {**theirs, "date": "2026-08-19", "sources": ["https://x.org"]}, SETTINGS) == (
        evidence.ENTITY_VALUE,
    )


def test_a_placeholder_source_is_no_evidence() -> None:
    placeholder = {"source_url": "https://example.com", "type": "event", "date": "2026-08-12"}
    assert evidence.SOURCE not in evidence.agreed(placeholder, placeholder, SETTINGS)


@pytest.mark.parametrize(
    ("kind", "said", "score", "titles", "same"),
    [
        ("fact", ("source_url", "entity and value"), 0.0, 0, True),  # author beside developer
        ("fact", ("source_url",), 0.9, 5, False),  # one page, another entity or value
        ("fact", ("entity and value",), 0.9, 5, False),  # the same value, from another page
        ("event", ("source_url", "day"), 0.05, 2, True),
        ("event", ("source_url", "day"), 0.05, 1, False),  # one title word: two events of one day and page
        ("event", ("day",), 0.9, 5, False),  # a recurring meeting, another source
        ("event", ("source_url",), 0.9, 5, False),  # another day: a conflict (`evidence.moved`), not this rule
        ("research", ("source_url",), 0.36, 0, True),  # a research note restating one from its page
        ("research", ("source_url",), 0.1, 3, False),
        ("research", (), 0.9, 9, False),  # text alone is the similarity rule's, not evidence
    ],
)
def test_evidence_counts_only_with_closeness(
    kind: str, said: tuple[str, ...], score: float, titles: int, same: bool
) -> None:
    assert evidence.same_information(kind, said, score, titles) is same


def test_titles_share_words_by_stem_without_stopwords() -> None:
    assert (
        evidence.titles_shared("La tool de disponibilidad de Simarro", "Simarro: disponibilidades rotas", "spanish")
        == 2
    )
    assert evidence.titles_shared("The weekly sync", "The sync of the week", "english") == 2
    assert evidence.titles_shared("of the and", "the and of", "english") == 0


# --- through the decision ---------------------------------------------------------------------------

EVENT = "---\ntype: event\ndate: 2026-08-12\ntitle: {title}\nsource_url: {source}\nconfidence: 3\n---\n{body}\n"
OWNED_EVENT = (
    "---\ntype: event\ndate: 2026-08-12\ntitle: Shop checkout rejected every card after the tax change\n"
    f"source_url: {PR}\ncurated_from: [{{inbox: _inbox/bot/x.md}}]\n---\n"
    "The tax module returned a null rate; the payment form refused to submit.\n"
)
OWNED_PATH = "events/2026/2026-08-12-shop-checkout-rejected-every-card-after-the-tax-change.md"


def test_an_event_of_the_same_day_and_pull_request_waits_naming_it(vault: Path) -> None:
    vault_with(vault, {OWNED_PATH: OWNED_EVENT})
    text = EVENT.format(
        title="Customers could not pay at the shop checkout",
        source="http://www.github.com/acme/shop/pull/88/",
        body="Support saw a wave of failed payments; confirmed with a real order before and after the fix.",
    )
    out = check(vault, text)
    assert out["verdict"] == "needs_review", out
    assert OWNED_PATH in out["reason"] and "same source_url and day" in out["reason"]


def test_the_same_event_from_its_page_dated_otherwise_waits_showing_both_dates(vault: Path) -> None:
    vault_with(vault, {OWNED_PATH: OWNED_EVENT})
    text = EVENT.format(
        title="Shop checkout rejected every card after the tax change",
        source=PR,
        body="The tax module returned a null rate and the payment form refused to submit.",
    )
    out = check(vault, text.replace("2026-08-12", "2026-08-14"))
    assert out["verdict"] == "needs_review", out
    assert OWNED_PATH in out["reason"] and "same source_url; date: 2026-08-12 -> 2026-08-14" in out["reason"]


@pytest.mark.parametrize(
    ("date", "title", "source"),
    [
        ("2026-08-19", "Shop checkout rejected every card after the tax change", "https://status.acme.com/i/2"),
        ("2026-08-12", "Warehouse printer out of labels", PR),  # the same PR's day, nothing in common said
    ],
)
def test_another_event_is_promoted(vault: Path, date: str, title: str, source: str) -> None:
    vault_with(vault, {OWNED_PATH: OWNED_EVENT})
    text = EVENT.format(title=title, source=source, body="A separate incident, logged by the on-call bot.")
    out = check(vault, text.replace("2026-08-12", date))
    assert out["verdict"] == "promote", out


FACT = (
    "---\ntype: fact\nentity: {entity}\npredicate: {predicate}\nvalue: {value}\nsource_url: {source}\n"
    "confidence: 2\n---\n{body}\n"
)
PLUGIN_PAGE = "https://github.com/brianpetro/obsidian-smart-connections"
DEVELOPER = FACT.format(
    entity="smart-connections",
    predicate="developer",
    value="Brian Petro",
    source=PLUGIN_PAGE,
    body="From the README.",
)


def developer_note() -> str:
    return DEVELOPER.replace("confidence: 2\n---", "confidence: 2\ncurated_from: [{inbox: _inbox/a/x.md}]\n---")


def test_a_fact_under_another_predicate_with_the_same_entity_value_and_page_is_an_update_across_keys(
    vault: Path,
) -> None:
    vault_with(vault, {"facts/smart-connections/developer.md": developer_note()})
    text = FACT.format(
        entity="smart-connections",
        predicate="author",
        value="Brian Petro",
        source=PLUGIN_PAGE + "#readme",
        body="The plugin's author, per its repository.",
    )
    out = check(vault, text)
    assert out["verdict"] == "needs_review", out
    assert (
        "facts/smart-connections/developer.md" in out["reason"]
        and "same source_url and entity and value" in out["reason"]
    )


@pytest.mark.parametrize(
    ("entity", "predicate", "value"),
    [
        ("smart-connections", "license", "GPL-3.0"),  # the same page and entity, another value
        ("smart-composer", "developer", "Brian Petro"),  # the same page and value, another entity
    ],
)
def test_distinct_facts_from_one_page_are_promoted(vault: Path, entity: str, predicate: str, value: str) -> None:
    vault_with(vault, {"facts/smart-connections/developer.md": developer_note()})
    out = check(
        vault, FACT.format(entity=entity, predicate=predicate, value=value, source=PLUGIN_PAGE, body="From the README.")
    )
    assert out["verdict"] == "promote", out


NOTION = (
    "# Notion\n\n- Keep every new infrastructure setup in Notion.\n"
    "- **The Notion API cannot delete pages**: when pages are obsolete, ask the user to delete them by hand.\n"
)
RESEARCH = (
    "---\ntype: research\ntopic: notion\ntitle: {title}\n"
    "source_url: https://developers.notion.com/reference/{page}\nconfidence: 3\n---\n{body}\n"
)


def test_research_whose_topic_names_a_persons_note_close_in_text_waits_naming_it(vault: Path) -> None:
    vault_with(vault, {"Stack/notion.md": NOTION})
    before = (vault / "Stack/notion.md").read_bytes()
    text = RESEARCH.format(
        title="The Notion API can now move pages to the trash",
        page="archive-a-page",
        body="PATCH /v1/pages/{id} with in_trash moves the page to the trash: "
        "no need to ask the user to delete pages by hand.",
    )
    out = check(vault, text)
    assert out["verdict"] == "needs_review", out
    assert "your note Stack/notion.md" in out["reason"]
    assert (vault / "Stack/notion.md").read_bytes() == before


def test_research_whose_topic_names_a_note_about_something_else_is_promoted(vault: Path) -> None:
    vault_with(vault, {"Stack/notion.md": NOTION})
    text = RESEARCH.format(
        title="Notion formulas 2.0 support lets and maps",
        page="formulas",
        body="Formula properties accept let() bindings, map() over lists and dates arithmetic since the 2.0 syntax.",
    )
    out = check(vault, text)
    assert out["verdict"] == "promote", out


def test_a_moved_event_is_named_with_both_dates_and_a_recurring_one_is_not() -> None:
    mine = {"type": "event", "date": "2026-08-14", "source_url": PR}
    theirs = {"type": "event", "date": "2026-08-12", "source_url": PR}
    said = evidence.agreed(mine, theirs, SETTINGS)
    assert evidence.moved(mine, theirs, said, close=True) == "date: 2026-08-12 -> 2026-08-14"
    assert evidence.moved(mine, theirs, said, close=False) == ""
    weekly = {**theirs, "source_url": "https://meet.acme.com/weekly/2026-08-12"}
    assert evidence.moved(mine, weekly, evidence.agreed(mine, weekly, SETTINGS), close=True) == ""
    assert evidence.named((evidence.SOURCE, "date: a -> b")) == "same source_url; date: a -> b"


def test_the_cheap_test_finds_a_source_however_the_note_writes_it() -> None:
    keys = evidence.sources({"source_url": "https://www.Acme.com/Docs/page/?b=2&a=1#top"}, SETTINGS)
    assert evidence.mentions(keys, "---\nsources: [http://acme.com/docs/page?a=1&b=2]\n---\n")
    assert not evidence.mentions(keys, "---\nsource_url: https://acme.com/docs/other\n---\n")
