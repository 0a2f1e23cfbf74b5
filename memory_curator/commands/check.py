"""`check`: the verdict a sweep would give one candidate, with every evaluation. Nothing in
the vault is written; the vault's index (state directory) is refreshed like a sweep would."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memory_curator.commands.context import Context
from memory_curator.core import candidate as cand
from memory_curator.core.decide import Decision, decide, explain
from memory_curator.core.errors import CuratorError
from memory_curator.core.facts import gather_facts
from memory_curator.core.names import INBOX, ROOT_AGENT
from memory_curator.core.notes import render
from memory_curator.index.store import IndexUnavailable


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


def check_file(ctx: Context, path: Path, with_explanation: bool = False) -> dict[str, Any]:
    try:
        rel = path.resolve().relative_to(ctx.root.resolve()).as_posix()
    except ValueError:
        rel = str(path)
    parts = rel.split("/")
    agent = ROOT_AGENT
    if len(parts) == 3 and parts[0] == INBOX:
        agent = parts[1]
    try:
        text = path.read_bytes().decode("utf-8", errors="replace")
    except OSError as exc:
        raise CuratorError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    return check_text(ctx, text, rel, with_explanation, agent)


def check_text(
    ctx: Context, text: str, origin: str, with_explanation: bool = False, agent: str = ROOT_AGENT
) -> dict[str, Any]:
    from memory_curator.commands.sweep import one_line

    rules = ctx.rules
    note = payload_text(text, origin)
    explanation: list[str] = []
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
    return out
