"""Patch semantics (docs/merge.md): exact before/after texts, idempotency, no loss, and
out-of-order arrival. `merge` is pure: these tests never touch a file."""

from __future__ import annotations

import datetime as dt
import itertools
import re
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_curator.core import candidate as cand
from memory_curator.core import comparison
from memory_curator.core.comparison import (
    compare,
    history_sources,
    history_values,
    new_sentences,
    norm_text,
    norm_url,
)
from memory_curator.core.merge import merge, note_diff
from memory_curator.core.notes import all_tags, as_list, parse
from memory_curator.store.rules_file import DEFAULT_RULES, load
from tests.conftest import examples

RULES = load(DEFAULT_RULES)
NOW = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC)
LATER = NOW + dt.timedelta(days=3)
INBOX = "_inbox/agent-a/c.md"


def candidate(text: str, path: str = INBOX) -> cand.Candidate:
    return cand.build(text, path, path.split("/")[1], RULES)


def expect(text: str, c: cand.Candidate) -> str:
    return text.replace("SHA", c.digest.removeprefix("sha256:"))


FACT = """---
# kept by the curator
type: fact
entity: "obsidian"
predicate: 'file-format'
value: Obsidian stores notes as "plain" Markdown files.  # the claim
source_url: https://help.obsidian.md/data
confidence: 2
observed_at: 2026-03-01
tags: [obsidian, storage]
---
Notes are plain text. #local-first
"""


def test_agreeing_fact_adds_sources_tags_confidence_and_an_update_section() -> None:
    c = candidate("""---
type: fact
entity: obsidian
predicate: file-format
value: Obsidian stores notes as plain markdown files
source_url: HTTPS://Help.Obsidian.md/data/?utm_source=feed
sources: [https://obsidian.md/about]
confidence: 3
captured_at: 2026-06-20T15:30:00Z
tags: [Obsidian, markdown]
source_skill: web-research
---
The about page says so too.
""")
    merged = merge(FACT, c, NOW)
    assert merged.text == expect(
        """---
# kept by the curator
type: fact
entity: "obsidian"
predicate: 'file-format'
value: Obsidian stores notes as "plain" Markdown files.  # the claim
source_url: https://help.obsidian.md/data
sources:
  - https://obsidian.md/about
confidence: 3
observed_at: 2026-03-01
tags: [obsidian, storage, markdown]
curated_from:
  - inbox: _inbox/agent-a/c.md
    sha256: SHA
    curated_at: 2026-11-30T12:00:00Z
updated_at: 2026-11-30T12:00:00Z
---
Notes are plain text. #local-first

## Update 2026-11-30 (from agent-a)

*From `_inbox/agent-a/c.md` (source_skill web-research, captured_at 2026-06-20T15:30:00Z).*

The about page says so too.
""",
        c,
    )
    assert merged.summary == (
        "source https://obsidian.md/about",
        "tag markdown",
        "confidence 2 -> 3",
        "update section appended",
    )


def test_newer_value_becomes_current_and_the_old_one_keeps_its_sources_and_times() -> None:
    c = candidate("""---
type: fact
entity: obsidian
predicate: file-format
value: Obsidian stores notes in a database.
source_url: https://example.dev/db
confidence: 1
observed_at: 2026-09-01
---
Changed in version 9.
""")
    merged = merge(FACT, c, NOW)
    assert merged.text == expect(
        """---
# kept by the curator
type: fact
entity: "obsidian"
predicate: 'file-format'
value: Obsidian stores notes in a database.              # the claim
source_url: https://example.dev/db
confidence: 1
observed_at: 2026-09-01
tags: [obsidian, storage]
history:
  - value: Obsidian stores notes as "plain" Markdown files.
    observed_at: 2026-03-01
    confidence: 2
    source_url: https://help.obsidian.md/data
curated_from:
  - inbox: _inbox/agent-a/c.md
    sha256: SHA
    curated_at: 2026-11-30T12:00:00Z
updated_at: 2026-11-30T12:00:00Z
---
Notes are plain text. #local-first

## Update 2026-11-30 (from agent-a)

*From `_inbox/agent-a/c.md`.*

Changed in version 9.
""",
        c,
    )


