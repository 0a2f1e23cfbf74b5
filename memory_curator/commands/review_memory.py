"""The review note's memory in the state directory (`commands.review_note` applies and writes):
the sections the curator wrote (`Memory`, `review-note.json`: a note is read only against them)
and what each waiting item's section needs (`ItemCache`, `review-note-items.json`), so a sweep
with nothing new asks the index nothing. The cache is keyed by the curator's version and the
rules' hash too: after an upgrade the note shows the new version's words at once."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

from memory_curator import __version__
from memory_curator.commands.desk import Desk
from memory_curator.core import review_note as rn
from memory_curator.core.errors import CuratorError
from memory_curator.core.facts import Querier
from memory_curator.core.json_types import JsonObject
from memory_curator.index.walk import notes as indexed_notes
from memory_curator.store.paths import hash_capped, safe_join

STATE = "review-note.json"
CACHE = "review-note-items.json"  # `ItemCache`


@dataclass
class Memory:
    """The state directory's record of the note: the sections of the last two writes and why a
    tick on an item was not applied (by inbox path, until the item leaves the note)."""

    current: list[rn.Section] = field(default_factory=list)
    previous: list[rn.Section] = field(default_factory=list)
    problems: dict[str, str] = field(default_factory=dict)
    written: str | None = None  # the hash of the note as the curator last wrote it (`watch`: its own write is no news)
    # (section id, verb, conflict copy) of every tick read from a copy: applied once, ever (an
    # `undo` of its run is not reversed by the copy at the next sweep)
    copied: set[tuple[str, ...]] = field(default_factory=set)
    left: set[str] = field(default_factory=set)  # ticked `leave` now: said once in this write, never kept
    deleted: set[str] = field(default_factory=set)  # their sections deleted from the note now: said once, never kept

    @classmethod
    def load(cls, state: Path) -> Memory:
        try:
            data = json.loads((state / STATE).read_bytes().decode("utf-8", "surrogatepass"))
        except (OSError, ValueError):
            return cls()
        if not isinstance(data, dict):
            return cls()

        def sections(key: str) -> list[rn.Section]:
            got = data.get(key)
            return [rn.Section.from_json(s) for s in got if isinstance(s, dict)] if isinstance(got, list) else []

        problems = data.get("problems")
        kept = {str(k): str(v) for k, v in problems.items()} if isinstance(problems, dict) else {}
        written = data.get("written") if isinstance(data.get("written"), str) else None
        got = data.get("copied")
        copied = (
            {tuple(map(str, t)) for t in got if isinstance(t, list) and len(t) == 3} if isinstance(got, list) else set()
        )
        return cls(sections("current"), sections("previous"), kept, written, copied=copied)

    def known(self) -> list[rn.Section]:
        return [*self.current, *self.previous]

    def to_bytes(self) -> bytes:
        data = {
            "current": [s.to_json() for s in self.current],
            "previous": [s.to_json() for s in self.previous],
            "problems": self.problems,
            "written": self.written,
            "copied": sorted(list(t) for t in self.copied),
        }
        return json.dumps(data, ensure_ascii=False, indent=1).encode("utf-8", "surrogatepass")


class Lazy:
    """The desk's querier, opened only when an item is not in the cache (a sweep with nothing new
    never opens the index for the note); or the sweep's, given, which it does not close."""

    def __init__(self, desk: Desk, given: Querier | None = None) -> None:
        self.desk = desk
        self.opened: Querier | None = given
        self.owned = given is None

    def get(self) -> Querier:
        if self.opened is None:
            self.opened = self.desk.querier()
        return self.opened

    def close(self) -> None:
        close = getattr(self.opened, "close", None) if self.owned else None
        if callable(close):
            close()


