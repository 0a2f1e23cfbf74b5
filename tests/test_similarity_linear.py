"""Similarity in linear time (issue 36): a candidate's 3-word runs are looked up in a set of the
note's, never searched for in its text one run at a time (two candidates of the size limit
sharing their words took 49 s, twenty took 14 minutes)."""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_curator.core import words
from memory_curator.core.settings import MAX_CANDIDATE_BYTES
from memory_curator.index import similarity
from tests.conftest import examples

VOCABULARY = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta", "b2", "iota"]


def substring_containment(probe: similarity.Probe, note_words: list[str]) -> float:
    """The definition containment had before (the reference): each of the candidate's distinct
    3-word runs searched for in the note's words joined by spaces."""
    runs = {" ".join(probe.words[i : i + 3]) for i in range(len(probe.words) - 2)}
    if not runs:
        return 0.0
    joined = f" {' '.join(note_words)} "
    return sum(1 for run in runs if f" {run} " in joined) / len(runs)


texts = st.lists(st.sampled_from(VOCABULARY), max_size=60).map(" ".join)


@settings(max_examples=examples(300), deadline=None)
@given(candidate=texts, note=texts, punctuation=st.sampled_from([" ", ", ", ". ", " — ", "\n"]))
def test_containment_is_the_share_of_runs_a_substring_search_finds(candidate: str, note: str, punctuation: str) -> None:
    probe = similarity.probe(words.tokens(candidate), {}, 100, 50.0, "english")
    note_words = words.tokens(note.replace(" ", punctuation))
    assert similarity.containment(probe, note_words) == substring_containment(probe, note_words)


def test_containment_of_a_candidate_in_itself_and_in_a_stranger() -> None:
    text = "the quick brown fox jumps over the lazy dog and the quick brown cat"
    probe = similarity.probe(words.tokens(text), {}, 100, 50.0, "english")
    assert similarity.containment(probe, words.tokens(text)) == 1.0
    assert similarity.containment(probe, words.tokens("nothing of it here at all")) == 0.0
    assert similarity.containment(probe, words.tokens("quick brown fox")) == pytest.approx(1 / 11)


def prose(size: int, seed: int) -> str:
    """About `size` bytes of sentences from a 3,000-word vocabulary (a text and its neighbour share
    most of their 3-word runs when drawn from one seed)."""
    rng = random.Random(seed)
    vocabulary = [f"w{n}x{n * 7 % 13}" for n in range(3000)]
    out, length = [], 0
    while length < size:
        sentence = " ".join(rng.choices(vocabulary, k=12)) + ". "
        out.append(sentence)
        length += len(sentence)
    return "".join(out)[:size]


@pytest.mark.slow
def test_two_texts_of_the_size_limit_sharing_their_words_are_scored_in_seconds() -> None:
    """One note and one candidate of `MAX_CANDIDATE_BYTES`, the one an edited copy of the
    other: every score a decision asks of them, under a generous 10 s (49 s before)."""
    note = prose(MAX_CANDIDATE_BYTES, 1)
    candidate = note.replace("w1x7", "changed")
    started = time.perf_counter()
    probe = similarity.probe(words.tokens(candidate), {}, 1000, 200.0, "english")
    read = similarity.read(probe, note)
    same, topic = similarity.same(probe, read), similarity.topic(probe, read)
    assert time.perf_counter() - started < 10
    assert same > 0.9 and topic > 0.9


@pytest.mark.slow
def test_a_sweep_of_two_candidates_of_the_size_limit_sharing_their_text_ends_in_seconds(
    empty_vault: Path, write_candidate: Callable[..., Path], invoke: Callable[..., Result]
) -> None:
    """The hostile agent's case end to end: the second candidate is read against the first, which
    the sweep promoted (39 s here before; under a generous 10 s now)."""
    base = prose(MAX_CANDIDATE_BYTES - 1000, 3)
    for n in range(2):
        head = f"---\ntype: fact\nentity: widget-{n}\npredicate: history\nvalue: Widget {n} history.\n"
        head += f"source_url: https://example.dev/{n}\nconfidence: 2\n---\n"
        write_candidate(empty_vault, "big.md", head + base.replace("w5x9", f"v{n}"), agent=f"agent-{n}")
    started = time.perf_counter()
    result = invoke("run", "--no-judge", "--vault", str(empty_vault))
    assert time.perf_counter() - started < 10, result.output
    assert result.exit_code == 0, result.output
    assert (empty_vault / "facts/widget-0/history.md").exists()
    assert (empty_vault / "facts/widget-1/history.md").exists()


@settings(max_examples=examples(200), deadline=None)
@given(candidate=texts, note=texts, filler=st.integers(0, 40))
def test_same_reads_only_the_windows_shorter_than_the_match_and_scores_as_all_of_them(
    candidate: str, note: str, filler: int
) -> None:
    """A window at least as long as the note's whole match holds all of it (the last window read):
    skipping those leaves `same` as reading every window gave it."""
    probe = similarity.probe(words.tokens(candidate), {}, 100, 50.0, "english")
    read = similarity.read(probe, f"{note} {'other ' * filler}{note}")
    if probe.weight <= 0 or not read.spots:
        return
    caps = [probe.length * times for times in similarity.WINDOWS]
    every = max(similarity._best_window(probe, read.spots, cap) for cap in [*caps, math.inf])
    shared = {s for _, s in read.spots}
    bound = math.sqrt(sum(probe.weights[s] for s in shared) / probe.weight) * similarity.information(len(shared))
    whole = similarity._best_window(probe, read.spots, math.inf)
    assert similarity.same(probe, read) == (every if bound >= similarity.LOOKED else whole)
