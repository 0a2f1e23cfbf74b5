"""Each decision of a candidate of the size limit under 1 s (issue 36), with the same verdicts:
every derived form of a big text (its parse, secret scan, tags, tokens, folded text) is made once
per candidate, not once per question asked of it (2.5 s a decision before, each 1 MiB text
tokenised, parsed and folded several times over)."""

from __future__ import annotations

import gc
import json
import math
import re
import statistics
import string
import time
import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_curator.commands import sweep
from memory_curator.core import candidate, comparison, notes, words
from memory_curator.core.settings import MAX_CANDIDATE_BYTES
from memory_curator.index import rows, similarity
from tests.conftest import examples
from tests.test_similarity_linear import prose, texts

PUNCT = str.maketrans("", "", string.punctuation)


def fact(n: int, body: str) -> str:
    head = f"---\ntype: fact\nentity: widget-{n}\npredicate: history\nvalue: Widget {n} history.\n"
    return head + f"source_url: https://example.dev/{n}\nconfidence: 2\ntags: [t{n}]\n---\n" + body


def test_a_sweep_parses_and_scans_each_candidate_once(
    empty_vault: Path, write_candidate: Callable[..., Path], invoke: Callable[..., Result], monkeypatch
) -> None:
    """The listing only needs to know a file is settled and its hash: the secret scan (and the
    privacy parse) are the turn's, once (each ran twice a candidate, 0.1 s at 1 MiB)."""
    scanned: list[int] = []
    real = candidate.scan
    monkeypatch.setattr(candidate, "scan", lambda text, allow: scanned.append(len(text)) or real(text, allow))
    for n in range(3):
        write_candidate(empty_vault, f"c{n}.md", fact(n, f"Widget {n} was made in 2019 by the works. #tag{n}\n"))
    result = invoke("run", "--no-judge", "--vault", str(empty_vault))
    assert result.exit_code == 0, result.output
    assert len(scanned) == 3
    assert len(list(empty_vault.glob("facts/widget-*/history.md"))) == 3


def test_a_candidates_body_is_parsed_as_markdown_once_for_its_tags(
    empty_vault: Path, write_candidate: Callable[..., Path], invoke: Callable[..., Result], monkeypatch
) -> None:
    """Its tags are asked by privacy, each rule's `has_tag` and the merge: the body is parsed once."""
    body = "A long history of the widget, with #history and `#code` in it.\n" * 50
    parsed: list[str] = []
    real = notes.prose
    monkeypatch.setattr(notes, "prose", lambda text: parsed.append(text) or real(text))
    write_candidate(empty_vault, "c.md", fact(1, body))
    result = invoke("run", "--no-judge", "--vault", str(empty_vault))
    assert result.exit_code == 0, result.output
    assert sum(1 for text in parsed if text == body) == 1


def test_the_language_of_a_long_text_is_read_from_its_first_words_only(monkeypatch) -> None:
    """`detect` reads the first `DETECTED` words: tokenising 1 MiB for them cost 70 ms a question."""
    text = prose(MAX_CANDIDATE_BYTES, 4) + " the of and"
    seen: list[int] = []
    expected = words.detect(words.tokens(text))
    real = words._fresh
    monkeypatch.setattr(words, "_fresh", lambda found: seen.append(len(found)) or real(found))
    monkeypatch.setattr(words, "_tokens", lambda found: tuple(words._fresh(found)))  # none kept
    assert words.language_of(text) == expected
    assert seen and max(seen) < 64 * 1024


@settings(max_examples=examples(300), deadline=None)
@given(
    text=st.lists(st.sampled_from(["a", "bb", "the", "él", "ΣΑΣ", "ß", "—", " ", "\n", ".", "_", "x1", "ﬁ", "é"])).map(
        "".join
    ),
    chars=st.integers(1, 40),
    count=st.integers(0, 30),
)
def test_the_first_words_of_a_text_read_in_pieces_are_its_first_words(text: str, chars: int, count: int) -> None:
    """Read `chars` characters at first (then more), a text's first `count` tokens are those of all of it."""
    for long in (text, (text + " ") * 20):
        assert words.first_tokens(long, count, chars) == words.tokens(long)[:count]


def reference_folded(text: str) -> str:
    """`norm_text`'s folding as it was written first (the reference)."""
    return unicodedata.normalize("NFKC", text).casefold().translate(PUNCT)


def reference_norm_text(value: object) -> str:
    return " ".join(reference_folded(str(value)).split())


