"""A sweep's inbox: which files are settled candidates (`collect`), and each candidate between
the listing and its turn (issue 36): read once to know it is settled, then let go; its turn
reads it again (`turn`). A sweep of 2,000 candidates of the
size limit held every one's bytes, text and body at once (8.4 GB); it now holds one at a time.
The bytes read again must be those read first (their hash): a file that changed in between
waits for the next sweep, as a file that changes while it is read does.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from memory_curator.core import candidate as cand
from memory_curator.core import marks
from memory_curator.core.notes import Note, content_hash, parse
from memory_curator.core.result import Skipped
from memory_curator.core.rules import Rules
from memory_curator.core.text import TOO_LARGE, one_line, too_large
from memory_curator.store import stores
from memory_curator.store.paths import CandidateFile, list_candidates, oversize, read_capped, relpath

if TYPE_CHECKING:
    from memory_curator.commands.context import Context

CHANGED = "still being written (it changed after the sweep first read it)"


class Options(Protocol):
    """What a sweep's options say of its inbox (`commands.sweep.Options`)."""

    @property
    def only(self) -> frozenset[str] | None: ...
    @property
    def overdue(self) -> frozenset[str]: ...
    @property
    def observed(self) -> frozenset[str]: ...
    @property
    def settle(self) -> float | None: ...


class Sweep(Protocol):
    """What reading the inbox needs of a sweep (`commands.sweep.Sweep`; not imported: it
    imports this module)."""

    @property
    def ctx(self) -> Context: ...
    @property
    def options(self) -> Options: ...
    @property
    def rules(self) -> Rules: ...
    @property
    def root(self) -> Path: ...
    @property
    def reviewed(self) -> dict[str, str]: ...
    @property
    def sightings(self) -> dict[str, stores.Sighting]: ...
    @property
    def broken(self) -> dict[str, str]: ...


@dataclass(frozen=True)
class Pending:
    """A settled candidate let go: its file and the hash of the bytes first read."""

    item: CandidateFile
    digest: str

    @property
    def inbox_path(self) -> str:
        return self.item.rel


def load(pending: Pending | cand.Candidate, rules: Rules) -> cand.Candidate | Skipped:
    """The candidate again, built from the same bytes; why it waits when they changed (an
    error reading it is `OSError`'s, as at the first read). A candidate kept whole (one whose
    reading failed: its bytes are the reason) is itself."""
    if isinstance(pending, cand.Candidate):
        return pending
    item, limit = pending.item, rules.settings.max_candidate_bytes
    raw = read_capped(item.path, limit)
    if raw is None:
        return Skipped(item.rel, oversize(item.path, limit), waiting="too-large")
    if content_hash(raw) != pending.digest:
        return Skipped(item.rel, CHANGED)
    return cand.build(raw, item.rel, item.agent, rules)


def turn(sweep: Sweep, one: Pending | cand.Candidate) -> cand.Candidate | Skipped:
    """The candidate at its turn: read again, inside its own boundary (a failure is this file's)."""
    try:
        return load(one, sweep.rules)
    except OSError as exc:
        return Skipped(one.inbox_path, f"cannot read: {exc.strerror or exc}")
    except Exception as exc:
        assert isinstance(one, Pending)  # a kept candidate is returned as it is
        return _unreadable(sweep, one.item, exc)


def collect(sweep: Sweep, agent: str, folder: Path) -> tuple[list[Pending | cand.Candidate], list[Skipped]]:
    """Read the settled candidates of one agent folder, and let each go until its turn; report
    the rest as skipped. Each file is read inside its own boundary: whatever reading one raises
    is that file's problem."""
    found: list[Pending | cand.Candidate] = []
    skipped: list[Skipped] = []
    try:
        items = list(list_candidates(folder, agent, sweep.root))
    except OSError as exc:  # a folder we may not list: its files wait, the other agents are swept
        return [], [Skipped(relpath(sweep.root, folder) + "/", f"cannot list the folder: {exc.strerror or exc}")]
    for item in items:
        if sweep.options.only is not None and item.rel not in sweep.options.only:
            continue
        got: Pending | cand.Candidate | Skipped
        try:
            got = _read(sweep, item)
        except Exception as exc:
            got = _unreadable(sweep, item, exc)
        if isinstance(got, Skipped):
            skipped.append(got)
        else:
            found.append(got)
    return found, skipped


