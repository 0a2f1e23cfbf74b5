"""A note's prose: its body with code blanked, as CommonMark reads it (pure).

A `#tag` or a `[[link]]` inside code is not one (Obsidian's reading), and a privacy tag is a
tag: so where code starts and ends decides what is private. A regular expression cannot say
it (an unmatched ``` in the middle of a line hid every tag after it), so this module asks
markdown-it-py, configured with only what decides where code is: every CommonMark block rule
(containers, fences, indented code, HTML blocks, which all move where a fence may open) and,
inline, only code spans and what outranks them (backslash escapes, autolinks, raw HTML).
Fences and code spans close exactly as CommonMark closes them; an unclosed fence that opens a
line runs to the end of its container, and a ``` inside a line is no fence at all.

`prose` is the one reading of "outside code" for the sweep (a candidate's tags), the index
(every note's tags and links), the judge's and MCP's privacy checks, and the review note.
"""

from __future__ import annotations

import re
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.rules_core.state_core import StateCore
from markdown_it.rules_inline import backticks
from markdown_it.rules_inline.state_inline import StateInline
from markdown_it.token import Token

_BLOCK = ("code", "fence", "blockquote", "hr", "list", "reference", "html_block", "heading", "lheading", "paragraph")
_INLINE = ("text", "escape", "backticks", "autolink", "html_inline")  # code spans and what outranks them
_PLAIN = re.compile(r"[^\\`<]+")
_INDENTED = re.compile(r"^[ \t>*+\-0-9.)]*?(?: {4}|\t)", re.MULTILINE)  # after any `>` or list markers


def _plain(state: StateInline, silent: bool) -> bool:
    """markdown-it's `text` rule for this parser: the rules left start only at a backslash, a
    backtick or a `<`, so everything up to the next of those is text (its own rule stops at
    every character some other rule could start at: 3x slower here)."""
    found = _PLAIN.match(state.src, state.pos, state.posMax)
    if found is None:
        return False
    if not silent:
        state.pending += found.group()
    state.pos = found.end()
    return True


def _code_span(state: StateInline, silent: bool) -> bool:
    """markdown-it's code span rule, remembering where in its block's text each span lies."""
    start, count = state.pos, len(state.tokens)
    found = backticks.backtick(state, silent)
    if found and not silent and len(state.tokens) > count and state.tokens[-1].type == "code_inline":
        state.tokens[-1].meta = {"span": (start, state.pos)}
    return found


def _code_spans(state: StateCore) -> None:
    """markdown-it's inline pass, run only on the blocks that hold a backtick: the others
    hold no code span, and their text is read as written."""
    for token in state.tokens:
        if token.type == "inline" and "`" in token.content:
            token.children = []
            state.md.inline.parse(token.content, state.md, state.env, token.children)


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark")
    md.core.ruler.enableOnly(["normalize", "block", "inline"])
    md.core.ruler.at("inline", _code_spans)
    md.block.ruler.enableOnly(list(_BLOCK))
    md.inline.ruler.enableOnly(list(_INLINE))
    md.inline.ruler2.enableOnly([])
    md.inline.ruler.at("text", _plain)
    md.inline.ruler.at("backticks", _code_span)
    return md


_MD = _parser()


def may_hold_code(body: str) -> bool:
    """Whether the body can hold code at all: a backtick, a `~~~`, or a line indented by four
    columns (after any `>` or list marker). Most notes cannot, and skip the parse."""
    return "`" in body or "~~~" in body or _INDENTED.search(body) is not None


def prose(body: str) -> str:
    """The body with its code (fenced, indented, spans) blanked; every other line as written.
    Lines no block claims (a link reference definition, what lies past the parser's nesting
    limit) stay as written: only what CommonMark reads as code is removed."""
    if not may_hold_code(body):
        return body
    text = body.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    out: list[str] = []
    line = 0
    for token in _MD.parse(text):
        if token.map is None or token.type not in ("inline", "fence", "code_block"):
            continue
        start, end = token.map
        out.extend(lines[line:start])
        out.append(_spoken(token) if token.type == "inline" else "")
        line = max(line, end)
    out.extend(lines[line:])
    return "\n".join(out)


def _spoken(token: Token) -> str:
    """A block's inline text with each code span blanked (one space)."""
    text, spans = token.content, [_span(child) for child in token.children or ()]
    pieces: list[str] = []
    at = 0
    for span in spans:
        if span is not None:
            pieces.extend((text[at : span[0]], " "))
            at = span[1]
    pieces.append(text[at:])
    return "".join(pieces)


def _span(child: Token) -> tuple[int, int] | None:
    meta: dict[Any, Any] = child.meta or {}
    span = meta.get("span") if child.type == "code_inline" else None
    return span if isinstance(span, tuple) else None