@settings(max_examples=examples(500), deadline=None)
@given(value=st.text(st.characters(exclude_categories=())) | st.integers() | st.lists(st.text(max_size=5), max_size=3))
def test_norm_text_folds_as_it_did(value: object) -> None:
    assert comparison.norm_text(value) == reference_norm_text(value)


JOINS = "aA \n\t.,-\u0301\u0308\u0327\u1100\u1161\u11a8\ufb01\u2460é\u00a0\u2028"  # marks, jamo, spaces
MARKED = st.text(st.sampled_from(JOINS), max_size=12)


@settings(max_examples=examples(800), deadline=None)
@given(title=MARKED | st.text(), value=MARKED | st.text(), body=MARKED | st.text())
def test_the_body_folded_once_gives_both_hashes_as_before(title: str, value: str, body: str) -> None:
    """The text hash and the body hash from one folding of the body (`rows.hashes`) are those of
    the whole text and of the body folded apart (combining marks, Hangul jamo, ligatures and
    spaces at the joins included)."""
    whole = reference_norm_text(f"{title}\n{value}\n{body}")
    assert rows.folded_parts(title, value, body) == (whole, reference_norm_text(body))
    assert rows.hashes(title, value, body) == (rows._hash(whole), rows._hash(reference_norm_text(body)))


@settings(max_examples=examples(100), deadline=None)
@given(text=st.text(), times=st.integers(1, 3000))
def test_tokens_kept_for_a_text_are_its_tokens(text: str, times: int) -> None:
    """Tokens are remembered for the last few long texts: a caller changing its list changes no other's."""
    long = text * times
    first = words.tokens(long)
    assert first == re.findall(r"[^\W_]+", words.fold(long))
    first.append("changed")
    assert words.tokens(long) == re.findall(r"[^\W_]+", words.fold(long))


def sweep_json(root: Path, invoke: Callable[..., Result]) -> list[dict[str, object]]:
    result = invoke("run", "--json", "--no-judge", "--vault", str(root))
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    return [dict(a, moved_to=None) for agent in data["agents"] for a in agent["actions"]]


def test_a_sweep_decides_as_it_did_with_every_text_derived_afresh(
    vault: Path, tmp_path: Path, invoke: Callable[..., Result], monkeypatch
) -> None:
    """The fixture vault's inbox swept twice from the same bytes: once as is, once with every cache
    of derived text emptied before each use (the reference): the same verdicts, reasons and scores."""
    import shutil

    other = tmp_path / "again"
    shutil.copytree(vault, other, symlinks=True)
    kept = sweep_json(vault, invoke)
    with monkeypatch.context() as patch:
        patch.setattr(words, "_tokens", words._tokens.__wrapped__)  # type: ignore[attr-defined]
        patch.setattr(notes, "_inline_tags", notes._inline_tags.__wrapped__)  # type: ignore[attr-defined]
        patch.setattr(comparison, "_folded", reference_folded)
        fresh = sweep_json(other, invoke)
    assert kept and kept == fresh


def three_big_candidates(
    root: Path, write_candidate: Callable[..., Path], invoke: Callable[..., Result], note: int, each: int
) -> str:
    """A research note of `note` characters in the candidates' words, a fact of `each` promoted,
    and three more waiting that share most of its text, none of them ASCII (folded character by
    character): the text they share."""
    (root / "research").mkdir()
    long = "---\ntype: research\ntitle: Long history\n---\nNaïve — " + prose(note, 7)
    (root / "research/long-history.md").write_text(long, encoding="utf-8")
    base = "Café — " + prose(each, 3)
    write_candidate(root, "big0.md", fact(0, base), agent="agent-0")
    assert invoke("run", "--no-judge", "--vault", str(root)).exit_code == 0
    for n in range(1, 4):
        write_candidate(root, f"big{n}.md", fact(n, base.replace("w5x9", f"v{n}")), agent=f"agent-{n}")
    return base