def test_older_value_goes_to_history_only() -> None:
    c = candidate("""---
type: fact
entity: obsidian
predicate: file-format
value: Obsidian stored notes in XML.
source_url: https://example.dev/old
observed_at: 2025-01-01
---
""")
    merged = merge(FACT, c, NOW)
    assert merged.text == expect(
        """---
# kept by the curator
type: fact
entity: "obsidian"
predicate: 'file-format'
value: Obsidian stores notes as "plain" Markdown files.  # the claim
source_url: https://help.obsidian.md/data
confidence: 2
observed_at: 2026-03-01
tags: [obsidian, storage]
history:
  - value: Obsidian stored notes in XML.
    observed_at: 2025-01-01
    source_url: https://example.dev/old
curated_from:
  - inbox: _inbox/agent-a/c.md
    sha256: SHA
    curated_at: 2026-11-30T12:00:00Z
updated_at: 2026-11-30T12:00:00Z
---
Notes are plain text. #local-first
""",
        c,
    )
    assert merged.summary == ("older value Obsidian stored notes in XML. kept in history",)


def test_a_different_value_without_times_is_a_contradiction_and_changes_nothing() -> None:
    c = candidate(
        "---\ntype: fact\nentity: obsidian\npredicate: file-format\nvalue: XML.\nsource_url: https://x.io\n---\n"
    )
    merged = merge(FACT, c, NOW)
    assert merged.text is FACT
    assert merged.contradiction and not merged.changed
    assert merged.refused == "contradiction: a different value with no newer or older observation time"


def test_crlf_and_bom_survive_and_participants_are_unioned() -> None:
    note = (
        "\ufeff---\r\ntype: event\r\ndate: 2026-05-01\r\ntitle: Vault kickoff\r\nparticipants:\r\n"
        '  - "[[persons/ada-lovelace]]"\r\ntags: milestone, vault\r\n---\r\nWe started.\r\n'
    )
    c = candidate("""---
type: event
date: 2026-05-01
title: Vault kickoff
participants: ["[[persons/ada-lovelace]]", "[[persons/grace-hopper]]"]
source_url: https://example.dev/kickoff
---
Grace joined by video.
""")
    merged = merge(note, c, NOW)
    assert merged.text == expect(
        "\ufeff---\r\ntype: event\r\ndate: 2026-05-01\r\ntitle: Vault kickoff\r\nparticipants:\r\n"
        '  - "[[persons/ada-lovelace]]"\r\n'
        "  - '[[persons/grace-hopper]]'\r\n"
        "tags: milestone, vault\r\n"
        "source_url: https://example.dev/kickoff\r\n"
        "curated_from:\r\n"
        "  - inbox: _inbox/agent-a/c.md\r\n"
        "    sha256: SHA\r\n"
        "    curated_at: 2026-11-30T12:00:00Z\r\n"
        "updated_at: 2026-11-30T12:00:00Z\r\n"
        "---\r\nWe started.\r\n"
        "\r\n## Update 2026-11-30 (from agent-a)\r\n\r\n"
        "*From `_inbox/agent-a/c.md`.*\r\n\r\nGrace joined by video.\r\n",
        c,
    )
    assert merged.text.encode().startswith(b"\xef\xbb\xbf---\r\n")


def test_person_aliases_roles_and_sources_in_the_notes_own_style() -> None:
    note = """---
type: person
name: Ada Lovelace
aliases:
- Augusta Ada King
roles: [mathematician]
sources:
- https://en.wikipedia.org/wiki/Ada_Lovelace
---
Wrote the first published algorithm.
"""
    c = candidate("""---
type: person
name: Ada Lovelace
aliases: [Countess of Lovelace, augusta ada king]
roles: writer
sources: [https://en.wikipedia.org/wiki/Ada_Lovelace/, https://www.britannica.com/biography/Ada-Lovelace]
born: 1815-12-10
author: user
---
Wrote the first published algorithm.
""")
    merged = merge(note, c, NOW)
    assert merged.text == expect(
        """---
type: person
name: Ada Lovelace
aliases:
- Augusta Ada King
- Countess of Lovelace
roles: [mathematician, writer]
sources:
- https://en.wikipedia.org/wiki/Ada_Lovelace
- https://www.britannica.com/biography/Ada-Lovelace
born: 1815-12-10
curated_from:
- inbox: _inbox/agent-a/c.md
  sha256: SHA
  curated_at: 2026-11-30T12:00:00Z
  author: user
updated_at: 2026-11-30T12:00:00Z
---
Wrote the first published algorithm.
""",
        c,
    )
    # the claim is kept in the provenance entry only (design §3): it never makes the note a person's
    assert "author" not in parse(merged.text).frontmatter, "a candidate's author: user never makes a note a person's"
    assert merged.summary == (
        "source https://www.britannica.com/biography/Ada-Lovelace",
        "alias Countess of Lovelace",
        "role writer",
        "field born",
    )


