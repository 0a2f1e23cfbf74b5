"""The spliced path (`core.splice`) writes exactly what the round trip (`notes.edit_frontmatter`,
kept as the reference) writes, byte for byte, on generated frontmatters and edits and on every
note of the real vaults with the edits a promote and a flag make; and it does take the splice
for the plain blocks it is for."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from memory_curator.core import candidate as cand
from memory_curator.core import compose, merge, notes, splice
from memory_curator.store.rules_file import DEFAULT_RULES, load
from tests.conftest import examples

RULES = load(DEFAULT_RULES)
NOW = dt.datetime(2026, 12, 2, 3, 4, 5, tzinfo=dt.UTC)
REAL = Path("/work/shared/real-vaults")
Edit = Callable[[CommentedMap], None]


class Paths:
    """What the checked splice did over a run: how many edits it took, how many it left."""

    def __init__(self) -> None:
        self.spliced = 0
        self.round_trip = 0


def checked(text: str, mutate: Edit, paths: Paths | None = None) -> str:
    """`splice.edit_frontmatter`, after asserting that the splice equals the round trip."""
    fast = splice.fast_edit(text, mutate)
    try:
        reference: str | None = notes.edit_frontmatter(text, mutate)
    except notes.NotEditable:
        reference = None
    if paths is not None:
        paths.spliced += fast is not None
        paths.round_trip += fast is None
    if fast is not None:
        assert fast == reference, f"the splice differs from the round trip on {text!r}"
        return fast
    if reference is None:
        raise notes.NotEditable("the round trip refuses it")
    return reference


def promote_and_flag(raw: bytes, name: str = "c.md", paths: Paths | None = None) -> None:
    """The edits a sweep makes of a candidate, checked: promoted (its file name the title's or
    not, approved by a person or not), flagged."""
    candidate = cand.build(raw, f"_inbox/agent/{name}", "agent", RULES)
    for promoted in (
        candidate,
        dataclasses.replace(candidate, target="facts/x/another-name.md"),
        dataclasses.replace(candidate, approved=True, privacy=("private",)),
    ):
        with contextlib.suppress(notes.NotEditable):
            checked(compose.strip_review_mark(promoted.note.text), compose.promotion(promoted, NOW), paths)
    with contextlib.suppress(UnicodeDecodeError, notes.NotEditable):
        checked(compose.strip_review_mark(raw.decode("utf-8")), compose.add_review_tag, paths)


# --- exact examples ------------------------------------------------------------------------


def test_a_plain_block_is_spliced_byte_for_byte() -> None:
    text = "\ufeff---\r\ntitle: Tarifa\r\ntags: [precio, 'q']\r\nk: 010\r\n---\r\nbody\r\n"
    out = splice.fast_edit(text, compose.add_review_tag)
    assert out == "\ufeff---\r\ntitle: Tarifa\r\ntags: [precio, 'q', needs-review]\r\nk: 010\r\n---\r\nbody\r\n"


def test_a_promote_writes_its_keys_as_the_round_trip_does() -> None:
    text = "---\ntitle: Día, uno\nsource_skill: human\ntags:\n  - '#A'\n---\nbody\n"
    candidate = cand.build(text, "_inbox/agent/día uno.md", "agent", RULES)
    candidate = dataclasses.replace(candidate, target="facts/x/dia-uno.md")
    paths = Paths()
    spliced = checked(text, compose.promotion(candidate, NOW), paths)
    assert paths.spliced == 1 and compose.promoted_text(candidate, NOW) == spliced
    sha = candidate.digest.removeprefix("sha256:")
    assert spliced == (
        "---\ntitle: Día, uno\ntags:\n  - a\naliases:\n  - Día, uno\ncurated_from:\n"
        f"  - inbox: _inbox/agent/día uno.md\n    sha256: {sha}\n    curated_at: 2026-12-02T03:04:05Z\n"
        "    source_skill: human\n---\nbody\n"
    )


@pytest.mark.parametrize(
    "text",
    [
        "---\ntitle: x  # a comment\n---\n",  # a comment
        "---\ntags: !!seq [a]\n---\n",  # a tag
        "---\nd: |\n  two\n  lines\n---\n",  # a multi-line scalar
        "---\nx:\ty\n---\n",  # a tab
        "---\n{title: x}\n---\n",  # a flow mapping
        "---\n\ntitle: x\n---\n",  # a line before the first key
        "---\ntags:\n   - a\n\ny: 1\n---\n",  # a changed key written otherwise than ruamel writes it
        "---\ntrue: x\n---\n",  # a key that is not text to ruamel
    ],
)
def test_what_is_not_plain_takes_the_round_trip(text: str) -> None:
    assert splice.fast_edit(text, compose.add_review_tag) is None


@pytest.mark.parametrize(
    ("value", "plain"),
    [("needs-review", True), ("yes", True), ("true", False), ("1e3", False), ("1_000", False), ("a: b", False),
     ("a #b", False), ("-a", False), ("a:", False), (" a", False), ("día", True), ("2026-01-02", False)],
)  # fmt: skip
def test_a_new_text_is_written_plain_only_where_ruamel_writes_it_plain(value: str, plain: bool) -> None:
    text = "---\na: 1\n---\n"

    def edit(data: CommentedMap) -> None:
        data["b"] = value

    assert (splice.fast_edit(text, edit) is not None) == plain
    checked(text, edit)


def test_a_no_op_edit_returns_the_text_itself() -> None:
    text = "---\ntags: [needs-review]\n---\n"
    assert splice.fast_edit(text, compose.add_review_tag) is text


# --- generated frontmatters and edits ------------------------------------------------------

WORDS = st.text(
    st.sampled_from([*"abcXYZ019 _-./:#,'\"[]{}!&*?|>%@`~=+()\\", "á", "ñ", "—", "«", "ü", "\u00a0", "日"]),
    min_size=0,
    max_size=12,
)
SCALARS = st.one_of(
    WORDS,
    WORDS.map(lambda w: "'" + w.replace("'", "''") + "'"),
    WORDS.map(lambda w: '"' + w.replace("\\", "\\\\").replace('"', '\\"') + '"'),
    st.sampled_from(["010", "1_000", "1e3", "0x1F", "2026-01-02", "2026-01-02T03:04:05Z", "true", "NO", "~", ""]),
    st.sampled_from(["null", "a, b", "x: y", "# c", "[a]", "- a", "needs-review", "Needs-Review", "#Tag", ".inf"]),
    st.sampled_from(["[]", "[ ]", "{}", "{a: 1}", "[needs-review]", "'needs-review'"]),
)
KEYS = ["title", "tags", "aliases", "name", "source_skill", "author", "user_approved", "curated_from", "type", "k"]


@st.composite
def blocks(draw: st.DrawFn) -> str:
    """A frontmatter block: plain keys most of the time, every kind of value and layout."""
    keys = draw(st.lists(st.sampled_from([*KEYS, "Odd Key", "true", "1"]), max_size=6, unique=True))
    offset = " " * draw(st.sampled_from([0, 2, 4]))
    lines: list[str] = []
    for key in keys:
        kind = draw(st.sampled_from(["scalar", "flow", "block", "map", "maps", "literal", "explicit", "nextline"]))
        items = draw(st.lists(SCALARS, max_size=3))
        if kind == "scalar" or (kind in ("block", "maps") and not items):
            lines.append(f"{key}: {draw(SCALARS)}".rstrip(" "))
        elif kind == "nextline":
            lines += [f"{key}:", f"  {draw(SCALARS)}".rstrip(" ") or "  x"]
        elif kind == "explicit":
            lines += [f"? {key}", f": {draw(SCALARS)}".rstrip(" ")]
        elif kind == "flow":
            lines.append(f"{key}: [{', '.join(items)}]")
        elif kind == "block":
            lines += [f"{key}:", *(f"{offset}- {item}".rstrip(" ") for item in items)]
        elif kind == "map":
            lines += [f"{key}:", f"{' ' * draw(st.sampled_from([2, 4]))}k: {draw(SCALARS)}".rstrip(" ")]
        elif kind == "maps":
            lines += [f"{key}:", f"{offset}- a: {items[0]}".rstrip(" "), f"{offset}  b: 1"]
        else:
            lines += [f"{key}: |", "  one", "  two"]
        if draw(st.integers(0, 9)) == 0:
            lines.append(draw(st.sampled_from(["", "  ", "# a comment", "  # indented comment"])))
    lead = draw(st.sampled_from(["", "", "", "", "\n", "  "]))  # a blank line first, or every line indented
    if lead == "\n":
        lines.insert(0, "")
    return "".join((lead if lead == "  " else "") + line + "\n" for line in lines)


@st.composite
def notes_text(draw: st.DrawFn) -> str:
    block = draw(blocks())
    body = draw(st.sampled_from(["", "Body.\n", "Body\nwith lines", "# Heading\n\n> ⚠ curator uncertainty: x (t)\n"]))
    newlines = draw(st.sampled_from(["\n", "\r\n", "mixed"]))
    if newlines == "mixed":  # a body in CRLF under an LF block: the file's newline is CRLF
        body = body.replace("\n", "\r\n") or "\r\n"
    text = body if draw(st.integers(0, 9)) == 0 else "---\n" + block + "---\n" + body
    if newlines == "\r\n":
        text = text.replace("\n", "\r\n")
    return ("\ufeff" if draw(st.booleans()) else "") + text


NEW_VALUES = st.one_of(
    WORDS,
    st.integers(-1000, 10**6),
    st.booleans(),
    st.none(),
    st.datetimes(timezones=st.just(dt.UTC)),
    st.lists(WORDS, max_size=3),
    st.lists(st.fixed_dictionaries({"inbox": WORDS, "sha256": st.sampled_from(["0123e5", "abc", "1e10"])}), max_size=2),
)


@st.composite
def edits(draw: st.DrawFn) -> Edit:
    """A generic edit: a key set (new or replaced), removed, or a list appended to."""
    key = draw(st.sampled_from([*KEYS, "true", "Odd Key", "x" * 130, "1", "a: b"]))
    action = draw(st.sampled_from(["set", "remove", "append"]))
    value = draw(NEW_VALUES)

    def edit(data: CommentedMap) -> None:
        if action == "remove":
            data.pop(key, None)
        elif action == "append" and isinstance(data.get(key), list):
            data[key].append(value if not isinstance(value, list | dict) else "x")
        elif isinstance(value, list):
            data[key] = CommentedSeq(CommentedMap(v) if isinstance(v, dict) else v for v in value)
        else:
            data[key] = value

    return edit


SETTINGS = settings(max_examples=examples(600), deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(text=notes_text(), name=WORDS)
@example(text="---\ntitle:\n\nuser_approved: []\ncurated_from:\n---\n", name="")  # a blank line after an empty value
def test_promote_and_flag_splice_what_the_round_trip_writes(text: str, name: str) -> None:
    promote_and_flag(text.encode("utf-8"), (name.replace("/", "") or "c") + ".md")


@SETTINGS
@given(text=notes_text(), edit=st.lists(edits(), min_size=1, max_size=3))
def test_any_edit_is_spliced_as_the_round_trip_writes_it(text: str, edit: list[Edit]) -> None:
    def all_of(data: CommentedMap) -> None:
        for one in edit:
            one(data)

    with contextlib.suppress(notes.NotEditable):
        checked(text, all_of)


@pytest.mark.hypothesis  # its property is inside: the thorough run (-m hypothesis) takes it too
def test_the_generated_corpus_mostly_takes_the_splice() -> None:
    """The property tests above compare something: most plain blocks are spliced."""
    paths = Paths()
    seen: list[Any] = []

    @settings(max_examples=examples(300), deadline=None, database=None)
    @given(text=notes_text())
    def flag(text: str) -> None:
        seen.append(text)
        with contextlib.suppress(notes.NotEditable):
            checked(text, compose.add_review_tag, paths)

    flag()
    assert paths.spliced > 0.15 * len(seen), (paths.spliced, paths.round_trip)


# --- patches ------------------------------------------------------------------------------

FACT_KEYS = ["entity: e", "predicate: p", "type: fact"]
FACT_VALUES = st.sampled_from(["Alpha", "alpha!", "Beta", "'Gamma'", "1e3"])
FACT_DAYS = st.sampled_from(["2026-01-01", "2026-02-01", "2026-03-01T10:00:00Z", "'2026-04-01'"])
FACT_LISTS = st.sampled_from(["https://a.io/x", "https://b.io?utm_source=z", "obsidian", "AI-Tools", "Ada", "x, y"])


@st.composite
def facts(draw: st.DrawFn, lead: str = "") -> str:
    """A fact note (or a candidate): values, times, sources, tags, participants, history; as a
    block, in flow or block lists, among the generated keys of `blocks`."""
    lines = [*FACT_KEYS, *draw(blocks()).splitlines()]
    for key, values in (("value", FACT_VALUES), ("observed_at", FACT_DAYS), ("captured_at", FACT_DAYS)):
        if draw(st.booleans()):
            lines.append(f"{key}: {draw(values)}")
    for key in ("sources", "source_url", "tags", "participants", "confidence", "status"):
        items = draw(st.lists(FACT_LISTS, max_size=3, unique=True))
        if key == "confidence":
            lines += [f"confidence: {draw(st.integers(1, 3))}"] if items else []
        elif key in ("source_url", "status"):
            lines += [f"{key}: {items[0]}"] if items else []
        elif items and draw(st.booleans()):
            lines.append(f"{key}: [{', '.join(items)}]")
        elif items:
            lines += [f"{key}:", *(f"  - {item}" for item in items)]
    if draw(st.integers(0, 3)) == 0:
        lines += ["history:", f"  - value: {draw(FACT_VALUES)}", f"    observed_at: {draw(FACT_DAYS)}"]
    seen: set[str] = set()
    unique = [ln for ln in lines if ln.startswith(" ") or not (ln.split(":")[0] in seen or seen.add(ln.split(":")[0]))]
    for _ in range(draw(st.integers(0, 2))):  # blank lines between keys, or inside a list
        unique.insert(draw(st.integers(0, len(unique))), "")
    text = "---\n" + "".join(line + "\n" for line in unique) + "---\n" + lead + "A fact.\n"
    return text.replace("\n", "\r\n") if draw(st.booleans()) else text


def merged_both_ways(note: str, incoming: str, **kwargs: Any) -> tuple[object, object]:
    """The merge as it runs (the splice where certain) and through the round trip only: the
    merged note, or the exception's type where the round trip itself fails (a note keyed
    `true:`, which ruamel reads as the key True, fails there today, spliced or not)."""
    c = cand.build(incoming, "_inbox/agent-a/c.md", "agent-a", RULES)

    def attempt() -> object:
        try:
            return merge.merge(note, c, NOW, **kwargs)
        except Exception as exc:
            return type(exc)

    fast = attempt()
    with mock.patch.object(merge, "edit_frontmatter", notes.edit_frontmatter):
        reference = attempt()
    return fast, reference


@SETTINGS
@given(note=facts(), incoming=facts(lead="More.\n"), person=st.booleans())
@example(  # an explicit key (`? title`) the round trip cannot write back: the splice took it for a plain key
    note="---\nentity: e\npredicate: p\ntype: fact\n\n? title\n  \nhistory:\n  - value: Alpha\n"
    "    observed_at: 2026-01-01\n---\nA fact.\n",
    incoming="---\nentity: e\npredicate: p\ntype: fact\nhistory:\n  - value: Alpha\n"
    "    observed_at: 2026-01-01\n---\nMore.\nA fact.\n",
    person=False,
)
def test_a_patch_splices_what_the_round_trip_writes(note: str, incoming: str, person: bool) -> None:
    fast, reference = merged_both_ways(note, incoming, person=person)
    assert fast == reference


# --- the real vaults -----------------------------------------------------------------------


@pytest.mark.skipif(not REAL.is_dir(), reason="the real vaults are not on this machine")
@pytest.mark.parametrize("every", [pytest.param(1, marks=pytest.mark.slow), 10])
def test_every_real_note_is_spliced_as_the_round_trip_writes_it(every: int) -> None:
    """Every note of the real vaults (BOMs, CRLF, odd YAML, Spanish), promoted and flagged: the
    same bytes as the round trip, and at least 90% of the edits spliced. Every tenth note by
    default, all of them in the slow run."""
    files = sorted(REAL.rglob("*.md"))[::every]
    assert len(files) > 2000 // every
    paths = Paths()
    for path in files:
        promote_and_flag(path.read_bytes(), path.name, paths)
    assert paths.spliced >= 0.9 * (paths.spliced + paths.round_trip), (paths.spliced, paths.round_trip)


PATCH = (
    "---\ntype: fact\nentity: e\npredicate: p\nvalue: Nuevo\nobserved_at: 2027-01-01\n"
    "source_url: https://example.org/otra\ntags: [obsidian, español]\nparticipants:\n  - Ada\n---\nMás.\n"
)


@pytest.mark.skipif(not REAL.is_dir(), reason="the real vaults are not on this machine")
@pytest.mark.parametrize("every", [pytest.param(1, marks=pytest.mark.slow), 10])
def test_every_real_note_is_patched_as_the_round_trip_patches_it(every: int) -> None:
    """A candidate that adds a source, tags, a participant and a newer value, merged into
    every real note: the same bytes and the same summary as through the round trip."""
    for path in sorted(REAL.rglob("*.md"))[::every]:
        raw = path.read_bytes()
        with contextlib.suppress(UnicodeDecodeError):
            fast, reference = merged_both_ways(raw.decode("utf-8"), PATCH)
            assert fast == reference, path


def test_blank_lines_after_a_nested_empty_value_go_the_round_trip_way() -> None:
    """Hypothesis found it: ruamel keeps the blank line after `type:`'s empty `k:` with the key
    that follows, so when that key moves (`user_approved` set again) the splice must not guess."""
    raw = b"---\ntitle:\n  k:\n\ntags:\ntype:\n  k:\n\nuser_approved:\naliases:\ncurated_from:\n---\n"
    promote_and_flag(raw, "c.md")
