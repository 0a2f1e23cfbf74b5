"""`check`: the verdict a sweep would give one candidate, with every evaluation. Nothing in
the vault is written; the vault's index (state directory) is refreshed like a sweep would."""

from __future__ import annotations

import io
import json
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from memory_curator.commands.context import Context
from memory_curator.core import candidate as cand
from memory_curator.core import veil
from memory_curator.core.decide import Decision, decide, explain
from memory_curator.core.errors import CuratorError
from memory_curator.core.facts import Facts, Querier, gather_facts, private_among, with_neighbours
from memory_curator.core.json_types import JsonObject
from memory_curator.core.names import INBOX, ROOT_AGENT
from memory_curator.core.notes import render
from memory_curator.core.rules import Rules
from memory_curator.core.text import one_line, too_large
from memory_curator.index.store import IndexUnavailable
from memory_curator.store.paths import oversize, read_capped


@dataclass(frozen=True)
class Compared:
    """What a candidate was compared with (MCP's `check_candidate`): the note with its key and
    its nearest notes, each with its score."""

    existing: str | None
    neighbours: tuple[tuple[str, float], ...] = ()

    def to_json(self) -> JsonObject:
        return {"existing": self.existing, "neighbours": [{"path": p, "score": s} for p, s in self.neighbours]}


@dataclass(frozen=True)
class Verdict:
    """The verdict one candidate would get now (`check`, `submit --check`, MCP), with every
    evaluation when asked (`explanation`) and, for an agent, what it was compared with and
    what it lacks to be promoted."""

    inbox_path: str
    verdict: str
    target_surface: str | None
    target_path: str | None
    reason: str
    criteria: Mapping[str, bool | None]
    rule: str | None
    contradiction: bool
    explanation: tuple[str, ...] | None = None
    compared_with: Compared | None = None
    to_promote: tuple[str, ...] | None = None

    def to_json(self) -> JsonObject:
        out: JsonObject = {
            "inbox_path": self.inbox_path,
            "verdict": self.verdict,
            "target_surface": self.target_surface,
            "target_path": self.target_path,
            "reason": self.reason,
            "criteria": dict(self.criteria),
            "rule": self.rule,
            "contradiction": self.contradiction,
        }
        if self.explanation is not None:
            out["explanation"] = list(self.explanation)
        if self.compared_with is not None:
            out["compared_with"] = self.compared_with.to_json()
        if self.to_promote is not None:
            out["to_promote"] = list(self.to_promote)
        return out


