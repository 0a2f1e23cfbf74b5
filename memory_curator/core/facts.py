"""The vault querier: what the vault already knows about a candidate.

`Querier` is the interface the sweep asks; `FileQuerier` answers exact-key questions by
reading the note at the candidate's key path (the surface's path template). The FTS5
index (`index.querier.IndexQuerier`) answers the same questions plus duplicates and neighbours.
A sweep asks a `Staging` querier (`index.overlay.Overlay`), in which the notes it writes (or
plans, in a dry run) are staged, visible to its later candidates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol, runtime_checkable

from memory_curator.core import evidence, merge
from memory_curator.core.candidate import Candidate, not_carried
from memory_curator.core.comparison import new_sentences
from memory_curator.core.notes import Note, all_tags, parse, wikilinks
from memory_curator.core.ownership import on_surface
from memory_curator.core.privacy import withheld
from memory_curator.core.restated import restated
from memory_curator.core.rules import Rules
from memory_curator.core.settings import Settings


@dataclass(frozen=True)
class ExistingNote:
    path: str
    text: str
    note: Note
    curator_owned: bool  # False: the person's note, never changed by a sweep (`ownership`)
    found_by: str = "key"  # key (its path), name (title, alias, H1, stem, slug), words (of its path), topic,
    # or file-name (its `[[link]]` name is the one a promote would take: `subject.names_alike`)

    @property
    def frontmatter(self) -> Mapping[str, Any]:
        return self.note.frontmatter


@dataclass(frozen=True)
class Neighbour:
    """A note close to a candidate; `score` in 0..1, 1.0 the same text (`index.similarity`)."""

    path: str
    title: str
    score: float
    text: str = ""
    key: str | None = None  # the path its own key fields name, on a keyed surface
    value: str = ""  # its `value`, as written
    agreed: tuple[str, ...] = ()  # the fields it shares with the candidate that made it near (`evidence.agreed`)
    owned: bool | None = None  # the curator's note, as the index knows it; None: read it to know


Alike = tuple[str, int, int]  # a note titled alike: its path, the title words its path holds, the title's words


@dataclass(frozen=True)
class Facts:
    """The querier facts a rule condition can name, plus what explains them."""

    exact_key_exists: bool = False
    known_unchanged: bool = False
    exact_duplicate: bool = False
    near_duplicate: bool = False
    links_to_durable_note: bool = False
    existing: ExistingNote | None = None
    comparison: merge.Comparison | None = None
    duplicate_of: str | None = None
    neighbours: tuple[Neighbour, ...] = ()
    subjects: tuple[ExistingNote, ...] = ()  # other notes about the same subject (`subject_notes`)
    near: tuple[Neighbour, ...] = ()  # the neighbours that made `near_duplicate`
    adds_text: tuple[str, ...] = ()  # sentences of the candidate's body the note with its key lacks
    semantic: tuple[Neighbour, ...] = ()  # the semantic neighbours (`semantic_neighbours`), scored by cosine
    close: tuple[Neighbour, ...] = ()  # the semantic neighbours that made `semantic_neighbour`
    alike: tuple[Alike, ...] = ()  # notes whose paths hold the candidate's title words (`titled_alike`): named only
    private: frozenset[str] = frozenset()  # the deciding notes that are private (`privacy.withheld`; `core.veil`)

    @property
    def semantic_neighbour(self) -> bool:
        return bool(self.close)

    @property
    def subject_note_exists(self) -> bool:
        return bool(self.subjects)

    def as_conditions(self, required_present: bool) -> dict[str, bool]:
        return {
            "exact_key_exists": self.exact_key_exists,
            "known_unchanged": self.known_unchanged,
            "exact_duplicate": self.exact_duplicate,
            "near_duplicate": self.near_duplicate,
            "subject_note_exists": self.subject_note_exists,
            "semantic_neighbour": self.semantic_neighbour,
            "links_to_durable_note": self.links_to_durable_note,
            "required_fields_present": required_present,
        }


class Querier(Protocol):
    """The questions a decision asks of the vault (`index.questions`; `FileQuerier`)."""

    def note_at(self, rel: str) -> ExistingNote | None: ...

    def duplicate_of(self, candidate: Candidate) -> str | None: ...

    def neighbours(self, candidate: Candidate, k: int) -> list[Neighbour]: ...

    def semantic_neighbours(self, candidate: Candidate, k: int) -> list[Neighbour]: ...

    def links_to_durable(self, links: list[str]) -> bool: ...

    def subject_notes(self, candidate: Candidate) -> list[ExistingNote]: ...

    def titled_alike(self, candidate: Candidate) -> list[Alike]: ...

    def notices(self) -> list[str]: ...  # one-line remarks for the sweep's report (semantic pairing off, and why)


@runtime_checkable
class Staging(Querier, Protocol):
    """A querier a sweep also stages the notes it writes in, so that its later candidates see
    them (`index.overlay.Overlay`; `FileQuerier`, which answers exact keys only)."""

    def stage(self, rel: str, text: str | None) -> None: ...


@runtime_checkable
class Settling(Protocol):
    """A staging querier that lets go of what it staged once it is on disk (`Overlay.settle`)."""

    def settle(self) -> None: ...

    def weight(self) -> tuple[int, int]: ...  # the notes staged and their bytes, not yet settled


def staging(querier: Querier) -> Staging:
    """The querier a sweep asks, as one it stages its notes in. Every querier factory gives one
    (`Context.querier`'s type names the questions only): a querier that cannot stage is a bug,
    met here rather than after the first write."""
    if not isinstance(querier, Staging):
        raise TypeError(f"{type(querier).__name__} cannot stage the notes a sweep writes")
    return querier


def gather_facts(
    candidate: Candidate, querier: Querier, settings: Settings | None = None, neighbours: bool = True
) -> Facts:
    """Ask the querier everything the rules may name about this candidate.

    `neighbours=False` leaves out the costly similarity question (see `with_neighbours`);
    no drop rule can name it, so a sweep asks it only of candidates that are not dropped.
    """
    existing = querier.note_at(candidate.target) if candidate.target else None
    subjects: tuple[ExistingNote, ...] = ()
    if existing is None and not candidate.note.problem:
        subjects = tuple(querier.subject_notes(candidate))
        existing = _own_subject_note(candidate, subjects)
        subjects = () if existing is not None else subjects
    comparison = None
    if existing is not None:
        comparison = merge.compare(
            existing.frontmatter, all_tags(existing.note), candidate.frontmatter, candidate.tags, not_carried(candidate)
        )
    duplicate = querier.duplicate_of(candidate)
    if existing is not None and duplicate == existing.path:
        duplicate = None
    adds_text = new_sentences(candidate.note.body, existing.text) if existing is not None else ()
    facts = Facts(
        exact_key_exists=existing is not None,
        known_unchanged=comparison is not None and not comparison.additions and not adds_text,
        adds_text=adds_text,
        exact_duplicate=duplicate is not None,
        links_to_durable_note=querier.links_to_durable(wikilinks(candidate.note.body)),
        existing=existing,
        comparison=comparison,
        duplicate_of=duplicate,
        subjects=subjects,
    )
    own = [existing.path] if existing is not None else []
    facts = private_among(facts, querier, _settings(querier, settings), [*own, *([duplicate] if duplicate else [])])
    return with_neighbours(facts, candidate, querier, settings) if neighbours else facts


def own_note(existing: ExistingNote | None, subjects: Sequence[ExistingNote]) -> str | None:
    """The one note a write may be offered into without a person naming it: the curator's note
    of the candidate's own key, else the curator's first note about its subject. Never a note
    that is merely like it (similarity pairs, it never decides: the ruff decision was once offered
    a patch into the Python-version fact), never the person's."""
    if existing is not None:
        return existing.path if existing.curator_owned else None
    return next((note.path for note in subjects if note.curator_owned), None)


def private_among(facts: Facts, querier: Querier, settings: Settings, paths: list[str]) -> Facts:
    """The facts with those of `paths` that are private notes added to `facts.private` (each
    read once; the note with the key is already read)."""
    found = set(facts.private)
    for path in dict.fromkeys(paths):
        if path in found:
            continue
        known = facts.existing if facts.existing is not None and facts.existing.path == path else None
        note = known or querier.note_at(path)
        if note is not None and withheld(note.note, settings.privacy_tags):
            found.add(path)
    return facts if found == facts.private else replace(facts, private=frozenset(found))


def _settings(querier: Querier, settings: Settings | None) -> Settings:
    """The settings given, else the querier's rules', else the defaults."""
    if settings is not None:
        return settings
    rules = getattr(querier, "rules", None)
    return rules.settings if isinstance(rules, Rules) else Settings()


def _own_subject_note(candidate: Candidate, subjects: tuple[ExistingNote, ...]) -> ExistingNote | None:
    """The one curator-owned note on the candidate's own surface named for its subject (a
    person's `persons/steph-ango.md` with the alias `kepano`): the note a patch goes to, as if
    by key. A note found by the words of its path is never patched by a sweep.
    None when there is none, or several (which one is a person's call)."""
    if candidate.surface is None:
        return None
    own = [n for n in subjects if n.found_by == "name" and n.curator_owned and on_surface(n.path, [candidate.surface])]
    return own[0] if len(own) == 1 else None


def distinct(candidate: Candidate, neighbour: Neighbour) -> bool:
    """Two notes of one surface carrying different keys or different values are not duplicates
    of each other by similarity alone (`widget-1 size` is not `widget-2 size`)."""
    if candidate.surface is None or not neighbour.key or not on_surface(neighbour.key, [candidate.surface]):
        return False
    if candidate.target and neighbour.key != candidate.target:
        return True
    return _values_differ(candidate, neighbour.value)


def other_body_owner(candidate: Candidate, neighbour: Neighbour) -> bool:
    """A note with the candidate's body but another value (anywhere), or another key on its
    surface, is not its duplicate: the body is boilerplate the two share."""
    return distinct(candidate, neighbour) or _values_differ(candidate, neighbour.value)


def _values_differ(candidate: Candidate, theirs: str) -> bool:
    value = candidate.frontmatter.get("value")
    mine = merge.norm_text(value) if value is not None else ""
    return bool(mine and theirs and merge.norm_text(theirs) != mine)


def near_duplicates(candidate: Candidate, found: tuple[Neighbour, ...], settings: Settings) -> tuple[Neighbour, ...]:
    """The neighbours that are the candidate's information again: by text (a score of at least
    the rules' threshold, unless `distinct`), or by evidence with a close title or text
    (`evidence.same_information`: same source and day, same entity, value and source), each
    of the latter with what agreed, for its review line."""
    out, sources = [], evidence.sources(candidate.frontmatter, settings)
    for neighbour in found:
        if neighbour.score >= settings.near_duplicate_score and not distinct(candidate, neighbour):
            out.append(neighbour)
            continue
        said = by_evidence(candidate, neighbour, settings, sources) if sources else ()
        if said:
            out.append(replace(neighbour, agreed=said))
    return tuple(out)


def by_evidence(
    candidate: Candidate, neighbour: Neighbour, settings: Settings, sources: frozenset[str]
) -> tuple[str, ...]:
    """What the candidate and the note agree on, when that makes them the same information
    (`evidence.same_information`), or an event from its source dated otherwise (`evidence.moved`,
    the conflict named beside); () otherwise. Every such agreement includes a source: a note
    whose text holds none of the candidate's `sources` (`evidence.sources`) is not read further."""
    mine = candidate.frontmatter
    if not neighbour.text or not evidence.mentions(sources, neighbour.text):
        return ()
    theirs = parse(neighbour.text).frontmatter
    said = evidence.agreed(mine, theirs, settings)
    if evidence.SOURCE not in said:
        return ()
    kind = candidate.surface.type if candidate.surface else None
    title = str(mine.get("title") or mine.get("name") or "")
    shared = evidence.titles_shared(title, neighbour.title, settings.language) if kind == "event" else 0
    if evidence.same_information(kind, said, neighbour.score, shared):
        return said
    moved = evidence.moved(mine, theirs, said, evidence.close_event(neighbour.score, shared))
    return (*said, moved) if moved else ()


def with_neighbours(facts: Facts, candidate: Candidate, querier: Querier, settings: Settings | None = None) -> Facts:
    """Add the nearest notes and `near_duplicate`, asked only while novelty is still open: no
    note with the key, no exact duplicate, and frontmatter that parses (with no surface too:
    its review line then names the note it copies). `settings`
    (default: the querier's rules) gives their number and the near-duplicate score.
    The semantic neighbours (empty unless the rules name a model) pass the same gate, and the
    same `distinct` test: `widget-2 size` is no paraphrase of `widget-1 size`."""
    if facts.existing is not None or facts.duplicate_of or candidate.note.problem:
        return facts
    settings = _settings(querier, settings)
    found = tuple(querier.neighbours(candidate, settings.neighbours))
    near = near_duplicates(candidate, found, settings)
    paired = tuple(querier.semantic_neighbours(candidate, settings.neighbours)) if settings.semantic.enabled else ()
    close = tuple(n for n in paired if n.score >= settings.semantic.threshold and not distinct(candidate, n))
    alike = tuple(querier.titled_alike(candidate))
    said = restating(candidate, found, querier)
    near = tuple(replace(n, agreed=(*n.agreed, said.pop(n.path))) if n.path in said else n for n in near)
    near += tuple(replace(n, agreed=(said[n.path],)) for n in found if n.path in said)
    facts = replace(
        facts, neighbours=found, near_duplicate=bool(near), near=near, semantic=paired, close=close, alike=alike
    )
    return private_among(facts, querier, settings, [n.path for n in (*near, *close)])


def restating(candidate: Candidate, found: tuple[Neighbour, ...], querier: Querier) -> dict[str, str]:
    """The person's notes among the neighbours that together hold most of the candidate's
    sentences (`restated`), each with what it holds, for its review line: the candidate tells
    the vault nothing new, so it waits naming them (issue 38)."""
    person = []
    for neighbour in found:
        if neighbour.owned:
            continue  # the curator's, as the index knows: not read again to learn it
        note = querier.note_at(neighbour.path) if neighbour.text else None
        if note is not None and not note.curator_owned:
            person.append((neighbour.path, note.note.body))
    notes, total = restated(candidate.note.body, person)
    others = f"{len(notes) - 1} other note{'s' * (len(notes) > 2)}"
    return {path: f"restates it with {others}: {held} of its {total} sentences" for path, held in notes}
