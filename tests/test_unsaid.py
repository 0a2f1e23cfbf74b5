"""A judge's "duplicate" is not "already known and unchanged" when the candidate cites a link or
a date the note does not hold (issue 38). Seen on the judge-on replay of `tests/novelty_es`: four
candidates dropped as known although the reader's own reason said "only adds the PR link" or
"dates it 07-27, not 07-29"; the labels accept no drop for any of them."""

from __future__ import annotations

from memory_curator.core.unsaid import unsaid
from memory_curator.judge import prompt as judge_prompt

NOTE = """---
type: event
date: 2026-07-27
source_url: https://github.com/acme/mcp/pull/1257
---
The MCP stayed on Node 20 after the move to Node 24 (see https://status.example.com/a).
"""


def test_a_link_or_date_the_note_lacks_is_unsaid() -> None:
    fm = {"type": "event", "date": "2026-07-29", "source_url": "https://github.com/acme/mcp/pull/1257"}
    assert unsaid(fm, "Deployed by hand.", NOTE) == ("2026-07-29",)
    assert unsaid(fm | {"type": "insight"}, "Deployed by hand.", NOTE) == (), "an insight's date is when it was written"
    assert unsaid(fm | {"type": "insight"}, "Deployed on 2026-07-30.", NOTE) == ("2026-07-30",)
    fm = {"type": "event", "date": "2026-07-27", "source_url": "http://www.github.com/acme/mcp/pull/1257/"}
    assert unsaid(fm, "Also https://kommo.example.com/bot.", NOTE) == ("https://kommo.example.com/bot",)


def test_what_the_note_holds_is_not_unsaid() -> None:
    import datetime as dt

    fm = {"type": "Event", "date": dt.date(2026, 7, 27), "sources": ["https://github.com/acme/mcp/pull/1257#top"]}
    body = "Same as https://status.example.com/a. and on 2026-07-27, captured later."
    assert unsaid(fm | {"captured_at": "2026-11-01T10:00:00Z"}, body, NOTE) == ()


def test_a_duplicate_with_something_unsaid_extends_the_note_instead() -> None:
    answer = judge_prompt.Answer.model_validate(
        {
            "candidate": "c1",
            "criteria": {name: "true" for name in judge_prompt.CRITERIA},
            "relation": "duplicate",
            "target": "n1",
            "drop_rule": "",
            "confidence": 0.9,
            "reason": "only adds the PR link",
        }
    )
    note = judge_prompt.Shown("events/mcp.md", NOTE, yours=True)
    fm = {"date": "2026-07-27", "source_url": "https://github.com/acme/mcp/pull/88"}
    verdict = judge_prompt.to_verdict(answer, note, fm, "Body.", {})
    assert (verdict.relation, verdict.target, verdict.yours) == ("extends", "events/mcp.md", True)
    assert verdict.reason == "only adds the PR link; the note does not hold https://github.com/acme/mcp/pull/88"
    same = judge_prompt.to_verdict(answer, note, {"date": "2026-07-27"}, "Body.", {})
    assert (same.relation, same.reason) == ("duplicate", "only adds the PR link")


def test_a_link_naming_only_the_notes_own_subject_is_its_address_not_news() -> None:
    """Seen on the judge-on replay of `tests/novelty`: paraphrases of a person's page, each
    citing that page's web address (`help.obsidian.md/publish/limitations` beside `Obsidian
    Publish/Publish limitations.md`), waited as "extends": the address is where the note is
    published, not a fact the note lacks. A link lacking a word of the note's name, or with a
    word its path lacks (an id, a number, another subject), is still unsaid."""
    note, path = "Files up to 50 MB.", "Obsidian Publish/Publish limitations.md"
    cited = {"source_url": "https://help.obsidian.md/publish/limitations"}
    assert unsaid(cited, "Publish takes files up to 50 MB.", note, path) == ()
    canvas = {"source_url": "https://help.obsidian.md/Plugins/Canvas"}
    assert unsaid(canvas, "Canvases are .canvas files.", ".canvas files.", "Plugins/Canvas.md") == ()
    refunds = {"source_url": "https://help.obsidian.md/refunds"}
    policy = "Licenses and payment/Refund policy.md"
    assert unsaid(refunds, "Refunds in 7 days.", "7 days.", policy) == ("https://help.obsidian.md/refunds",)
    curators = {"source_url": "https://example.dev/curators"}
    need = "insights/agents-need-a-curator.md"
    assert unsaid(curators, "Agents need one.", "Agents need one.", need) == ("https://example.dev/curators",)
    assert unsaid(cited, "Same.", note) == ("https://help.obsidian.md/publish/limitations",), "no path: unsaid"
    plans = {"source_url": "https://help.obsidian.md/sync/plans"}
    faq = "Obsidian Sync/Frequently asked questions.md"
    assert unsaid(plans, "Plus has 10 vaults.", "10 vaults.", faq) == ("https://help.obsidian.md/sync/plans",)
    pull = {"source_url": "https://github.com/acme/mcp/pull/1257"}
    assert unsaid(pull, "Node 20.", "Node 20.", "projects/acme/mcp pull.md") == (
        "https://github.com/acme/mcp/pull/1257",
    )
    bare = {"source_url": "https://help.obsidian.md/"}
    assert unsaid(bare, "Same.", note, path) == ("https://help.obsidian.md/",), "a site names no subject"
