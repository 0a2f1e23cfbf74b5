"""Reading and faithful editing: only what was meant to change changes."""

from __future__ import annotations

import datetime as dt

import pytest

from memory_curator.core.compose import review_text
from memory_curator.core.notes import (
    BOM,
    NotEditable,
    all_tags,
    edit_frontmatter,
    inline_tags,
    parse,
    render,
    wikilinks,
)

REAL_LOOKING = """---
# a comment at the top
type: fact   # trailing comment
entity: "copilot"
predicate: 'data-handling'
value: It's "quoted" inside
tags: [ai-tools, privacy]
sources:
    - https://a.example.dev/x
    - https://b.example.dev/y
captured_at: 2026-06-20T15:30:00Z
date: 2026-06-20
nested:
  deep: {a: 1, b: [x, y]}
empty:
---
Body with #inline and [[Some Note|alias]] and `#notatag`.
"""
NOW = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC)


def add_tag(data) -> None:
    data["tags"].append("new-tag")


def test_reading_real_looking_note() -> None:
    note = parse(REAL_LOOKING)
    assert note.problem is None
    assert note.frontmatter["entity"] == "copilot"
    assert note.frontmatter["date"] == "2026-06-20"  # YAML 1.2 has no date type: the text as written
    assert all_tags(note) == ["ai-tools", "privacy", "inline"]
    assert wikilinks(note.body) == ["Some Note"]


def test_noop_edit_returns_the_same_text() -> None:
    assert edit_frontmatter(REAL_LOOKING, lambda d: None) is REAL_LOOKING


def test_edit_changes_only_the_edited_key() -> None:
    out = edit_frontmatter(REAL_LOOKING, add_tag)
    assert out == REAL_LOOKING.replace("tags: [ai-tools, privacy]", "tags: [ai-tools, privacy, new-tag]")


def test_new_key_is_appended_block_style_and_rest_is_byte_identical() -> None:
    out = edit_frontmatter(REAL_LOOKING, lambda d: d.__setitem__("aliases", ["Copilot"]))
    assert out == REAL_LOOKING.replace(
        "empty:\n---", "empty:\naliases:\n    - Copilot\n---"
    )  # the file's own list indent


@pytest.mark.parametrize("prefix,newline", [("", "\r\n"), (BOM, "\n"), (BOM, "\r\n")])
def test_bom_and_crlf_survive(prefix: str, newline: str) -> None:
    text = prefix + REAL_LOOKING.replace("\n", newline)
    note = parse(text.encode("utf-8"))
    assert note.problem is None and note.frontmatter["type"] == "fact"
    out = edit_frontmatter(text, add_tag)
    expected = text.replace("tags: [ai-tools, privacy]", "tags: [ai-tools, privacy, new-tag]")
    assert out == expected


def test_block_list_indentation_is_kept() -> None:
    text = "---\ntags:\n- a\n- b\nother: 1\n---\nbody\n"
    out = edit_frontmatter(text, add_tag)
    assert out == "---\ntags:\n- a\n- b\n- new-tag\nother: 1\n---\nbody\n"


@pytest.mark.parametrize(
    "text,problem",
    [
        ("---\na: [unclosed\n---\nbody", "does not parse"),
        ("---\na: &x 1\nb: *x\n---\n", "anchors or aliases"),
        ("---\n- a\n- b\n---\n", "not a mapping"),
        ("---\na: 1\nno closing fence", "no closing ---"),
        ("---\nbig: " + "x" * 70_000 + "\n---\n", "over 64 KB"),
    ],
)
def test_bad_frontmatter_is_reported_not_raised(text: str, problem: str) -> None:
    note = parse(text)
    assert note.problem is not None and problem in note.problem
    with pytest.raises(NotEditable):
        edit_frontmatter(text, add_tag)


def test_not_utf8_is_a_problem() -> None:
    assert parse(b"\xff\xfe\x00garbage").problem == "the file is not UTF-8 text"


def test_render_is_obsidian_properties_style() -> None:
    fm = {
        "type": "fact",
        "tags": ["a", "b"],
        "captured_at": dt.datetime(2026, 6, 20, 15, 30, tzinfo=dt.UTC),
        "date": dt.date(2026, 6, 20),
    }
    assert render(fm, "body\n") == (
        "---\ntype: fact\ntags:\n  - a\n  - b\ncaptured_at: 2026-06-20T15:30:00Z\ndate: 2026-06-20\n---\nbody\n"
    )


def test_review_text_tags_and_explains_and_is_stable() -> None:
    once = review_text(REAL_LOOKING, "not sourced", NOW)
    assert "tags: [ai-tools, privacy, needs-review]" in once
    assert once.endswith("\n> ⚠ curator uncertainty: not sourced (2026-11-30T12:00:00Z)\n")
    assert once.startswith(REAL_LOOKING.split("tags:")[0])
    again = review_text(once, "not sourced", NOW)
    assert again == once


def test_review_text_without_frontmatter_adds_a_block() -> None:
    out = review_text("just text\n", "no type", NOW)
    assert (
        out
        == "---\ntags:\n  - needs-review\n---\njust text\n\n> ⚠ curator uncertainty: no type (2026-11-30T12:00:00Z)\n"
    )


def test_review_text_on_broken_yaml_only_appends() -> None:
    text = "---\na: [unclosed\n---\nbody\n"
    assert review_text(text, "bad", NOW) == text + "\n> ⚠ curator uncertainty: bad (2026-11-30T12:00:00Z)\n"


def test_inline_tags_rules() -> None:
    body = "#one, #two/sub #123 a#notatag (#paren) `#inspan`\n```\n#incode\n```\n#Ünïcode"
    assert inline_tags(body) == ["one", "two/sub", "ünïcode"]
    # a ``` inside a line is no fence (CommonMark): the tags after it count, up to the fence
    # that opens a line and runs on to the end
    assert inline_tags("#one ```\n#two\n``` #three") == ["one", "two"]
