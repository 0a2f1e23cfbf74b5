"""`index rebuild` and `index stats`: the vault's derived index (a disposable SQLite file in the
state directory), built from scratch or described as it is (never refreshed)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from memory_curator.commands.context import Context
from memory_curator.core.json_types import JsonObject
from memory_curator.index import store
from memory_curator.index.store import Refresh


@dataclass(frozen=True)
class Vectors:
    """The semantic vectors the index holds: how many, their size, the model's folder."""

    count: int
    bytes: int
    model: str | None

    def to_json(self) -> JsonObject:
        return {"count": self.count, "bytes": self.bytes, "model": self.model}


@dataclass(frozen=True)
class Stats:
    """Where the index lives, how big and how fresh it is, and the notes it could only read by
    their body (`problems`: path and why)."""

    path: str
    schema: int
    bytes: int
    notes: int
    surfaces: Mapping[str, int]
    terms: int
    problems: tuple[tuple[str, str], ...]
    built: str | None
    refreshed: str | None
    vectors: Vectors | None

    def to_json(self) -> JsonObject:
        return {
            "path": self.path,
            "schema": self.schema,
            "bytes": self.bytes,
            "notes": self.notes,
            "surfaces": dict(self.surfaces),
            "terms": self.terms,
            "problems": [{"path": path, "problem": why} for path, why in self.problems],
            "built": self.built,
            "refreshed": self.refreshed,
            "vectors": self.vectors.to_json() if self.vectors is not None else None,
        }


def rebuild(ctx: Context) -> Refresh:
    """Build the index from scratch (sweeps refresh it by themselves)."""
    return store.Index(ctx.root, ctx.rules, ctx.state, ctx.clock, ctx.files).rebuild()


def stats(ctx: Context) -> Stats:
    """The index's stats as it is, without refreshing it (none yet, or unusable: one line)."""
    found = store.current_stats(ctx.root, ctx.rules, ctx.state, ctx.clock)
    vectors = found.get("vectors")
    return Stats(
        found["path"],
        found["schema"],
        found["bytes"],
        found["notes"],
        found["surfaces"],
        found["terms"],
        tuple((p["path"], p["problem"]) for p in found["problems"]),
        found["built"],
        found["refreshed"],
        Vectors(vectors["count"], vectors["bytes"], vectors["model"]) if vectors else None,
    )
