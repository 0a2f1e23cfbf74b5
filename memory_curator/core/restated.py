"""A candidate that restates several of a person's notes (issue 38). Pure: no I/O.

An agent summarising what it read often copies a sentence or two from each of a few notes. No
one note holds it (each is a near-duplicate of a part at most), yet it tells the vault nothing
new: most of its sentences are found in those notes. It waits for a person, naming them.
"""

from __future__ import annotations

from collections.abc import Sequence

from memory_curator.core.comparison import content_words, sentence_words

FOUND = 0.8  # a sentence is found in a note holding this share of its content words (`new_sentences` takes 0.6)
NOTES = 2  # a restatement of one note is a near-duplicate's business (`similarity.same`)


def restated(body: str, notes: Sequence[tuple[str, str]]) -> tuple[tuple[tuple[str, int], ...], int]:
    """The notes (path, text) that together hold most of the body's sentences, each with the
    sentences it adds, best first, and the body's sentence count; no notes unless `NOTES` or
    more each add one and together they hold more than half. A sentence counts once, for the
    note that holds most (a note adding nothing beyond the others is not named)."""
    sentences = sentence_words(body)
    if len(sentences) < NOTES:
        return (), len(sentences)
    held = {path: _held(sentences, content_words(text)) for path, text in notes}
    chosen: list[tuple[str, int]] = []
    covered: set[int] = set()
    while held:
        path, found = max(held.items(), key=lambda item: (len(item[1] - covered), item[0]))
        added = found - covered
        if not added:
            break
        chosen.append((path, len(added)))
        covered |= added
        del held[path]
    if len(chosen) < NOTES or 2 * len(covered) <= len(sentences):
        return (), len(sentences)
    return tuple(chosen), len(sentences)


def _held(sentences: list[set[str]], words: set[str]) -> set[int]:
    return {i for i, sentence in enumerate(sentences) if len(sentence & words) >= FOUND * len(sentence)}
