"""The LLM judge: one batched request per chunk of undecided candidates, fail-open.

The model never sees a path and never touches a file. Candidates and their nearest durable
notes go in as data inside tags with short ids (`c1`, `n3`); the answer is validated with
pydantic and mapped back to paths here; `decide` applies it deterministically. Any failure
leaves the candidate undecided (needs_review naming the cause). The SDK is imported only when
a request is actually made, so a sweep without a key never loads it.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from memory_curator.candidate import Candidate
from memory_curator.conditions import FALSE_WORDS, TRUE_WORDS
from memory_curator.decide import JudgeVerdict
from memory_curator.errors import CuratorError
from memory_curator.judge_prompt import (
    PROMPT_VERSION,
    Answer,
    Batch,
    Item,
    Prompt,
    Shown,
    build_prompt,
    failed,
    map_answers,
    one_line,
    to_verdict,
)
from memory_curator.querier import Querier
from memory_curator.rules import JudgeSettings, Rules
from memory_curator.state import iso, utcnow

KEY_ENV = "ANTHROPIC_API_KEY"
ENV_PREFIX = "MEMORY_CURATOR_JUDGE_"
CACHE_FILE = "judge-cache.json"
CACHE_ENTRIES = 5000

# --- settings: flag > environment > rules file > default ---------------------------------------


def resolve_settings(
    base: JudgeSettings, flags: Iterable[tuple[str, str]] = (), env: Mapping[str, str] | None = None
) -> JudgeSettings:
    """`--judge-set NAME=VALUE`, else `MEMORY_CURATOR_JUDGE_<NAME>`, else the rules file's value."""
    env = os.environ if env is None else env
    given = dict(flags)
    known = [f.name for f in dataclasses.fields(JudgeSettings)]
    for name in given:
        if name not in known:
            raise CuratorError(f"--judge-set {name}: unknown judge setting (known: {', '.join(known)})")
    values: dict[str, Any] = {}
    for name in known:
        variable = ENV_PREFIX + name.upper()
        if name in given:
            values[name] = _coerce(given[name], getattr(base, name), f"--judge-set {name}")
        elif variable in env:
            values[name] = _coerce(env[variable], getattr(base, name), variable)
    settings = replace(base, **values)
    _check(settings)
    return settings


def _coerce(raw: str, current: Any, source: str) -> Any:
    text = raw.strip()
    if isinstance(current, bool):
        if text.lower() in TRUE_WORDS | FALSE_WORDS:
            return text.lower() in TRUE_WORDS
        raise CuratorError(f"{source}={raw!r}: must be true or false")
    if isinstance(current, int | float):
        try:
            return type(current)(text)
        except ValueError:
            kind = "an integer" if isinstance(current, int) else "a number"
            raise CuratorError(f"{source}={raw!r}: must be {kind}") from None
    return text or None


def _check(settings: JudgeSettings) -> None:
    if not settings.model:
        raise CuratorError("judge setting model: must not be empty")
    for name in ("max_tokens", "chunk_size", "breaker_min"):
        if getattr(settings, name) < 1:
            raise CuratorError(f"judge setting {name}: must be at least 1")
    for name in ("max_retries", "neighbours"):
        if getattr(settings, name) < 0:
            raise CuratorError(f"judge setting {name}: must not be negative")
    if settings.timeout_seconds <= 0 or not 0 <= settings.breaker_fraction <= 1:
        raise CuratorError("judge settings: timeout_seconds must be positive and breaker_fraction within 0..1")


def from_environment(settings: JudgeSettings, state: Path) -> AnthropicJudge | None:
    """The judge, or None (inert) when it is disabled or there is no API key."""
    key = os.environ.get(KEY_ENV, "").strip()
    if not settings.enabled or not key:
        return None
    return AnthropicJudge(settings, key, VerdictCache.load(state / CACHE_FILE))


def gather(candidates: Sequence[Candidate], querier: Querier, k: int) -> list[Item]:
    """Each candidate with at most k nearest durable notes, read once each."""
    notes: dict[str, Shown | None] = {}
    items = []
    for candidate in candidates:
        shown: list[Shown] = []
        for neighbour in querier.neighbours(candidate, k)[:k] if k else []:
            if neighbour.path not in notes:
                existing = querier.note_at(neighbour.path)
                notes[neighbour.path] = Shown(existing.path, existing.text) if existing else None
            note = notes[neighbour.path]
            if note is not None and note not in shown:
                shown.append(note)
        items.append(Item(candidate, tuple(shown)))
    return items


