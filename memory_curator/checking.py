"""`check`: the verdict a sweep would give one candidate, with every evaluation. Nothing in
the vault is written; the vault's index (state directory) is refreshed like a sweep would."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memory_curator import candidate as cand
from memory_curator.clock import Clock, SystemClock
from memory_curator.decide import decide, explain
from memory_curator.errors import CuratorError
from memory_curator.index_querier import IndexQuerier
from memory_curator.notes import render
from memory_curator.querier import gather_facts
from memory_curator.rules import load_for_vault
from memory_curator.state import state_dir
from memory_curator.vault import INBOX, ROOT_AGENT


def payload_text(text: str, origin: str) -> str:
    """A JSON payload {"frontmatter": {...}, "body": "..."} becomes note text; a note stays."""
    if not text.lstrip().startswith("{"):
        return text
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise CuratorError(f"{origin}: not a note and not valid JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("frontmatter", {}), dict):
        raise CuratorError(f'{origin}: a JSON payload is {{"frontmatter": {{...}}, "body": "..."}}')
    return render(data.get("frontmatter") or {}, str(data.get("body") or ""))


def check_file(
    root: Path, path: Path, with_explanation: bool = False, clock: Clock = SystemClock()
) -> dict[str, Any]:
    try:
        rel = path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        rel = str(path)
    parts = rel.split("/")
    agent = ROOT_AGENT
    if len(parts) == 3 and parts[0] == INBOX:
        agent = parts[1]
    text = path.read_bytes().decode("utf-8", errors="replace")
    return check_text(root, text, rel, with_explanation, agent, clock)


def check_text(
    root: Path,
    text: str,
    origin: str,
    with_explanation: bool = False,
    agent: str = ROOT_AGENT,
    clock: Clock = SystemClock(),
) -> dict[str, Any]:
    rules = load_for_vault(root)
    candidate = cand.build(payload_text(text, origin), origin, agent, rules)
    facts = gather_facts(candidate, IndexQuerier(root, rules, state_dir(root), clock=clock), rules.settings)
    decision = decide(candidate, rules, facts)
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
        out["explanation"] = explain(candidate, rules, facts)
    return out
