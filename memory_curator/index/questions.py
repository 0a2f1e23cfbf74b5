"""The questions a decision asks (`core.facts.Querier`), written once over what a view of the
vault's notes answers: the index alone (`querier.IndexQuerier`) or the index with the notes a
sweep wrote laid over it (`overlay.Overlay`). A view gives the primitives (which notes hold a
key, a name, a stem, a word; their texts and word frequencies); the questions combine them, so
that both views answer alike.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from memory_curator.core import evidence, subject, words
from memory_curator.core.candidate import Candidate
from memory_curator.core.facts import Alike, ExistingNote, Neighbour, distinct
from memory_curator.core.names import RULES_PATH, nfc, slugify
from memory_curator.core.notes import parse
from memory_curator.core.ownership import curator_owned, never_owned, on_surface
from memory_curator.core.rules import Rules
from memory_curator.index import semantic, similarity
from memory_curator.index.rows import (
    COMMON_FLOOR,
    COMMON_SHARE,
    QUERY_TERMS,
    Layout,
    Stemmed,
    candidate_parts,
    choose_terms,
    hashes,
    terms,
)

if TYPE_CHECKING:
    from memory_curator.index.semantic import Matrix

MIN_SCORE = 0.02  # below this a "neighbour" shares only words most notes hold
META = RULES_PATH.split("/")[0] + "/"
RESCORED = 2  # notes fetched by BM25 beyond k, to be scored by `similarity`
POOL = 30  # `query` ranks at least this many BM25 notes: 30 finds the named questions 60 did, 20 loses 2 of 30
FUSED = 10  # `query --text` with semantic pairing: each list's pool made one (10 to 30 find the same)
SEARCHED = 3  # `query` fetches k x this many notes by BM25, to rank them (`similarity.relevance`, `.same`)
UNSPELT = 5  # a candidate's words no note holds as written, looked up by their stem (title first)
PEERS = 10  # notes one evidence question (an event's day, a research note's topic) adds to those scored
ALIKE = 2  # distinct title words a note's path must hold to be named as titled alike
SPELLINGS = 6  # the vault's spellings of one stem searched, the most frequent first
Ranked = tuple[float, str, int]  # BM25 score, path, rowid (-1: a staged note)
Cached = tuple[str, str, int, int]  # inbox path, its hash, k, the view's generation
Near = tuple[Neighbour, float]  # a neighbour scored by `similarity.same`, and its `similarity.topic`


@dataclass(frozen=True)
class Found:
    """What `similarity` reads of a ranked note: its text as the index holds it."""

    path: str
    title: str
    key: str | None
    value: str
    text: str  # title, value and body as indexed
    owned: bool | None = None  # the curator's note (the index's `owned`); None: not known without reading it


class Questions(ABC):
    """The questions, over the primitives a view gives (the abstract methods below).
    `generation` changes whenever the view's notes do: cached neighbours are per generation."""

    rules: Rules
    layout: Layout

    def __init__(self) -> None:
        self.generation = 0
        self._near: dict[Cached, list[Near]] = {}
        self._paired: dict[Cached, list[Neighbour]] = {}

    # --- what a view answers ---------------------------------------------------------------

    @abstractmethod
    def paths_for_key(self, rel: str) -> list[str]:
        """Notes at this key path, or whose own key fields name it: the path itself first."""

    @abstractmethod
    def named(self, name: str) -> list[str]:
        """Notes with this slugified name (title, alias, slug, file name, first heading)."""

    @abstractmethod
    def events_on(self, day: str) -> list[str]:
        """Event notes dated `day` (YYYY-MM-DD)."""

    @abstractmethod
    def in_folder(self, folder: str) -> list[str]:
        """Notes directly in `folder` (`facts/acme/`), by path."""

    @abstractmethod
    def copies(self, candidate: Candidate, digest: str | None, bare: str | None) -> list[str]:
        """Notes with the candidate's text hash (`digest`), or with its body hash (`bare`)
        unless they carry another key or value (`facts.other_body_owner`)."""

    @abstractmethod
    def with_stem(self, stem: str) -> list[Stemmed]:
        """(path, surface, owned) of the notes whose file name, folded, is `stem`; owned is None
        when the index could not tell (a note it keeps by its body alone)."""

    @abstractmethod
    def paths_naming(self, words: tuple[str, ...], language: str, every: bool = True) -> list[str]:
        """Notes whose folders and file name hold every (or any) distinctive word, by stem."""

    @abstractmethod
    def text(self, path: str) -> str | None:
        """The note's text as the view holds it; None when there is none."""

    @abstractmethod
    def frequencies(self, words: list[str]) -> dict[str, int]:
        """Document frequency per word."""

    @abstractmethod
    def spellings(self, stem: str, language: str) -> dict[str, int]:
        """The indexed words with this stem in `language`, and the document frequency of each
        (none with a frequency of 0)."""

    @abstractmethod
    def count(self) -> int:
        """How many notes the view holds."""

    @abstractmethod
    def avg_words(self) -> float:
        """The indexed notes' average length in words (BM25's)."""

    @abstractmethod
    def ranked(self, words: tuple[str, ...], df: dict[str, int], total: int, count: int) -> list[Ranked]:
        """At least the `count` best notes for these words by BM25, unsorted."""

    @abstractmethod
    def found(self, ranked: list[tuple[str, int]]) -> list[Found]:
        """The text of each ranked (path, rowid), in that order."""

    @abstractmethod
    def semantic_pairing(self) -> semantic.Pairing | None:
        """The semantic model and vectors; None when the rules name none or it is unavailable."""

    @abstractmethod
    def closest(self, pairing: semantic.Pairing, vector: Matrix, k: int) -> list[tuple[float, str]]:
        """At least the k notes closest to `vector` as (cosine, path), unsorted."""

    @abstractmethod
    def neighbour(self, path: str, score: float) -> Neighbour:
        """The note at `path` as a neighbour scored `score`."""

    @abstractmethod
    def notices(self) -> list[str]:
        """One-line remarks for the sweep's report: why semantic pairing is off, when it is."""

    # --- exact answers ---------------------------------------------------------------------

    def note_at(self, rel: str) -> ExistingNote | None:
        for path in self.paths_for_key(rel):
            text = self.text(path)
            if text is not None:
                return self.parsed(path, text)
        return None

    def parsed(self, path: str, text: str) -> ExistingNote:
        note = parse(text)
        return ExistingNote(path, text, note, curator_owned(path, note.frontmatter, self.rules))

    def duplicate_of(self, candidate: Candidate) -> str | None:
        """A note with the candidate's normalised text (title, value, body), or with its body
        alone when neither carries another key or value (`facts.other_body_owner`): a verbatim copy
        under a new title is a duplicate; a template's boilerplate body under another fact is not."""
        title, value, body = candidate_parts(candidate.frontmatter, candidate.note.body)
        digest, bare = hashes(title, value, body)
        if digest is None and bare is None:
            return None
        own = candidate.target
        return min(self.copies(candidate, digest, bare), key=lambda p: (own is not None and p == own, p), default=None)

    def links_to_durable(self, links: list[str]) -> bool:
        """A wikilink that resolves (by path or by file name, as Obsidian does) to a note on a
        declared surface."""
        for link in links:
            target = nfc(link.strip().removesuffix(".md")).casefold()
            for path, surface, _ in self.with_stem(target.rsplit("/", 1)[-1]):
                folded = nfc(path[:-3]).casefold()
                if surface and ("/" not in target or folded == target or folded.endswith("/" + target)):
                    return True
        return False

    def match_name(self, text: str) -> list[str]:
        """Notes whose title, alias, slug or file name is `text` once slugified (case, accents,
        punctuation folded)."""
        name = slugify(text)
        return self.named(name) if name else []

    def subject_notes(self, candidate: Candidate) -> list[ExistingNote]:
        """Notes anywhere in the vault about what the candidate is about (`core.subject`): not
        its own key path (that is `note_at`), nothing the curator never owns (`_meta/`…).
        A fact's note is one named for its entity that speaks of its predicate, or one named
        for its predicate (`Refund policy.md`) that speaks of its entity."""
        wanted = subject.ask(candidate, self.rules.settings.language)
        found: list[ExistingNote] = []
        by_name = {p for name in wanted.names for p in self.match_name(name)}
        named = sorted(by_name)
        by_predicate: list[str] = []
        if wanted.entity:
            named += self.paths_naming(wanted.entity, wanted.language)
            by_predicate = self.paths_naming(wanted.predicate, wanted.language, every=False)
        for path in dict.fromkeys([*named, *by_predicate]):
            if path in (candidate.target, candidate.inbox_path) or never_owned(path):
                continue
            text = self.text(path)
            if not text or (
                path in named and not subject.speaks_of(wanted.predicate, f"{path} {text}", wanted.language)
            ):
                continue
            note = self.parsed(path, text)
            if path not in by_name and not _about_by_words(candidate, wanted, note):
                continue
            if wanted.day and _other_day(note, wanted.day, self.layout):
                continue
            found.append(replace(note, found_by="name" if path in by_name else "words"))
        found += [n for n in self._about_by_topic(candidate) if n.path not in {m.path for m in found}]
        return found + [n for n in self._namesakes(candidate) if n.path not in {m.path for m in found}]

    def _namesakes(self, candidate: Candidate) -> list[ExistingNote]:
        """The notes a promote would share its `[[link]]` name with (`subject.names_alike`),
        whatever they say: a second note of that name makes the person's links ambiguous, so
        the candidate waits naming them (`found_by` "file-name", never a note to patch)."""
        if not candidate.target:
            return []
        found = []
        for path, _, owned in self.with_stem(subject.link_name(candidate.target)):
            if owned is not None and not subject.names_alike(candidate, path, owned):
                continue  # whose it is, the index knows: a fact's own namesakes are not read
            if never_owned(path) or path == candidate.inbox_path:
                continue
            text = self.text(path)
            note = None if text is None else self.parsed(path, text)
            if note is not None and subject.names_alike(candidate, path, note.curator_owned):
                found.append(replace(note, found_by="file-name"))
        return found

    def titled_alike(self, candidate: Candidate) -> list[Alike]:
        """Notes whose file name holds `ALIKE` or more of the distinct words of the candidate's
        title, by stem, most first: (path, words held, the title's words). A vault's
        file names are its notes' titles, and words a title shares cross languages where
        sentences do not (`gate`, `deadlock`, `webhook`, `lastnode`). A word in many paths
        counts for none (`paths_naming`). Named in a review, never a reason for a verdict."""
        title, _, body = candidate_parts(candidate.frontmatter, candidate.note.body)
        language = words.language_of(f"{title} {body}", self.rules.settings.language)
        found = terms(words.tokens(title), language)
        stem_of = dict(zip(found, words.stems(found, language), strict=True))
        wanted = _one_per_stem(found, stem_of)
        if len(wanted) < ALIKE:
            return []
        held: dict[str, set[str]] = {}
        for word in wanted:
            for path in self.paths_naming((word,), language):
                held.setdefault(path, set()).add(stem_of[word])
        own = (candidate.target, candidate.inbox_path)
        kept = []
        for path, stems in held.items():
            named = len(stems & set(words.stems(words.tokens(path.rsplit("/", 1)[-1][:-3]), language)))
            if named >= ALIKE and path not in own and not never_owned(path):
                kept.append((path, named, len(wanted)))
        return sorted(kept, key=lambda item: (-item[1], item[0]))

    def _about_by_topic(self, candidate: Candidate) -> list[ExistingNote]:
        """Notes holding most of the candidate (`similarity.topic` at least the near-duplicate
        score) that are not its information again (those are its near-duplicates): about the
        same thing, so named in its review, never its note to patch (`found_by` "topic"). A
        note of its own surface with another key or value is another thing (`facts.distinct`)."""
        settings = self.rules.settings
        if candidate.note.problem:
            return []
        named, threshold = set(self._topic_names(candidate)), settings.near_duplicate_score
        found = []
        for neighbour, topic in self._neighbours(candidate, settings.neighbours):
            by_name = evidence.about(neighbour.path in named, neighbour.score, topic)
            if not by_name and (topic < threshold or neighbour.score >= threshold):
                continue
            if neighbour.path in (candidate.target, candidate.inbox_path) or never_owned(neighbour.path):
                continue
            if (by_name or not distinct(candidate, neighbour)) and neighbour.text:
                found.append(replace(self.parsed(neighbour.path, neighbour.text), found_by="topic"))
        return found

    def _topic_names(self, candidate: Candidate) -> list[str]:
        """The notes named by the candidate's `topic`, on a surface keyed by it (research's
        `notion`: the person's `Stack/notion.md`)."""
        topic = candidate.frontmatter.get("topic")
        keyed = candidate.surface is not None and "topic" in candidate.surface.key
        return self.match_name(str(topic))[:PEERS] if keyed and isinstance(topic, str | int) else []

    def _peers(self, candidate: Candidate) -> list[str]:
        """The notes the candidate's fields point at, scored beside its neighbours whatever
        words they share (`evidence`): the events of its day and the facts of its entity, when it
        has a source, and the notes its `topic` names."""
        fm, found = candidate.frontmatter, self._topic_names(candidate)
        sourced = bool(evidence.sources(fm, self.rules.settings))
        event = candidate.surface is not None and candidate.surface.type == "event"
        if event and sourced:
            found += self.events_on(str(fm.get("date"))[:10])[:PEERS]
        if sourced and candidate.surface is not None and "entity" in candidate.surface.key and candidate.target:
            found += self.in_folder(candidate.target.rsplit("/", 1)[0] + "/")[:PEERS]  # its entity's other facts
        skipped = (candidate.target, candidate.inbox_path)
        return [p for p in dict.fromkeys(found) if p not in skipped and pairable(p)]

    # --- similarity ------------------------------------------------------------------------

    def neighbours(self, candidate: Candidate, k: int) -> list[Neighbour]:
        """The k closest notes by BM25 over the candidate's title, value and rarest body words,
        each scored in [0, 1] by `similarity.same` (1.0: the same information)."""
        return [neighbour for neighbour, _ in self._neighbours(candidate, k)]

    def _neighbours(self, candidate: Candidate, k: int) -> list[Near]:
        title, value, body = candidate_parts(candidate.frontmatter, candidate.note.body)
        cache_key = (candidate.inbox_path, candidate.digest, k, self.generation)
        if cache_key not in self._near:
            self._near[cache_key] = self._similar(f"{title} {value}", body, k, peers=self._peers(candidate))
        return self._near[cache_key]

    def semantic_neighbours(self, candidate: Candidate, k: int) -> list[Neighbour]:
        """The k notes closest in meaning (cosine of the model's vectors, best first); none
        when the rules name no model or it is unavailable."""
        title, value, body = candidate_parts(candidate.frontmatter, candidate.note.body)
        cache_key = (candidate.inbox_path, candidate.digest, k, self.generation)
        if cache_key not in self._paired:
            text = semantic.note_text(title, value, body)
            self._paired[cache_key] = self.semantic_similar(text, k, skip=candidate.inbox_path)
        return self._paired[cache_key]

    def similar(self, head: str, body: str, k: int, search: bool = False, wide: bool = False) -> list[Neighbour]:
        """The k notes closest to a text (`head`: its title and value), found by BM25 over its
        rarest words. Scored and ranked by `similarity.same` (1.0: the same information; the
        topic overlap breaks ties), or with `search` (`query --text`) by `similarity.relevance`.
        A sweep scores k + `RESCORED` notes; `query` (`search`, or `wide`) k x `SEARCHED`, and at
        least `POOL`."""
        return [neighbour for neighbour, _ in self._similar(head, body, k, search, wide)]

    def searched(self, text: str, k: int) -> list[tuple[str, float]]:
        """`query --text`: the k notes that best answer `text`, with their scores. With semantic
        pairing on, the lexical and the semantic best `FUSED` (or k) are made one list
        (`similarity.fused`): a question in other words than the note's finds it by meaning."""
        if self.semantic_pairing() is None:
            return [(n.path, n.score) for n in self.similar(text, "", k, search=True)]
        pool = max(k, FUSED)
        lexical = [(n.path, n.score) for n in self.similar(text, "", pool, search=True)]
        paired = [(n.path, n.score) for n in self.semantic_similar(semantic.note_text(text, "", ""), pool)]
        return similarity.fused(lexical, paired)[:k]

    def _similar(
        self, head: str, body: str, k: int, search: bool = False, wide: bool = False, peers: list[str] | None = None
    ) -> list[Near]:
        """`similar`, each with its topic overlap; `peers` (`_peers`) are scored too, and kept
        beyond the k whatever their score."""
        if k <= 0:
            return []
        head_words, body_words = words.tokens(head), words.tokens(body)
        language = words.language_of([*head_words, *body_words], self.rules.settings.language)
        count = max(k * SEARCHED, POOL) if search or wide else k + RESCORED
        found, probe = self._found(head_words, body_words, language, count)
        ranked = {f.path for f in found}
        extra = [f for f in (self._found_at(p) for p in peers or () if p not in ranked) if f is not None]
        scored = []
        for f in [*found, *extra]:
            note = similarity.read(probe, f.text)
            score = similarity.relevance(probe, note) if search else similarity.same(probe, note)
            scored.append((score, similarity.topic(probe, note), f))
        scored.sort(key=lambda item: (-item[0], -item[1], item[2].path))
        kept = [item for item in scored[:k] if max(item[0], item[1]) >= MIN_SCORE]
        peer_paths = {f.path for f in extra}
        kept += [item for item in scored[k:] if item[2].path in peer_paths]
        return [
            (near(f.path, f.title, score, self.text(f.path) or "", f.key, f.value, f.owned), topic)
            for score, topic, f in kept
        ]

    def _found_at(self, path: str) -> Found | None:
        """A note as `found` gives it, read from its text (a peer BM25 did not rank)."""
        text = self.text(path)
        if text is None:
            return None
        note = parse(text)
        title, value, body = candidate_parts(note.frontmatter, note.body)
        fm = note.frontmatter
        key = self.layout.key_of(path, self.layout.surface_of(path, fm), fm)
        return Found(path, title, key, value, f"{title} {value} {body}", curator_owned(path, fm, self.rules))

    def _found(
        self, head: list[str], body: list[str], language: str, count: int
    ) -> tuple[list[Found], similarity.Probe]:
        """The `count` best notes by BM25 over the text's rarest words (`rows.choose_terms`), each
        searched in the vault's spellings of its stem too, and the text prepared for scoring them.
        A word no note holds as written counts by its commonest spelling in the vault, and so does
        a stem searched or of a short text (its spellings known): the stem's frequency is at least
        that of each spelling."""
        head_words, body_words = terms(head, language), terms(body, language)
        df = self.frequencies([*head_words, *body_words])
        both = [*head_words, *body_words]
        stems = dict(zip(both, words.stems(both, language), strict=True))
        counted = dict(df)  # a word no note holds as written, by its stem's commonest spelling
        for word in [w for w in stems if not df[w]][:UNSPELT]:
            counted[word] = max(self.spellings(stems[word], language).values(), default=0)
        total = self.count()
        chosen = choose_terms(_one_per_stem(head_words, stems), _one_per_stem(body_words, stems), counted, total)
        ceiling = max(COMMON_FLOOR, total // COMMON_SHARE) if chosen else math.inf
        asked = chosen or _commonest_last([*head_words, *body_words], counted)
        spelt = self._spelt({w: stems[w] for w in asked}, df, language, ceiling)
        by_stem: dict[str, int] = {}
        looked = set(stems.values()) if len(set(stems.values())) <= QUERY_TERMS else {stems[w] for w in asked}
        for word, stem in stems.items():
            if counted[word] > by_stem.get(stem, 0):
                by_stem[stem] = counted[word]
        for stem in looked:
            by_stem[stem] = max(by_stem.get(stem, 0), *self.spellings(stem, language).values(), 0)
        probe = similarity.probe([*head, *body], by_stem, total, self.avg_words(), language)
        if not spelt:
            return [], probe
        best = sorted(self.ranked(tuple(spelt), spelt, total, count), key=lambda item: (-item[0], item[1]))
        return self.found([(path, rowid) for _, path, rowid in best[:count]]), probe

    def _spelt(self, asked: dict[str, str], df: dict[str, int], language: str, ceiling: float) -> dict[str, int]:
        """The words to search: each word asked (by its stem in `asked`) as written when a note
        holds it, and the vault's spellings of its stem, the most frequent first, none held by
        more than `ceiling` notes (`rows.choose_terms`)."""
        spelt = {w: df[w] for w in asked if 0 < df[w] <= ceiling}
        for stem in asked.values():
            found = sorted(self.spellings(stem, language).items(), key=lambda item: (-item[1], item[0]))
            spelt.update([item for item in found if item[1] <= ceiling][:SPELLINGS])
        return spelt

    def semantic_similar(self, text: str, k: int, skip: str | None = None) -> list[Neighbour]:
        """The k notes whose vectors are closest to this text's, with a positive cosine (not
        `skip`: the note itself, when `check` asks about a vault note)."""
        pairing = self.semantic_pairing()
        if pairing is None or k <= 0 or not text.strip():
            return []
        vector = pairing.model.embed([text])[0]
        scored = sorted(self.closest(pairing, vector, k), key=lambda item: (-item[0], item[1]))
        kept = [(score, path) for score, path in scored if score > 0 and path != skip and pairable(path)][:k]
        return [self.neighbour(path, min(1.0, score)) for score, path in kept]


def near(
    path: str, title: str, score: float, text: str, key: str | None, value: str, owned: bool | None = None
) -> Neighbour:
    """A neighbour as shown: its title, else its file name; its score to four places."""
    return Neighbour(path, title or path.rsplit("/", 1)[-1][:-3], round(score, 4), text, key, value, owned=owned)


def key_first(paths: list[str], rel: str) -> list[str]:
    """Each path once, the key path itself first, then by path."""
    return sorted(dict.fromkeys(paths), key=lambda p: (p != rel, p))


def pairable(path: str) -> bool:
    """Not the rules file (nor anything under `_meta/`): it speaks of every kind of note and
    is nobody's neighbour."""
    return not path.startswith(META)


def _one_per_stem(found: list[str], stems: dict[str, str]) -> list[str]:
    """The words, one per stem (the first): their spellings are searched alike."""
    first: dict[str, str] = {}
    for word in found:
        first.setdefault(stems[word], word)
    return list(first.values())


def _commonest_last(words: list[str], df: dict[str, int]) -> tuple[str, ...]:
    """Words every query would skip as too common (`query --text sync`), rarest first: a text
    made only of such words is still searched."""
    held = sorted((w for w in dict.fromkeys(words) if df.get(w, 0) > 0), key=lambda w: (df[w], w))
    return tuple(held[:QUERY_TERMS])


def _about_by_words(candidate: Candidate, wanted: subject.Ask, note: ExistingNote) -> bool:
    """A note found by the words of its path is the fact's note when it speaks of the
    entity and the predicate; never a note of the candidate's own surface (there, another
    path is another key: `facts/widget-3/size.md` is not `widget-7`'s)."""
    if candidate.surface is not None and on_surface(note.path, [candidate.surface]):
        return False
    text = f"{note.path} {note.text}"
    language = wanted.language
    return subject.speaks_of(wanted.entity, text, language, 1.0) and subject.speaks_of(wanted.predicate, text, language)


def _other_day(note: ExistingNote, day: str, layout: Layout) -> bool:
    """An event note dated another day: the same title, another event (a weekly meeting)."""
    surface = layout.surface_of(note.path, note.frontmatter)
    return surface is not None and surface.type == "event" and str(note.frontmatter.get("date"))[:10] != day