def test_each_long_text_is_tokenised_once_a_decision(
    empty_vault: Path, write_candidate: Callable[..., Path], invoke: Callable[..., Result], monkeypatch
) -> None:
    """The candidate and each note it is read against: their words are asked for by the search,
    the scores, the restating check and the conflicts, and made once (each a 1 MiB text's 50-70
    ms; issue 36). The counted form of the timing below, which a machine's speed cannot move."""
    three_big_candidates(empty_vault, write_candidate, invoke, 4 * words.KEPT_FROM, 4 * words.KEPT_FROM)
    made: list[list[str]] = []
    real_fresh, real_decide = words._fresh, sweep._decide

    def fresh(text: str) -> list[str]:
        if made and len(text) >= words.KEPT_FROM:
            made[-1].append(text)
        return real_fresh(text)

    def decide(*args, **kwargs):  # type: ignore[no-untyped-def]
        made.append([])
        return real_decide(*args, **kwargs)

    monkeypatch.setattr(words, "_fresh", fresh)
    monkeypatch.setattr(sweep, "_decide", decide)
    words._tokens.cache_clear()  # type: ignore[attr-defined]
    result = invoke("run", "--json", "--no-judge", "--vault", str(empty_vault))
    assert result.exit_code == 0, result.output
    assert len(made) == 3
    assert all(texts for texts in made)  # the long texts are read, and through `_fresh`
    assert all(len(texts) == len(set(texts)) for texts in made), [len(t) for t in made]


# A decision at the size limit costs ~16 readings of its text (0.6-0.7 s here, ~55 before issue
# 36's fix): the bound is relative, since a machine 1.6 times slower failed the absolute 1 s.
READINGS = 30


@pytest.mark.slow
def test_each_decision_of_a_candidate_of_the_size_limit_costs_a_few_readings_of_its_text(
    empty_vault: Path, write_candidate: Callable[..., Path], invoke: Callable[..., Result], monkeypatch
) -> None:
    """A vault holding a note of 1 MiB in the candidates' words and a promoted candidate of 1 MiB
    that the next ones share most of their text with, none of them ASCII: each decision's CPU
    time (process time: the machine is shared), the median of three, under `READINGS` times one
    reading of the candidate's words (folded and tokenised) on the same machine. Issue 36 asked
    for under 1 s: that figure is a machine's, so `bench.py --only big` reports it (2.5 s before)."""
    base = three_big_candidates(
        empty_vault, write_candidate, invoke, MAX_CANDIDATE_BYTES - 100, MAX_CANDIDATE_BYTES - 1000
    )
    spent: list[float] = []
    real = sweep._decide

    def timed(*args, **kwargs):  # type: ignore[no-untyped-def]
        started = time.process_time()
        try:
            return real(*args, **kwargs)
        finally:
            spent.append(time.process_time() - started)

    monkeypatch.setattr(sweep, "_decide", timed)
    gc.collect()  # a sweep runs in a process of its own: the suite's earlier tests' objects are no
    gc.freeze()  # part of its decisions' cost (after test_contradicts_real's vaults: a median of 1.004 s)
    try:
        result = invoke("run", "--json", "--no-judge", "--vault", str(empty_vault))
    finally:
        gc.unfreeze()
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["processed"] == 3
    assert len(spent) == 3
    reading = min(cpu(lambda: words._fresh(base)) for _ in range(5))  # the least noisy of five
    assert statistics.median(spent) < READINGS * reading, (spent, reading)


def cpu(work: Callable[[], object]) -> float:
    """The process time `work` took (the machine is shared: wall time counts the others')."""
    started = time.process_time()
    work()
    return time.process_time() - started


def reference_best_window(probe: similarity.Probe, spots: list[tuple[int, str]], cap: float) -> float:
    """`similarity._best_window` as it was written first, counting in a dict keyed by stems."""
    weights, held = probe.weights, dict[str, int]()
    weight, left, best = 0.0, 0, 0.0
    for right, (where, word) in enumerate(spots):
        count = held.get(word, 0)
        if not count:
            weight += weights[word]
        held[word] = count + 1
        while where - spots[left][0] >= cap:
            gone = spots[left][1]
            held[gone] -= 1
            if not held[gone]:
                weight -= weights[gone]
                del held[gone]
            left += 1
        value = weight * (right - left + 1) / (where - spots[left][0] + 1)
        if len(held) < similarity.MIN_INFO:
            value *= similarity.information(len(held)) ** 2
        best = max(best, value)
    return math.sqrt(max(best, 0.0) / probe.weight)


@settings(max_examples=examples(300), deadline=None)
@given(candidate=texts, note=texts, filler=st.integers(0, 40), cap=st.sampled_from([1, 2, 3.5, 7, 20, math.inf]))
def test_windows_counted_in_lists_score_to_the_last_bit_as_counted_in_dicts(
    candidate: str, note: str, filler: int, cap: float
) -> None:
    probe = similarity.probe(words.tokens(candidate), {"alpha": 3, "beta": 40}, 100, 50.0, "english")
    read = similarity.read(probe, f"{note} {'other ' * filler}{note}")
    if probe.weight <= 0 or not read.spots:
        return
    assert similarity._best_window(probe, read.spots, cap) == reference_best_window(probe, read.spots, cap)
