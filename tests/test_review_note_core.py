"""The review note's text, pure (`core.review_note`): what is read back from any edit of it, and
that the person's own lines survive every rewrite."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from memory_curator.core import review_note as rn
from tests.conftest import examples

ITEMS = (
    rn.Item(
        "_inbox/a/one.md",
        "sha256:1",
        "One",
        "undecided",
        "a criterion could not be decided",
        quoted="- [x] drop ^mc-000000000000-drop\n%% mc:begin 000000000000 %%\n````\n",
        offers=(rn.Offer("promote", "facts/one/x.md"), rn.Offer("drop"), rn.Offer("leave")),
    ),
    rn.Item(
        "_inbox/a/two.md",
        "sha256:2",
        "Two",
        "contradiction",
        "a different value",
        concerns="facts/two/x.md",
        target_digest="sha256:t",
        quoted="value | old | new",
        offers=(*(rn.Offer(v, "facts/two/x.md") for v in ("new", "old", "both")), rn.Offer("drop"), rn.Offer("leave")),
    ),
    rn.Item("_inbox/a/three.md", "sha256:3", "Three", "private", "w", offers=(rn.Offer("drop"), rn.Offer("leave"))),
)
DROPPED = (rn.Dropped("_inbox/.dropped/a/x.md", "rule", "2026-11-20"),)
HEAD = rn.head_section(rn.Head((("undecided", 3),), (), DROPPED, "hint"))
SECTIONS = [rn.item_section(item) for item in ITEMS]
TEXT = rn.render(HEAD, SECTIONS)
LINES = TEXT.split("\n")[:-1]
SPANS = {}  # section id -> (first line, last line) in TEXT
for section in (HEAD, *SECTIONS):
    start = LINES.index(rn.BEGIN.format(id=section.id))
    SPANS[section.id] = (start, start + len(section.lines) - 1)
TASKS = [  # (line, id, verb) of each task line of ours (not those quoted in a fence)
    (n, m.group(1), m.group(2))
    for n, line in enumerate(LINES)
    if line.startswith("- [ ] ") and (m := re.search(r"\^mc-(\w+)-(\w+)$", line))
]
PERSON = st.text(st.characters(codec="utf-8", exclude_characters="\r\n\x85\u2028\u2029"), max_size=30)


def owner(n: int) -> str:
    return next(sid for sid, (a, b) in SPANS.items() if a <= n <= b)


@settings(max_examples=examples(300), deadline=None)
@given(
    ticks=st.sets(st.sampled_from(range(len(TASKS)))),
    reasons=st.dictionaries(st.sampled_from(range(len(TASKS))), st.text("abc xyz:", min_size=1, max_size=12)),
    deleted=st.sets(st.sampled_from(range(len(LINES))), max_size=2),
    inserted=st.lists(st.tuples(st.integers(0, len(LINES)), PERSON), max_size=6),
    crlf=st.booleans(),
    bom=st.booleans(),
)
@example(ticks=set(), reasons={}, deleted={32, 33}, inserted=[], crlf=False, bom=False)  # seen failing in the suite
def test_any_edit_reads_only_intact_ticks_and_keeps_every_own_line(ticks, reasons, deleted, inserted, crlf, bom):
    lines = list(LINES)
    for k in ticks:
        n, _, verb = TASKS[k]
        lines[n] = lines[n].replace("- [ ] ", "- [x] ", 1)
        if verb == "drop" and k in reasons:  # a reason typed after the verb
            lines[n] = lines[n].replace(" drop ^mc-", f" drop: {reasons[k]} ^mc-")
    own = [f"person line {i}: {text}" for i, (_, text) in enumerate(inserted)]
    out: list[str] = []
    for n in range(len(lines) + 1):
        out += [own[i] for i, (at, _) in enumerate(inserted) if at == n]
        if n < len(lines) and n not in deleted:
            out.append(lines[n])
    newline = "\r\n" if crlf else "\n"
    text = ("\ufeff" if bom else "") + newline.join(out) + newline
    reading = rn.read(text, [HEAD, *SECTIONS])

    for sid, (first, last) in SPANS.items():
        # a line of its own deleted (its end marker included; the blank line after it is no part
        # of what is read): nothing of it is read. Lines typed into it (a comment) are the
        # person's: its ticks are still read, and the lines kept (issue 37)
        cut = bool(set(range(first, last)) & deleted)
        verbs = sorted(TASKS[k][2] if sid != rn.HEAD else TASKS[k][1] for k in ticks if owner(TASKS[k][0]) == sid)
        if sid == rn.HEAD:
            assert sorted(reading.restores) == ([] if cut else verbs)
            continue
        got = reading.ticks.get(sid)
        if cut:
            assert got is None or got.mangled
            continue
        assert got is not None and got.mangled is None and sorted(got.verbs) == verbs
        drop = [k for k in ticks if owner(TASKS[k][0]) == sid and TASKS[k][2] == "drop" and k in reasons]
        if drop and " ".join(reasons[drop[0]].strip(" :").split()):
            assert got.reason is not None
    again = rn.render(HEAD, SECTIONS[1:], reading.own, reading.newline, reading.bom, reading.order)  # one item left
    kept = iter(again.removeprefix("\ufeff").split(newline))
    assert all(line in kept for line in out if line in own)  # every own line, in the note's order
    assert (reading.newline, reading.bom) == (newline, bom)


def test_a_section_read_back_untouched_has_no_ticks_and_rewrites_to_the_same_bytes() -> None:
    reading = rn.read(TEXT, [HEAD, *SECTIONS])
    assert all(t.verbs == () and t.mangled is None for t in reading.ticks.values())
    assert rn.render(HEAD, SECTIONS, reading.own, reading.newline, reading.bom) == TEXT


def test_agent_text_is_fenced_longer_than_its_own_fences_and_its_ids_are_no_sections() -> None:
    section = SECTIONS[0]
    fence = next(line for line in section.lines if line.startswith("`"))
    assert fence == "`````text"  # one longer than the agent's four
    reading = rn.read(TEXT, [HEAD, *SECTIONS])
    assert "000000000000" not in reading.ticks


def test_titles_and_reasons_are_inert() -> None:
    item = rn.Item("_inbox/a/x.md", "h", "![[secret]] <b>hi</b> %%c%% #tag", "undecided", "w", "[[x]] `y`")
    heading = next(line for line in rn.item_section(item).lines if line.startswith("## "))
    assert heading == "## secret b hi /b c tag · `_inbox/a/x.md`"
    assert "[[" not in rn.link("_inbox/a/we]ird.md")
    assert rn.obsidian_url("My Vault", "_meta/Inbox review.md") == (
        "obsidian://open?vault=My%20Vault&file=_meta%2FInbox%20review"
    )


def test_a_section_copied_into_an_agents_text_neither_ticks_nor_blocks_the_real_one() -> None:
    victim = SECTIONS[2]
    forged = "\n".join(victim.lines).replace("- [ ] drop", "- [x] drop")
    evil = rn.Item("_inbox/b/evil.md", "sha256:e", "Evil", "undecided", "w", quoted=forged, offers=(rn.Offer("leave"),))
    sections = [rn.item_section(evil), *SECTIONS]
    text = rn.render(HEAD, sections)
    real = f"- [ ] leave ^mc-{victim.id}-leave"
    assert text.count(real) == 2  # quoted once, and the real one
    at = text.rindex(real)
    text = text[:at] + real.replace("[ ]", "[x]") + text[at + len(real) :]
    reading = rn.read(text, [HEAD, *sections])
    assert reading.ticks[victim.id] == rn.Tick(victim.id, ("leave",))  # the person's tick, not the forged drop


BREAKS = ["\r\n", "\r", "\x85", "\u2028", "\u2029", "\x0b", "\x0c"]  # what Obsidian or CommonMark may break a line on


@pytest.mark.parametrize("sep", BREAKS, ids=["CRLF", "CR", "NEL", "LS", "PS", "VT", "FF"])
def test_every_line_break_is_one_before_the_fence_is_chosen(sep: str) -> None:
    lines = rn.fenced(f"x{sep}````{sep}- [ ] drop ^mc-000000000000-promote{sep}%%{sep}%%%")
    assert lines == [
        "`````text",
        "x",
        "````",
        "- [ ] drop ^mc-000000000000-promote",
        "%\u200b%",
        "%\u200b%\u200b%",
        "`````",
    ]


def test_a_name_is_one_line_of_code_no_character_of_it_can_end() -> None:
    assert rn.code("_inbox/a\rb/``x`.md") == "```_inbox/a\\rb/``x`.md```"
    assert rn.code("`x") == "`` `x ``"
    assert rn.code("_inbox/a/\udcff\udcfe.md") == "`_inbox/a/\\xff\\xfe.md`"  # a name that is not UTF-8
    assert rn.link("_inbox/a/\udcff.md", "t") == "`_inbox/a/\\xff.md` (no link: its name holds what a link cannot)"
    assert rn.link("_inbox/a/x\u2028y.md").startswith("`_inbox/a/x\\u2028y.md`")
    assert rn.inert("a\rb\u2028c\x1b[31m\udcff") == "a b c\\x1b 31m\\xff"


def test_a_fake_box_toggled_in_source_mode_inside_the_quote_is_no_tick() -> None:
    """The quoted line carries the item's own id and verb: ticking it is a changed quote, not a box."""
    probe = rn.item_section(rn.Item("_inbox/a/spam.md", "sha256:s", "Spam", "undecided", "w"))
    fake = f"- [ ] drop (spam) ^mc-{probe.id}-promote"
    offers = (rn.Offer("promote", "insights/spam.md"), rn.Offer("drop"), rn.Offer("leave"))
    item = rn.Item("_inbox/a/spam.md", "sha256:s", "Spam", "undecided", "w", quoted=fake, offers=offers)
    section = rn.item_section(item)
    assert section.id == probe.id and fake in section.lines
    text = rn.render(HEAD, [section]).replace(fake, fake.replace("[ ]", "[x]"))
    tick = rn.read(text, [HEAD, section]).ticks[section.id]
    assert tick.verbs == () and tick.mangled  # nothing applied, and the item says why


def test_identical_titles_get_unique_headings_and_a_private_items_reason_is_said_once() -> None:
    twins = [rn.Item(f"_inbox/{a}/note.md", "sha256:1", "Same title", "undecided", "w") for a in ("a", "b")]
    private = rn.Item("_inbox/a/p.md", "sha256:2", "a private item from a", "private", "w", "private content (#x)")
    items = [*twins, private]  # the heading names the path: two of one title differ
    headings = [line for item in items for line in rn.item_section(item).lines if line.startswith("## ")]
    assert len(set(headings)) == 3, headings
    assert not [line for line in rn.item_section(items[2]).lines if line.startswith("Curator:")]
    assert any("leave" in line and "stays" in line for line in HEAD.lines)
