"""Credentials in a text: what kind, on which line, and how to show one without showing it.

An agent writes what it sees, its environment included: an API key in a shell transcript, a
`DATABASE_URL` with its password, a private key block. `scan` finds them with detect-secrets'
own detectors (its plugins' `analyze_string`, called directly: no global settings, no
verification request ever made), less the ones that are noise in notes (high-entropy strings,
public IPs), plus the few formats it does not know yet (`EXTRA`). A finding keeps the secret only
to mask it; what is shown is `Finding.masked` (`sk-ant-…a1b2`) and what a person allows is its
`hashed` form (SHA-1, detect-secrets' `hashed_secret`). Pure: text in, findings out
(docs/safety.md, "Secrets").
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from memory_curator.core.secret_triggers import candidates, keyword_shape
from memory_curator.core.settings import SecretSettings

SECRET = "secret"  # how a secret's reason begins (`reasons.reason_code` reads it)
PRIVATE_KEY = "Private Key"
KEYWORD = "Secret Keyword"
BASIC_AUTH = "Basic Auth Credentials"
# detect-secrets' plugins left out: in notes they flag git hashes, checksums, ids and addresses
SKIPPED = frozenset({"Base64 High Entropy String", "Hex High Entropy String", "Public IP (ipv4)"})
# formats detect-secrets 1.5 does not know (its OpenAI plugin only knows the `T3BlbkFJ` keys)
EXTRA = (
    ("Anthropic API Key", re.compile(r"sk-ant-(?:api|admin|oat)\d{2}-[A-Za-z0-9_-]{20,}")),
    ("OpenAI Token", re.compile(r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}")),
    ("Google API Key", re.compile(r"AIza[0-9A-Za-z_-]{35}")),
)
# what a password in a URL or an assignment is when it is no password (docs, examples)
PLACEHOLDERS = frozenset(
    {"pass", "password", "passwd", "pwd", "secret", "user", "username", "token", "changeme", "example", "xxx", "***"}
)
KEYWORD_MIN = 8  # a keyword's value shorter than this, or without both a letter and a digit, is a word, not a key
PEM_LINES = 100  # how far a private key block is read for its END line
SHOWN = 3  # findings named in one reason


@dataclass(frozen=True)
class Finding:
    """One credential: its kind (detect-secrets' `secret_type`), its 1-based line, the masked
    form that may be shown, and the SHA-1 a rules file allows it by. `secret` is never shown."""

    kind: str
    line: int
    masked: str
    hashed: str
    secret: str = field(repr=False, compare=False)

    @property
    def label(self) -> str:
        return f"{self.kind}, line {self.line}: {self.masked}"


def mask(secret: str) -> str:
    """A few leading characters, an ellipsis, the last four: never more than half the secret,
    and a short one (a password) shows at most its first quarter."""
    size = len(secret)
    head = secret[: min(7, size // 4)]
    tail = secret[-4:] if size >= 20 else ""
    return f"{head}…{tail}"


def hashed(secret: str) -> str:
    """detect-secrets' `hashed_secret`: what a baseline, and the rules' `allow`, hold."""
    return hashlib.sha1(secret.encode("utf-8", "surrogatepass")).hexdigest()


def scan(text: str, allow: Iterable[str] = ()) -> tuple[Finding, ...]:
    """Every credential in `text`, in line order, less those whose hash `allow` holds. The lines
    of a leading frontmatter block are read as YAML (`password: x` unquoted counts), the rest as
    prose (a keyword's value must be quoted), as detect-secrets reads a YAML and a Markdown file."""
    allowed = {a.casefold() for a in allow}
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    yaml_end = _frontmatter_end(lines)
    found: dict[tuple[int, str], Finding] = {}
    for index, kinds in sorted(candidates(text, _kinds()).items()):  # only the lines a trigger hits
        number, line = index + 1, lines[index]
        for kind, secret in _detect(line, number <= yaml_end, kinds):
            if kind == PRIVATE_KEY:
                secret = _pem_block(lines, number - 1)
            elif not _plausible(kind, secret, line):
                continue
            finding = Finding(kind, number, _masked(kind, secret), hashed(secret), secret)
            if finding.hashed not in allowed:
                found.setdefault((number, secret), finding)
    return tuple(found.values())


def reason(findings: tuple[Finding, ...]) -> str:
    """Why a candidate with credentials waits: their kinds, lines and masked forms, never one whole."""
    named = "; ".join(f.label for f in findings[:SHOWN])
    more = f"; and {len(findings) - SHOWN} more" if len(findings) > SHOWN else ""
    return f"{SECRET} ({named}{more}): a credential never becomes a note; drop it, or edit it out and sweep again"


def not_served(text: str, settings: SecretSettings) -> str | None:
    """Why a note is not served to an agent (MCP `read_note`, `search_notes`): it holds a
    credential, named masked (None: it may be served, or the scan is off)."""
    found = scan(text, settings.allow) if settings.scan else ()
    if not found:
        return None
    named = "; ".join(f.label for f in found[:SHOWN])
    return f"holds a credential ({named}): not served to agents"


def elsewhere(findings: tuple[Finding, ...]) -> str:
    """What the review note says instead of offering a promote: the credentials, masked."""
    named = "; ".join(f.label for f in findings[:SHOWN])
    return f"holds a credential ({named}): drop it, or edit it out; approved only in `memory-curator review`"


def masked_text(text: str, findings: Iterable[Finding], anywhere: bool = False) -> str:
    """`text` with each finding's secret replaced by its masked form, on its own line only (a
    password `pass` leaves the word `password` elsewhere alone); a private key block whole.
    `anywhere`: a part of the file (a value, the body), whose lines are not the file's."""
    if anywhere:
        for finding in sorted(findings, key=lambda f: -len(f.secret)):
            parts = [p.strip() for p in finding.secret.split("\n")] if finding.kind == PRIVATE_KEY else [finding.secret]
            for number, part in enumerate(p for p in parts if p):
                text = text.replace(part, finding.masked if number == 0 else "…")
        return text
    lines = text.split("\n")
    for finding in sorted(findings, key=lambda f: (-f.line, -len(f.secret))):  # bottom up: a block folds to one line
        index = finding.line - 1
        if not 0 <= index < len(lines):
            continue
        if finding.kind == PRIVATE_KEY:
            end = index + finding.secret.count("\n") + 1
            lines[index:end] = [finding.masked]
        else:
            lines[index] = lines[index].replace(finding.secret, finding.masked)
    return "\n".join(lines)


def _masked(kind: str, secret: str) -> str:
    if kind == PRIVATE_KEY:
        first = secret.split("\n", 1)[0].strip()
        return f"{first[:40]} … ({secret.count(chr(10)) + 1} lines)"
    return mask(secret)


def _pem_block(lines: list[str], start: int) -> str:
    """A private key from its BEGIN line to its END line (or its first `PEM_LINES`): the key
    itself is what is masked and hashed, not the header every key shares."""
    end = start
    for end in range(start, min(len(lines), start + PEM_LINES)):
        if end > start and ("-----END" in lines[end] or not lines[end].strip()):
            break
    stop = end + 1 if "-----END" in lines[end] else end
    return "\n".join(lines[start : max(stop, start + 1)])


def _frontmatter_end(lines: list[str]) -> int:
    """The 1-based line of a leading frontmatter's closing `---` (0: none)."""
    if not lines or lines[0].strip() != "---":
        return 0
    for number, line in enumerate(lines[1:], 2):
        if line.strip() in ("---", "..."):
            return number
    return 0


def _plausible(kind: str, secret: str, line: str) -> bool:
    """detect-secrets' own heuristic filters (a UUID, `${VAR}`, `<password>`, `abcdef…`), and for
    the two detectors that read names rather than formats, a value that is a value: no spaces
    or backticks (prose), no placeholder word, and for a keyword a mix of letters and digits."""
    filters = _filters()
    if filters.uuid(secret) or filters.sequential(secret) or filters.templated(secret) or filters.dollar(secret):
        return False
    if kind not in (KEYWORD, BASIC_AUTH):
        return True
    if re.search(r"[\s`]", secret) or secret.casefold().strip("'\"") in PLACEHOLDERS:
        return False
    if kind == BASIC_AUTH:
        return True
    mixed = re.search(r"[A-Za-z]", secret) and re.search(r"\d", secret)
    return len(secret) >= KEYWORD_MIN and bool(mixed) and not filters.indirect(line)


def _detect(line: str, yaml: bool, kinds: frozenset[str]) -> Iterator[tuple[str, str]]:
    """(kind, secret) for each credential detect-secrets' plugins, and `EXTRA`, of `kinds` see in one line."""
    detectors = _detectors()
    for plugin in detectors.plugins:
        if plugin.secret_type not in kinds:
            continue
        if plugin.secret_type == KEYWORD:
            if not keyword_shape(line):  # what its every pattern holds: most lines fail here
                continue
            found: Iterable[str] = plugin.analyze_string(line, detectors.yaml_keyword if yaml else None)
        elif hasattr(plugin, "denylist"):  # a format plugin: its patterns, each match whole (below)
            found = (_value(m) for pattern in plugin.denylist for m in pattern.finditer(line))
        else:
            found = plugin.analyze_string(line)
        for secret in found:
            yield plugin.secret_type, secret
    for kind, pattern in EXTRA:
        for match in pattern.finditer(line) if kind in kinds else ():
            yield kind, match.group(0)


def _value(match: re.Match[str]) -> str:
    """The secret a pattern matched: the group that captures it (a URL's password, a token after
    `_authToken=`), or the whole match when the only group is its prefix (`ghp`, `glpat`: what
    detect-secrets' own `analyze_string` would yield, and hash, for a GitHub token)."""
    groups = [g for g in match.groups() if g]
    if not groups:
        return match.group(0)
    longest = max(groups, key=len)
    return match.group(0) if match.group(0).startswith(longest) else longest


@dataclass(frozen=True)
class _Detectors:
    plugins: tuple[Any, ...]
    yaml_keyword: Any


@dataclass(frozen=True)
class _Filters:
    uuid: Callable[[str], bool]
    sequential: Callable[[str], bool]
    templated: Callable[[str], bool]
    dollar: Callable[[str], bool]
    indirect: Callable[[str], bool]


@cache
def _kinds() -> tuple[str, ...]:
    """Every kind the scan reports: the plugins' and `EXTRA`'s."""
    return tuple(dict.fromkeys([p.secret_type for p in _detectors().plugins] + [kind for kind, _ in EXTRA]))


@cache
def _detectors() -> _Detectors:
    """detect-secrets' plugins, made once per process and imported only when a text is scanned
    (the import takes ~0.2 s: it brings `requests`, which no call here uses)."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins import keyword

    classes: dict[str, Any] = get_mapping_from_secret_type_to_class()
    plugins = tuple(cls() for kind, cls in sorted(classes.items()) if kind not in SKIPPED)
    return _Detectors(plugins, keyword.CONFIG_DENYLIST_REGEX_TO_GROUP)


@cache
def _filters() -> _Filters:
    from detect_secrets.filters import heuristic

    return _Filters(
        heuristic.is_potential_uuid,
        heuristic.is_sequential_string,
        heuristic.is_templated_secret,
        heuristic.is_prefixed_with_dollar_sign,
        heuristic.is_indirect_reference,
    )
