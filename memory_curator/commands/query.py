"""`query`: one question to the vault's index — the note with a key, the notes with a name, the
events of a day, the notes nearest a text, or a note's lexical and semantic neighbours side by
side. The index is the context's querier, refreshed on the first question as a sweep's is."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from memory_curator.commands.context import Context
from memory_curator.core.errors import CuratorError
from memory_curator.core.json_types import JsonObject, JsonValue
from memory_curator.index import querier as index
from memory_curator.index.overlay import Overlay


@dataclass(frozen=True)
class Question:
    """What `query` was asked: exactly one of a key (ENTITY PREDICATE), a slug, a text, a day or
    a note (or text) whose neighbours are wanted; `limit` neighbours at most."""

    key: tuple[str, str] | None = None
    slug: str | None = None
    text: str | None = None
    day: str | None = None
    similar: str | None = None
    limit: int = 5


@dataclass(frozen=True)
class Found:
    """One note in an answer, as the index knows it; `score` (0 to 1) for a neighbour."""

    path: str
    surface: str | None
    title: str
    value: JsonValue
    score: float | None = None

    @classmethod
    def of(cls, row: Mapping[str, JsonValue]) -> Found:
        """A row the index answered with (`IndexQuerier.info`, with a text search's `score`)."""
        surface, score = row.get("surface"), row.get("score")
        return cls(
            str(row["path"]),
            surface if isinstance(surface, str) else None,
            str(row["title"]),
            row.get("value"),
            float(score) if isinstance(score, int | float) else None,
        )

    def to_json(self) -> JsonObject:
        out: JsonObject = {"path": self.path, "surface": self.surface, "title": self.title, "value": self.value}
        return out if self.score is None else {**out, "score": self.score}


@dataclass(frozen=True)
class Answer:
    """The notes for a key, a slug, a day or a text (`kind`), in the index's order."""

    kind: Literal["key", "slug", "date", "text"]
    query: str
    results: tuple[Found, ...]

    def to_json(self) -> JsonObject:
        return {"kind": self.kind, "query": self.query, "results": [row.to_json() for row in self.results]}


@dataclass(frozen=True)
class Neighbours:
    """`--similar`: a note's (or a text's) lexical and semantic neighbours; `file` is the note's
    vault path (None for a text or a file outside the vault); `semantic_status` is "on", "off"
    or why semantic pairing is unavailable."""

    query: str
    file: str | None
    lexical: tuple[Found, ...]
    semantic: tuple[Found, ...]
    semantic_status: str
    kind: Literal["similar"] = "similar"

    def to_json(self) -> JsonObject:
        return {
            "kind": self.kind,
            "query": self.query,
            "file": self.file,
            "lexical": [row.to_json() for row in self.lexical],
            "semantic": [row.to_json() for row in self.semantic],
            "semantic_status": self.semantic_status,
        }


def index_querier(ctx: Context) -> index.IndexQuerier:
    """The context's querier, which must be the index's (under a sweep's overlay, with nothing
    staged): only it answers names, days and texts."""
    querier = ctx.querier(ctx, ctx.rules)
    if isinstance(querier, Overlay):  # what the context's factories give: the index is under it
        querier = querier.base
    if not isinstance(querier, index.IndexQuerier):
        raise CuratorError("this command asks the vault's index, and the context's querier is not one")
    return querier


def ask(ctx: Context, question: Question, cwd: Path) -> Answer | Neighbours:
    """The answer to one question; a `--similar` FILE is read from `cwd`, else from the vault."""
    querier = index_querier(ctx)
    if question.similar is not None:
        both = index.similar_both(querier, question.similar, question.limit, cwd)
        lexical, semantic = (tuple(Found.of(row) for row in both[side]) for side in ("lexical", "semantic"))
        return Neighbours(both["query"], both["file"], lexical, semantic, both["semantic_status"])
    q = question
    asked = index.ask(querier, key=q.key, slug=q.slug, text=q.text, day=q.day, limit=q.limit)
    return Answer(asked["kind"], asked["query"], tuple(Found.of(row) for row in asked["results"]))