class ItemCache:
    """What each waiting item's section needs (`rn.Item`), kept in the state directory while the
    vault's notes stay as they were (`notes_seen`) and the curator's version is the same, by
    (inbox path, candidate hash, reason code, rules hash), with the hash of each note it was read
    against (its promote target and the note it concerns; None: absent). Asking the index about
    every item is most of what rendering costs, and a sweep with nothing new would ask it all
    again for the same answers; a note written, added or removed anywhere makes every item be
    asked again. An entry is kept only while its item waits; what a tick does is checked again
    when it is applied (`Desk.act`)."""

    def __init__(self, seen: str, old: dict[str, object], kept: bool) -> None:
        self.seen, self.old, self.kept, self.new = seen, old, kept, dict[str, object]()

    @classmethod
    def load(cls, desk: Desk, notes: Mapping[str, tuple[int, int]] | None = None) -> ItemCache:
        """The cache, for the vault's notes as `notes` has them (None: as a walk finds them now)."""
        seen = fingerprint(notes) if notes is not None else notes_seen(desk)
        try:
            data = json.loads((desk.state / CACHE).read_bytes().decode("utf-8", "surrogatepass"))
        except (OSError, ValueError):
            return cls(seen, {}, False)
        same = (
            isinstance(data, dict)
            and data.get("notes") == seen
            and data.get("version") == __version__  # another version may word a section otherwise
            and isinstance(data.get("items"), dict)
        )
        return cls(seen, data["items"] if same else {}, same)

    @staticmethod
    def key(desk: Desk, rel: str, digest: str, code: str) -> str:
        return "\0".join((rel, digest, code, desk.rules.digest))

    def get(self, desk: Desk, key: str) -> rn.Item | None:
        entry = self.old.get(key)
        try:
            deps = entry.get("deps") if isinstance(entry, dict) else None
            if not isinstance(deps, dict) or any(hash_at(desk, p) != h for p, h in deps.items()):
                return None
            item = item_from_json(entry.get("item") if isinstance(entry, dict) else None)
        except (KeyError, TypeError, ValueError, CuratorError):
            return None
        self.new[key] = entry
        return item

    def put(self, key: str, item: rn.Item, deps: dict[str, str | None]) -> None:
        self.new[key] = {"item": item_to_json(item), "deps": deps}

    def save(self, desk: Desk) -> None:
        if self.new != self.old or not self.kept:
            stamp = {"notes": self.seen, "version": __version__}
            data = json.dumps({**stamp, "items": self.new}, ensure_ascii=False)
            desk.ctx.files.write_state_file(desk.state / CACHE, data.encode("utf-8", "surrogatepass"))


def notes_seen(desk: Desk) -> str:
    """The vault's notes as the index sees them (path, size, mtime; one stat each), the review
    note and its copies aside: while this holds, the index answers as it did."""
    return fingerprint(indexed_notes(desk.root, desk.rules))


def fingerprint(notes: Mapping[str, tuple[int, int]]) -> str:
    """One hash of the notes' (path, size, mtime)."""
    seen = sorted((rel, *stat) for rel, stat in notes.items())
    return hashlib.sha256(json.dumps(seen).encode("utf-8", "surrogatepass")).hexdigest()


def hash_at(desk: Desk, rel: str) -> str | None:
    """A note's hash as a cache entry is bound to it (None: no such file)."""
    try:
        return hash_capped(safe_join(desk.root, rel))
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:  # a folder, no permission: its own state, re-read when it changes
        return f"unreadable: {exc.errno}"


def item_to_json(item: rn.Item) -> JsonObject:
    data = asdict(item)
    data["offers"] = [[o.verb, o.target] for o in item.offers]
    return data


def item_from_json(data: object) -> rn.Item:
    """An item the cache kept (`item_to_json`); a TypeError or KeyError when it is not one."""
    if not isinstance(data, dict):
        raise TypeError("not a kept item")
    fields = dict(data)
    offers = tuple(rn.Offer(str(verb), target) for verb, target in fields.pop("offers"))
    return rn.Item(**fields, offers=offers)


@dataclass(frozen=True)
class Reuse:
    """What a sweep hands the review note it writes next (issue 29): its querier, the index it
    refreshed with every note it wrote laid over it (the note opens no second index and walks no
    second time); and the vault's notes as the run's one walk found them, those the sweep wrote
    stat'ed again (`seen`, the item cache's stamp; None: walk again). A note a person saves
    during the run is seen by the next run's walk, which then asks every item again."""

    querier: Querier
    seen: Mapping[str, tuple[int, int]] | None = None
    run: str | None = None  # the sweep's run id: the journal's last run, or another changed the vault since
