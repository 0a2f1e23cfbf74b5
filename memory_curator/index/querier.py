"""The querier over the index: the questions a decision asks (`querier.Querier`), answered
from `index.Index`, plus an overlay of what the current sweep wrote. Also `query`'s answers.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory_curator.core import subject
from memory_curator.core.candidate import Candidate, target_path
from memory_curator.core.clock import Clock, SystemClock
from memory_curator.core.errors import CuratorError
from memory_curator.core.facts import ExistingNote, Neighbour, other_body_owner
from memory_curator.core.names import RULES_PATH, nfc, slugify
from memory_curator.core.notes import parse
from memory_curator.core.ownership import curator_owned, never_owned, on_surface
from memory_curator.core.rules import Rules
from memory_curator.index import semantic, similarity
from memory_curator.index.rows import (
    COMMON_FLOOR,
    QUERY_TERMS,
    Layout,
    Row,
    bm25,
    body_hash,
    candidate_parts,
    choose_terms,
    describe,
    match_expression,
    terms,
    text_hash,
    tokens,
)
from memory_curator.index.store import FILE_NAME, Index, IndexUnavailable, Progress, Refresh, read_note
from memory_curator.store.writer import FILES, Files

if TYPE_CHECKING:
    from memory_curator.index.semantic import Matrix

MIN_SCORE = 0.02  # below this a "neighbour" shares only words most notes hold
META = RULES_PATH.split("/")[0] + "/"
RESCORED = 2  # notes fetched by BM25 beyond k, to be scored by `similarity.score`
PATH_MATCHES = 25  # notes found by the words of their paths: more is no answer


@dataclass(frozen=True)
class _Found:
    path: str
    title: str
    key: str | None
    value: str
    text: str  # title, value and body as indexed


def _other(candidate: Candidate, row: Row) -> bool:
    return other_body_owner(candidate, Neighbour(row.path, "", 1.0, key=row.key, value=row.value))


def _pairable(path: str) -> bool:
    """Not the rules file (nor anything under `_meta/`): it speaks of every kind of note and
    is nobody's neighbour."""
    return not path.startswith(META)


def _value_of(frontmatter: str) -> str:
    value = json.loads(frontmatter).get("value")
    return "" if value is None else str(value).strip()


def _commonest_last(words: list[str], df: dict[str, int]) -> tuple[str, ...]:
    """Words every query would skip as too common (`query --text sync`), rarest first: a text
    made only of such words is still searched."""
    held = sorted((w for w in dict.fromkeys(words) if df.get(w, 0) > 0), key=lambda w: (df[w], w))
    return tuple(held[:QUERY_TERMS])


@dataclass(frozen=True)
class _Staged:
    text: str
    row: Row
    counts: Counter[str]


