"""A similarity score that means something (issue 16). Pure: text in, a number out.

The index finds the few notes that share a candidate's rarest words (BM25 in FTS5: fast, but its
raw score only ranks). Each of them is then scored against the candidate itself:

- *self-normalised BM25*: the note's BM25 for every searchable word of the candidate, divided by
  what the candidate would score against itself, and weighed (geometric mean) by the share of
  the candidate's distinct words the note holds at all. 1.0 is "holds the same words as often";
  a note sharing one rare word of five scores far below the 0.9 that word's weight alone gives.
- *shingle containment*: the share of the candidate's 3-word runs found in the note, so that a
  near-verbatim copy inside a longer note (or a copy with a new title) still scores near 1.0.

The score is the larger of the two, in [0, 1]; 1.0 means "the same text".
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from memory_curator.index.rows import STOPWORDS, idf, tokens, weighted_bm25

SHINGLE = 3


@dataclass(frozen=True)
class Probe:
    """The candidate, prepared once for scoring many notes."""

    counts: Counter[str]  # its searchable words
    shingles: frozenset[str]  # its 3-word runs, as text
    weights: Mapping[str, float]  # each searchable word's IDF in the vault
    own: float  # the candidate's BM25 against itself
    avg: float  # the vault's average note length, in words


def probe(text: str, df: Mapping[str, int], total: int, avg: float) -> Probe:
    """`df`: the vault's document frequency of each word (missing: no note holds it)."""
    words = tokens(text)
    counts = Counter(w for w in words if len(w) > 1 and w not in STOPWORDS)
    runs = frozenset(" ".join(words[i : i + SHINGLE]) for i in range(len(words) - SHINGLE + 1))
    weights = {w: idf(df.get(w, 0), max(total, 1)) for w in counts}
    return Probe(counts, runs, weights, weighted_bm25(counts, len(words), weights, avg), avg)


COVERED = 0.5  # below this share of its words in a note, the candidate's 3-word runs are not looked for


def score(probe_: Probe, note_text: str) -> float:
    """How much of the candidate the note holds, in [0, 1] (module docstring)."""
    if not probe_.counts or probe_.own <= 0:
        return 0.0
    note_words = tokens(note_text)
    counts = Counter(note_words)
    ratio = min(1.0, weighted_bm25(counts, len(note_words), probe_.weights, probe_.avg) / probe_.own)
    coverage = sum(1 for w in probe_.counts if w in counts) / len(probe_.counts)
    near = containment(probe_, note_words) if coverage >= COVERED else 0.0
    return max(math.sqrt(ratio * coverage), near)


def containment(probe_: Probe, note_words: list[str]) -> float:
    """The share of the candidate's 3-word runs that the note holds (0 for a text under 3 words)."""
    if not probe_.shingles:
        return 0.0
    joined = f" {' '.join(note_words)} "
    found = sum(1 for run in probe_.shingles if f" {run} " in joined)
    return found / len(probe_.shingles)
