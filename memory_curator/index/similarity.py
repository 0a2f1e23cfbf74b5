"""Two questions, two numbers (issues 16 and 28). Pure: text in, numbers out.

The index finds the few notes that share a candidate's rarest words (BM25 in FTS5: fast, but its
raw score only ranks). Each is then read against the candidate, word by word as `core.words`
compares words (stems of the text's language, stopwords left out):

- `same`, *is it the same information?* Symmetric: the candidate's words are in the note
  (their share, each weighed by its rarity in the vault) **and** the note's matching part holds
  little else (the share of its words that are the candidate's). The matching part is the
  note's best window: a run of its text a little longer than the candidate at most, or all of
  it, so that a candidate restating one section of a long note still scores high while a
  short text inside a long note does not. Two texts sharing fewer than `MIN_INFO` distinct
  words are never the same information: "Done." or "test" is nobody's near-duplicate. This is
  the score `near_duplicate` reads and review lines show.
- `topic`, *is it about the same thing?* One-directional: how much of the candidate the note
  holds, as BM25 against the candidate's own (capped at 1) and the share of its words, or the
  share of its 3-word runs found in the note; under `MIN_INFO` shared words, as little as
  `same`. A reason to name a note in a review, never to drop one.
- `relevance`, what `query --text` ranks by: the note's BM25 for the asked words against the
  asked text's own, times the fourth root of the share of the note's words that are the asked
  ones (BM25 saturates: the notes that hold a short query's words often all come out alike),
  saturated below 1 so that scores spread and never tie at 1.0 (a short query's words are all
  in many notes: `topic` would give each of them 1.0).
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from operator import itemgetter

from memory_curator.core.words import content, starts, stems, stems_alike, tokens
from memory_curator.index.rows import idf, weighted_bm25

SHINGLE = 3
COVERED = 0.5  # below this share of its words in a note, the candidate's 3-word runs are not looked for
MIN_INFO = 5  # distinct words two texts must share to be the same information by text alone
LOW = 0.5  # ... fewer shared words score at most LOW x shared / MIN_INFO
WINDOWS = (1.0, 1.5, 2.5)  # the windows looked at, in lengths of the candidate (beside the whole match)
LOOKED = 0.35  # below this bound on `same`, a note is read as one window (it scores well under any threshold)
HALF = 0.5  # `relevance`: the BM25 ratio at which its saturation reaches one half
FOCUS = 0.25  # `relevance`: how much the share of a note's words that are the asked ones weighs


@dataclass(frozen=True)
class Probe:
    """The candidate, prepared once for scoring many notes."""

    language: str  # the language its words are stemmed in
    counts: Counter[str]  # its content stems
    length: int  # its content words, repeats included
    words: list[str]  # its words (`words.tokens`)
    weights: Mapping[str, float]  # each stem's IDF in the vault
    weight: float  # the sum of `weights`
    starts: Mapping[str, tuple[str, ...]]  # what words with its stems begin with (`words.starts`)
    own: float  # the candidate's BM25 against itself
    avg: float  # the vault's average note length, in words
    order: Mapping[str, int]  # each stem's place in `weights`: a note's BM25 sums its stems in that order

    @functools.cached_property
    def shingles(self) -> frozenset[tuple[str, ...]]:
        """Its distinct 3-word runs: made when a note first holds enough of it to look for them."""
        return frozenset(runs(self.words))


@dataclass(frozen=True)
class Read:
    """A note's text as the scores read it, in the candidate's language: only what the scores
    use of it (a note holds few of the candidate's stems among hundreds of words)."""

    words: list[str]  # every token (BM25's length, the 3-word runs)
    length: int  # its content words
    spots: list[tuple[int, str]]  # (place among its content words, stem) of each word with one of the candidate's stems
    counts: Counter[str]  # how often it holds each of the candidate's stems


def probe(words: list[str], df: Mapping[str, int], total: int, avg: float, language: str) -> Probe:
    """The candidate's `words` (`words.tokens`); `df`: the vault's document frequency of each
    stem (missing: no note holds it)."""
    counts = Counter(stems(content(words, language), language))
    weights = {s: idf(df.get(s, 0), max(total, 1)) for s in counts}
    own = weighted_bm25(counts, len(words), weights, avg)
    total_weight = sum(weights.values())
    order = {s: place for place, s in enumerate(weights)}
    return Probe(language, counts, sum(counts.values()), words, weights, total_weight, starts(counts), own, avg, order)


# A spot's place and stem, taken in C (`map`): a Python loop over a note of 1 MiB's spots cost
# 30 ms a read (issue 36).
_first, _second = itemgetter(0), itemgetter(1)


def read(probe_: Probe, text: str) -> Read:
    """The note's words, and where it holds the candidate's stems among its content words: only
    the words that can have one of them are stemmed (stemming is the costly part, and only shared
    stems count)."""
    words = tokens(text)
    kept = content(words, probe_.language)
    weights = probe_.weights
    alike = stems_alike(set(kept), probe_.language, probe_.starts)
    shared = {w: s for w, s in alike.items() if s in weights}
    spots = [(i, shared[w]) for i, w in enumerate(kept) if w in shared] if shared else []
    return Read(words, len(kept), spots, Counter(map(_second, spots)))


def topic(probe_: Probe, note: Read) -> float:
    """How much of the candidate the note holds, in [0, 1] (module docstring)."""
    if not probe_.counts or probe_.own <= 0:
        return 0.0
    ratio = min(1.0, _ratio(probe_, note))
    shared = sum(1 for s in probe_.counts if s in note.counts)
    coverage = shared / len(probe_.counts)
    near = containment(probe_, note.words) if coverage >= COVERED else 0.0
    return max(math.sqrt(ratio * coverage), near) * information(shared)


def relevance(probe_: Probe, note: Read) -> float:
    """How well the note answers the asked words, in [0, 1) (module docstring)."""
    if probe_.own <= 0 or not note.length:
        return 0.0
    focus = len(note.spots) / note.length
    ratio = _ratio(probe_, note) * math.pow(focus, FOCUS)
    return ratio / (ratio + HALF)


def same(probe_: Probe, note: Read) -> float:
    """Whether the note is the candidate's information again, in [0, 1] (module docstring):
    the best of its windows, each sqrt(weighed share of the candidate it holds x share of
    its words that are the candidate's). A note whose whole text holds too little of the
    candidate to come near (`LOOKED`) has only its one longest window read."""
    if probe_.weight <= 0:
        return 0.0
    spots = note.spots
    if not spots:
        return 0.0
    shared = set(map(_second, spots))  # the same set, built in the same order: the same sum
    bound = math.sqrt(sum(probe_.weights[s] for s in shared) / probe_.weight) * information(len(shared))
    span = spots[-1][0] - spots[0][0] + 1  # a window as long holds every spot: it is the whole match
    caps = [probe_.length * times for times in WINDOWS if probe_.length * times < span] if bound >= LOOKED else []
    numbered = _numbered(probe_, spots)
    return max(_best_numbered(probe_, numbered, cap) for cap in [*caps, math.inf])


def _best_window(probe_: Probe, spots: list[tuple[int, str]], cap: float) -> float:
    """The best window whose first and last words are the candidate's, at most `cap` words
    long: one pass, the window's left edge following its right one."""
    return _best_numbered(probe_, _numbered(probe_, spots), cap)


def _numbered(probe_: Probe, spots: list[tuple[int, str]]) -> tuple[list[int], list[int], list[float]]:
    """The spots as (places, stem numbers, each number's weight): made once for every window
    read, so that each pass counts in lists, not in dicts keyed by stems (a third of the time of
    a note of 1 MiB; issue 36)."""
    order = probe_.order
    return list(map(_first, spots)), list(map(order.__getitem__, map(_second, spots))), list(probe_.weights.values())


def _best_numbered(probe_: Probe, numbered: tuple[list[int], list[int], list[float]], cap: float) -> float:
    """`_best_window` over `_numbered` spots: the same sums in the same order (the same floats)."""
    places, stems_, weights = numbered
    held = [0] * len(weights)
    weight, left, best, distinct = 0.0, 0, 0.0, 0
    for right, where in enumerate(places):
        word = stems_[right]
        if not held[word]:
            weight += weights[word]
            distinct += 1
        held[word] += 1
        while where - places[left] >= cap:
            gone = stems_[left]
            held[gone] -= 1
            if not held[gone]:
                weight -= weights[gone]
                distinct -= 1
            left += 1
        value = weight * (right - left + 1) / (where - places[left] + 1)  # squared, as yet
        if distinct < MIN_INFO:
            value *= information(distinct) ** 2
        if value > best:
            best = value
    return math.sqrt(max(best, 0.0) / probe_.weight)


def information(shared: int) -> float:
    """What the shared distinct words let a score reach: all of it from `MIN_INFO` words,
    at most LOW x shared / MIN_INFO below (well under any near-duplicate threshold)."""
    return 1.0 if shared >= MIN_INFO else LOW * shared / MIN_INFO


def _ratio(probe_: Probe, note: Read) -> float:
    """The note's BM25 for the candidate's stems over the candidate's own: summed over the stems
    the note holds only, in the candidate's order (the same sum as over all of them)."""
    held = sorted(note.counts, key=probe_.order.__getitem__)
    weights = {s: probe_.weights[s] for s in held}
    return weighted_bm25(note.counts, len(note.words), weights, probe_.avg) / probe_.own


def containment(probe_: Probe, note_words: list[str]) -> float:
    """The share of the candidate's distinct 3-word runs that the note holds (0 for a text under
    3 words): the note's runs, made in one pass, looked up in the candidate's set, so that the
    cost is linear in both texts (a search of the note's text per run was their product: 49 s
    for two texts of the size limit). The same number as that search: tokens hold no space, so
    a run found between spaces in the words joined by spaces is a run of the words."""
    if not probe_.shingles:
        return 0.0
    return len(probe_.shingles.intersection(runs(note_words))) / len(probe_.shingles)


def runs(found: list[str]) -> zip[tuple[str, ...]]:
    """The text's 3-word runs, in order, repeats included (none under 3 words)."""
    return zip(*(found[i:] for i in range(SHINGLE)), strict=False)


def fused(*ranked: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """Lists of (path, score) made one, best first (`query --text` with semantic pairing on):
    each list's scores min-max normalised over the list, summed per path, divided by the number
    of lists (a path a list lacks gets 0 from it). The two scales (BM25 relevance, cosine) are
    not comparable, their ranks within a pool are; with no parameter to choose, it was kept over
    reciprocal-rank fusion, whose constant moved the named questions by three (docs/rules.md)."""
    summed: dict[str, float] = {}
    lists = [r for r in ranked if r]
    for scored in lists:
        low, high = min(s for _, s in scored), max(s for _, s in scored)
        for path, score in scored:
            share = (score - low) / (high - low) if high > low else 1.0
            summed[path] = summed.get(path, 0.0) + share
    return sorted(((p, s / len(lists)) for p, s in summed.items()), key=lambda item: (-item[1], item[0]))
