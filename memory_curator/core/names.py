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


_CONFLICT = re.compile(r"\((?:c|C)onflicted copy.*\)|\.sync-conflict-")


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


def nfc(name: str) -> str:
    return unicodedata.normalize("NFC", name)


def is_candidate_name(name: str) -> bool:
    """Names that are never candidates: dot-files, temp files, sync debris, non-markdown."""
    name = nfc(name)
    if name.startswith(".") or not name.lower().endswith(".md"):
        return False
    return not (_CONFLICT.search(name) or name.endswith((".tmp", ".icloud")))
