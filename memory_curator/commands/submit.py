"""`submit`: the agents' way in.

A candidate (a note, or a JSON payload `{"frontmatter": {...}, "body": "..."}`) is validated
first — it must parse, name a surface and carry that surface's required fields — and then
written atomically into `_inbox/<agent>/` under a name of its own (a name already taken gets
a numeric suffix, never an overwrite), so a sweep never sees half a file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memory_curator.commands import check as checking
from memory_curator.commands.context import Context
from memory_curator.core import candidate as cand
from memory_curator.core.errors import CuratorError
from memory_curator.core.json_types import JsonObject
from memory_curator.core.names import INBOX, ROOT_AGENT, nfc, slugify
from memory_curator.core.rules import Rules
from memory_curator.core.text import one_line
from memory_curator.store.paths import relpath, safe_join

_AGENT = re.compile(r"^[\w][\w.-]*$")


@dataclass(frozen=True)
class Submitted:
    inbox_path: str
    agent_id: str
    check: checking.Verdict | None = None

    def to_json(self) -> JsonObject:
        out: JsonObject = {"inbox_path": self.inbox_path, "agent_id": self.agent_id}
        if self.check is not None:
            out["check"] = self.check.to_json()
        return out


def submit(ctx: Context, text: str, origin: str, agent: str | None = None, with_check: bool = False) -> Submitted:
    agent_id = agent_name(agent or ROOT_AGENT)  # the CLI passes --agent, else $MEMORY_CURATOR_AGENT
    note = checking.payload_text(text, origin)
    root, rules = ctx.root, ctx.rules
    try:  # a candidate that makes reading it raise is refused like a malformed one, in one line
        candidate = cand.build(note, origin, agent_id, rules)
        problem = validate(candidate, rules)
    except CuratorError:
        raise
    except Exception as exc:
        problem = f"cannot be read as a candidate ({one_line(exc)})"
    if problem:
        raise CuratorError(f"{origin}: {problem}; nothing written")
    folder = INBOX if agent_id == ROOT_AGENT else f"{INBOX}/{agent_id}"
    try:
        placed = ctx.files.create_unique(safe_join(root, f"{folder}/{file_name(candidate)}"), note.encode("utf-8"))
    except OSError as exc:  # the temp file is gone again: nothing half-written is left
        raise CuratorError(f"{folder}/: cannot write the candidate: {exc.strerror or exc}; nothing written") from None
    rel = relpath(root, placed)
    verdict = checking.check_text(ctx, note, rel, agent=agent_id, for_agent=True) if with_check else None
    return Submitted(rel, agent_id, verdict)


def validate(candidate: cand.Candidate, rules: Rules) -> str | None:
    """What keeps this candidate from being curated as it is, in one line; None when fine."""
    if not candidate.note.text.strip():
        return "empty candidate"
    if candidate.note.problem:
        return candidate.note.problem
    problem = cand.placement_problem(candidate, rules)  # the wording `run` and `check` give it too
    return cand.with_hints(problem, candidate) if problem else None


def agent_name(value: str) -> str:
    name = nfc(value.strip())
    if not _AGENT.match(name) or name in (".", ".."):
        raise CuratorError(f"agent id {value!r}: use letters, digits, '-', '_' or '.' (not starting with '.')")
    return name


def file_name(candidate: cand.Candidate) -> str:
    """`<key values>.md`, e.g. `copilot-data-handling.md` for a fact, from the candidate's
    identity key (the same fields that name its durable note)."""
    surface = candidate.surface
    fm = candidate.frontmatter
    parts = []
    for key in surface.key if surface else ():
        value = fm.get(key)
        if key == "slug" and not value:
            value = fm.get("title") or fm.get("name")
        parts.append(str(value or ""))
    return f"{slugify(' '.join(parts)) or 'candidate'}.md"
