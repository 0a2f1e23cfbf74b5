"""Values are read as Obsidian reads them (YAML 1.2) and written back exactly as written:
promote, patch, `history:`, restore and undo keep each value's text byte for byte."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_curator.core import candidate as cand
from memory_curator.core.comparison import norm_text
from memory_curator.core.compose import promoted_text
from memory_curator.core.merge import merge
from memory_curator.core.notes import BOM, parse
from memory_curator.store.rules_file import DEFAULT_RULES, load

from conftest import FIXTURES, age, examples

RULES = load(DEFAULT_RULES)
NOW = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC)

# Spellings whose meaning differs between YAML 1.1 (PyYAML) and 1.2 (Obsidian, ruamel), and
# spellings that a re-emitting writer would change (`+1` -> `1`, `~` -> empty, zones dropped).
SPELLINGS = [
    "yes", "no", "on", "off", "y", "n", "NO", "Off", "1:20", "010", "0o10", "0x1F", "1_000", ".5",
    "+1", "~", "null", "2026-11-30T20:00:00Z", "2026-11-30T20:00:00+01:00", "2026-11-30T20:00:00",
    "2026-11-30", "'NO'", '"on"', "'010'", '"2026-11-30T20:00:00Z"', "It's plain", "'say ''hi'''", '"tab\\there"',
]  # fmt: skip
NULLISH = {"~", "null"}
WHEN = ["2026-11-30T20:00:00Z", "2026-11-30T21:00:00+01:00", "'2026-11-30T20:00:00Z'", "2026-11-30"]
WHEN_LATER = ["2026-12-30T20:00:00Z", "2026-12-30T21:00:00+01:00", '"2026-12-30T20:00:00Z"', "2026-12-31"]


def fact(value: str, extra: str, when: str, source: str = "https://example.dev/a") -> str:
    return (
        "---\ntype: fact\nentity: widget\npredicate: size\n"
        f"value: {value}\nextra: {extra}\ncaptured_at: {when}\nsource_url: {source}\nconfidence: 2\n"
        "---\nThe widget's size, as measured.\n"
    )


def style(text: str, crlf: bool, bom: bool) -> str:
    return (BOM if bom else "") + (text.replace("\n", "\r\n") if crlf else text)


def build(text: str, name: str = "c.md") -> cand.Candidate:
    return cand.build(text.encode("utf-8"), f"_inbox/agent-a/{name}", "agent-a", RULES)


def lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").split("\n")


@pytest.mark.parametrize(
    ("written", "read"),
    [
        ("NO", "NO"), ("on", "on"), ("yes", "yes"), ("1:20", "1:20"), ("010", 10), ("0o10", 8), ("0x1F", 31),
        ("1_000", "1_000"), (".5", 0.5), ("+1", 1), ("~", None), ("null", None), ("True", True), ("FALSE", False),
        ("2026-11-30T20:00:00Z", "2026-11-30T20:00:00Z"), ("2026-02-30", "2026-02-30"), ("'NO'", "NO"),
    ],
)  # fmt: skip
def test_frontmatter_is_read_as_yaml_1_2(written: str, read: object) -> None:
    assert parse(f"---\nv: {written}\n---\n").frontmatter["v"] == read


def test_the_issue_table_round_trips_through_promote_and_patch() -> None:
    text = fact("NO", "x", "2026-11-30T20:00:00Z").replace("extra: x\n", "window: 1:20\nflag: on\nzip: 010\n")
    promoted = promoted_text(build(text), NOW)
    for line in ("value: NO", "window: 1:20", "flag: on", "zip: 010", "captured_at: 2026-11-30T20:00:00Z"):
        assert line in lines(promoted)
    newer = build(fact("yes", "x", "2026-12-01T08:00:00+01:00", "https://example.dev/b"), "d.md")
    patched = merge(promoted, newer, NOW).text
    out = lines(patched)
    assert "value: yes" in out and "captured_at: 2026-12-01T08:00:00+01:00" in out
    history = out[out.index("history:") :]
    assert "  - value: NO" in history and "    captured_at: 2026-11-30T20:00:00Z" in history  # the zone is kept
    for line in ("window: 1:20", "flag: on", "zip: 010"):
        assert line in out


def test_crlf_candidate_is_promoted_without_a_doubled_cr() -> None:
    text = style(fact("NO", "on", "2026-11-30T20:00:00Z"), crlf=True, bom=False)
    promoted = promoted_text(build(text), NOW)
    assert "\r\r" not in promoted
    assert promoted.count("\r\n") == promoted.count("\n")  # the candidate's newline style throughout
    assert promoted.endswith("The widget's size, as measured.\r\n")


def test_promote_keeps_every_key_it_does_not_own_byte_for_byte() -> None:
    text = (
        "---\n# an agent's comment\ntype: fact\nentity: 'widget'\npredicate: \"size\"\nvalue: 1:20  # mm:ss\n"
        "aliases: [Widget, 'the widget']\nsource_url: https://example.dev/a\nconfidence: 2\n"
        "nested:\n    deep: {a: +1, b: ~}\n1: one\nnull: yes\ntags: [Size, '#metrics', needs-review]\n---\nBody.\n"
    )
    promoted = promoted_text(build(text), NOW)
    head, _, tail = promoted.partition("tags:")
    assert head == text[: text.index("tags:")]  # everything before the key a promote owns
    assert tail.startswith("\n  - size\n  - metrics\ncurated_from:\n")
    assert promoted.endswith("---\nBody.\n")


def test_keys_that_are_not_text_never_collide() -> None:
    """`1:` and `true:` are two keys for Obsidian; ruamel cannot load them together, so the
    promote falls back to writing every value's text under quoted keys: nothing merges."""
    text = "---\ntype: fact\nentity: w\npredicate: p\nvalue: +1\n1: one\ntrue: yes\nnull: ~\n---\nBody.\n"
    promoted = promoted_text(build(text), NOW)
    assert parse(promoted).frontmatter | {} == {
        **parse(text).frontmatter,
        "curated_from": parse(promoted).frontmatter["curated_from"],
    }
    assert {"value: +1", "'1': one", "'true': yes", "'null': ~"} <= set(lines(promoted))


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    value=st.sampled_from([s for s in SPELLINGS if s not in NULLISH]),
    extra=st.sampled_from(SPELLINGS),
    when=st.sampled_from(WHEN),
    crlf=st.booleans(),
    bom=st.booleans(),
)
def test_promote_keeps_each_value_text(value: str, extra: str, when: str, crlf: bool, bom: bool) -> None:
    text = style(fact(value, extra, when), crlf, bom)
    promoted = promoted_text(build(text), NOW)
    out = lines(promoted)
    assert f"value: {value}" in out and f"extra: {extra}" in out and f"captured_at: {when}" in out
    assert "\r\r" not in promoted and promoted.startswith(BOM if bom else "---")
    assert promoted.count("\r\n") == (promoted.count("\n") if crlf else 0)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    old=st.sampled_from([s for s in SPELLINGS if s not in NULLISH]),
    new=st.sampled_from([s for s in SPELLINGS if s not in NULLISH]),
    extra=st.sampled_from(SPELLINGS),
    times=st.tuples(st.sampled_from(WHEN), st.sampled_from(WHEN_LATER)),
    newer=st.booleans(),
    crlf=st.booleans(),
)
def test_patch_keeps_each_value_text_in_both_directions(
    old: str, new: str, extra: str, times: tuple[str, str], newer: bool, crlf: bool
) -> None:
    """The value that stays current and the one moved to `history:` both keep their text,
    whichever observation is newer; a field the note lacks arrives as the candidate wrote it."""
    if norm_text(parse(f"---\nv: {old}\n---\n").frontmatter["v"]) == norm_text(
        parse(f"---\nv: {new}\n---\n").frontmatter["v"]
    ):
        return  # the same value: nothing moves
    early, late = times
    note = promoted_text(build(style(fact(old, "kept", early), crlf, False)), NOW)
    mine = late if newer else early.replace("2026-11-30", "2026-10-01")
    candidate = build(
        style(fact(new, "x", mine, "https://example.dev/b").replace("extra: x\n", f"added: {extra}\n"), crlf, False),
        "d.md",
    )
    patched = merge(note, candidate, NOW)
    assert patched.refused is None, patched.refused
    out = lines(patched.text)
    history = out[out.index("history:") :]
    current, moved = (new, old) if newer else (old, new)
    current_time, moved_time = (mine, early) if newer else (early, mine)
    assert f"value: {current}" in out[: out.index("history:")]
    assert f"captured_at: {current_time}" in out[: out.index("history:")]
    assert f"  - value: {moved}" in history and f"    captured_at: {moved_time}" in history
    assert "extra: kept" in out
    assert (f"added: {extra}" in out) is (extra not in NULLISH)  # an empty field is no news
    assert "\r\r" not in patched.text and patched.text.count("\r\n") == (patched.text.count("\n") if crlf else 0)