def test_research_findings_are_appended_and_differing_fields_are_kept_as_text() -> None:
    note = """---
type: research
topic: ai-tools
title: Coding assistants
sources:
  - https://example.dev/survey
---
A survey of coding assistants.
"""
    c = candidate("""---
type: research
topic: ai-tools
title: Coding Assistants (2026)
slug: coding-assistants
source_url: https://example.dev/survey-2
summary: Most keep prompts for 30 days.
---
Finding: most assistants keep prompts for 30 days.

> ⚠ curator uncertainty: not novel (2026-11-29T10:00:00Z)
""")
    merged = merge(note, c, NOW)
    assert merged.text == expect(
        """---
type: research
topic: ai-tools
title: Coding assistants
sources:
  - https://example.dev/survey
  - https://example.dev/survey-2
summary: Most keep prompts for 30 days.
curated_from:
  - inbox: _inbox/agent-a/c.md
    sha256: SHA
    curated_at: 2026-11-30T12:00:00Z
updated_at: 2026-11-30T12:00:00Z
---
A survey of coding assistants.

## Update 2026-11-30 (from agent-a)

*From `_inbox/agent-a/c.md`.*

Also reported: `title: Coding Assistants (2026)`.

Finding: most assistants keep prompts for 30 days.
""",
        c,
    )


def test_a_body_the_note_already_holds_is_not_appended_again() -> None:
    note = "---\ntype: research\ntopic: t\ntitle: T\nsources: [https://a.io]\n---\nLine one.\r\n\r\nLine two.\n"
    c = candidate("---\ntype: research\ntopic: t\ntitle: T\nsource_url: https://b.io\n---\n\nLine one.\n\nLine two.\n")
    merged = merge(note, c, NOW)
    assert merged.text.endswith("---\nLine one.\r\n\r\nLine two.\n")
    assert "## Update" not in merged.text
    assert merged.summary == ("source https://b.io",)


def test_a_note_without_frontmatter_gets_one_and_keeps_its_body() -> None:
    c = candidate("---\ntype: project\nname: Memory Curator\nsource_url: https://e.io/mc\ntags: [tools]\n---\n")
    merged = merge("Just a plain note.\n", c, NOW)
    assert merged.text == expect(
        """---
source_url: https://e.io/mc
tags:
  - tools
curated_from:
  - inbox: _inbox/agent-a/c.md
    sha256: SHA
    curated_at: 2026-11-30T12:00:00Z
updated_at: 2026-11-30T12:00:00Z
---
Just a plain note.

## Update 2026-11-30 (from agent-a)

*From `_inbox/agent-a/c.md`.*

Also reported: `name: Memory Curator`.
""",
        c,
    )


def test_a_value_where_the_note_had_none_is_added_not_a_contradiction() -> None:
    note = "---\ntype: fact\nentity: e\npredicate: p\ncaptured_at: 2026-01-01\n---\n"
    c = candidate("---\nentity: e\npredicate: p\nvalue: 42\nobserved_at: 2026-02-01\ncaptured_at: 2026-02-02\n---\n")
    assert not compare(parse(note).frontmatter, [], c.frontmatter, c.tags).contradiction
    merged = merge(note, c, NOW)
    assert merged.text.startswith("---\ntype: fact\nentity: e\npredicate: p\ncaptured_at: 2026-01-01\nvalue: 42\n")
    assert "observed_at: 2026-02-01\n" in merged.text, "a missing time is filled, an existing one is kept"