def payload_text(text: str, origin: str) -> str:
    """A JSON payload {"frontmatter": {...}, "body": "..."} becomes note text; a note stays."""
    if not text.lstrip().startswith("{"):
        return text
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:  # RecursionError: nested thousands deep
        raise CuratorError(f"{origin}: not a note and not valid JSON: {type(exc).__name__}: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("frontmatter", {}), dict):
        raise CuratorError(f'{origin}: a JSON payload is {{"frontmatter": {{...}}, "body": "..."}}')
    try:
        return render(data.get("frontmatter") or {}, str(data.get("body") or ""))
    except Exception as exc:  # ruamel cannot write what JSON can hold (e.g. nesting past its stack)
        raise CuratorError(f"{origin}: the JSON payload cannot be written as a note: {type(exc).__name__}") from None


def read_limited(stream: BinaryIO, origin: str, limit: int) -> str:
    """A candidate handed to `check` or `submit` (a file or stdin), read no further than the
    rules' `max_candidate_bytes`: a larger one is refused in one line, before any work."""
    data = stream.read(limit + 1)
    if len(data) > limit:
        size = os.fstat(stream.fileno()).st_size if _is_file(stream) else limit + 1
        raise CuratorError(f"{origin}: {too_large(max(size, limit + 1), limit)}; nothing done")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise CuratorError(f"{origin}: not UTF-8 text") from None


def read_candidate(file: str, stdin: BinaryIO, limit: int) -> tuple[str, str]:
    """A candidate handed to `check` or `submit` as FILE, or `-` for `stdin`: its text and where
    it came from, read no further than `limit`."""
    if file == "-":
        return read_limited(stdin, "<stdin>", limit), "<stdin>"
    source = Path(file)
    if not source.is_file():
        raise CuratorError(f"{file}: no such file", file=file)
    with source.open("rb") as stream:
        return read_limited(stream, file, limit), file


def _is_file(stream: BinaryIO) -> bool:
    try:
        return stat.S_ISREG(os.fstat(stream.fileno()).st_mode)
    except (OSError, ValueError, io.UnsupportedOperation):
        return False


def check_file(ctx: Context, path: Path, with_explanation: bool = False) -> Verdict:
    try:
        rel = path.resolve().relative_to(ctx.root.resolve()).as_posix()
    except ValueError:
        rel = str(path)
    parts = rel.split("/")
    agent = ROOT_AGENT
    if len(parts) == 3 and parts[0] == INBOX:
        agent = parts[1]
    limit = ctx.rules.settings.max_candidate_bytes
    try:
        raw = read_capped(path, limit)
    except OSError as exc:
        raise CuratorError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    if raw is None:
        raise CuratorError(f"{path}: {oversize(path, limit)}; nothing done")
    text = raw.decode("utf-8", errors="replace")
    return check_text(ctx, text, rel, with_explanation, agent)


def check_text(
    ctx: Context,
    text: str,
    origin: str,
    with_explanation: bool = False,
    agent: str = ROOT_AGENT,
    with_context: bool = False,
    for_agent: bool = False,
) -> Verdict:
    """The verdict `text` would get now. `with_context` adds what it was compared with (the
    note with its key, its nearest notes) and what it lacks to be promoted (MCP's
    `check_candidate`). `for_agent` (MCP, `submit`) answers as if the vault held no private
    note (`core.veil`): no private note named, quoted or scored, whatever the value."""
    rules = ctx.rules
    note = payload_text(text, origin)
    explanation: list[str] = []
    candidate, facts = None, None
    try:  # whatever this one candidate raises is its verdict, as a sweep would flag it (design §6)
        candidate = cand.build(note, origin, agent, rules)
        querier = ctx.querier(ctx, rules)
        facts = gather_facts(candidate, querier, rules.settings)
        decision = decide(candidate, rules, facts)
        if for_agent:
            facts, decision = _for_agent(candidate, rules, facts, querier)
        if with_explanation:
            explanation = explain(candidate, rules, facts)
    except IndexUnavailable:
        raise
    except Exception as exc:
        decision = Decision("needs_review", f"internal error while deciding: {one_line(exc)}", code="internal-error")
        explanation = [decision.reason]
    return Verdict(
        origin,
        decision.verdict,
        decision.surface,
        decision.target,
        decision.reason,
        dict(decision.criteria),
        decision.rule,
        decision.contradiction,
        tuple(explanation) if with_explanation else None,
        _compared_with(facts) if with_context else None,
        (_to_promote(candidate, decision, rules) if decision.verdict != "promote" else ()) if with_context else None,
    )


def _for_agent(candidate: cand.Candidate, rules: Rules, facts: Facts, querier: Querier) -> tuple[Facts, Decision]:
    """The facts and verdict an agent may be told: every private note the facts name left out,
    the neighbours asked again when the note with the key or the duplicate was one, and
    `veil.PRIVATE_NOTE` alone when the note with the key is private."""
    facts = private_among(facts, querier, rules.settings, list(veil.named(facts)))
    public = veil.veil(facts)
    if veil.lost_a_note(facts, public):
        asked = with_neighbours(public, candidate, querier, rules.settings)
        public = veil.veil(private_among(asked, querier, rules.settings, list(veil.named(asked))))
    decision = decide(candidate, rules, public)
    if veil.key_note_private(facts):
        decision = Decision(
            "needs_review", veil.PRIVATE_NOTE, decision.surface, candidate.target, criteria={}, code="private"
        )
    return public, decision


def _compared_with(facts: Facts | None) -> Compared:
    if facts is None:
        return Compared(None)
    neighbours = tuple((n.path, round(n.score, 3)) for n in facts.neighbours)
    return Compared(facts.existing.path if facts.existing else None, neighbours)


def _to_promote(candidate: cand.Candidate | None, decision: Decision, rules: Rules) -> tuple[str, ...]:
    """What the candidate lacks, in words an agent can act on: the fields its surface requires,
    then each promotion criterion not met with the rules file's own condition."""
    if candidate is None or candidate.note.problem:
        return (f"fix the note: {candidate.note.problem if candidate else decision.reason}",)
    if candidate.surface is None:
        return ("name its surface: a `type` of " + ", ".join(s.type for s in rules.surfaces),)
    hints = [f"add {name}" for name in candidate.missing]
    for criterion in rules.criteria:
        if decision.criteria.get(criterion.name) is True or criterion.name not in decision.criteria:
            continue
        how = f": {criterion.passes.text}" if criterion.passes is not None else ""
        hints.append(f"meet {criterion.name} ({criterion.label}){how}")
    return tuple(hints)