def sweep(invoke, root: Path) -> dict:
    result = invoke("run", "--vault", str(root), "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.fixture
def bare_vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    shutil.copytree(FIXTURES, root)
    shutil.rmtree(root / "_inbox")
    return root


def spelled_pair(root: Path, crlf: bool) -> tuple[Path, str, str]:
    """Two candidates carrying every spelling: one the default rules drop, one they promote."""
    keys = "".join(f"k{i}: {s}\n" for i, s in enumerate(SPELLINGS))
    unsourced = fact("NO", "on", "2026-11-30T20:00:00Z").replace("confidence: 2\n", "confidence: 1\n")
    dropped = style(unsourced.replace("source_url: https://example.dev/a\n", keys), crlf, False)
    promoted = style(
        fact("010", "+1", "2026-11-30T20:00:00+01:00").replace("extra: +1\n", "extra: +1\n" + keys), crlf, False
    )
    folder = root / "_inbox" / "agent-a"
    folder.mkdir(parents=True)
    (folder / "claim.md").write_bytes(dropped.encode())
    (folder / "fact.md").write_bytes(promoted.encode())
    for path in folder.iterdir():
        age(path)
    return folder, dropped, promoted


@pytest.mark.parametrize("crlf", [False, True])
def test_restore_keeps_every_spelling(bare_vault: Path, invoke, crlf: bool) -> None:
    folder, dropped, promoted = spelled_pair(bare_vault, crlf)
    out = sweep(invoke, bare_vault)
    verdicts = {Path(a["inbox_path"]).name: a["verdict"] for agent in out["agents"] for a in agent["actions"]}
    assert verdicts == {"claim.md": "drop", "fact.md": "promote"}
    note = (bare_vault / "facts/widget/size.md").read_bytes().decode("utf-8")
    assert lines(promoted)[1:-3] == lines(note)[1 : len(lines(promoted)) - 3]  # every key before the closing fence

    copy = next((bare_vault / "_inbox/.dropped/agent-a").iterdir())
    assert invoke("restore", str(copy)).exit_code == 0
    back = (folder / "claim.md").read_bytes().decode("utf-8")
    nl = "\r\n" if crlf else "\n"
    assert back == dropped.replace(f"---{nl}The", f"tags:{nl}  - needs-review{nl}---{nl}The")


@pytest.mark.parametrize("crlf", [False, True])
def test_undo_gives_back_every_spelling(bare_vault: Path, invoke, crlf: bool) -> None:
    folder, dropped, promoted = spelled_pair(bare_vault, crlf)
    assert sweep(invoke, bare_vault)["promoted"] == 1
    assert invoke("undo", "--last", "--vault", str(bare_vault)).exit_code == 0
    assert (folder / "claim.md").read_bytes() == dropped.encode()
    assert (folder / "fact.md").read_bytes() == promoted.encode()
    assert not (bare_vault / "facts/widget/size.md").exists()