@pytest.mark.parametrize(
    "note,why",
    [
        ("---\nsource_skill: human\nvalue: x\n---\nmine\n", "the note is human-authored"),
        ("---\nauthor: user\n---\nmine\n", "the note is human-authored"),
        ("---\nvalue: [unclosed\n---\nbody\n", "the note cannot be edited safely: the frontmatter does not parse"),
        ("---\na: &x 1\nb: *x\n---\n", "the note cannot be edited safely: the frontmatter uses YAML anchors"),
        ("---\nhistory: oops\n---\n", "the note's history: is not a list"),
        ("---\ntags: a\ntags: b\n---\n", "the note cannot be edited safely: the frontmatter does not parse: duplicate"),
    ],
)
def test_refused_notes_are_returned_unchanged(note: str, why: str) -> None:
    merged = merge(note, candidate("---\nvalue: y\nsource_url: https://e.com\n---\nnew\n"), NOW)
    assert merged.text is note
    assert merged.refused is not None and merged.refused.startswith(why)


def test_merging_twice_is_merging_once_even_on_another_day() -> None:
    c = candidate(
        "---\ntype: fact\nentity: obsidian\npredicate: file-format\nvalue: DB\nobserved_at: 2026-09-01\n"
        "source_url: https://e.io\ntags: [new]\n---\nbody\n"
    )
    once = merge(FACT, c, NOW)
    twice = merge(once.text, c, LATER)
    assert twice.text == once.text and not twice.changed


def test_history_stays_in_time_order_whatever_the_arrival_order() -> None:
    def fact(value: str, day: str) -> cand.Candidate:
        return candidate(
            f"---\nentity: e\npredicate: p\nvalue: {value}\nobserved_at: {day}\nsource_url: https://{value}.io\n---\n"
        )

    start = "---\nentity: e\npredicate: p\nvalue: B\nobserved_at: 2026-02-01\n---\n"
    observations = [fact("A", "2026-01-01"), fact("C", "2026-03-01"), fact("D", "2026-04-01")]
    finals = set()
    for order in itertools.permutations(observations):
        text = start
        for c in order:
            text = merge(text, c, NOW).text
        fm = parse(text).frontmatter
        assert fm["value"] == "D"
        assert history_values(fm) == ["A", "B", "C"]
        assert [h.get("source_url") for h in fm["history"]] == ["https://A.io", None, "https://C.io"]
        finals.add(repr(sorted((k, v) for k, v in fm.items() if k not in ("curated_from", "updated_at"))))
    assert len(finals) == 1, "the value, its times, its sources and the history do not depend on the order"


def test_compare_extensions_roles_and_a_value_changing_back() -> None:
    note = {"value": "B", "observed_at": "2026-02-01", "history": [{"value": "A", "observed_at": "2026-01-01"}]}
    back = compare(note, [], {"value": "A", "observed_at": "2026-03-01"}, [])
    assert back.value_changed and back.order == "newer", "a newer observation of an old value is a change"
    stale = compare(note, [], {"value": "A", "observed_at": "2025-12-01"}, [])
    assert not stale.additions, "an older observation of a value in history adds nothing"
    assert compare({"roles": ["cto"]}, [], {"roles": ["CTO", "founder"]}, []).additions == ("role founder",)


def test_note_diff_is_a_unified_diff_of_the_note() -> None:
    diff = note_diff("facts/x.md", "---\na: 1\n---\nbody\n", "---\na: 1\nb: 2\n---\nbody\n")
    assert diff == "--- a/facts/x.md\n+++ b/facts/x.md\n@@ -1,4 +1,5 @@\n ---\n a: 1\n+b: 2\n ---\n body\n"


# --- properties ------------------------------------------------------------------------------

VALUES = ["Alpha", "alpha!", "Beta", "Gamma"]
DAYS = [None, "2026-01-01", "2026-02-01", "2026-03-01T10:00:00Z"]
URLS = ["https://a.io/x", "https://A.io/x/", "https://b.io?utm_source=z", "https://b.io", "https://c.io/y"]
TAGS = ["obsidian", "AI-Tools", "privacy", "needs-review"]
PEOPLE = ["Ada", "ada", "Grace", "[[persons/linus]]"]
LINES = ["First line.", "A second line with #inline tag.", "Third: [[link]].", ""]


