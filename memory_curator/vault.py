"""The vault's layout: where it is, which files are candidates, and safe paths inside it."""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from memory_curator.errors import UnsafePath, VaultNotFound

INBOX = "_inbox"
DROPPED = ".dropped"
RULES_PATH = "_meta/inbox-rules.md"
ROOT_AGENT = "inbox"
SLUG_MAX = 80
NEVER_INDEXED = {INBOX, ".obsidian", ".trash"}

_CONFLICT = re.compile(r"\((?:c|C)onflicted copy.*\)|\.sync-conflict-")


def find_root(start: Path | None = None, explicit: str | os.PathLike[str] | None = None) -> Path:
    """--vault, else MEMORY_CURATOR_VAULT, else walk up to a folder with _inbox/ or the rules."""
    chosen = explicit or os.environ.get("MEMORY_CURATOR_VAULT")
    if chosen:
        root = Path(chosen).expanduser()
        if not root.is_dir():
            raise VaultNotFound(f"{root}: the vault folder does not exist")
        return root.resolve()
    here = (start or Path.cwd()).resolve()
    for folder in [here, *here.parents] if here.is_dir() else list(here.parents):
        if (folder / INBOX).is_dir() or (folder / RULES_PATH).is_file():
            return folder
    raise VaultNotFound(f"{here}: no vault found (no _inbox/ or {RULES_PATH} here or above); use --vault")


def slugify(text: object, cap: int = SLUG_MAX) -> str:
    """Lowercase ASCII with `-` separators; accents folded; empty when nothing is left."""
    folded = unicodedata.normalize("NFKD", str(text)).encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^a-z0-9]+", "-", folded.lower()).strip("-")
    return slug[:cap].rstrip("-")


def check_component(value: str) -> str:
    """Refuse a path component that could leave its folder. A `\\` is an ordinary character in a
    POSIX file name (Windows is out of scope), so an agent's `a\\b.md` is swept like any other;
    the values that name a durable note are slugified before they reach a path."""
    if not value or value in {".", ".."} or "/" in value or "\x00" in value:
        raise UnsafePath(f"unsafe path component {value!r}")
    return value


def safe_join(root: Path, relative: str) -> Path:
    """Join a vault-relative POSIX path, refusing anything that escapes the vault."""
    if "\x00" in relative or relative.startswith("/") or os.path.isabs(relative):
        raise UnsafePath(f"unsafe path {relative!r}")
    parts = relative.split("/")
    for part in parts:
        check_component(part)
    path = root.joinpath(*parts)
    real_root = root.resolve()
    parent = path.parent.resolve() if path.parent.exists() else _resolve_existing(path.parent)
    if parent != real_root and real_root not in parent.parents:
        raise UnsafePath(f"{relative} leaves the vault (through a symlink)")
    return path


def _resolve_existing(path: Path) -> Path:
    """Resolve the longest existing prefix (symlinks there count), then append the rest."""
    missing: list[str] = []
    while not path.exists() and path != path.parent:
        missing.append(path.name)
        path = path.parent
    return path.resolve().joinpath(*reversed(missing))


# C0 and C1 controls (ESC starts a terminal escape sequence; 0x9b is CSI to some terminals), line and
# paragraph separators, bidirectional overrides, and lone surrogates: the bytes of a name that is not UTF-8
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def printable(text: str) -> str:
    """`text` as it may be shown anywhere (a terminal, a log, JSON, a note's provenance): a file
    name can hold an escape sequence, a newline or bytes that are not UTF-8, and none of them may
    reach a terminal raw. Each becomes a visible escape: `\\x1b`, `\\n`, `\\u202e`, and `\\xff`
    for the byte a lone surrogate stands for. Other text is returned unchanged."""
    if not _UNPRINTABLE.search(text):
        return text
    return _UNPRINTABLE.sub(_escaped, text)


def _escaped(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if char in _SHORT:
        return _SHORT[char]
    if 0xDC80 <= code <= 0xDCFF:  # os.fsdecode's stand-in for the byte code - 0xDC00
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def relpath(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


def nfc(name: str) -> str:
    return unicodedata.normalize("NFC", name)


def is_candidate_name(name: str) -> bool:
    """Names that are never candidates: dot-files, temp files, sync debris, non-markdown."""
    name = nfc(name)
    if name.startswith(".") or not name.lower().endswith(".md"):
        return False
    return not (_CONFLICT.search(name) or name.endswith((".tmp", ".icloud")))


@dataclass(frozen=True)
class CandidateFile:
    agent: str
    path: Path
    rel: str


def agent_dirs(root: Path) -> list[tuple[str, Path]]:
    inbox = root / INBOX
    if not inbox.is_dir():
        return []
    out = [(ROOT_AGENT, inbox)]
    for entry in sorted(os.scandir(inbox), key=lambda e: e.name):
        if entry.is_dir(follow_symlinks=False) and not entry.name.startswith("."):
            out.append((nfc(entry.name), Path(entry.path)))
    return out


def scope_agents(root: Path, scope: Path | None) -> list[tuple[str, Path]]:
    """The agent folders a run covers: one agent folder, or the whole inbox."""
    inbox = (root / INBOX).resolve()
    if scope is None:
        return agent_dirs(root)
    target = scope.resolve()
    if target == inbox:
        return agent_dirs(root)
    if target.parent == inbox and target.is_dir() and not target.name.startswith("."):
        return [(nfc(target.name), target)]
    raise VaultNotFound(f"{scope}: not the inbox or an agent folder directly inside {INBOX}/")


def list_candidates(folder: Path, agent: str, root: Path) -> Iterator[CandidateFile]:
    """Markdown files directly in an agent folder, sorted by name, never following links."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: nfc(e.name))
    except FileNotFoundError:
        return
    for entry in entries:
        if is_candidate_name(entry.name) and entry.is_file(follow_symlinks=False):
            path = Path(entry.path)
            yield CandidateFile(agent, path, relpath(root, path))
