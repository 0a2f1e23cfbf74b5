"""Recovery: finish what a crash or an I/O error left half-done, at the start of every run
that takes the lock."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory_curator.core.notes import as_list, parse
from memory_curator.store import writer
from memory_curator.store.journal import Journal, open_actions
from memory_curator.store.paths import relpath, safe_join
from memory_curator.store.writer import MOVES, _family, _unlink_quietly, file_hash, fsync_dir, fsync_file, stray_temps


@dataclass
class Recovery:
    """What the start of a sweep repaired: one line per repair, and the needs-review texts
    already on disk (so a sweep killed before saving its review hashes does not redo them)."""

    notes: list[str] = field(default_factory=list)
    reviewed: dict[str, str] = field(default_factory=dict)


def recover(root: Path, journal: Journal) -> Recovery:
    """Finish or undo what a crash (or an I/O error) left half-done; run under the lock.

    A move whose destination holds the candidate's content while the inbox file still holds
    the bytes that were decided is finished by removing the inbox file; one whose
    destination was never written is left as it was (the candidate is swept again). Our
    stray temp files in the folders it touched are removed. An I/O error here leaves the
    checkpoint before that action, so the next sweep tries again.
    """
    entries = list(journal.entries(journal.checkpoint()))
    out = Recovery(reviewed=_reviewed(root, entries))
    retry_from: int | None = None
    for offset, record in open_actions(entries):
        try:
            out.notes += _finish(root, record)
        except OSError as exc:
            out.notes.append(f"could not finish {record.get('inbox')}: {exc.strerror or exc}; will retry")
            retry_from = offset if retry_from is None else min(retry_from, offset)
            continue
        with contextlib.suppress(OSError):
            journal.append(
                {"event": "end", "run": record.get("run"), "seq": record.get("seq"), "ok": True, "recovered": True}
            )
    with contextlib.suppress(OSError):
        for temp in _state_temps(journal.path.parent):
            _unlink_quietly(temp)
        journal.set_checkpoint(journal.size() if retry_from is None else retry_from)
    return out


def _state_temps(state: Path) -> Iterator[Path]:
    """Our temp files in the state directory and its folders (pre-images for `undo`, …)."""
    yield from stray_temps(state)
    for entry in list(os.scandir(state)):
        if entry.is_dir(follow_symlinks=False):
            yield from stray_temps(Path(entry.path))


def _finish(root: Path, record: dict[str, Any]) -> list[str]:
    notes: list[str] = []
    inbox, dest = _path(root, record.get("inbox")), _path(root, record.get("dest"))
    for folder in {p.parent for p in (inbox, dest) if p is not None}:
        for temp in stray_temps(folder):
            _unlink_quietly(temp)
            notes.append(f"removed stray temp file {relpath(root, temp)}")
    if record.get("verdict") not in MOVES or inbox is None or dest is None:
        return notes
    placed = _placed(dest, record)
    if placed is not None and file_hash(inbox) == record.get("inbox_hash"):
        fsync_file(placed)  # the destination is durable before the inbox file goes
        fsync_dir(placed.parent)
        writer.os.unlink(inbox)
        fsync_dir(inbox.parent)
        notes.append(f"finished {record['verdict']} of {record['inbox']} -> {relpath(root, placed)}")
    return notes


def _placed(dest: Path, record: dict[str, Any]) -> Path | None:
    """The file that holds this action's result: the exact bytes we wrote (a drop may have
    moved on to a suffixed name), or a note a person edited since that still records this
    candidate in its provenance."""
    family = _family(dest) if record.get("verdict") == "drop" else iter([dest])
    for path in family:
        if not os.path.lexists(path):
            break
        if file_hash(path) == record.get("after_hash"):
            return path
    if record.get("verdict") != "drop" and _records_candidate(dest, str(record.get("inbox_hash"))):
        return dest
    return None


def _records_candidate(note: Path, digest: str) -> bool:
    try:
        frontmatter = parse(note.read_bytes()).frontmatter
    except OSError:
        return False
    wanted = digest.removeprefix("sha256:")
    return any(isinstance(e, dict) and e.get("sha256") == wanted for e in as_list(frontmatter.get("curated_from")))


def _reviewed(root: Path, entries: Iterable[tuple[int, dict[str, Any]]]) -> dict[str, str]:
    """Inbox files a recent needs_review rewrote that still hold exactly that text."""
    out: dict[str, str] = {}
    for _, record in entries:
        if record.get("event") != "begin" or record.get("verdict") != "needs_review":
            continue
        path, after = _path(root, record.get("inbox")), record.get("after_hash")
        if path is not None and after and file_hash(path) == after:
            out[str(record["inbox"])] = str(after)
    return out


def _path(root: Path, rel: Any) -> Path | None:
    if not isinstance(rel, str) or not rel:
        return None
    try:
        return safe_join(root, rel)
    except Exception:
        return None