@st.composite
def notes(draw: st.DrawFn, with_body_prefix: str = "") -> str:
    """Real-looking fact notes: block, flow or string lists, comments, quotes, CRLF, BOM."""
    lines = ["type: fact", "entity: e", "predicate: p"]
    value = draw(st.sampled_from([None, *VALUES]))
    if value is not None:
        lines.append(draw(st.sampled_from([f"value: {value}", f'value: "{value}"', f"value: {value}  # why"])))
    for key in ("observed_at", "captured_at"):
        day = draw(st.sampled_from(DAYS))
        if day:
            lines.append(f"{key}: {day}")
    confidence = draw(st.sampled_from([None, 1, 2, 3]))
    if confidence:
        lines.append(f"confidence: {confidence}")
    for key, pool in (("sources", URLS), ("tags", TAGS), ("participants", PEOPLE)):
        items = draw(st.lists(st.sampled_from(pool), max_size=3, unique=True))
        if items:
            lines += _yaml_list(key, items, draw(st.sampled_from(["block", "flow", "indented", "one"])))
    past = draw(
        st.lists(st.tuples(st.sampled_from(VALUES), st.sampled_from(DAYS[1:3]), st.sampled_from(URLS)), max_size=2)
    )
    if past:
        lines.append("history:")
        for old, day, url in past:
            lines += [f"  - value: {old}", f"    observed_at: {day}", "    sources:", f"      - {url}"]
    body = "\n".join(draw(st.lists(st.sampled_from(LINES), max_size=3)))
    text = "---\n# a comment\n" + "\n".join(lines) + "\n---\n" + with_body_prefix + body + ("\n" if body else "")
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    return ("\ufeff" if draw(st.booleans()) else "") + text


def _yaml_list(key: str, items: list[str], style: str) -> list[str]:
    quoted = [f'"{i}"' if i.startswith("[") else i for i in items]
    if style == "one" and key == "sources":
        return [f"source_url: {items[0]}"] + ([f"sources: [{', '.join(quoted[1:])}]"] if items[1:] else [])
    if style == "one" and key == "tags":
        return [f"tags: {', '.join(items)}"]
    if style == "flow":
        return [f"{key}: [{', '.join(quoted)}]"]
    indent = "  " if style == "indented" else ""
    return [f"{key}:", *[f"{indent}- {q}" for q in quoted]]


def _sources(fm: dict) -> set[str]:
    from memory_curator.core.comparison import sources_of

    return {norm_url(s) for s in [*sources_of(fm), *history_sources(fm)]}


def _values(fm: dict) -> set[str]:
    return {norm_text(v) for v in [fm.get("value"), *history_values(fm)] if v is not None}


@settings(max_examples=examples(150), deadline=None)
@given(note=notes(), incoming=notes())
def test_merge_is_idempotent_and_loses_nothing(note: str, incoming: str) -> None:
    c = candidate(incoming)
    once = merge(note, c, NOW)
    twice = merge(once.text, c, LATER)
    assert twice.text == once.text, "merging the same candidate twice is merging it once"
    if once.refused:
        assert once.text is note
        return
    old, new, cn = parse(note), parse(once.text), c.note
    assert new.problem is None, new.problem
    fm = new.frontmatter
    assert _sources(old.frontmatter) | _sources(cn.frontmatter) <= _sources(fm)
    assert _values(old.frontmatter) | _values(cn.frontmatter) <= _values(fm)
    assert (set(all_tags(old)) | set(all_tags(cn))) - {"needs-review"} <= set(all_tags(new))
    people = {norm_text(p) for p in as_list(fm.get("participants"))}
    assert {
        norm_text(p)
        for p in [*as_list(old.frontmatter.get("participants")), *as_list(cn.frontmatter.get("participants"))]
    } <= people
    assert new.body.startswith(old.body), "the old body's bytes are kept as they were"
    flat = new.body.replace("\r\n", "\n")
    assert all(line in flat for line in cn.body.replace("\r\n", "\n").splitlines())
    assert once.text.startswith("\ufeff") == note.startswith("\ufeff")
    assert ("\r\n" in once.text) == ("\r\n" in note) or not note.strip()


@settings(max_examples=examples(60), deadline=None)
@given(
    days=st.lists(
        st.sampled_from(["2026-01-01", "2026-02-01", "2026-03-01", "2026-04-01", "2026-05-01"]),
        min_size=2,
        max_size=4,
        unique=True,
    ),
    data=st.data(),
)
def test_out_of_order_arrival_ends_with_the_newest_value_current(days: list[str], data: st.DataObject) -> None:
    start, *rest = days
    text = f"---\nentity: e\npredicate: p\nvalue: v{start}\nobserved_at: {start}\n---\n"
    arrivals = data.draw(st.permutations(rest))
    for day in arrivals:
        c = candidate(
            f"---\nentity: e\npredicate: p\nvalue: v{day}\nobserved_at: {day}\nsource_url: https://{day}.io\n---\n"
        )
        text = merge(text, c, NOW).text
    fm = parse(text).frontmatter
    assert fm["value"] == f"v{max(days)}"
    assert history_values(fm) == [f"v{d}" for d in sorted(days)[:-1]]


