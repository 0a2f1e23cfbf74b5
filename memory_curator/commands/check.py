"""`check`: the verdict a sweep would give one candidate, with every evaluation. Nothing in
the vault is written; the vault's index (state directory) is refreshed like a sweep would."""

from __future__ import annotations

import io
import json
import os
import stat
from pathlib import Path
from typing import Any, BinaryIO

from memory_curator.commands.context import Context
from memory_curator.core import candidate as cand
from memory_curator.core.decide import Decision, decide, explain
from memory_curator.core.errors import CuratorError
from memory_curator.core.facts import Facts, gather_facts
from memory_curator.core.names import INBOX, ROOT_AGENT
from memory_curator.core.notes import render
from memory_curator.core.rules import Rules
from memory_curator.core.text import one_line, too_large
from memory_curator.index.store import IndexUnavailable
from memory_curator.store.paths import oversize, read_capped


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


def _is_file(stream: BinaryIO) -> bool:
    try:
        return stat.S_ISREG(os.fstat(stream.fileno()).st_mode)
    except (OSError, ValueError, io.UnsupportedOperation):
        return False


def check_file(ctx: Context, path: Path, with_explanation: bool = False) -> dict[str, Any]:
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
) -> dict[str, Any]:
    """The verdict `text` would get now. `with_context` adds what it was compared with (the
    note with its key, its nearest notes) and what it lacks to be promoted (MCP's
    `check_candidate`)."""
    rules = ctx.rules
    note = payload_text(text, origin)
    explanation: list[str] = []
    candidate, facts = None, None
    try:  # whatever this one candidate raises is its verdict, as a sweep would flag it (design §6)
        candidate = cand.build(note, origin, agent, rules)
        facts = gather_facts(candidate, ctx.querier(ctx, rules), rules.settings)
        decision = decide(candidate, rules, facts)
        if with_explanation:
            explanation = explain(candidate, rules, facts)
    except IndexUnavailable:
        raise
    except Exception as exc:
        decision = Decision("needs_review", f"internal error while deciding: {one_line(exc)}")
        explanation = [decision.reason]
    out: dict[str, Any] = {
        "inbox_path": origin,
        "verdict": decision.verdict,
        "target_surface": decision.surface,
        "target_path": decision.target,
        "reason": decision.reason,
        "criteria": dict(decision.criteria),
        "rule": decision.rule,
        "contradiction": decision.contradiction,
    }
    if with_explanation:
        out["explanation"] = explanation
    if with_context:
        out["compared_with"] = _compared_with(facts)
        out["to_promote"] = _to_promote(candidate, decision, rules) if decision.verdict != "promote" else []
    return out


def _compared_with(facts: Facts | None) -> dict[str, Any]:
    if facts is None:
        return {"existing": None, "neighbours": []}
    neighbours = [{"path": n.path, "score": round(n.score, 3)} for n in facts.neighbours]
    return {"existing": facts.existing.path if facts.existing else None, "neighbours": neighbours}


def _to_promote(candidate: cand.Candidate | None, decision: Decision, rules: Rules) -> list[str]:
    """What the candidate lacks, in words an agent can act on: the fields its surface requires,
    then each promotion criterion not met with the rules file's own condition."""
    if candidate is None or candidate.note.problem:
        return [f"fix the note: {candidate.note.problem if candidate else decision.reason}"]
    if candidate.surface is None:
        return ["name its surface: a `type` of " + ", ".join(s.type for s in rules.surfaces)]
    hints = [f"add {name}" for name in candidate.missing]
    for criterion in rules.criteria:
        if decision.criteria.get(criterion.name) is True or criterion.name not in decision.criteria:
            continue
        how = f": {criterion.passes.text}" if criterion.passes is not None else ""
        hints.append(f"meet {criterion.name} ({criterion.label}){how}")
    return hints