class IndexQuerier:
    """The querier a sweep asks: the index, plus an overlay of what this sweep wrote (or, in
    a dry run, would have written) so that later candidates see earlier ones.

    The index is opened and refreshed on the first question, so a sweep of an empty inbox
    never touches it."""

    def __init__(
        self,
        root: Path,
        rules: Rules,
        state: Path,
        index: Index | None = None,
        clock: Clock = SystemClock(),
        files: Files = FILES,
        progress: Progress | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.root, self.rules, self.state, self.clock, self.files = root, rules, state, clock, files
        self.progress = progress
        self.env: Mapping[str, str] = env or {}  # the context's: where a named semantic model lives
        self.pairing: semantic.Pairing | None = None  # the semantic model and vectors, when the rules name one
        self.semantic_problem: str | None = None  # why semantic pairing is off this sweep (one line)
        self._staged_vectors: dict[str, Matrix] = {}  # staged path -> its vector, embedded when first asked
        self._hidden_ids: set[int] = set()  # indexed notes the overlay replaced or removed
        self._paired: dict[tuple[str, str, int, int], list[Neighbour]] = {}
        self.layout = index.layout if index is not None else Layout(rules)
        self._index = index
        self.refreshed: Refresh | None = None
        self.overlay: dict[str, _Staged | None] = {}
        self._df: dict[str, int] = {}
        self._staged_df: Counter[str] = Counter()
        self._total: int | None = None
        self._avg: float | None = None
        self._near: dict[tuple[str, str, int, int], list[Neighbour]] = {}
        self._version = 0  # bumped by every stage(): cached neighbours are per overlay state
        self._new_paths: set[str] = set()  # staged notes the index does not hold
        self._holders: dict[str, set[str]] = {}  # word -> staged notes holding it
        self._by_path_word: dict[str, set[str]] | None = None  # `_path_words`
        self._all_paths: list[str] = []

    @property
    def index(self) -> Index:
        if self._index is None:
            try:
                index = Index(self.root, self.rules, self.state, self.clock, self.files, self.progress)
                self.refreshed = index.refresh()
            except (sqlite3.Error, OSError) as exc:
                raise IndexUnavailable(f"{self.state / FILE_NAME}: cannot build the index: {exc}") from None
            self._index = index
            self._pair(index)
        return self._index

    def _pair(self, index: Index) -> None:
        """Open semantic pairing when the rules name a model: its vectors brought in step with
        the refreshed index, under the index's write lock. Unavailable (no extra, no model, a
        broken one): `semantic_problem` says why in one line and pairing stays lexical."""
        setting = self.rules.settings.semantic.model
        if not setting:
            return
        try:
            path = semantic.folder_for(setting, self.root, self.env)
            with index.writing():
                self.pairing = semantic.open_pairing(index.conn, path, self.progress)
        except semantic.SemanticUnavailable as exc:
            self.semantic_problem = f"{exc}; pairing lexically only"
        except sqlite3.Error as exc:
            self.semantic_problem = f"semantic vectors cannot be stored in the index ({exc}); pairing lexically only"

    def notices(self) -> list[str]:
        """One-line remarks for the sweep's report: why semantic pairing is off, when it is."""
        return [self.semantic_problem] if self.semantic_problem else []

    @property
    def conn(self) -> sqlite3.Connection:
        return self.index.conn

    def _visible(self, path: str) -> bool:
        """An indexed path the overlay has not replaced or removed."""
        return path not in self.overlay

    def _staged(self) -> Iterator[tuple[str, _Staged]]:
        return ((p, s) for p, s in self.overlay.items() if s is not None)

    # --- exact answers ---------------------------------------------------------------------

    def paths_for_key(self, rel: str) -> list[str]:
        """Notes at this key path, or whose own key fields name it: the path itself first."""
        found = [p for p, s in self._staged() if p == rel or s.row.key == rel]
        rows = self.conn.execute("SELECT path FROM notes WHERE path = ? OR key = ? ORDER BY path", (rel, rel))
        found += [p for (p,) in rows if self._visible(p)]
        return sorted(dict.fromkeys(found), key=lambda p: (p != rel, p))

    def note_at(self, rel: str) -> ExistingNote | None:
        for path in self.paths_for_key(rel):
            note = self._existing(path)
            if note is not None:
                return note
        return None

    def duplicate_of(self, candidate: Candidate) -> str | None:
        """A note with the candidate's normalised text (title, value, body), or with its body
        alone when neither carries another key or value (`facts.other_body_owner`): a verbatim copy
        under a new title is a duplicate; a template's boilerplate body under another fact is not."""
        title, value, body = candidate_parts(candidate.frontmatter, candidate.note.body)
        digest, bare = text_hash(title, value, body), body_hash(body)
        if digest is None and bare is None:
            return None
        found = [p for p, s in self._staged() if digest and s.row.text_hash == digest]
        found += [p for p, s in self._staged() if bare and s.row.body_hash == bare and not _other(candidate, s.row)]
        rows = self.conn.execute(
            "SELECT path, key, frontmatter, text_hash = ? FROM notes WHERE text_hash = ? OR body_hash = ? "
            "ORDER BY path",
            (digest, digest, bare),
        )
        for path, key, fm, same_text in rows:
            if not self._visible(path) or path == candidate.inbox_path:  # `check` of a vault note
                continue
            if same_text or not other_body_owner(candidate, Neighbour(path, "", 1.0, key=key, value=_value_of(fm))):
                found.append(path)
        own = candidate.target
        return min(found, key=lambda p: (own is not None and p == own, p), default=None)

    def links_to_durable(self, links: list[str]) -> bool:
        """A wikilink that resolves (by path or by file name, as Obsidian does) to a note on a
        declared surface."""
        for link in links:
            target = nfc(link.strip().removesuffix(".md")).casefold()
            stem = target.rsplit("/", 1)[-1]
            rows = self.conn.execute("SELECT path, surface FROM notes WHERE stem = ?", (stem,))
            hits = [(p, s) for p, s in rows if self._visible(p)]
            hits += [(p, s.row.surface) for p, s in self._staged() if s.row.stem == stem]
            for path, surface in hits:
                folded = nfc(path[:-3]).casefold()
                if surface and ("/" not in target or folded == target or folded.endswith("/" + target)):
                    return True
        return False

    def match_name(self, text: str) -> list[str]:
        """Notes whose title, alias, slug or file name is `text` once slugified (case, accents,
        punctuation folded)."""
        name = slugify(text)
        if not name:
            return []
        found = [p for p, s in self._staged() if name in s.row.names]
        rows = self.conn.execute(
            "SELECT n.path FROM names JOIN notes n ON n.id = names.note WHERE names.name = ? ORDER BY n.path", (name,)
        )
        found += [p for (p,) in rows if self._visible(p)]
        return list(dict.fromkeys(found))

    def subject_notes(self, candidate: Candidate) -> list[ExistingNote]:
        """Notes anywhere in the vault about what the candidate is about (`core.subject`): not
        its own key path (that is `note_at`), nothing the curator never owns (`_meta/`…).
        A fact's note is one named for its entity that speaks of its predicate, or one named
        for its predicate (`Refund policy.md`) that speaks of its entity."""
        wanted = subject.ask(candidate)
        found: list[ExistingNote] = []
        by_name = {p for name in wanted.names for p in self.match_name(name)}
        named = sorted(by_name)
        by_predicate: list[str] = []
        if wanted.entity:
            named += self._paths_naming(wanted.entity)
            by_predicate = self._paths_naming(wanted.predicate, every=False)
        for path in dict.fromkeys([*named, *by_predicate]):
            if path in (candidate.target, candidate.inbox_path) or never_owned(path):
                continue
            text = self._text(path)
            if not text or (path in named and not subject.speaks_of(wanted.predicate, f"{path} {text}")):
                continue
            note = self._parsed(path, text)
            if path not in by_name and not self._about_by_words(candidate, wanted, note):
                continue
            if wanted.day and _other_day(note, wanted.day, self.layout):
                continue
            found.append(replace(note, found_by="name" if path in by_name else "words"))
        return found

    def _about_by_words(self, candidate: Candidate, wanted: subject.Ask, note: ExistingNote) -> bool:
        """A note found by the words of its path is the fact's note when it speaks of the
        entity and the predicate; never a note of the candidate's own surface (there, another
        path is another key: `facts/widget-3/size.md` is not `widget-7`'s)."""
        if candidate.surface is not None and on_surface(note.path, [candidate.surface]):
            return False
        text = f"{note.path} {note.text}"
        return subject.speaks_of(wanted.entity, text, share=1.0) and subject.speaks_of(wanted.predicate, text)

    def _paths_naming(self, words: tuple[str, ...], every: bool = True) -> list[str]:
        """Notes whose folders and file name hold every (or, `every=False`, any) distinctive
        word (`obsidian-publish`: `Obsidian Publish/Publish limitations.md`). A word in more
        than max(20, 0.5%) of the paths (the vault's own name, `plugins`) is not distinctive,
        and more than `PATH_MATCHES` notes found is no answer: which one is a person's call."""
        holders = self._path_words()
        ceiling = max(COMMON_FLOOR, len(self._all_paths) // 200)
        sets = [holders.get(subject.stem(w), set()) for w in words]
        sets = [held for held in sets if len(held) <= ceiling and (held or every)]
        if not sets:
            return []
        found = set.intersection(*sets) if every else set.union(*sets)
        return sorted(p for p in found if self._visible(p)) if len(found) <= PATH_MATCHES else []

    def _path_words(self) -> dict[str, set[str]]:
        """Word stem -> the indexed paths whose folders or file name hold it (built once)."""
        if self._by_path_word is None:
            self._all_paths = [p for (p,) in self.conn.execute("SELECT path FROM notes")]
            holders: dict[str, set[str]] = {}
            for path in self._all_paths:
                for word in set(tokens(path[:-3])):
                    holders.setdefault(subject.stem(word), set()).add(path)
            self._by_path_word = holders
        return self._by_path_word

    def _existing(self, path: str) -> ExistingNote | None:
        staged = self.overlay.get(path)
        text = staged.text if staged is not None else _read_text(self.root, path)
        return None if text is None else self._parsed(path, text)

    def _parsed(self, path: str, text: str) -> ExistingNote:
        note = parse(text)
        return ExistingNote(path, text, note, curator_owned(path, note.frontmatter, self.rules))

    def events_on(self, day: str) -> list[str]:
        """Event notes dated `day` (YYYY-MM-DD)."""
        found = [p for p, s in self._staged() if s.row.day == day]
        rows = self.conn.execute("SELECT path FROM notes WHERE day = ? ORDER BY path", (day,))
        return list(dict.fromkeys(found + [p for (p,) in rows if self._visible(p)]))

    # --- similarity ------------------------------------------------------------------------

    def neighbours(self, candidate: Candidate, k: int) -> list[Neighbour]:
        """The k closest notes by BM25 over the candidate's title, value and rarest body words,
        each scored in [0, 1] (see `indexing.reference`)."""
        title, value, body = candidate_parts(candidate.frontmatter, candidate.note.body)
        cache_key = (candidate.inbox_path, candidate.digest, k, self._version)
        if cache_key not in self._near:
            self._near[cache_key] = self.similar(f"{title} {value}", body, k)
        return self._near[cache_key]

    def semantic_neighbours(self, candidate: Candidate, k: int) -> list[Neighbour]:
        """The k notes closest in meaning (cosine of the model's vectors, best first), indexed
        or staged; none when the rules name no model or it is unavailable."""
        title, value, body = candidate_parts(candidate.frontmatter, candidate.note.body)
        cache_key = (candidate.inbox_path, candidate.digest, k, self._version)
        if cache_key not in self._paired:
            text = semantic.note_text(title, value, body)
            self._paired[cache_key] = self.semantic_similar(text, k, skip=candidate.inbox_path)
        return self._paired[cache_key]

    def semantic_similar(self, text: str, k: int, skip: str | None = None) -> list[Neighbour]:
        """The k notes whose vectors are closest to this text's, with a positive cosine (not
        `skip`: the note itself, when `check` asks about a vault note)."""
        self.index  # noqa: B018 - opens the pairing
        pairing = self.pairing
        if pairing is None or k <= 0 or not text.strip():
            return []
        vector = pairing.model.embed([text])[0]
        scored: list[tuple[float, str]] = []
        indexed = semantic.nearest(pairing.vectors, vector, k + 1, self._hidden_ids)
        names = self._paths_of([ident for ident, _ in indexed])
        scored += [(score, names[ident]) for ident, score in indexed if ident in names and self._visible(names[ident])]
        scored += [(float(self._staged_vector(path, pairing) @ vector), path) for path, _ in self._staged()]
        scored.sort(key=lambda item: (-item[0], item[1]))
        kept = [(score, path) for score, path in scored if score > 0 and path != skip and _pairable(path)][:k]
        return [self._neighbour(path, min(1.0, score)) for score, path in kept]

    def _staged_vector(self, path: str, pairing: semantic.Pairing) -> Matrix:
        if path not in self._staged_vectors:
            staged = self.overlay[path]
            assert staged is not None
            row = staged.row
            self._staged_vectors[path] = pairing.model.embed([semantic.note_text(row.title, row.value, row.body)])[0]
        return self._staged_vectors[path]

    def _paths_of(self, ids: list[int]) -> dict[int, str]:
        marks = ",".join("?" * len(ids))
        return dict(self.conn.execute(f"SELECT id, path FROM notes WHERE id IN ({marks})", ids))

    def _neighbour(self, path: str, score: float) -> Neighbour:
        staged = self.overlay.get(path)
        if staged is not None:
            row = staged.row
            title, key, value = row.title, row.key, row.value
        else:
            found = self.conn.execute("SELECT title, key, frontmatter FROM notes WHERE path = ?", (path,)).fetchone()
            title, key, value = found[0], found[1], _value_of(found[2])
        shown = title or path.rsplit("/", 1)[-1][:-3]
        return Neighbour(path, shown, round(score, 4), self._text(path), key, value)

    def similar(self, head: str, body: str, k: int) -> list[Neighbour]:
        """The k notes closest to a text (`head`: its title and value), indexed or staged: found
        by BM25 over its rarest words, scored by `similarity.score` (1.0: the same text)."""
        head_words, body_words = terms(head), terms(body)
        df = self._frequencies([*head_words, *body_words])
        total = self._count()
        words = choose_terms(head_words, body_words, df, total) or _commonest_last([*head_words, *body_words], df)
        if not words or k <= 0:
            return []
        ranked = self._ranked(words, df, total, k + RESCORED)
        found = self._found(ranked)
        text = f"{head}\n{body}"
        probe = similarity.probe(text, self._frequencies(terms(text)), total, self._avg_words())
        scored = sorted(
            ((similarity.score(probe, f.text), f) for f in found),
            key=lambda item: (-item[0], item[1].path),
        )
        return [
            Neighbour(
                f.path, f.title or f.path.rsplit("/", 1)[-1][:-3], round(score, 4), self._text(f.path), f.key, f.value
            )
            for score, f in scored[:k]
            if score >= MIN_SCORE
        ]

    def _ranked(self, words: tuple[str, ...], df: dict[str, int], total: int, count: int) -> list[tuple[str, int]]:
        """The `count` best notes by BM25 (FTS5's for indexed notes, the same formula for staged
        ones): (path, rowid or -1 when staged)."""
        rows = self.conn.execute(
            "SELECT n.path, m.rowid, m.score FROM (SELECT rowid, -rank AS score FROM fts WHERE fts MATCH ? "
            "ORDER BY rank LIMIT ?) m JOIN notes n ON n.id = m.rowid",
            (match_expression(words), count + len(self.overlay) - len(self._new_paths)),
        )
        best = [(score, path, rowid) for path, rowid, score in rows if self._visible(path) and _pairable(path)]
        holders = set().union(*(self._holders.get(w, ()) for w in words)) if self.overlay else set()
        for path in holders:
            staged = self.overlay[path]
            assert staged is not None
            raw = bm25(words, staged.counts, staged.row.words, self._avg_words(), df, total)
            best.append((raw, path, -1))
        best.sort(key=lambda item: (-item[0], item[1]))
        return [(path, rowid) for _, path, rowid in best[:count]]

    def _found(self, ranked: list[tuple[str, int]]) -> list[_Found]:
        """What `similarity.score` reads of each ranked note: its text as the index holds it."""
        ids = [rowid for _, rowid in ranked if rowid >= 0]
        marks = ",".join("?" * len(ids))
        indexed = {
            path: _Found(path, title, key, _value_of(fm), f"{t} {v} {b}")
            for path, title, key, fm, t, v, b in self.conn.execute(
                "SELECT n.path, n.title, n.key, n.frontmatter, f.title, f.value, f.body FROM notes n "
                f"JOIN fts f ON f.rowid = n.id WHERE n.id IN ({marks})",
                ids,
            )
        }
        found = []
        for path, rowid in ranked:
            staged = self.overlay.get(path) if rowid < 0 else None
            if staged is not None:
                row = staged.row
                found.append(_Found(path, row.title, row.key, row.value, f"{row.title} {row.value} {row.body}"))
            elif path in indexed:
                found.append(indexed[path])
        return found

    def _text(self, path: str) -> str:
        staged = self.overlay.get(path)
        return staged.text if staged is not None else (_read_text(self.root, path) or "")

    def _frequencies(self, words: list[str]) -> dict[str, int]:
        """Document frequency per word: the index's, plus what the overlay added."""
        missing = [w for w in dict.fromkeys(words) if w not in self._df]
        for start in range(0, len(missing), 500):
            chunk = missing[start : start + 500]
            marks = ",".join("?" * len(chunk))
            found = dict(self.conn.execute(f"SELECT term, df FROM terms WHERE term IN ({marks})", chunk))
            self._df.update({w: int(found.get(w, 0)) for w in chunk})
        return {w: self._df[w] + self._staged_df[w] for w in words}

    def _count(self) -> int:
        """Notes in the vault as this sweep sees it: the index's, plus new ones it staged,
        less indexed ones it removed."""
        if self._total is None:
            self._total = self.index.count()
        removed = sum(1 for p, s in self.overlay.items() if s is None and p not in self._new_paths)
        return self._total + sum(1 for p in self._new_paths if self.overlay.get(p) is not None) - removed

    def _avg_words(self) -> float:
        if self._avg is None:
            self._avg = float(self.conn.execute("SELECT coalesce(avg(words), 1) FROM notes").fetchone()[0])
        return self._avg

    def info(self, path: str) -> dict[str, Any]:
        """What the index (or the overlay) knows about one note, for people and JSON."""
        staged = self.overlay.get(path)
        if staged is not None:
            row = staged.row
            fm = json.loads(row.frontmatter)
            return {"path": path, "surface": row.surface, "title": row.title, "value": fm.get("value")}
        found = self.conn.execute("SELECT surface, title, frontmatter FROM notes WHERE path = ?", (path,)).fetchone()
        if found is None:
            return {"path": path, "surface": None, "title": "", "value": None}
        surface, title, frontmatter = found
        return {"path": path, "surface": surface, "title": title, "value": json.loads(frontmatter).get("value")}

    # --- the overlay -----------------------------------------------------------------------

    def stage(self, rel: str, text: str | None) -> None:
        """Make a note this sweep wrote (or removed: None) visible to later candidates."""
        self._version += 1
        self._staged_vectors.pop(rel, None)
        if rel not in self.overlay and not self._hide_indexed(rel):
            self._new_paths.add(rel)
        previous = self.overlay.get(rel)
        if previous is not None:
            self._staged_df.subtract(previous.counts.keys())
            for word in previous.counts:
                self._holders[word].discard(rel)
        if text is None:
            self.overlay[rel] = None
            return
        row = describe(rel, text.encode("utf-8"), self.layout)
        counts = Counter(tokens(f"{row.title} {row.value} {row.body}"))
        self._staged_df.update(counts.keys())
        for word in counts:
            self._holders.setdefault(word, set()).add(rel)
        self.overlay[rel] = _Staged(text, row, counts)

    def _hide_indexed(self, rel: str) -> bool:
        """Take an indexed note's words out of the frequencies (the overlay replaces it)."""
        found = self.conn.execute(
            "SELECT n.id, f.title, f.value, f.body FROM notes n JOIN fts f ON f.rowid = n.id WHERE n.path = ?", (rel,)
        ).fetchone()
        if found is None:
            return False
        self._hidden_ids.add(int(found[0]))
        self._staged_df.subtract(set(tokens(" ".join(found[1:]))))
        return True


def _other_day(note: ExistingNote, day: str, layout: Layout) -> bool:
    """An event note dated another day: the same title, another event (a weekly meeting)."""
    surface = layout.surface_of(note.path, note.frontmatter)
    return surface is not None and surface.type == "event" and str(note.frontmatter.get("date"))[:10] != day


def _read_text(root: Path, rel: str) -> str | None:
    read = read_note(root, rel)
    return None if read is None else read[0].decode("utf-8", errors="replace")


def open_querier(
    root: Path, rules: Rules, state: Path, clock: Clock = SystemClock(), env: Mapping[str, str] | None = None
) -> IndexQuerier:
    """An up-to-date index of the vault, ready to ask (refreshed now, not on first use); `env`
    says where a named semantic model lives."""
    querier = IndexQuerier(root, rules, state, clock=clock, env=env)
    querier.index  # noqa: B018 - opens and refreshes
    return querier


# --- `memory-curator query` ------------------------------------------------------------------


def ask(
    querier: IndexQuerier,
    key: tuple[str, str] | None = None,
    slug: str | None = None,
    text: str | None = None,
    day: str | None = None,
    limit: int = 5,
) -> dict[str, Any]:
    """One question to the index, answered as plain data (for JSON or lines)."""
    if key is not None:
        surface = next((s for s in querier.rules.surfaces if s.key == ("entity", "predicate")), None)
        if surface is None:
            raise CuratorError("no surface is keyed by entity and predicate in the rules")
        target, problem = target_path(surface, {"entity": key[0], "predicate": key[1]})
        if target is None:
            raise CuratorError(f"{key[0]} {key[1]}: {problem}")
        return _answer("key", target, querier.paths_for_key(target), querier)
    if slug is not None:
        return _answer("slug", slug, querier.match_name(slug), querier)
    if day is not None:
        return _answer("date", day, querier.events_on(day), querier)
    found = querier.similar(text or "", "", limit) if text is not None else []
    return _answer("text", text or "", [n.path for n in found], querier, {n.path: n.score for n in found})


def similar_both(querier: IndexQuerier, asked: str, limit: int = 5, cwd: Path | None = None) -> dict[str, Any]:
    """`query --similar FILE|TEXT`: the lexical and the semantic neighbours of a note (a file,
    by its path from `cwd` or from the vault) or of a text, side by side. `semantic_status`
    says "on", "off" (no model in the rules) or why it is unavailable."""
    found = _read_file(querier.root, asked, cwd or Path.cwd())
    rel, title, value, body = None, asked, "", ""  # a text is asked as `--text` asks it: as a title
    if found is not None:
        rel, text = found
        note = parse(text)
        title, value, body = candidate_parts(note.frontmatter, note.body)
    lexical = [n for n in querier.similar(f"{title} {value}".strip(), body, limit + 1) if n.path != rel][:limit]
    paired = querier.semantic_similar(semantic.note_text(title, value, body), limit, skip=rel)
    status = "on" if querier.pairing is not None else querier.semantic_problem or "off (no semantic model in the rules)"
    return {
        "kind": "similar",
        "query": asked,
        "file": rel if found is not None else None,
        "lexical": [{**querier.info(n.path), "score": n.score} for n in lexical],
        "semantic": [{**querier.info(n.path), "score": n.score} for n in paired],
        "semantic_status": status,
    }


def _read_file(root: Path, asked: str, cwd: Path) -> tuple[str | None, str] | None:
    """(its vault path, or None outside the vault; its text) when `asked` names a Markdown
    file, from `cwd` or else from the vault's root; None: `asked` is a text."""
    if not asked.endswith(".md") or "\n" in asked:
        return None
    for path in (cwd / asked, root / asked):
        if path.is_file():
            resolved, top = path.resolve(), root.resolve()
            rel = resolved.relative_to(top).as_posix() if resolved.is_relative_to(top) else None
            return rel, path.read_text(encoding="utf-8", errors="replace")
    return None


def _answer(
    kind: str, asked: str, paths: list[str], querier: IndexQuerier, scores: dict[str, float] | None = None
) -> dict[str, Any]:
    results = []
    for path in paths:
        row = querier.info(path)
        if scores is not None:
            row["score"] = scores[path]
        results.append(row)
    return {"kind": kind, "query": asked, "results": results}
