"""The LLM judge: one batched request per chunk of undecided candidates, fail-open.

The model never sees a path and never touches a file. Candidates and their nearest durable
notes go in as data inside tags with short ids (`c1`, `n3`); the answer is validated with
pydantic and mapped back to paths here; `decide` applies it deterministically. Any failure
leaves the candidate undecided (needs_review naming the cause). The SDK is imported only when
a request is actually made, so a sweep without a key never loads it.

One deadline (`deadline_seconds`, wall clock) covers every request of a sweep, retries
included: it starts when the sweep first asks the judge; each HTTP attempt gets at most the
time left, a retry that cannot fit is not made, a request still running at the deadline is
abandoned (its worker thread is a daemon and its connection is closed), and what is left
undecided fails open as `judge unavailable: deadline`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import email.utils
import itertools
import math
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from memory_curator.core.candidate import Candidate
from memory_curator.core.clock import Clock, SystemClock
from memory_curator.core.comparison import observed
from memory_curator.core.decide import JudgeVerdict
from memory_curator.core.facts import ExistingNote, Neighbour, Querier
from memory_curator.core.judge_view import surface_key
from memory_curator.core.ownership import judge_may_change
from memory_curator.core.privacy import withheld
from memory_curator.core.rules import Rules
from memory_curator.core.secrets import not_served
from memory_curator.core.settings import JudgeSettings, SecretSettings
from memory_curator.core.text import iso
from memory_curator.judge.cache import CACHE_FILE, VerdictCache
from memory_curator.judge.prompt import (
    PROMPT_VERSION,
    Batch,
    Item,
    Prompt,
    Shown,
    build_prompt,
    failed,
    flat_line,
    map_answers,
    max_tokens,
)
from memory_curator.judge.settings import KEY_ENV
from memory_curator.store.bell import Bell
from memory_curator.store.writer import FILES, Files

if TYPE_CHECKING:  # the SDK itself is imported only when a request is made
    from anthropic.types import OutputConfigParam, TextBlockParam


def from_environment(
    settings: JudgeSettings, state: Path, clock: Clock, env: Mapping[str, str], files: Files = FILES
) -> AnthropicJudge | None:
    """The judge, or None (inert) when it is disabled or there is no API key (in `env`, the
    context's)."""
    key = env.get(KEY_ENV, "").strip()
    if not settings.enabled or not key:
        return None
    return AnthropicJudge(settings, key, VerdictCache.load(state / CACHE_FILE, clock, files), clock=clock)


DEFAULT_SECRETS = SecretSettings()  # the scan on: a caller that names no settings sends no credential


def gather(
    candidates: Sequence[Candidate],
    querier: Querier,
    k: int,
    private: tuple[str, ...] = (),
    secrets: SecretSettings = DEFAULT_SECRETS,
    rules: Rules | None = None,
) -> list[Item]:
    """Each candidate with at most k durable notes, read once each: the note with its key (a
    person's: the only ones with a key that are sent), then the notes about its subject
    (`subject_notes`), then its nearest neighbours, lexical and semantic in turn (the semantic
    list is empty unless the rules name a model). A note with a privacy tag in `private` that no
    person approved, or holding a credential (`secrets`), is never shown to the model: neither
    leaves the machine. `rules` (else the querier's) say whose each note is. A lexical neighbour
    under half the near-duplicate score shares words, not a subject: only the closest such is
    shown (as `decide` names the closest notes)."""
    rules = rules if rules is not None else getattr(querier, "rules", None)
    floor = rules.settings.near_duplicate_score / 2 if isinstance(rules, Rules) else 0.0
    notes: dict[str, Shown | None] = {}
    items = []
    for candidate in candidates:
        shown: list[Shown] = []
        keyed = [candidate.target] if k and candidate.target else []
        about = [*keyed, *(n.path for n in querier.subject_notes(candidate))] if k else []
        lexical = _related(querier.neighbours(candidate, k), floor) if k else []
        paired = [n.path for n in querier.semantic_neighbours(candidate, k)] if k else []
        near = [p for pair in itertools.zip_longest(lexical, paired) for p in pair if p is not None]
        for path in dict.fromkeys([*about, *near]):
            if path not in notes:
                existing = querier.note_at(path)
                hidden = (
                    existing is None
                    or withheld(existing.note, private) is not None
                    or not_served(existing.text, secrets) is not None
                )
                notes[path] = None if hidden or existing is None else _shown(existing, rules)
            note = notes[path]
            if note is not None and note not in shown and len(shown) < k:
                shown.append(note)
        items.append(Item(candidate, tuple(shown)))
    return items


def _related(found: Sequence[Neighbour], floor: float) -> list[str]:
    """The closest neighbour, and the others at `floor` or above."""
    return [n.path for index, n in enumerate(found) if index == 0 or n.score >= floor]


def _shown(note: ExistingNote, rules: Rules | None) -> Shown:
    """The note as the judge is shown it: whose it is (without rules to tell, the person's), its
    surface and path-free key, and when its value was observed."""
    yours = rules is None or not judge_may_change(note.path, note.frontmatter, rules)
    surface, key = surface_key(note.path, rules) if rules is not None else (None, "")
    moment = observed(note.frontmatter)
    return Shown(note.path, note.text, yours, surface, key, iso(moment) if moment else None)


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


class DeadlineReached(Exception):
    """The sweep's judge deadline passed before the request was answered."""


class NoTimeToRetry(Exception):
    """A retryable failure whose retry could not finish before the deadline: not retried."""


DEADLINE = "deadline"  # the failure cause of everything the deadline leaves undecided
_MIN_ATTEMPT = 0.05  # seconds: less time than this left, and no new HTTP attempt is started


@dataclass
class AnthropicJudge:
    """The `sweep.Judge` callable backed by the Anthropic Messages API."""

    settings: JudgeSettings
    api_key: str
    cache: VerdictCache | None = None
    http_client: Any = None  # an httpx2.Client; tests pass one with a MockTransport
    clock: Clock = field(default_factory=SystemClock)  # its monotonic() times the deadline

    def __call__(
        self, candidates: list[Candidate], rules: Rules, querier: Querier
    ) -> tuple[dict[str, JudgeVerdict], dict[str, Any]]:
        stats = Stats(self.settings.model)
        verdicts: dict[str, JudgeVerdict] = {}
        todo: list[tuple[Item, str]] = []
        settings = rules.settings
        shown = gather(candidates, querier, self.settings.neighbours, settings.privacy_tags, settings.secrets, rules)
        for item in shown:
            key = item.cache_key(rules, self.settings.model)
            hit = self.cache.get(key, item) if self.cache else None
            if hit is not None:
                verdicts[item.candidate.inbox_path] = hit
                stats.cached += 1
            else:
                todo.append((item, key))
        size = self.settings.chunk_size
        chunks = [todo[i : i + size] for i in range(0, len(todo), size)]
        if chunks:
            import anthropic  # noqa: F401  (lazily, ~0.8 s, and before the deadline starts)
        deadline = self.clock.monotonic() + self.settings.deadline_seconds  # one for the whole sweep
        for number, chunk in enumerate(chunks, 1):
            label = f"request {number}/{len(chunks)}"
            if deadline - self.clock.monotonic() < _MIN_ATTEMPT:  # no time left: the rest is not sent
                rest = [item for later in chunks[number - 1 :] for item, _ in later]
                verdicts.update(self._not_sent(rest, stats, number, len(chunks)))
                break
            answers = self._ask([item for item, _ in chunk], rules, stats, len(chunks) > 1, label, deadline)
            verdicts.update(answers)
            if self.cache:
                for item, key in chunk:
                    self.cache.put(key, answers[item.candidate.inbox_path])
        if self.cache:
            self.cache.save()
        stats.failures = sum(1 for v in verdicts.values() if v.failure)
        return verdicts, stats.as_dict()

    def _not_sent(self, items: list[Item], stats: Stats, first: int, total: int) -> dict[str, JudgeVerdict]:
        which = f"request {first}/{total}" if first == total else f"requests {first}-{total} of {total}"
        count = f"{len(items)} candidate{'s' if len(items) != 1 else ''}"
        stats.problems.append(f"judge {which} not sent ({count} left undecided): {DEADLINE}")
        audit = {"model": self.settings.model, "prompt_version": PROMPT_VERSION}
        return {item.candidate.inbox_path: failed(DEADLINE, audit) for item in items}

    def _ask(
        self, items: list[Item], rules: Rules, stats: Stats, cache_system: bool, label: str, deadline: float
    ) -> dict[str, JudgeVerdict]:
        prompt = build_prompt(items, rules)
        stats.requests += 1
        stats.candidates += len(items)
        try:
            batch = self._send(prompt, cache_system, stats, deadline)
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

    def _send(self, prompt: Prompt, cache_system: bool, stats: Stats, deadline: float) -> Batch:
        """One Messages API call with structured output; validated with the same pydantic model.

        `messages.parse()` would validate before we could see `stop_reason`, turning a refusal
        or a cut-off into a vague validation error; so this sends the same `output_config`
        format that parse() builds and checks the stop reason first.
        """
        import anthropic  # lazily: ~0.8 s of imports, paid only when a request is made

        guard = DeadlineGuard(deadline, self.settings.timeout_seconds, self.settings.max_retries, self.clock)
        client = anthropic.Anthropic(
            api_key=self.api_key,
            max_retries=self.settings.max_retries,
            timeout=self.settings.timeout_seconds,
            http_client=self.http_client,
            middleware=[guard],
        )
        cap = max_tokens(self.settings, len(prompt.items))
        system: TextBlockParam = {"type": "text", "text": prompt.system}
        if cache_system:  # several requests share this prefix within the cache lifetime
            system["cache_control"] = {"type": "ephemeral"}
        output: OutputConfigParam = {"format": {"type": "json_schema", "schema": anthropic.transform_schema(Batch)}}
        if self.settings.effort:  # sent as the rules file spells it: the API, not the SDK's Literal, checks it
            output["effort"] = self.settings.effort  # type: ignore[typeddict-item]

        def create() -> Any:
            return client.messages.create(
                model=self.settings.model,
                max_tokens=cap,
                system=[system],
                messages=[{"role": "user", "content": prompt.user}],
                output_config=output,
            )

        message = self._within(deadline, create, client)
        stats.add_usage(message.usage)
        if message.stop_reason != "end_turn":
            raise Unusable(_stop_cause(message.stop_reason, cap))
        text = "".join(block.text for block in message.content if block.type == "text")
        if not text.strip():
            raise Unusable("empty answer")
        return Batch.model_validate_json(text)

    def _within(self, deadline: float, call: Callable[[], Any], client: Any) -> Any:
        """call() in a daemon thread, waited for until the deadline at most: a hard stop that
        per-read timeouts are not (a reply dripping one byte a second resets each of them).
        A request still running then is abandoned: the client we made is closed, which ends
        its connection, and the guard lets no further attempt start; the thread never keeps
        the process alive."""
        box: dict[str, Any] = {}
        bell = Bell()  # not threading.Event: its timed wait never ends under a shifted clock

        def work() -> None:
            try:
                box["value"] = call()
            except BaseException as exc:  # handed to the caller below (or dropped if abandoned)
                box["error"] = exc
            finally:
                box["done"] = True
                bell.ring()

        worker = threading.Thread(target=work, name="memory-curator-judge", daemon=True)
        worker.start()
        try:
            while "done" not in box:
                left = deadline - self.clock.monotonic()
                if left <= 0:
                    raise DeadlineReached()
                bell.wait(left)
        finally:
            if self.http_client is None:  # ours (the SDK made it): close it, cutting a request in flight
                with contextlib.suppress(Exception):
                    client.close()
        if "error" in box:
            raise box["error"]
        return box["value"]


class DeadlineGuard:
    """SDK middleware, run once per HTTP attempt inside the SDK's retry loop: each attempt gets
    at most the time left before the deadline (connect, write and each read); none starts
    after it; and a failure whose retry (its backoff or `retry-after` included) could not
    finish in time is not retried. Its own exceptions are not retryable, so they end the loop."""

    def __init__(self, deadline: float, timeout: float, max_retries: int, clock: Clock) -> None:
        self.deadline, self.timeout, self.max_retries, self.clock = deadline, timeout, max_retries, clock

    def __call__(self, request: Any, call_next: Callable[[Any], Any]) -> Any:
        import anthropic

        left = self.deadline - self.clock.monotonic()
        if left < _MIN_ATTEMPT:
            raise DeadlineReached()
        attempt = min(self.timeout, left)
        try:
            response = call_next(request.copy(timeout=attempt))
        except anthropic.APITimeoutError:
            if self.deadline - self.clock.monotonic() < _MIN_ATTEMPT:  # cut by the deadline, not timeout_seconds
                raise DeadlineReached() from None
            self._room_to_retry(request, None, "timeout")
            raise
        except anthropic.APIConnectionError:
            self._room_to_retry(request, None, "connection failed")
            raise
        http = response.http_response
        if not http.is_success and _sdk_retries(http):
            self._room_to_retry(request, http.headers, _status_cause(http.status_code))
        return response

    def _room_to_retry(self, request: Any, headers: Any, cause: str) -> None:
        if request.retries_taken >= self.max_retries:  # the SDK will not retry anyway
            return
        wait = _retry_wait(headers, request.retries_taken, self.clock)
        if self.clock.monotonic() + wait + _MIN_ATTEMPT >= self.deadline:
            raise NoTimeToRetry(cause) from None


def _sdk_retries(response: Any) -> bool:
    """The SDK's retry policy for an error response (anthropic 2.14 `_should_retry`)."""
    should = response.headers.get("x-should-retry")
    if should in ("true", "false"):
        return bool(should == "true")
    code: int = response.status_code
    return code in (408, 409, 429) or code >= 500


def _retry_wait(headers: Any, retries_taken: int, clock: Clock) -> float:
    """The longest the SDK sleeps before its next attempt: the API's `retry-after(-ms)`, else its
    exponential backoff (0.5 s doubling, at most 8 s; jitter only shortens it)."""
    if headers is not None:
        wait: float | None = None
        for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
            try:
                wait = float(headers.get(name)) * scale
                break
            except (TypeError, ValueError):
                continue
        if wait is None:
            date = email.utils.parsedate_tz(headers.get("retry-after") or "")
            wait = email.utils.mktime_tz(date) - clock.timestamp() if date else None
        if wait is not None and wait > 0:
            return wait if math.isfinite(wait) else math.inf
    return min(0.5 * 2.0**retries_taken, 8.0)


def _status_cause(code: int) -> str:
    names = {401: "authentication failed", 429: "rate limited", 529: "overloaded"}
    name = names.get(code, "server error" if code >= 500 else "request rejected")
    return f"{name} (HTTP {code})"


def _stop_cause(reason: str | None, max_tokens: int) -> str:
    if reason == "refusal":
        return "the model refused"
    if reason == "max_tokens":
        return f"output cut off at max_tokens ({max_tokens})"
    return f"unexpected stop_reason {reason!r}"


def describe(exc: BaseException) -> str:
    """A short cause for a failed request, for the review reason and one stderr line."""
    if isinstance(exc, DeadlineReached):
        return DEADLINE
    if isinstance(exc, Unusable | NoTimeToRetry):
        return str(exc)
    if isinstance(exc, ValidationError):
        first: Mapping[str, Any] = exc.errors()[0] if exc.errors() else {}
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
        return _status_cause(exc.status_code)
    return f"{type(exc).__name__}: {flat_line(str(exc), 120)}"