# --- the request ---------------------------------------------------------------------------------


@dataclass
class Stats:
    model: str
    requests: int = 0
    candidates: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    failures: int = 0
    cache_write_tokens: int = 0
    cached: int = 0
    problems: list[str] = field(default_factory=list)

    def add_usage(self, usage: Any) -> None:
        self.input_tokens += usage.input_tokens or 0
        self.output_tokens += usage.output_tokens or 0
        self.cache_read_tokens += usage.cache_read_input_tokens or 0
        self.cache_write_tokens += usage.cache_creation_input_tokens or 0

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class Unusable(Exception):
    """The model answered, but not with something we can use (refusal, cut off, empty)."""


@dataclass
class AnthropicJudge:
    """The `sweep.Judge` callable backed by the Anthropic Messages API."""

    settings: JudgeSettings
    api_key: str
    cache: VerdictCache | None = None
    http_client: Any = None  # an httpx2.Client; tests pass one with a MockTransport

    def __call__(
        self, candidates: list[Candidate], rules: Rules, querier: Querier
    ) -> tuple[dict[str, JudgeVerdict], dict[str, Any]]:
        stats = Stats(self.settings.model)
        verdicts: dict[str, JudgeVerdict] = {}
        todo: list[tuple[Item, str]] = []
        for item in gather(candidates, querier, self.settings.neighbours):
            key = item.cache_key(rules, self.settings.model)
            hit = self.cache.get(key, item) if self.cache else None
            if hit is not None:
                verdicts[item.candidate.inbox_path] = hit
                stats.cached += 1
            else:
                todo.append((item, key))
        size = self.settings.chunk_size
        chunks = [todo[i : i + size] for i in range(0, len(todo), size)]
        for number, chunk in enumerate(chunks, 1):
            label = f"request {number}/{len(chunks)}"
            answers = self._ask([item for item, _ in chunk], rules, stats, len(chunks) > 1, label)
            verdicts.update(answers)
            if self.cache:
                for item, key in chunk:
                    self.cache.put(key, answers[item.candidate.inbox_path])
        if self.cache:
            self.cache.save()
        stats.failures = sum(1 for v in verdicts.values() if v.failure)
        return verdicts, stats.as_dict()

    def _ask(
        self, items: list[Item], rules: Rules, stats: Stats, cache_system: bool, label: str
    ) -> dict[str, JudgeVerdict]:
        prompt = build_prompt(items, rules)
        stats.requests += 1
        stats.candidates += len(items)
        try:
            batch = self._send(prompt, cache_system, stats)
        except Exception as exc:  # fail-open: any failure of the request leaves its candidates undecided
            cause = describe(exc)
            count = f"{len(items)} candidate{'s' if len(items) != 1 else ''}"
            stats.problems.append(f"judge {label} failed ({count} left undecided): {cause}")
            audit = {"model": self.settings.model, "prompt_version": PROMPT_VERSION}
            return {item.candidate.inbox_path: failed(cause, audit) for item in items}
        answers = map_answers(batch, prompt, rules, self.settings.model)
        failures = {cid: answers[item.candidate.inbox_path].failure for cid, item in prompt.items.items()}
        rejected = [f"{cid}: {why.removeprefix('judge unavailable: ')}" for cid, why in failures.items() if why]
        if rejected:
            shown = "; ".join(rejected[:3]) + ("; ..." if len(rejected) > 3 else "")
            stats.problems.append(f"judge {label}: {len(rejected)} of {len(items)} answers rejected ({shown})")
        return answers

    def _send(self, prompt: Prompt, cache_system: bool, stats: Stats) -> Batch:
        """One Messages API call with structured output; validated with the same pydantic model.

        `messages.parse()` would validate before we could see `stop_reason`, turning a refusal
        or a cut-off into a vague validation error; so this sends the same `output_config`
        format that parse() builds and checks the stop reason first.
        """
        import anthropic  # lazily: ~0.8 s of imports, paid only when a request is made

        client = anthropic.Anthropic(
            api_key=self.api_key,
            max_retries=self.settings.max_retries,
            timeout=self.settings.timeout_seconds,
            http_client=self.http_client,
        )
        system: dict[str, Any] = {"type": "text", "text": prompt.system}
        if cache_system:  # several requests share this prefix within the cache lifetime
            system["cache_control"] = {"type": "ephemeral"}
        output: dict[str, Any] = {"format": {"type": "json_schema", "schema": anthropic.transform_schema(Batch)}}
        if self.settings.effort:
            output["effort"] = self.settings.effort
        message = client.messages.create(
            model=self.settings.model,
            max_tokens=self.settings.max_tokens,
            system=[system],  # type: ignore[list-item]
            messages=[{"role": "user", "content": prompt.user}],
            output_config=output,  # type: ignore[arg-type]
        )
        stats.add_usage(message.usage)
        if message.stop_reason != "end_turn":
            raise Unusable(_stop_cause(message.stop_reason, self.settings.max_tokens))
        text = "".join(block.text for block in message.content if block.type == "text")
        if not text.strip():
            raise Unusable("empty answer")
        return Batch.model_validate_json(text)


