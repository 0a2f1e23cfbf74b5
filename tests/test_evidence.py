"""Placeholder sources, confidence words and agents' bookkeeping fields (issue 16): the rules
see a candidate as a careful reader would, and a durable note never carries `task_id`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from memory_curator.cli.machine import build_context
from memory_curator.commands.check import check_text
from memory_curator.core.evidence import as_read, is_placeholder
from memory_curator.core.notes import parse
from memory_curator.core.settings import Settings
from tests.loop_kit import cli
from tests.test_decide import FACT, PROMOTE_REASON, note

SETTINGS = Settings()


@pytest.mark.parametrize(
    "url",
    ["https://example.com", "http://www.example.org/a", "example.net", "https://localhost:8080/x",
     "https://docs.example/x", "https://a.invalid", "https://shop.test/", "https://EXAMPLE.COM."],
)  # fmt: skip
def test_placeholders(url: str) -> None:
    assert is_placeholder(url, SETTINGS)


@pytest.mark.parametrize(
    "url", ["https://example.dev/x", "https://myexample.com", "https://obsidian.md", "https://test.com", ""]
)
def test_real_sources(url: str) -> None:
    assert not is_placeholder(url, SETTINGS)


def test_a_list_keeps_its_real_sources_and_words_become_numbers() -> None:
    read = as_read({"sources": ["https://example.com", "https://obsidian.md"], "confidence": "High"}, SETTINGS)
    assert read == {"sources": ["https://obsidian.md"], "confidence": 3}
    assert as_read({"sources": ["https://example.com"], "confidence": "sure"}, SETTINGS) == {"confidence": "sure"}


def check(vault: Path, **fm: object) -> dict:
    return check_text(build_context(vault), note(**fm), "_inbox/agent/c.md", agent="agent").to_json()


def test_a_placeholder_source_is_no_source(vault: Path) -> None:
    out = check(vault, **{**FACT, "source_url": "https://example.com"})
    assert out["verdict"] == "needs_review"
    assert "not sourced (placeholder source, not a source: https://example.com)" in out["reason"]


def test_low_confidence_with_a_placeholder_is_dropped_by_its_rule_and_says_why(vault: Path) -> None:
    out = check(vault, **{**FACT, "source_url": "https://example.com/x", "confidence": 1})
    assert out["verdict"] == "drop" and out["rule"] == "low-confidence-unsourced"
    assert "placeholder source, not a source: https://example.com/x" in out["reason"]


@pytest.mark.parametrize(("word", "verdict"), [("high", "promote"), ("Medium", "promote"), ("low", "needs_review")])
def test_confidence_words(vault: Path, word: str, verdict: str) -> None:
    out = check(vault, **{**FACT, "confidence": word})
    assert out["verdict"] == verdict, out
    if verdict == "promote":
        assert out["reason"] == PROMOTE_REASON


def rules_with(vault: Path, settings: str) -> None:
    path = vault / "_meta/inbox-rules.md"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("settings:\n", "settings:\n" + settings, 1), encoding="utf-8")


def test_the_rules_widen_placeholders_and_name_confidence_words(vault: Path) -> None:
    rules_with(vault, "  placeholder_sources: [acme.dev]\n  confidence_words: {sure: 3, maybe: 1}\n")
    assert check(vault, **{**FACT, "source_url": "https://docs.acme.dev/a"})["verdict"] == "needs_review"
    assert check(vault, **{**FACT, "confidence": "sure"})["verdict"] == "promote"
    assert check(vault, **{**FACT, "confidence": "high"})["verdict"] == "promote", "the defaults stay"


@pytest.mark.parametrize(
    ("setting", "problem"),
    [
        ("  placeholder_sources: example.dev\n", "'placeholder_sources' must be a list of host names"),
        ("  confidence_words: {sure: very}\n", "'confidence_words' must map words to whole numbers"),
    ],
)
def test_bad_knobs_are_named(vault: Path, capsys: pytest.CaptureFixture[str], setting: str, problem: str) -> None:
    rules_with(vault, setting)
    code, out, err = cli(capsys, "rules", "check", "--vault", str(vault))
    assert code == 1 and problem in out + err


BOOKKEPT = """---
type: fact
entity: obsidian-sync
predicate: version-history
value: Sync keeps version history for 12 months on Plus.
source_url: https://obsidian.md/sync
confidence: 2
model: claude-sonnet-9
task_id: t-4411
run_id: 7
---
Seen on the pricing page.
"""


def test_bookkeeping_is_not_carried_but_kept_in_the_original(
    vault: Path, invoke: Callable[..., Result], write_candidate: Callable[..., Path]
) -> None:
    write_candidate(vault, "bookkept.md", BOOKKEPT)
    result = invoke("run", str(vault / "_inbox"), "--no-judge", "--json")
    assert result.exit_code == 0, result.output
    note_fm = parse((vault / "facts/obsidian-sync/version-history.md").read_text(encoding="utf-8")).frontmatter
    assert not {"model", "task_id", "run_id"} & set(note_fm)
    assert note_fm["value"] == "Sync keeps version history for 12 months on Plus."
    digest = note_fm["curated_from"][0]["sha256"]
    kept = [p for p in build_context(vault).state.rglob(f"*{digest}*") if p.is_file()]
    assert kept and b"task_id: t-4411" in kept[0].read_bytes(), "the original keeps them"


def test_a_surface_can_carry_them(
    vault: Path, invoke: Callable[..., Result], write_candidate: Callable[..., Path]
) -> None:
    path = vault / "_meta/inbox-rules.md"
    text = path.read_text(encoding="utf-8")
    old = "required: [entity, predicate, value], curated: true}"
    path.write_text(text.replace(old, old[:-1] + ", not_carried: [run_id]}"), encoding="utf-8")
    write_candidate(vault, "bookkept.md", BOOKKEPT)
    assert invoke("run", str(vault / "_inbox"), "--no-judge").exit_code == 0
    note_fm = parse((vault / "facts/obsidian-sync/version-history.md").read_text(encoding="utf-8")).frontmatter
    assert note_fm["model"] == "claude-sonnet-9" and "run_id" not in note_fm


@pytest.mark.parametrize("text", ["http://[", "[::1", "://", "https://exa mple.com"])
def test_an_unreadable_address_is_not_a_placeholder_and_raises_nothing(text: str) -> None:
    assert not is_placeholder(text, SETTINGS)
