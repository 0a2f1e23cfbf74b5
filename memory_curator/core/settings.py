"""The rules' settings: the sweep's, the judge's and semantic pairing's, as immutable objects,
with their defaults, how a value in the rules file is read as each one's type (`coerce`) and
the range checks that the rules loader and `run`'s overrides share. Pure: no I/O."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from memory_curator.core.names import INBOX, RULES_PATH
from memory_curator.core.words import AUTO, LANGUAGES, supported

DEADLINE_MAX_SECONDS = 3600.0  # judge.deadline_seconds: one hour is already far more than any sweep needs
SECONDS_MAX = 30 * 86400.0  # settle, ceiling and reconcile times: a month is already far more than any vault needs
NEIGHBOURS_MAX = 1000
# source addresses that are no source: RFC 2606 / 6761 names (a rules setting adds more)
PLACEHOLDER_SOURCES = ("example.com", "example.org", "example.net", "localhost", ".example", ".invalid", ".test")
CONFIDENCE_WORDS = (("low", 1), ("medium", 2), ("high", 3))
# fields only a person sets (`review`, `resolve`): a candidate's own value is a claim, hidden from the
# conditions, kept in its audit copy, never carried into a durable note (design §2; a rules setting adds more)
PERSON_ONLY = ("user_approved", "approved_by", "reviewed")
# tags that mark content only a person may let out: never promoted or patched by a sweep, never sent to
# the judge nor served to an agent (a rules setting adds more; docs/rules.md, "Privacy")
PRIVACY_TAGS = ("do-not-share", "private", "secret")
REVIEW_NOTE = "_meta/Inbox review.md"  # where the curator writes the review note a person ticks in Obsidian
MAX_CANDIDATE_BYTES = 1 << 20  # an inbox file, `submit` or an MCP candidate over this is refused, never read
CANDIDATE_BYTES_CEILING = 32 << 20  # half of what the store reads of any file (`store.paths.READ_LIMIT`)
COMMIT_BATCH = 64  # a sweep's plans per group commit: ~2 syncs a candidate instead of ~7 (docs/safety.md)
COMMIT_BATCH_MAX = 4096  # the batch's begin records are one write: kept to a few MB


@dataclass(frozen=True)
class JudgeSettings:
    enabled: bool = True
    model: str = "claude-haiku-5-5"
    effort: str | None = None
    max_tokens: int = 16000  # a cap: a request asks 1024 + 512 per candidate at most (`judge.prompt.max_tokens`)
    timeout_seconds: float = 60.0
    max_retries: int = 2
    deadline_seconds: float = 60.0  # wall clock for all judge requests of one sweep, retries included
    chunk_size: int = 20
    neighbours: int = 5
    breaker_fraction: float = 0.5
    breaker_min: int = 5


SEMANTIC_THRESHOLD = 0.75  # cosine at which a semantic neighbour leaves novelty open (docs/rules.md, "Similarity")
NESTED = ("judge", "semantic", "secrets")  # the settings that are mappings of their own
SHA1 = re.compile(r"^[0-9a-f]{40}$")


@dataclass(frozen=True)
class SecretSettings:
    """The secret scan (`core.secrets`): on by default; `allow` holds the SHA-1 of each value a
    person has judged no credential (detect-secrets' `hashed_secret`), as `doctor` and the review
    show it (docs/rules.md, "Secrets")."""

    scan: bool = True
    allow: tuple[str, ...] = ()


@dataclass(frozen=True)
class SemanticSettings:
    """Opt-in semantic pairing (`index.semantic`): off while `model` is unset. A neighbour at or
    above `threshold` (cosine) makes novelty undecided and is named; it never decides alone."""

    model: str | None = None  # a model name under the models folder, or a folder (`./x`: beside the vault)
    threshold: float = SEMANTIC_THRESHOLD

    @property
    def enabled(self) -> bool:
        return bool(self.model)


@dataclass(frozen=True)
class Settings:
    settle_seconds: float = 3.0
    settle_ceiling_seconds: float = 3600.0
    near_duplicate_score: float = 0.6
    neighbours: int = 5
    reconcile_seconds: float = 300.0
    curator_host: str | None = None
    mcp_allow_sweep: bool = False  # `memory-curator mcp` offers agents `sweep_now` (docs/mcp.md)
    placeholder_sources: tuple[str, ...] = ()  # hosts / `.tld`s added to PLACEHOLDER_SOURCES
    confidence_words: tuple[tuple[str, int], ...] = CONFIDENCE_WORDS  # `confidence: high` -> 3
    person_only: tuple[str, ...] = PERSON_ONLY  # the rules' `person_only` list adds to these
    privacy_tags: tuple[str, ...] = PRIVACY_TAGS  # the rules' `privacy_tags` list adds to these
    max_candidate_bytes: int = MAX_CANDIDATE_BYTES
    review_note: str = REVIEW_NOTE  # the review note's vault path ("" or false: no note; docs/review.md)
    commit_batch: int = COMMIT_BATCH  # plans a sweep makes durable together (group commit; docs/safety.md)
    language: str = AUTO  # what words are stemmed in: `auto` (each text's, detected) or a language (`core.words`)
    judge: JudgeSettings = field(default_factory=JudgeSettings)
    semantic: SemanticSettings = field(default_factory=SemanticSettings)
    secrets: SecretSettings = field(default_factory=SecretSettings)


class Unusable(ValueError):
    """A setting's value of the wrong kind or out of range; the message says what it must be."""


def coerce(key: str, value: Any, current: Any) -> Any:
    """The rules file's `value` for the setting `key` as the type of its `current` value (the
    lists add to the defaults); `Unusable` when it cannot be."""
    if key == "placeholder_sources":
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            raise Unusable("must be a list of host names")
        return tuple(v.strip().casefold() for v in value)
    if key in ("person_only", "privacy_tags"):
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            raise Unusable(f"must be a list of {key.split('_')[-1]}")
        added = [v.strip().lstrip("#") for v in value]
        return tuple(dict.fromkeys([*current, *(v.casefold() if key == "privacy_tags" else v for v in added)]))
    if key == "allow":
        return allowed_hashes(value)
    if key == "confidence_words":
        words = value.items() if isinstance(value, dict) else ()
        if not words or not all(isinstance(v, int) and not isinstance(v, bool) for _, v in words):
            raise Unusable("must map words to whole numbers (high: 3)")
        return tuple({**dict(CONFIDENCE_WORDS), **{str(k).casefold(): int(v) for k, v in words}}.items())
    if key == "review_note":
        if value is False or value is None or (isinstance(value, str) and not value.strip()):
            return ""  # off
        if not isinstance(value, str):
            raise Unusable("must be a vault path ending in .md, or false")
        return value.strip()
    if key == "language":
        if not isinstance(value, str) or not value.strip():
            raise Unusable("must be a language name")
        return value.strip().casefold()
    if current is None or isinstance(current, str):  # text (curator_host, model, effort)
        if value is None and current is None:
            return None
        if isinstance(value, dict | list) or value is None:
            raise Unusable("must be text")
        return str(value)
    kind = type(current)
    if kind is bool and not isinstance(value, bool):
        raise Unusable("must be true or false")
    if kind in (int, float) and (isinstance(value, bool) or not isinstance(value, int | float)):
        raise Unusable("must be a number")
    if kind is int and isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        raise Unusable("must be a whole number")
    try:
        return kind(value)
    except OverflowError:  # an integer too large for a float
        raise Unusable("is out of range") from None


def allowed_hashes(value: Any) -> tuple[str, ...]:
    """The secrets' `allow` list: each a 40-hex-digit SHA-1 (what `doctor` and the review name)."""
    if not isinstance(value, list):
        raise Unusable("must be a list of SHA-1 hashes (40 hex digits)")
    for index, item in enumerate(value, 1):
        if not isinstance(item, str) or not SHA1.match(item.strip().casefold()):
            raise Unusable(f"item {index} ({str(item)[:48]!r}) is not a SHA-1 hash (40 hex digits)")
    return tuple(dict.fromkeys(v.strip().casefold() for v in value))


def settings_problem(settings: Settings) -> tuple[str, str] | None:
    """The first unusable sweep setting and why (None: all are usable)."""
    limit = f"{SECONDS_MAX:g} seconds (30 days)"
    for name, least in (("settle_seconds", 0.0), ("settle_ceiling_seconds", None), ("reconcile_seconds", None)):
        value = getattr(settings, name)
        low = value >= least if least is not None else value > 0
        if not (math.isfinite(value) and low):
            return name, "must be a positive number of seconds" if least is None else "must not be negative"
        if value > SECONDS_MAX:
            return name, f"must be at most {limit}"
    if not 1 <= settings.commit_batch <= COMMIT_BATCH_MAX:
        return "commit_batch", f"must be within 1..{COMMIT_BATCH_MAX}"
    if not 1024 <= settings.max_candidate_bytes <= CANDIDATE_BYTES_CEILING:
        return "max_candidate_bytes", "must be within 1024..33554432 (bytes: 32 MiB at most)"
    if not 0 <= settings.near_duplicate_score <= 1:
        return "near_duplicate_score", "must be within 0..1"
    if not 0 <= settings.neighbours <= NEIGHBOURS_MAX:
        return "neighbours", f"must be within 0..{NEIGHBOURS_MAX}"
    if settings.review_note and (why := review_note_problem(settings.review_note)):
        return "review_note", why
    if not supported(settings.language):
        return "language", f"must be {AUTO} or one of: {', '.join(LANGUAGES)}"
    return None


def review_note_problem(path: str) -> str | None:
    """Why a review note path is unusable: it must be a markdown file inside the vault, outside
    `_inbox/` (every file there is a candidate) and outside dot-folders."""
    parts = path.split("/")
    if not path.endswith(".md") or path.startswith("/") or any(p in ("", ".", "..") or "\x00" in p for p in parts):
        return "must be a vault-relative path ending in .md (or false to turn the note off)"
    if parts[0] == INBOX or any(p.startswith(".") for p in parts) or path == RULES_PATH:
        return "must lie outside _inbox/, dot-folders and the rules file"
    return None


def judge_problem(settings: JudgeSettings) -> tuple[str, str] | None:
    """The first unusable judge setting and why (None: all are usable). The one check of judge
    settings: the rules loader and `run`'s overrides (judge.resolve_settings) both use it."""
    if not settings.model:
        return "model", "must not be empty"
    for name in ("max_tokens", "chunk_size", "breaker_min"):
        if getattr(settings, name) < 1:
            return name, "must be at least 1"
    for name in ("max_retries", "neighbours"):
        if getattr(settings, name) < 0:
            return name, "must not be negative"
    if settings.neighbours > NEIGHBOURS_MAX:
        return "neighbours", f"must be at most {NEIGHBOURS_MAX}"
    if not 0 < settings.timeout_seconds < math.inf:
        return "timeout_seconds", "must be a positive number of seconds"
    if not 0 <= settings.breaker_fraction <= 1:
        return "breaker_fraction", "must be within 0..1"
    problem = deadline_problem(settings.deadline_seconds)
    return ("deadline_seconds", problem) if problem else None


def semantic_problem(settings: SemanticSettings) -> tuple[str, str] | None:
    """The first unusable semantic setting and why (None: all are usable)."""
    if settings.model is not None and not settings.model.strip():
        return "model", "must not be empty (leave it out to turn semantic pairing off)"
    if not 0 <= settings.threshold <= 1:
        return "threshold", "must be within 0..1"
    return None


def deadline_problem(seconds: float) -> str | None:
    """Why a judge deadline is unusable (None: it is fine): positive, finite, at most an hour."""
    if not math.isfinite(seconds) or seconds <= 0:
        return "must be a positive number of seconds"
    if seconds > DEADLINE_MAX_SECONDS:
        return f"must be at most {DEADLINE_MAX_SECONDS:g} seconds"
    return None
