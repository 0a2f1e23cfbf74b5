"""Shared by the safety tests (faults, kills, races, stateful): candidates that carry a unique
marker, a census of where each marker ended up, the writer's `os` with a failure or a crash
planted in it, and a vault snapshot that ignores the sweep's timestamps."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from memory_curator.commands.init import init_vault
from memory_curator.core import notes
from memory_curator.store import writer

REVIEW_NOTE = "_meta/Inbox review.md"  # conftest's: the curator's own file in the vault

KINDS = ("promote", "drop", "review", "patch")
WHERE = {"promote": "durable", "patch": "durable", "drop": "dropped", "review": "inbox"}
MARK = re.compile(rb"^marker (\w+)$", re.MULTILINE)
NOTE_MARK = re.compile(rb"^note-marker (\w+)$", re.MULTILINE)
TIMES = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}[:-]\d{2}[:-]\d{2}(?:Z|[+-]\d{2}:\d{2})?)?")

_FRONT = {
    "promote": "source_url: https://example.dev/{m}\nconfidence: 2\n",
    "drop": "confidence: 1\n",
    "review": "confidence: 2\n",
    "patch": "source_url: https://example.dev/new/{m}\nconfidence: 2\n",
}


def words(seed: str, n: int = 8) -> str:
    """Made-up words no other candidate shares, so similarity never pairs two candidates and
    every verdict is the one its kind names, whatever else the vault holds."""
    digest = hashlib.sha256(seed.encode()).hexdigest()
    letters = "".join("bcdfghjklmnprstv"[int(c, 16)] for c in digest)
    return " ".join(letters[i * 7 : i * 7 + 7] for i in range(n))


def candidate_text(kind: str, marker: str) -> str:
    """A fact candidate the default rules give `kind`; its body holds the marker once and
    ends with a line that shows the file is whole."""
    entity = f"p{marker}" if kind == "patch" else f"e{marker}"
    front = _FRONT[kind].format(m=marker)
    return (
        f"---\ntype: fact\nentity: {entity}\npredicate: status\nvalue: {words(entity, 3)}\n{front}---\n"
        f"Evidence for {kind}: {words(marker)}.\nmarker {marker}\nend {marker}\n"
    )


def base_note(marker: str) -> tuple[str, str]:
    """The durable note a `patch` candidate adds a source to."""
    text = (
        f"---\ntype: fact\nentity: p{marker}\npredicate: status\nvalue: {words(f'p{marker}', 3)}\n"
        f"source_url: https://example.dev/old/{marker}\nconfidence: 2\n---\n"
        f"The note: {words('note' + marker)}.\nnote-marker {marker}\n"
    )
    return f"facts/p{marker}/status.md", text


def new_vault(root: Path) -> Path:
    init_vault(root)
    return root


def set_commit_batch(root: Path, size: int) -> None:
    """The vault's rules with `commit_batch: size` (plans per group commit)."""
    rules = root / "_meta" / "inbox-rules.md"
    text = rules.read_text(encoding="utf-8")
    if re.search(r"^  commit_batch: \d+", text, re.MULTILINE):
        text = re.sub(r"^  commit_batch: \d+", f"  commit_batch: {size}", text, count=1, flags=re.MULTILINE)
    else:
        text = text.replace("\nsettings:\n", f"\nsettings:\n  commit_batch: {size}\n", 1)
    rules.write_text(text, encoding="utf-8")


def add_candidate(root: Path, kind: str, marker: str, agent: str = "agent-a") -> Path:
    """Write one settled candidate (and, for a patch, the note it patches)."""
    if kind == "patch":
        rel, text = base_note(marker)
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    folder = root / "_inbox" / agent
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{kind}-{marker}.md"
    path.write_text(candidate_text(kind, marker), encoding="utf-8")
    os.utime(path, (1_600_000_000, 1_600_000_000))
    return path


def populate(root: Path, kinds: Iterable[str], prefix: str = "m") -> dict[str, str]:
    """One candidate per entry of `kinds`; returns marker -> kind."""
    out: dict[str, str] = {}
    for i, kind in enumerate(kinds):
        marker = f"{prefix}{i:04d}"
        add_candidate(root, kind, marker)
        out[marker] = kind
    return out


def files(root: Path) -> Iterable[Path]:
    """The vault's files, but the review note: it quotes the waiting items for a person to read
    (docs/review.md), a view of the inbox rather than a place content lives."""
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink() and path.relative_to(root).as_posix() != REVIEW_NOTE:
            yield path


def temps(*folders: Path) -> list[str]:
    return [str(p) for folder in folders for p in files(folder) if writer.TEMP_PATTERN.match(p.name)]


def where(rel: str) -> str:
    if rel.startswith("_inbox/.dropped/"):
        return "dropped"
    return "inbox" if rel.startswith("_inbox/") else "durable"


