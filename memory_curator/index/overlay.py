"""The sweep's overlay: the index querier's answers with the notes this sweep wrote (or, in a
dry run, would have written) laid over them, so that its later candidates see the earlier
ones. A note a sweep promotes or patches is `stage`d; one it removed is staged as None. The
next refresh of the index reads the real files.

Every question is the index querier's (`questions.Questions`): here only the primitives change,
each the index's answer less the notes the overlay replaced or removed, plus the staged notes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memory_curator.core.candidate import Candidate
from memory_curator.core.facts import Neighbour, other_body_owner
from memory_curator.core.words import HEAD, prefixes, stem, tokens
from memory_curator.index import semantic
from memory_curator.index.querier import IndexQuerier
from memory_curator.index.questions import Found, Questions, Ranked, key_first, near, pairable
from memory_curator.index.rows import Row, Stemmed, bm25, describe

if TYPE_CHECKING:
    from memory_curator.index.semantic import Matrix


@dataclass(frozen=True)
class _Staged:
    text: str
    row: Row
    counts: Counter[str]  # its words, as FTS5 would count them


class Overlay(Questions):
    """The querier a sweep asks and stages its notes in (`core.facts.Staging`): `base`, the
    index querier, with the staged notes laid over its answers."""

    def __init__(self, base: IndexQuerier) -> None:
        super().__init__()
        self.base = base
        self.rules, self.layout = base.rules, base.layout
        self._empty()
        self.written: dict[str, None] = {}  # every path staged this sweep, settled or not, in order

    def _empty(self) -> None:
        """No note staged: the overlay as it begins, and as `settle` leaves it."""
        self.staged: dict[str, _Staged | None] = {}  # path -> the note staged there, None: removed
        self._staged_df: Counter[str] = Counter()  # what the staged notes add to (or take from) the index's df
        self._new_paths: set[str] = set()  # staged notes the index does not hold
        self._hidden_ids: set[int] = set()  # indexed notes the overlay replaced or removed
        self._hidden_holders: dict[str, set[str]] = {}  # word -> hidden indexed notes holding it (`ranked`)
        self._holders: dict[str, set[str]] = {}  # word -> staged notes holding it
        self._heads: dict[str, set[str]] = {}  # a staged word's first letters -> the staged words (`spellings`)
        self._staged_spellings: dict[str, dict[tuple[str, str], list[str]]] = {}  # `_spelt_as`
        self._vectors: dict[str, Matrix] = {}  # staged path -> its vector, embedded when first asked
        self._by: dict[tuple[str, str], set[str]] = {}  # (field, its value) -> staged notes (`_matching`)
        self._counted = (-1, 0)  # (generation, what the staged notes add to `count` then)
        self._first: dict[str, int] = {}  # staged path -> when it was first staged (`staged`'s order)

    def settle(self) -> None:
        """The staged notes are on disk (a real sweep's group commit wrote them): the index takes
        them in (`IndexQuerier.reindexed`) and the overlay lets them go, so that it holds at most
        one batch of notes whatever the number of candidates (2,000 notes of 1 MiB, their texts and
        word counts, took gigabytes). `written` keeps their paths."""
        if not self.staged:
            return
        self.base.reindexed(list(self.staged))
        self._empty()
        self.generation += 1
        self._near.clear()
        self._paired.clear()

    def weight(self) -> tuple[int, int]:
        """How many notes are staged, and their bytes: what the overlay holds until `settle`."""
        staged = [s for _, s in self._notes()]
        return len(staged), sum(len(s.text) for s in staged)

    def stage(self, rel: str, text: str | None) -> None:
        """Make a note this sweep wrote (or removed: None) visible to later candidates."""
        self.generation += 1
        self._near.clear()  # the cached neighbours of older generations are never asked again
        self._paired.clear()
        self.written[rel] = None
        self._vectors.pop(rel, None)
        if rel not in self.staged:
            self._first[rel] = len(self._first)
            if not self._hide_indexed(rel):
                self._new_paths.add(rel)
        previous = self.staged.get(rel)
        if previous is not None:
            self._staged_df.subtract(previous.counts.keys())
            for word in previous.counts:
                self._holders[word].discard(rel)
            for field in _fields(previous.row):
                self._by[field].discard(rel)
        if text is None:
            self.staged[rel] = None
            return
        row = describe(rel, text.encode("utf-8"), self.layout)
        counts = Counter(tokens(f"{row.title} {row.value} {row.body}"))
        self._staged_df.update(counts.keys())
        for word in counts:
            if word not in self._holders:
                self._heads.setdefault(word[:HEAD], set()).add(word)
                self._staged_spellings.pop(word[:HEAD], None)  # a word no staged note held: its stems'
                self._staged_spellings.pop("", None)  # spellings, and a short stem's, are found again
            self._holders.setdefault(word, set()).add(rel)
        for field in _fields(row):
            self._by.setdefault(field, set()).add(rel)
        self.staged[rel] = _Staged(text, row, counts)

    def _hide_indexed(self, rel: str) -> bool:
        """Take an indexed note's words out of the frequencies (the overlay replaces it)."""
        found = self.base.indexed(rel)
        if found is None:
            return False
        ident, text = found
        self._hidden_ids.add(ident)
        held = set(tokens(text))
        self._staged_df.subtract(held)
        for word in held:
            self._hidden_holders.setdefault(word, set()).add(rel)
        return True

    def _visible(self, path: str) -> bool:
        """An indexed path the overlay has not replaced or removed."""
        return path not in self.staged

    def _notes(self) -> Iterator[tuple[str, _Staged]]:
        return ((p, s) for p, s in self.staged.items() if s is not None)

    def _matching(self, field: str, value: str | None) -> list[tuple[str, _Staged]]:
        """The staged notes whose `field` is `value` (`_fields`), in the order they were first
        staged, as a scan of `staged` finds them: without the scan, a question costs the same
        for the last candidate of a sweep as for the first."""
        paths = self._by.get((field, value), ()) if value else ()
        return [(p, s) for p in sorted(paths, key=self._first.__getitem__) if (s := self.staged[p]) is not None]

    def notices(self) -> list[str]:
        return self.base.notices()

    # --- exact answers ---------------------------------------------------------------------

    def paths_for_key(self, rel: str) -> list[str]:
        found = [p for p, _ in self._matching("key", rel)]
        if self.staged.get(rel) is not None:
            found.append(rel)
        return key_first(found + [p for p in self.base.paths_for_key(rel) if self._visible(p)], rel)

    def named(self, name: str) -> list[str]:
        found = [p for p, _ in self._matching("name", name)]
        return list(dict.fromkeys(found + [p for p in self.base.named(name) if self._visible(p)]))

    def events_on(self, day: str) -> list[str]:
        found = [p for p, _ in self._matching("day", day)]
        return list(dict.fromkeys(found + [p for p in self.base.events_on(day) if self._visible(p)]))

    def in_folder(self, folder: str) -> list[str]:
        found = [p for p, _ in self._matching("folder", folder)]
        return list(dict.fromkeys(found + [p for p in self.base.in_folder(folder) if self._visible(p)]))

    def copies(self, candidate: Candidate, digest: str | None, bare: str | None) -> list[str]:
        found = [p for p, _ in self._matching("text_hash", digest)]
        found += [p for p, s in self._matching("body_hash", bare) if not _other(candidate, s.row)]
        return found + [p for p in self.base.copies(candidate, digest, bare) if self._visible(p)]

    def with_stem(self, stem: str) -> list[Stemmed]:
        found = [row for row in self.base.with_stem(stem) if self._visible(row[0])]
        return found + [(p, s.row.surface, s.row.owned) for p, s in self._matching("stem", stem)]

    def paths_naming(self, wanted: tuple[str, ...], language: str, every: bool = True) -> list[str]:
        return [p for p in self.base.paths_naming(wanted, language, every) if self._visible(p)]

    def text(self, path: str) -> str | None:
        staged = self.staged.get(path)
        return staged.text if staged is not None else self.base.text(path)

    # --- similarity ------------------------------------------------------------------------

    def frequencies(self, words: list[str]) -> dict[str, int]:
        indexed = self.base.frequencies(words)
        return {w: indexed[w] + self._staged_df[w] for w in words}

    def spellings(self, stem_: str, language: str) -> dict[str, int]:
        """The index's spellings and the staged notes' words with this stem, counted as
        `frequencies` counts them."""
        found = self.frequencies(
            list(dict.fromkeys([*self.base.spellings(stem_, language), *self._spelt_as(stem_, language)]))
        )
        return {w: df for w, df in found.items() if df > 0}

    def _spelt_as(self, stem_: str, language: str) -> list[str]:
        """The staged words with this stem, kept by the first letters they share (`HEAD`; "" for
        a stem shorter than that) until a staged note brings a word no staged note held that
        begins with them (`stage`)."""
        starts = prefixes(stem_)
        short = min(map(len, starts)) < HEAD
        kept = self._staged_spellings.setdefault("" if short else stem_[:HEAD], {})
        if (stem_, language) not in kept:
            heads = [h for h in self._heads if h.startswith(starts)] if short else starts
            near = set().union(*(self._heads.get(head[:HEAD], ()) for head in heads))
            kept[stem_, language] = [w for w in near if w.startswith(starts) and stem(w, language) == stem_]
        return kept[stem_, language]

    def count(self) -> int:
        """The index's notes, plus new ones staged, less indexed ones removed (those counted once
        per generation: every question asks)."""
        if self._counted[0] != self.generation:
            removed = sum(1 for p, s in self.staged.items() if s is None and p not in self._new_paths)
            added = sum(1 for p in self._new_paths if self.staged.get(p) is not None)
            self._counted = (self.generation, added - removed)
        return self.base.count() + self._counted[1]

    def avg_words(self) -> float:
        return self.base.avg_words()

    def ranked(self, words: tuple[str, ...], df: dict[str, int], total: int, count: int) -> list[Ranked]:
        """The index's best notes less those the overlay hides (`_visible_ranked`), plus the
        staged notes holding a word, scored by the same BM25."""
        best = self._visible_ranked(words, df, total, count)
        holders = set().union(*(self._holders.get(w, ()) for w in words)) if self.staged else set()
        for path in holders:
            staged = self.staged[path]
            assert staged is not None
            best.append((bm25(words, staged.counts, staged.row.words, self.avg_words(), df, total), path, -1))
        return best

    def _visible_ranked(self, words: tuple[str, ...], df: dict[str, int], total: int, count: int) -> list[Ranked]:
        """The index's best notes for these words that the overlay has not replaced or removed,
        as asking for `count` + every hidden note gives them (as it asked before), from fewer
        rows: `count` + the hidden notes that hold one of the words (those alone can rank) + one
        (a sweep hides every note it patched, and the longer list cost a sort and a join per
        question). Asked for the longer list when the shorter came back full with fewer than
        `count` visible notes (a word FTS5 matches beyond the overlay's own tokens), or with its
        last row scored as the `count`-th (notes beyond may tie with it, and ties go by path)."""
        holding = set().union(*(self._hidden_holders.get(w, ()) for w in words)) if self._hidden_holders else set()
        longest = count + len(self.staged) - len(self._new_paths)
        limit = min(count + len(holding) + 1, longest)
        rows = self.base.ranked_rows(words, limit)
        if limit < longest and len(rows) == limit and not _settled(rows, count, self._visible):
            rows = self.base.ranked_rows(words, longest)
        return [found for found in rows if pairable(found[1]) and self._visible(found[1])]

    def found(self, ranked: list[tuple[str, int]]) -> list[Found]:
        indexed = {f.path: f for f in self.base.found([(p, rowid) for p, rowid in ranked if rowid >= 0])}
        out = []
        for path, rowid in ranked:
            staged = self.staged.get(path) if rowid < 0 else None
            if staged is not None:
                row = staged.row
                out.append(Found(path, row.title, row.key, row.value, f"{row.title} {row.value} {row.body}", row.owned))
            elif path in indexed:
                out.append(indexed[path])
        return out

    def semantic_pairing(self) -> semantic.Pairing | None:
        return self.base.semantic_pairing()

    def closest(self, pairing: semantic.Pairing, vector: Matrix, k: int) -> list[tuple[float, str]]:
        """The index's closest notes but those the overlay replaced, plus every staged note."""
        found = [(s, p) for s, p in self.base.closest(pairing, vector, k, self._hidden_ids) if self._visible(p)]
        return found + [(float(self._vector(path, pairing) @ vector), path) for path, _ in self._notes()]

    def _vector(self, path: str, pairing: semantic.Pairing) -> Matrix:
        if path not in self._vectors:
            staged = self.staged[path]
            assert staged is not None
            row = staged.row
            self._vectors[path] = pairing.model.embed([semantic.note_text(row.title, row.value, row.body)])[0]
        return self._vectors[path]

    def neighbour(self, path: str, score: float) -> Neighbour:
        staged = self.staged.get(path)
        if staged is None:
            return self.base.neighbour(path, score)
        return near(path, staged.row.title, score, staged.text, staged.row.key, staged.row.value, staged.row.owned)


def _settled(rows: list[Ranked], count: int, visible: Callable[[str], bool]) -> bool:
    """The `count` best visible rows are among `rows`, and no row beyond them may score as the
    `count`-th (they score at most as the last)."""
    scores = [score for score, path, _ in rows if pairable(path) and visible(path)]
    return len(scores) >= count and (count == 0 or scores[count - 1] > rows[-1][0])


def _fields(row: Row) -> list[tuple[str, str]]:
    """What `_matching` finds a staged note by: its key, names, day, hashes, file name and folder."""
    fields = [("key", row.key), ("day", row.day), ("text_hash", row.text_hash), ("body_hash", row.body_hash)]
    fields += [("stem", row.stem), ("folder", row.path.rpartition("/")[0] + "/")]
    fields += [("name", name) for name in row.names]
    return [(field, value) for field, value in fields if value]


def _other(candidate: Candidate, row: Row) -> bool:
    return other_body_owner(candidate, Neighbour(row.path, "", 1.0, key=row.key, value=row.value))