def _read(sweep: Sweep, item: CandidateFile) -> Pending | Skipped:
    """One inbox file: a candidate to settle (let go until its turn), or why it waits. Only
    parsed, to know it is complete: building it (its secret scan, its tags) is its turn's, once
    (0.1 s at 1 MiB, done twice a candidate before; issue 36)."""
    limit = sweep.rules.settings.max_candidate_bytes
    try:
        stat = item.path.stat()
        if stat.st_size > limit:  # never read, never rewritten: it waits for a person as it is
            return Skipped(item.rel, too_large(stat.st_size, limit) or TOO_LARGE, waiting="too-large")
        raw = read_capped(item.path, limit)
        changed = _signature(stat) != _signature(item.path.stat())
    except OSError as exc:
        return Skipped(item.rel, f"cannot read: {exc.strerror}")
    if raw is None:
        return Skipped(item.rel, oversize(item.path, limit), waiting="too-large")
    if changed:
        return Skipped(item.rel, "still being written (it changed while it was read)")
    if sweep.reviewed.get(item.rel) == content_hash(raw):
        return _waiting(item.rel, raw)
    quiet, age = _quiet_for(sweep, item.rel, stat)
    settle, ceiling = _windows(sweep)
    if quiet < settle and item.rel not in sweep.options.overdue:
        return Skipped(item.rel, _unsettled(age, quiet))
    waiting = _still_arriving(parse(marks.unmarked(raw)), raw, quiet, ceiling)
    if waiting and item.rel not in sweep.options.overdue:
        return Skipped(item.rel, waiting)
    return Pending(item, content_hash(raw))


def _waiting(rel: str, raw: bytes) -> Skipped:
    """An item held for a person: flagged by a sweep, or put back untouched by undo (or restore
    of an untagged file) and never flagged. `run` sums both up in one line."""
    if marks.REVIEW_MARK.encode() in raw or marks.REVIEW_TAG.encode() in raw:
        return Skipped(rel, "needs review (unchanged since it was flagged)", waiting="flagged")
    return Skipped(rel, "held for review (put back by undo; unchanged since)", waiting="held")


def _windows(sweep: Sweep) -> tuple[float, float]:
    """(settle window, settle ceiling) of this sweep: the rules', or `run --settle`'s. With
    `--settle 0` every file is taken as complete: an empty file or an unclosed frontmatter is
    decided now (needs_review), not waited for."""
    settings = sweep.rules.settings
    chosen = sweep.options.settle
    if chosen is None:
        return settings.settle_seconds, settings.settle_ceiling_seconds
    return chosen, (max(chosen, settings.settle_ceiling_seconds) if chosen else 0.0)


def _unreadable(sweep: Sweep, item: CandidateFile, exc: Exception) -> cand.Candidate | Skipped:
    """A file whose reading raised: a bare candidate (its bytes, no frontmatter) that `_settle`
    flags needs_review with the reason, so a person sees it and later sweeps pass it by."""
    reason = f"internal error while reading: {one_line(exc)}"
    limit = sweep.rules.settings.max_candidate_bytes
    try:
        raw = read_capped(item.path, limit)  # a FIFO swapped in meanwhile is never opened
    except OSError as again:
        return Skipped(item.rel, f"cannot read: {again.strerror or again}")
    if raw is None:
        return Skipped(item.rel, oversize(item.path, limit), waiting="too-large")
    sweep.broken[item.rel] = reason
    note = Note(text=raw.decode("utf-8", errors="replace"), problem=reason)
    return cand.Candidate(
        inbox_path=item.rel,
        agent=item.agent,
        note=note,
        digest=content_hash(raw),
        surface=None,
        target=None,
        key_problem=None,
        missing=(),
        raw=raw,
    )


def _signature(stat: os.stat_result) -> tuple[int, int, int]:
    return stat.st_ino, stat.st_size, stat.st_mtime_ns


def _quiet_for(sweep: Sweep, rel: str, stat: os.stat_result) -> tuple[float, float]:
    """(seconds the file is known unchanged, its mtime's age by the clock).

    Known unchanged: since its mtime, unless that is in the future (a sync peer's skewed
    clock, a shifted test clock), or since sweeps first saw it with this size and mtime,
    whichever is longer. A file the watcher saw quiet for the settle window counts as such.
    """
    now = sweep.ctx.clock.timestamp()
    age = now - stat.st_mtime
    seen = sweep.sightings.get(rel)
    if seen is None or not seen.same(stat.st_size, stat.st_mtime_ns) or seen.seen > now:
        seen = sweep.sightings[rel] = stores.Sighting(stat.st_size, stat.st_mtime_ns, now)
    watched = sweep.rules.settings.settle_seconds if rel in sweep.options.observed and age < 0 else 0.0
    return max(age, now - seen.seen, watched), age


def _unsettled(age: float, quiet: float) -> str:
    if age >= 0:
        return f"still being written (modified {age:.1f}s ago)"
    return f"still being written (its mtime is {-age:.0f}s in the future; unchanged for {quiet:.0f}s)"


def _still_arriving(note: Note, raw: bytes, quiet: float, ceiling: float) -> str | None:
    """An empty file or an unclosed frontmatter waits, up to the ceiling (then needs_review)."""
    if (not raw.strip() or note.unclosed) and quiet < ceiling:
        return "empty file, waiting for its content" if not raw.strip() else "frontmatter not closed yet"
    return None
