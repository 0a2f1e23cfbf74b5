"""The querier over the index: the questions a decision asks (`questions.Questions`), answered
from `store.Index` alone (`overlay.Overlay` lays a sweep's own notes over them). Also `query`'s
answers (`ask`, `similar_both`).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory_curator.core import words
from memory_curator.core.candidate import Candidate, target_path
from memory_curator.core.clock import Clock, SystemClock
from memory_curator.core.errors import CuratorError
from memory_curator.core.facts import Neighbour, other_body_owner
from memory_curator.core.notes import parse
from memory_curator.core.rules import Rules
from memory_curator.index import semantic
from memory_curator.index.questions import Found, Questions, Ranked, key_first, near, pairable
from memory_curator.index.rows import COMMON_FLOOR, Layout, Stemmed, candidate_parts, match_expression, unpack
from memory_curator.index.store import FILE_NAME, Index, IndexUnavailable, Progress, Refresh, read_note
from memory_curator.store.writer import FILES, Files

if TYPE_CHECKING:
    from memory_curator.index.semantic import Matrix

PATH_MATCHES = 25  # notes found by the words of their paths: more is no answer
SPELT = 100  # indexed words beginning with a stem, read to find those with the stem
UNSTORED = "semantic vectors cannot be stored in the index ({}); pairing lexically only"


class IndexQuerier(Questions):
    """The questions asked of the index alone. A sweep asks them through `overlay.Overlay`,
    which lays the notes it writes over these answers.

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
        super().__init__()
        self.root, self.rules, self.state, self.clock, self.files = root, rules, state, clock, files
        self.progress = progress
        self.env: Mapping[str, str] = env or {}  # the context's: where a named semantic model lives
        self.pairing: semantic.Pairing | None = None  # the semantic model and vectors, when the rules name one
        self.semantic_problem: str | None = None  # why semantic pairing is off this sweep (one line)
        self.layout = index.layout if index is not None else Layout(rules)
        self._index = index
        self.refreshed: Refresh | None = None
        self._stale = False  # `expire`d: refreshed again on the next question
        self._df: dict[str, int] = {}
        self._total: int | None = None
        self._avg: float | None = None
        self._spelt_as: dict[tuple[str, str], dict[str, int]] = {}  # (language, stem) -> `spellings`
        self._pathed: dict[tuple[str, str, int], set[int]] = {}  # (word, language, most) -> `_paths_with`

    @property
    def index(self) -> Index:
        if self._index is None:
            try:
                index = Index(self.root, self.rules, self.state, self.clock, self.files, self.progress)
            except (sqlite3.Error, OSError) as exc:
                raise IndexUnavailable(f"{self.state / FILE_NAME}: cannot build the index: {exc}") from None
            self._refresh(index)
            self._index = index
            self._pair(index)
        elif self._stale:
            self._stale = False
            self._renew(self._index)
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
            self.semantic_problem = UNSTORED.format(exc)

    def _refresh(self, index: Index) -> Refresh:
        try:
            self.refreshed = index.refresh()
        except (sqlite3.Error, OSError) as exc:
            raise IndexUnavailable(f"{self.state / FILE_NAME}: cannot build the index: {exc}") from None
        return self.refreshed

    def expire(self) -> None:
        """For a querier kept for a process's life (`mcp`, `watch`): refresh the index on the
        next question, as a new querier would (an empty inbox's sweep never asks one)."""
        self._stale = True

    def _renew(self, index: Index) -> None:
        """The index refreshed (a stat walk when nothing changed) and, when notes changed, what
        was cached of them forgotten and the semantic vectors brought in step."""
        done = self._refresh(index)
        if done.rebuilt or done.added or done.changed or done.removed:
            self._df, self._total, self._avg, self._spelt_as, self._pathed = {}, None, None, {}, {}
            self.generation += 1
            self._near.clear()
            self._paired.clear()
            self._repair(index)

    def reindexed(self, rels: Collection[str]) -> None:
        """These notes brought up to date in the index alone (`Index.reindex`), and what was
        cached of the notes forgotten, as a refresh that changed them does (`_renew`). BM25's
        average note length stays the one the sweep began with, as the overlay kept it."""
        self.index.reindex(rels)
        self._df, self._total, self._spelt_as, self._pathed = {}, None, {}, {}
        self.generation += 1
        self._near.clear()
        self._paired.clear()
        self._repair(self.index)

    def _repair(self, index: Index) -> None:
        """The vectors in step with a refreshed index, with the model already loaded."""
        if self.pairing is None:
            return
        try:
            with index.writing():
                self.pairing = semantic.paired(index.conn, self.pairing.model, self.progress)
        except sqlite3.Error as exc:
            self.pairing = None
            self.semantic_problem = UNSTORED.format(exc)

    def close(self) -> None:
        if self._index is not None:
            self._index.close()

    def notices(self) -> list[str]:
        return [self.semantic_problem] if self.semantic_problem else []

    @property
    def conn(self) -> sqlite3.Connection:
        return self.index.conn

    # --- exact answers ---------------------------------------------------------------------

    def paths_for_key(self, rel: str) -> list[str]:
        rows = self.conn.execute("SELECT path FROM notes WHERE path = ? OR key = ? ORDER BY path", (rel, rel))
        return key_first([p for (p,) in rows], rel)

    def named(self, name: str) -> list[str]:
        rows = self.conn.execute(
            "SELECT n.path FROM names JOIN notes n ON n.id = names.note WHERE names.name = ? ORDER BY n.path", (name,)
        )
        return list(dict.fromkeys(p for (p,) in rows))

    def events_on(self, day: str) -> list[str]:
        rows = self.conn.execute("SELECT path FROM notes WHERE day = ? ORDER BY path", (day,))
        return list(dict.fromkeys(p for (p,) in rows))

    def in_folder(self, folder: str) -> list[str]:
        after = folder[:-1] + chr(ord(folder[-1]) + 1)  # every path beginning `folder` sorts before it
        rows = self.conn.execute("SELECT path FROM notes WHERE path >= ? AND path < ? ORDER BY path", (folder, after))
        return [p for (p,) in rows if "/" not in p[len(folder) :]]

    def copies(self, candidate: Candidate, digest: str | None, bare: str | None) -> list[str]:
        rows = self.conn.execute(
            "SELECT path, key, frontmatter, text_hash = ? FROM notes WHERE text_hash = ? OR body_hash = ? "
            "ORDER BY path",
            (digest, digest, bare),
        )
        found = []
        for path, key, fm, same_text in rows:
            if path == candidate.inbox_path:  # `check` of a vault note
                continue
            if same_text or not other_body_owner(candidate, Neighbour(path, "", 1.0, key=key, value=_value_of(fm))):
                found.append(path)
        return found

    def with_stem(self, stem: str) -> list[Stemmed]:
        rows = self.conn.execute("SELECT path, surface, owned FROM notes WHERE stem = ?", (stem,))
        return [(path, surface, _owned(owned)) for path, surface, owned in rows]

    def paths_naming(self, wanted: tuple[str, ...], language: str, every: bool = True) -> list[str]:
        """Notes whose folders and file name hold every (or, `every=False`, any) distinctive
        word, in any spelling with its stem (`obsidian-publish`: `Obsidian Publish/Publish
        limitations.md`). A word in more than max(20, 0.5%) of the paths (the vault's own name,
        `plugins`) is not distinctive, and more than `PATH_MATCHES` notes found is no answer:
        which one is a person's call. The index's `paths` table holds each path's words."""
        ceiling = max(COMMON_FLOOR, self.count() // 200)
        sets = [self._paths_with(word, language, ceiling + 1) for word in wanted]
        sets = [held for held in sets if len(held) <= ceiling and (held or every)]
        if not sets:
            return []
        found = set.intersection(*sets) if every else set.union(*sets)
        if len(found) > PATH_MATCHES:
            return []
        marks = ",".join("?" * len(found))
        return sorted(p for (p,) in self.conn.execute(f"SELECT path FROM notes WHERE id IN ({marks})", list(found)))

    def _paths_with(self, word: str, language: str, most: int) -> set[int]:
        """The notes whose paths hold the word, or a word with its stem: the indexed path words
        beginning as the stem does (`words.prefixes`), stemmed, then searched. At most `most`
        of them: a word in more paths is not distinctive, whichever they are. Kept per querier (a
        sweep's facts share entities and predicates), until the notes change."""
        self.index  # noqa: B018 - refreshed first when `expire`d: the cache answers for its notes
        asked = (word, language, most)
        if asked not in self._pathed:
            self._pathed[asked] = self._paths_found(word, language, most)
        return self._pathed[asked]

    def _paths_found(self, word: str, language: str, most: int) -> set[int]:
        stem = words.stem(word, language)
        if stem == word and not word.isalpha():  # a word with a digit: whole
            spelt = [word]
        else:
            spelt = [
                held
                for start in words.prefixes(stem)
                for (held,) in self.conn.execute(
                    "SELECT term FROM path_vocab WHERE term >= ? AND term < ?", (start, start + "\U0010ffff")
                )
                if words.stem(held, language) == stem
            ]
        if not spelt:
            return set()
        rows = self.conn.execute("SELECT rowid FROM paths WHERE paths MATCH ? LIMIT ?", (match_expression(spelt), most))
        return {ident for (ident,) in rows}

    def text(self, path: str) -> str | None:
        return _read_text(self.root, path)

    def indexed(self, path: str) -> tuple[int, str] | None:
        """The note's id and its words as indexed (title, value, body); None when not indexed."""
        found = self.conn.execute(
            "SELECT n.id, t.packed FROM notes n JOIN texts t ON t.id = n.id WHERE n.path = ?", (path,)
        ).fetchone()
        return None if found is None else (int(found[0]), " ".join(unpack(found[1])))

    def info(self, path: str) -> dict[str, Any]:
        """What the index knows about one note, for people and JSON."""
        found = self.conn.execute("SELECT surface, title, frontmatter FROM notes WHERE path = ?", (path,)).fetchone()
        if found is None:
            return {"path": path, "surface": None, "title": "", "value": None}
        surface, title, frontmatter = found
        return {"path": path, "surface": surface, "title": title, "value": json.loads(frontmatter).get("value")}

    # --- similarity ------------------------------------------------------------------------

    def frequencies(self, words: list[str]) -> dict[str, int]:
        missing = [w for w in dict.fromkeys(words) if w not in self._df]
        for start in range(0, len(missing), 500):
            chunk = missing[start : start + 500]
            marks = ",".join("?" * len(chunk))
            found = dict(self.conn.execute(f"SELECT term, df FROM terms WHERE term IN ({marks})", chunk))
            self._df.update({w: int(found.get(w, 0)) for w in chunk})
        return {w: self._df[w] for w in words}

    def spellings(self, stem: str, language: str) -> dict[str, int]:
        """The indexed words with this stem: those beginning alike (`words.prefixes`), stemmed."""
        if (language, stem) not in self._spelt_as:
            found: dict[str, int] = {}
            for start in words.prefixes(stem):
                rows = self.conn.execute(
                    "SELECT term, df FROM terms WHERE term >= ? AND term < ? AND df > 0 LIMIT ?",
                    (start, start + "\U0010ffff", SPELT),
                )
                found.update((t, int(df)) for t, df in rows if words.stem(t, language) == stem)
            self._spelt_as[language, stem] = found
        return self._spelt_as[language, stem]

    def count(self) -> int:
        if self._total is None:
            self._total = self.index.count()
        return self._total

    def avg_words(self) -> float:
        if self._avg is None:
            self._avg = float(self.conn.execute("SELECT coalesce(avg(words), 1) FROM notes").fetchone()[0])
        return self._avg

    def ranked(self, words: tuple[str, ...], df: dict[str, int], total: int, count: int) -> list[Ranked]:
        """The `count` best notes by FTS5's BM25 (`df` and `total` score notes laid over them)."""
        return [found for found in self.ranked_rows(words, count) if pairable(found[1])]

    def ranked_rows(self, words: tuple[str, ...], limit: int) -> list[Ranked]:
        """The `limit` best rows for these words, best first (BM25, then rowid), the rules file
        among them: a list shorter than `limit` is every note that holds one of the words.
        Ordered by `bm25()` itself, not by `rank` (the same function): FTS5 sorts by `rank` in a
        statement of its own, and SQLite's top-k sort of `bm25()` costs 30% less CPU here."""
        rows = self.conn.execute(
            "SELECT n.path, m.rowid, -m.score FROM (SELECT rowid, bm25(fts) AS score FROM fts WHERE fts MATCH ? "
            "ORDER BY score, rowid LIMIT ?) m JOIN notes n ON n.id = m.rowid ORDER BY m.score, m.rowid",
            (match_expression(words), limit),
        )
        return [(score, path, rowid) for path, rowid, score in rows]

    def found(self, ranked: list[tuple[str, int]]) -> list[Found]:
        ids = [rowid for _, rowid in ranked if rowid >= 0]
        marks = ",".join("?" * len(ids))
        indexed = {
            path: Found(path, title, key, _value_of(fm), " ".join(unpack(packed)), _owned(owned))
            for path, title, key, fm, packed, owned in self.conn.execute(
                "SELECT n.path, n.title, n.key, n.frontmatter, t.packed, n.owned FROM notes n "
                f"JOIN texts t ON t.id = n.id WHERE n.id IN ({marks})",
                ids,
            )
        }
        return [indexed[path] for path, _ in ranked if path in indexed]

    def semantic_pairing(self) -> semantic.Pairing | None:
        self.index  # noqa: B018 - opens the pairing
        return self.pairing

    def closest(
        self, pairing: semantic.Pairing, vector: Matrix, k: int, hidden: Collection[int] = ()
    ) -> list[tuple[float, str]]:
        """The k + 1 indexed notes closest to `vector`, but the note ids in `hidden`."""
        indexed = semantic.nearest(pairing.vectors, vector, k + 1, hidden)
        marks = ",".join("?" * len(indexed))
        names = dict(self.conn.execute(f"SELECT id, path FROM notes WHERE id IN ({marks})", [i for i, _ in indexed]))
        return [(score, names[ident]) for ident, score in indexed if ident in names]

    def neighbour(self, path: str, score: float) -> Neighbour:
        found = self.conn.execute("SELECT title, key, frontmatter, owned FROM notes WHERE path = ?", (path,)).fetchone()
        return near(path, found[0], score, self.text(path) or "", found[1], _value_of(found[2]), _owned(found[3]))


def _owned(column: int | None) -> bool | None:
    return None if column is None else bool(column)


def _value_of(frontmatter: str) -> str:
    value = json.loads(frontmatter).get("value")
    return "" if value is None else str(value).strip()


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
    found = querier.searched(text, limit) if text is not None else []
    return _answer("text", text or "", [path for path, _ in found], querier, dict(found))


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
    lexical = querier.similar(f"{title} {value}".strip(), body, limit + 1, wide=True)
    lexical = [n for n in lexical if n.path != rel][:limit]
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