def test_the_worked_example_in_the_docs_is_true() -> None:
    doc = (Path(__file__).resolve().parent.parent / "docs" / "merge.md").read_text()
    blocks = dict(re.findall(r"<!-- merge-example: ([\w-]+) -->\n```markdown\n(.*?)```\n", doc, re.DOTALL))
    assert set(blocks) == {"note", "linus", "after-linus", "grace", "after-grace"}
    linus = candidate(blocks["linus"], "_inbox/news/linus.md")
    grace = candidate(blocks["grace"], "_inbox/news/grace.md")
    first = merge(blocks["note"], linus, dt.datetime(2026, 9, 2, 9, 0, tzinfo=dt.UTC))
    assert first.text == blocks["after-linus"]
    second = merge(first.text, grace, dt.datetime(2026, 9, 3, 9, 0, tzinfo=dt.UTC))
    assert second.text == blocks["after-grace"]
    reverse = merge(merge(blocks["note"], grace, NOW).text, linus, NOW).text
    same = ("value", "source_url", "confidence", "observed_at", "captured_at", "tags", "history")
    assert {k: parse(reverse).frontmatter.get(k) for k in same} == {
        k: parse(second.text).frontmatter.get(k) for k in same
    }


@pytest.mark.parametrize("key", ["true", "null", "1"])
def test_a_claim_under_a_key_yaml_reads_as_a_boolean_null_or_number_is_merged_by_its_text(key: str) -> None:
    """Seen: a note with a `true:` key (ruamel's round trip reads it as the boolean True, the
    comparison as the text "true") made `merge` raise KeyError, and a sweep held the candidate
    with "internal error while composing"."""
    note = f"---\ntype: fact\nentity: e\npredicate: p\nvalue: x\n{key}: 1\nobserved_at: 2026-01-01\n---\nA fact.\n"
    incoming = f"---\ntype: fact\nentity: e\npredicate: p\nvalue: x\n{key}: 0\nobserved_at: 2026-02-01\n---\nMore.\n"
    merged = merge(note, candidate(incoming), NOW)
    fields = parse(merged.text).frontmatter
    assert fields[key] == 0, merged.text
    assert [entry[key] for entry in fields["history"]] == [1], merged.text


@pytest.mark.parametrize("key", ["'#c'", "'[x'", "'a: b'"])
def test_a_field_yaml_cannot_read_as_a_key_is_added_beside_a_non_text_key(key: str) -> None:
    """Seen (review): with a `1:` key in the note, each candidate field's text was read as YAML to
    find the note's own key for it; a field written `'#c'` raised TypeError (an internal error),
    `'[x'` and `'a: b'` a YAML error (the patch refused as "cannot be edited safely")."""
    note = "---\ntype: fact\nentity: e\npredicate: p\nvalue: x\n1: one\n---\nA fact.\n"
    incoming = (
        f"---\ntype: fact\nentity: e\npredicate: p\nvalue: x\n{key}: new\nsource_url: https://a.io/x\n---\nMore.\n"
    )
    merged = merge(note, candidate(incoming), NOW)
    assert merged.refused is None, merged.refused
    assert parse(merged.text).frontmatter[key.strip("'")] == "new", merged.text


@settings(max_examples=examples(300))
@given(st.text(alphabet=st.sampled_from("aAzZeé e\u0301ßǅﬁ\u212aÑñ .!\n-0"), max_size=60))
def test_content_words_fold_ascii_and_accented_text_alike(text: str) -> None:
    """`new_sentences` reads words with case and accents folded; ASCII text skips the
    character-by-character fold (it has nothing to fold), and gives the words the full fold gives."""
    folded = unicodedata.normalize("NFKD", text.casefold())
    full = set(re.findall(r"[^\W\d_]{4,}", "".join(c for c in folded if not unicodedata.combining(c))))
    assert comparison._content_words(text) == full
    assert new_sentences("Cafés serve espresso daily here. Nothing else.", "CAFES SERVE ESPRESSO DAILY") == ()
