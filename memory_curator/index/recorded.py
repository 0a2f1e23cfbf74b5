"""A sweep's answers kept for the review note it writes next (issue 29).

The review note shows, for each item a sweep has just flagged, the note it concerns and the
note `m` offers: what `review.evaluate` reads from the same questions the sweep asked to
decide it. Asked again, they cost the sweep about a third of its time. So the sweep asks
through `Recorded`, which keeps the costly answers (subjects, neighbours, semantic neighbours,
notes titled alike) per candidate, and the review note asks through its `replay()`: the same
answer for the same candidate text, unless a note that answer names, or the candidate's own key
path, was staged after it was asked (a later candidate patched it). The cheap exact questions
(the note at a key, a duplicate's hash, links) are always asked again of the sweep's querier,
which holds everything the sweep wrote. An answer is kept only for the items the sweep flagged
(`keep_only`).

What stays as the sweep saw it: a note written later in the same sweep that would now be among
an item's neighbours or subjects. The item's section then names what the sweep weighed when it
flagged it; the next sweep that writes or sees any changed note asks again (`ItemCache`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from memory_curator.core.candidate import Candidate
from memory_curator.core.facts import Alike, ExistingNote, Neighbour, Querier, Staging

T = TypeVar("T")
Key = tuple[str, str, int]  # the question, what the candidate's questions read of it (`_read`), k


@dataclass(frozen=True)
class _Answer:
    value: Sequence[Any]
    at: int  # how many notes had been staged when it was asked
    names: frozenset[str]  # the notes it names


class Recorded:
    """The sweep's querier (`base`), keeping the answers of its costly questions per inbox path."""

    def __init__(self, base: Staging) -> None:
        self.base = base
        self.answers: dict[str, dict[Key, _Answer]] = {}
        self.staged_at: dict[str, int] = {}  # path -> when it was last staged
        self.stages = 0

    def __getattr__(self, name: str) -> Any:  # what else the base is (`rules`, `close`)
        return getattr(self.base, name)

    def stage(self, rel: str, text: str | None) -> None:
        self.stages += 1
        self.staged_at[rel] = self.stages
        self.base.stage(rel, text)

    def staged(self) -> list[str]:
        """Every path the sweep staged (written, or put back after a failed write)."""
        return list(self.staged_at)

    def note_at(self, rel: str) -> ExistingNote | None:
        return self.base.note_at(rel)

    def duplicate_of(self, candidate: Candidate) -> str | None:
        return self.base.duplicate_of(candidate)

    def links_to_durable(self, links: list[str]) -> bool:
        return self.base.links_to_durable(links)

    def notices(self) -> list[str]:
        return self.base.notices()

    def neighbours(self, candidate: Candidate, k: int) -> list[Neighbour]:
        return self._kept("neighbours", candidate, k, lambda: self.base.neighbours(candidate, k), _paths)

    def semantic_neighbours(self, candidate: Candidate, k: int) -> list[Neighbour]:
        ask = lambda: self.base.semantic_neighbours(candidate, k)  # noqa: E731
        return self._kept("semantic", candidate, k, ask, _paths)

    def subject_notes(self, candidate: Candidate) -> list[ExistingNote]:
        return self._kept("subjects", candidate, 0, lambda: self.base.subject_notes(candidate), _paths)

    def titled_alike(self, candidate: Candidate) -> list[Alike]:
        return self._kept("alike", candidate, 0, lambda: self.base.titled_alike(candidate), _alike_paths)

    def _kept(
        self, question: str, candidate: Candidate, k: int, ask: Callable[[], list[T]], names: Callable[[list[T]], Any]
    ) -> list[T]:
        got = ask()
        kept = _Answer(tuple(got), self.stages, frozenset(names(got)))
        self.answers.setdefault(candidate.inbox_path, {})[(question, _read(candidate), k)] = kept
        return got

    def keep_only(self, inbox: Collection[str]) -> None:
        """Forget the answers of every candidate but these (the ones the sweep flagged)."""
        for rel in [r for r in self.answers if r not in inbox]:
            del self.answers[rel]

    def forget(self, rel: str) -> None:
        self.answers.pop(rel, None)

    def answer(self, question: str, candidate: Candidate, k: int) -> Sequence[Any] | None:
        """The kept answer, while nothing it names (nor the candidate's key path) was staged since."""
        kept = self.answers.get(candidate.inbox_path, {}).get((question, _read(candidate), k))
        if kept is None:
            return None
        touched = kept.names | ({candidate.target} if candidate.target else set())
        if any(self.staged_at.get(p, 0) > kept.at for p in touched):
            return None
        return kept.value

    def replay(self) -> Replay:
        return Replay(self)


class Replay:
    """The review note's querier after a sweep: the sweep's kept answers where they still hold,
    else the sweep's querier itself (the index with every note the sweep wrote laid over it)."""

    def __init__(self, recorded: Recorded) -> None:
        self.recorded = recorded
        self.base: Querier = recorded.base
        self.replayed = 0  # answers given from what the sweep kept

    def note_at(self, rel: str) -> ExistingNote | None:
        return self.base.note_at(rel)

    def duplicate_of(self, candidate: Candidate) -> str | None:
        return self.base.duplicate_of(candidate)

    def links_to_durable(self, links: list[str]) -> bool:
        return self.base.links_to_durable(links)

    def notices(self) -> list[str]:
        return self.base.notices()

    def neighbours(self, candidate: Candidate, k: int) -> list[Neighbour]:
        return self._again("neighbours", candidate, k, lambda: self.base.neighbours(candidate, k))

    def semantic_neighbours(self, candidate: Candidate, k: int) -> list[Neighbour]:
        return self._again("semantic", candidate, k, lambda: self.base.semantic_neighbours(candidate, k))

    def subject_notes(self, candidate: Candidate) -> list[ExistingNote]:
        return self._again("subjects", candidate, 0, lambda: self.base.subject_notes(candidate))

    def titled_alike(self, candidate: Candidate) -> list[Alike]:
        return self._again("alike", candidate, 0, lambda: self.base.titled_alike(candidate))

    def _again(self, question: str, candidate: Candidate, k: int, ask: Callable[[], list[T]]) -> list[T]:
        kept = self.recorded.answer(question, candidate, k)
        if kept is None:
            return ask()
        self.replayed += 1
        return list(kept)


def _read(candidate: Candidate) -> str:
    """What the questions read of a candidate: its body and fields, its tags but the flag's own
    (`Candidate.tags`), its key path. The flag a sweep writes (the `needs-review` tag, the
    uncertainty line, which `candidate.build` reads past) leaves it as it was."""
    fields = [(k, v) for k, v in candidate.frontmatter.items() if k != "tags"]
    return repr((candidate.note.body, fields, candidate.tags, candidate.target, candidate.note.problem))


def _paths(found: list[Neighbour] | list[ExistingNote]) -> list[str]:
    return [n.path for n in found]


def _alike_paths(found: list[Alike]) -> list[str]:
    return [path for path, _, _ in found]