def _stop_cause(reason: str | None, max_tokens: int) -> str:
    if reason == "refusal":
        return "the model refused"
    if reason == "max_tokens":
        return f"output cut off at max_tokens ({max_tokens})"
    return f"unexpected stop_reason {reason!r}"


def describe(exc: BaseException) -> str:
    """A short cause for a failed request, for the review reason and one stderr line."""
    if isinstance(exc, Unusable):
        return str(exc)
    if isinstance(exc, ValidationError):
        first = exc.errors()[0] if exc.errors() else {}
        if first.get("type") == "json_invalid":
            return "truncated output" if "EOF" in str(first.get("msg", "")) else "malformed output (not JSON)"
        where = ".".join(str(p) for p in first.get("loc", ()))
        return f"malformed output ({where}: {first.get('msg', 'invalid')})"
    import anthropic

    if isinstance(exc, anthropic.APITimeoutError):
        return "timeout"
    if isinstance(exc, anthropic.APIConnectionError):
        return "connection failed"
    if isinstance(exc, anthropic.APIStatusError):
        names = {401: "authentication failed", 429: "rate limited", 529: "overloaded"}
        name = names.get(exc.status_code, "server error" if exc.status_code >= 500 else "request rejected")
        return f"{name} (HTTP {exc.status_code})"
    return f"{type(exc).__name__}: {one_line(str(exc), 120)}"


# --- the verdict cache (state directory) --------------------------------------------------------


@dataclass
class VerdictCache:
    """Answers keyed by (candidate, neighbours, rules, model, prompt version), so a dry run and
    the real run that follows pay once. Only good answers are kept; failures are retried."""

    path: Path
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)
    dirty: bool = False

    @classmethod
    def load(cls, path: Path) -> VerdictCache:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
        return cls(path, data if isinstance(data, dict) else {})

    def get(self, key: str, item: Item) -> JudgeVerdict | None:
        entry = self.entries.get(key)
        if not isinstance(entry, dict):
            return None
        try:
            answer = Answer.model_validate(entry.get("answer"))
        except ValidationError:
            return None
        target = entry.get("target")
        if target is not None and target not in {n.path for n in item.neighbours}:
            return None
        audit = {"model": entry.get("model"), "prompt_version": PROMPT_VERSION, "raw": entry["answer"], "cached": True}
        return to_verdict(answer, target, audit)

    def put(self, key: str, verdict: JudgeVerdict) -> None:
        if verdict.failure is not None:
            return
        raw = verdict.audit.get("raw")
        entry = {"time": iso(utcnow()), "model": verdict.audit.get("model"), "answer": raw, "target": verdict.target}
        self.entries[key] = entry
        self.dirty = True

    def save(self) -> None:
        """Best effort (the cache only saves money): newest entries kept, written atomically."""
        if not self.dirty:
            return
        newest = sorted(self.entries.items(), key=lambda kv: str(kv[1].get("time", "")), reverse=True)
        temp = self.path.with_name(self.path.name + ".tmp")
        try:
            temp.write_text(json.dumps(dict(newest[:CACHE_ENTRIES])), encoding="utf-8")
            os.replace(temp, self.path)
        except OSError:
            return
        self.dirty = False
