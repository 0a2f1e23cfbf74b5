"""What an agent may ask of the curator besides handing in a candidate: read one durable note,
and search the index. Both read only; neither takes the sweep lock. `cli/mcp.py` serves them
(with `submit`, `check` and `status`) over the Model Context Protocol.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from memory_curator.commands.context import Context
from memory_curator.commands.query import Found, index_querier
from memory_curator.core.errors import CuratorError
from memory_curator.core.facts import ExistingNote
from memory_curator.core.json_types import JsonObject, JsonValue
from memory_curator.core.names import DROPPED, INBOX, fold, printable
from memory_curator.core.notes import parse, plain
from memory_curator.core.privacy import withheld
from memory_curator.core.review_note import is_note_file
from memory_curator.core.secrets import not_served
from memory_curator.core.settings import REVIEW_NOTE
from memory_curator.core.text import parse_day
from memory_curator.index import querier as index
from memory_curator.store.paths import read_capped, safe_join

NOTE_MAX_BYTES = 256 * 1024  # a note an agent reads or hands in; bigger is refused, not cut
SNIPPET_CHARS = 300
SEARCH_MAX = 50


@dataclass(frozen=True)
class NoteRead:
    """A durable note as an agent reads it: its frontmatter as plain JSON values, its body, and
    the problem its frontmatter has (None: it parsed)."""

    path: str
    frontmatter: JsonObject
    body: str
    problem: str | None

    def to_json(self) -> JsonObject:
        return {"path": self.path, "frontmatter": self.frontmatter, "body": self.body, "problem": self.problem}


@dataclass(frozen=True)
class Hit:
    """One note the index answered with (`querier.info`), its score (a text search only) and a
    capped snippet of its body."""

    path: str
    surface: str | None
    title: str
    value: JsonValue
    snippet: str
    score: float | None = None

    def to_json(self) -> JsonObject:
        out: JsonObject = {"path": self.path, "surface": self.surface, "title": self.title, "value": self.value}
        if self.score is not None:
            out["score"] = self.score
        return {**out, "snippet": self.snippet}


@dataclass(frozen=True)
class SearchAnswer:
    """What an agent's search returns: the kind of question (text, key, slug, date), what was
    asked, and the notes served (never a private one)."""

    kind: str
    query: str
    results: tuple[Hit, ...]

    def to_json(self) -> JsonObject:
        return {"kind": self.kind, "query": self.query, "results": [hit.to_json() for hit in self.results]}


def read_note(ctx: Context, path: str, include_dropped: bool = False) -> NoteRead:
    """A durable note's frontmatter (as plain JSON values) and body. The path is vault-relative;
    `..`, absolute paths, symlinks, dot-folders and the inbox are refused (a dropped item only
    when asked for), and the review note and its copies, with the note on or off (an old one may
    be there). Names compare as the vault's file system compares them (`_Inbox/` is the inbox
    where it folds case)."""
    rel = path.strip().removeprefix("./")
    parts = rel.split("/")
    folded = [fold(p, ctx.folds) for p in parts]
    inbox = folded[0] == fold(INBOX, ctx.folds)
    dropped = inbox and folded[1:2] == [fold(DROPPED, ctx.folds)]
    if rel.startswith("/") or ".." in parts or "\x00" in rel:
        raise CuratorError(f'{printable(path)}: not a vault-relative path (no "..", not absolute)')
    if not rel.endswith(".md"):
        raise CuratorError(f"{printable(path)}: not a note (a vault-relative path ending in .md)")
    if any(p.startswith(".") for p in parts[2 if dropped else 0 :]) or (inbox and not dropped):
        raise CuratorError(f"{printable(path)}: not a durable note (the inbox and dot-folders are not readable)")
    if any(is_note_file(rel, n, ctx.folds) for n in (ctx.rules.settings.review_note, REVIEW_NOTE)):  # quotes the inbox
        raise CuratorError(
            f"{printable(path)}: the review note is the person's view of the inbox, not served to agents"
        )
    if dropped and not include_dropped:
        raise CuratorError(f"{printable(path)}: a dropped item (ask with include_dropped to read it)")
    full = safe_join(ctx.root, rel)  # `..`, an absolute path or a folder linked out of the vault: refused
    if full.is_symlink() or not full.is_file():
        raise CuratorError(f"{printable(path)}: no such note")
    try:
        data = read_capped(full, NOTE_MAX_BYTES)  # a FIFO or device swapped in is refused, never opened
    except OSError as exc:
        raise CuratorError(f"{printable(path)}: cannot be read ({exc.strerror or exc})") from None
    if data is None:
        size = full.stat().st_size
        raise CuratorError(f"{printable(path)}: {size} bytes, over the {NOTE_MAX_BYTES // 1024} KiB a read returns")
    text = data.decode("utf-8", errors="replace")
    note = parse(text)
    private = withheld(note, ctx.rules.settings.privacy_tags, dropped) or not_served(text, ctx.rules.settings.secrets)
    if private:
        raise CuratorError(f"{printable(path)}: {private}")
    return NoteRead(rel, plain(note.frontmatter), note.body, note.problem)


def search(
    ctx: Context,
    text: str | None = None,
    key: tuple[str, str] | None = None,
    name: str | None = None,
    date: str | None = None,
    limit: int = 10,
) -> SearchAnswer:
    """One question to the index (as `query` asks it, the same answers), each answer with a
    capped snippet; asked again with spares only when a private note had to be left out."""
    asked = [text is not None, key is not None, name is not None, date is not None]
    if sum(asked) != 1:
        raise CuratorError("ask one thing: text, key (entity and predicate), name or date")
    if not 1 <= limit <= SEARCH_MAX:
        raise CuratorError(f"limit {limit}: between 1 and {SEARCH_MAX}")
    if date is not None:
        try:
            date = parse_day(date)  # as `query --date` reads it
        except CuratorError as exc:
            raise CuratorError(f"date {exc}") from None
    querier = index_querier(ctx)
    answer = index.ask(querier, key=key, slug=name, text=text, day=date, limit=limit)
    served = _served(ctx, querier, answer["results"], limit)
    if len(served) < len(answer["results"]):  # a private note was left out: ask again, with spares
        answer = index.ask(querier, key=key, slug=name, text=text, day=date, limit=limit + SEARCH_MAX)
        served = _served(ctx, querier, answer["results"], limit)
    return SearchAnswer(str(answer["kind"]), str(answer["query"]), tuple(served))


def _served(
    ctx: Context, querier: index.IndexQuerier, rows: Sequence[Mapping[str, JsonValue]], limit: int
) -> list[Hit]:
    """The first `limit` rows whose notes are not private, each with its snippet: a private note
    is not even named, and no note past the limit is read."""
    served: list[Hit] = []
    for row in rows:
        if len(served) == limit:
            break
        found = Found.of(row)
        note = querier.note_at(found.path)
        settings = ctx.rules.settings
        if note is not None and (withheld(note.note, settings.privacy_tags) or not_served(note.text, settings.secrets)):
            continue
        served.append(Hit(found.path, found.surface, found.title, found.value, _snippet(note), found.score))
    return served


def _snippet(note: ExistingNote | None) -> str:
    if note is None:
        return ""
    flat = " ".join(note.note.body.split())
    return flat if len(flat) <= SNIPPET_CHARS else flat[: SNIPPET_CHARS - 1] + "…"