def census(root: Path, pattern: re.Pattern[bytes] = MARK) -> dict[str, list[str]]:
    """marker -> every (non-temp) file holding it, once per occurrence."""
    found: dict[str, list[str]] = {}
    for path in files(root):
        if writer.TEMP_PATTERN.match(path.name):
            continue
        for match in pattern.finditer(path.read_bytes()):
            found.setdefault(match.group(1).decode(), []).append(path.relative_to(root).as_posix())
    return found


def assert_nothing_lost(root: Path, markers: dict[str, str]) -> None:
    """Every candidate's content is somewhere whole (during a half-done sweep, maybe twice)."""
    seen = census(root)
    for marker in markers:
        assert seen.get(marker), f"content of {marker} lost"
        assert len(seen[marker]) <= 2, f"{marker} in {seen[marker]}"
        for rel in seen[marker]:
            assert_whole(root / rel, marker)


def assert_conserved(root: Path, markers: dict[str, str], state: Path | None = None) -> None:
    """Invariant 1 after a finished sweep: each candidate's content in exactly one place, the
    one its verdict names, whole; no temp file of ours anywhere; no note torn."""
    seen = census(root)
    assert set(seen) >= set(markers), f"lost: {sorted(set(markers) - set(seen))}"
    for marker, kind in markers.items():
        assert len(seen[marker]) == 1, f"{marker} ({kind}) in {seen[marker]}"
        assert where(seen[marker][0]) == WHERE[kind], f"{marker} ({kind}) ended in {seen[marker][0]}"
        assert_whole(root / seen[marker][0], marker)
    base = census(root, NOTE_MARK)
    for marker, kind in markers.items():
        if kind == "patch":
            assert base.get(marker) == [base_note(marker)[0]], f"note of {marker}: {base.get(marker)}"
    assert temps(root, *([state] if state else [])) == [], "temp files left"
    for path in files(root):
        if path.suffix == ".md":
            assert not notes.parse(path.read_bytes()).unclosed, f"torn: {path}"


def assert_in_one_place(root: Path, markers: dict[str, str]) -> None:
    """Invariant 1 whatever a person did since (restore, undo): each candidate's content in
    exactly one place, whole."""
    seen = census(root)
    for marker in markers:
        assert len(seen.get(marker, [])) == 1, f"{marker} in {seen.get(marker)}"
        assert_whole(root / seen[marker][0], marker)


def assert_whole(path: Path, marker: str) -> None:
    data = path.read_bytes()
    note = notes.parse(data)
    assert note.problem is None, f"{path}: {note.problem}"
    assert f"marker {marker}\nend {marker}\n".encode() in data, f"{path} is not whole"


def normalized(root: Path) -> dict[str, bytes]:
    """The vault's files with the sweep's own times blanked: two sweeps at different
    moments that did the same work compare equal."""
    out = {}
    for path in files(root):
        rel = TIMES.sub("<t>", path.relative_to(root).as_posix())
        out[rel] = TIMES.sub("<t>", path.read_text(encoding="utf-8")).encode()
    return out


class FaultyOS:
    """`os` as the writer sees it, with `op` raising `error()` on its k-th call (k=0: never;
    the calls are counted either way), or on every call from the k-th on (`sticky`). With
    `when`, only the calls whose arguments it accepts count (`unlink` of the inbox file)."""

    def __init__(
        self,
        op: str,
        k: int = 0,
        error: Callable[[], BaseException] | None = None,
        sticky: bool = False,
        when: Callable[..., bool] | None = None,
    ) -> None:
        self.op, self.k, self.sticky, self.calls, self.fired = op, k, sticky, 0, False
        self.error = error or (lambda: OSError("injected"))
        self.when = when

    def __getattr__(self, name: str) -> Any:
        real = getattr(os, name)
        if name != self.op:
            return real

        def call(*args: Any, **kwargs: Any) -> Any:
            if self.when is not None and not self.when(*args, **kwargs):
                return real(*args, **kwargs)
            self.calls += 1
            if self.calls == self.k or (self.sticky and 0 < self.k <= self.calls):
                self.fired = True
                raise self.error()
            return real(*args, **kwargs)

        return call


class Crash(BaseException):
    """The process died here: nothing after this point runs."""


class DyingOS:
    """`os` as the writer sees it, dying at its k-th effectful call: that call and every
    later one raises Crash, so no cleanup or end record happens (as with kill -9)."""

    EFFECTS = frozenset({"open", "write", "fsync", "link", "replace", "unlink", "fchmod", "ftruncate"})

    def __init__(self, k: int) -> None:
        self.k, self.calls, self.dead = k, 0, False

    def __getattr__(self, name: str) -> Any:
        real = getattr(os, name)
        if name not in self.EFFECTS:
            return real

        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            if self.dead or self.calls >= self.k:
                self.dead = True
                raise Crash(name)
            return real(*args, **kwargs)

        return call
