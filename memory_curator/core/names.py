"""What the vault's names mean, without touching it: the inbox layout, slugs, candidate names,
and names shown escaped (pure; `store.paths` does the file system part)."""

from __future__ import annotations

import re
import unicodedata

from memory_curator.core.errors import UnsafePath

INBOX = "_inbox"


DROPPED = ".dropped"


RULES_PATH = "_meta/inbox-rules.md"


ROOT_AGENT = "inbox"


SLUG_MAX = 80


NEVER_INDEXED = {INBOX, ".obsidian", ".trash"}


# a sync conflict copy's name: Dropbox `(conflicted copy …)`, `(Jane's conflicted copy …)`;
# Obsidian Sync `(Conflicted …)`; Syncthing `.sync-conflict-…`
CONFLICT = re.compile(r"\((?:[^()]*\s)?conflicted\b[^()]*\)|\.sync-conflict-", re.IGNORECASE)
_CONFLICT = CONFLICT


UNICODE_SLUG_BYTES = 200


def ascii_slug(text: object, cap: int = SLUG_MAX) -> str:
    """Lowercase ASCII with `-` separators; accents folded; empty when nothing is left."""
    folded = unicodedata.normalize("NFKD", str(text)).encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^a-z0-9]+", "-", folded.lower()).strip("-")
    return slug[:cap].rstrip("-")


def slugify(text: object, cap: int = SLUG_MAX) -> str:
    """`ascii_slug`, so that no existing key moves (Café Zürich -> `cafe-zurich`); text that
    folds to nothing (Japanese, Chinese, Russian…), or only to digits while letters were lost
    (`同期は月額4ドル` is not `4`), keeps its own letters instead, as Obsidian accepts them in
    file names: NFC, lowercase where the script has case, every run of
    characters that are not letters, marks or digits one `-`, at most 200 bytes."""
    slug = ascii_slug(text, cap)
    if slug and (re.search("[a-z]", slug) or not _lost_letters(str(text))):
        return slug
    letters = re.sub(r"[\W_]+", "-", unicodedata.normalize("NFC", str(text)).lower()).strip("-")
    encoded = letters.encode("utf-8")[:UNICODE_SLUG_BYTES]
    return encoded.decode("utf-8", errors="ignore").rstrip("-")


def _lost_letters(text: str) -> bool:
    """Letters that ASCII folding drops (not accented Latin: `é` folds to `e`)."""
    fold = unicodedata.normalize
    return any(c.isalpha() and not fold("NFKD", c).encode("ascii", "ignore") for c in text if not c.isascii())


def check_component(value: str) -> str:
    """Refuse a path component that could leave its folder. A `\\` is an ordinary character in a
    POSIX file name (Windows is out of scope), so an agent's `a\\b.md` is swept like any other;
    the values that name a durable note are slugified before they reach a path."""
    if not value or value in {".", ".."} or "/" in value or "\x00" in value:
        raise UnsafePath(f"unsafe path component {value!r}")
    return value


# What must never reach a terminal raw: C0 and C1 controls (ESC starts an escape sequence; 0x9b is
# CSI to some terminals) and DEL, line and paragraph separators, the bidirectional marks, embeddings,
# overrides and isolates (they reorder what is shown), and lone surrogates: a name's bytes that are
# not UTF-8. One class for both forms: the block form lets newlines and tabs through.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


_LAYOUT = "\n\t"  # what a body or a diff keeps


def printable(text: str) -> str:
    """`text` on one line, as it may be shown anywhere (a terminal, a log, JSON, a note's
    provenance): a name or a reason can hold an escape sequence, a newline or bytes that are not
    UTF-8, and none of them may reach a terminal raw. Each becomes a visible escape: `\\x1b`,
    `\\n`, `\\u202e`, and `\\xff` for the byte a lone surrogate stands for. Other text is
    returned unchanged."""
    return _escape(text, "")


def printable_block(text: str) -> str:
    """`printable` for text shown as lines (a body, a value, a diff): newlines (`\\r\\n` folded to
    `\\n`) and tabs are kept, so its layout survives; a lone `\\r`, which would let a line
    overwrite itself, is escaped with everything else."""
    return _escape(text.replace("\r\n", "\n"), _LAYOUT)


def _escape(text: str, keep: str) -> str:
    if not _UNPRINTABLE.search(text):
        return text
    return _UNPRINTABLE.sub(lambda match: match.group() if match.group() in keep else _escaped(match.group()), text)


def _escaped(char: str) -> str:
    code = ord(char)
    if char in _SHORT:
        return _SHORT[char]
    if 0xDC80 <= code <= 0xDCFF:  # os.fsdecode's stand-in for the byte code - 0xDC00
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def nfc(name: str) -> str:
    return unicodedata.normalize("NFC", name)


def fold(name: str, insensitive: bool) -> str:
    """A name as a file system compares it: NFC always (what `nfc` gives every name the curator
    reads), and casefolded where the file system folds case (macOS, Windows: `Context.folds`)."""
    name = nfc(name)
    return name.casefold() if insensitive else name


def is_candidate_name(name: str) -> bool:
    """Names that are never candidates: dot-files, temp files, sync debris, non-markdown."""
    name = nfc(name)
    if name.startswith(".") or not name.lower().endswith(".md"):
        return False
    return not (_CONFLICT.search(name) or name.endswith((".tmp", ".icloud")))


# Why an entry of the inbox is not a candidate, for the entries a person should hear about (a dot-file
# or a `.tmp` is an agent's write in progress, not news): `run`, `status` and `doctor` name each one.
IGNORED = {
    "symlink": "a symlink: the curator never follows one (move the file itself into the inbox)",
    "special": "not a regular file (a FIFO, a socket or a device)",
    "nested": "a folder inside an agent folder: only files directly in _inbox/<agent>/ are candidates",
    "conflict": "a sync conflict copy: merge it into the original by hand, then delete it",
    "icloud": "an iCloud placeholder: the file is not downloaded to this machine",
    "not-markdown": "not a markdown file: candidates end in .md",
}


def ignored_kind(name: str, kind: str, in_agent_folder: bool) -> str | None:
    """Why an inbox entry is skipped, as a key of `IGNORED`; None for a candidate or an entry
    not worth a word. `kind` is what the entry is without following links: "file", "dir",
    "symlink" or "other"; `in_agent_folder` is False directly in `_inbox/`, where folders are
    agent folders."""
    name = nfc(name)
    if name.startswith(".") or name.endswith(".tmp"):
        return None
    if kind == "symlink":
        return "symlink"
    if kind == "dir":
        return "nested" if in_agent_folder else None
    if kind != "file":
        return "special"
    if name.endswith(".icloud"):
        return "icloud"
    if _CONFLICT.search(name):
        return "conflict"
    return None if name.lower().endswith(".md") else "not-markdown"
