"""What a surface is: a kind of note the rules declare, its path template and the fixed folder
it starts with, and which folders a template may not point into. Pure: no I/O.

Both the rules loader (which checks each template) and `ownership` (whose note is it) read
these; neither needs the other for them.
"""

from __future__ import annotations

import string
from dataclasses import dataclass

NEVER_OWNED = ("_meta", "_inbox", "digests")  # top folders never curated (plus any dot-folder)
HANDED_OVER = frozenset({"facts", "events", "persons", "projects", "research"})  # `curated` by default
# agents' bookkeeping: kept in the candidate's audit copy, never carried into a durable note
BOOKKEEPING = (
    "model", "model_id", "model_name", "task_id", "run_id", "session_id", "trace_id", "request_id",
    "conversation_id", "thread_id", "job_id", "tool_call_id", "prompt_id", "agent_version",
    "tokens", "token_count", "cost", "cost_usd", "latency_ms", "temperature",
)  # fmt: skip


@dataclass(frozen=True)
class Surface:
    name: str
    type: str
    path: str
    key: tuple[str, ...]
    required: tuple[str, ...]
    curated: bool = False  # its folder is handed over to the curator (docs/rules.md, "Whose note is it")
    not_carried: tuple[str, ...] = BOOKKEEPING  # keys left out of its durable notes

    def placeholders(self) -> list[tuple[str, str | None]]:
        return [(f, spec or None) for _, f, spec, _ in string.Formatter().parse(self.path) if f]


def surface_folder(path_template: str) -> str | None:
    """The fixed folder a surface's path template starts with (`facts/`), or None when its
    first folder is a placeholder or it has none (`{slug}.md`)."""
    head = path_template.split("{")[0]
    folder = head.rsplit("/", 1)[0] if "/" in head else ""
    return folder + "/" if folder else None


def template_problem(path_template: str) -> str | None:
    """Why a surface may not use this path template (None: it may): it would point into a
    folder the curator never owns."""
    parts = path_template.split("/")
    if any(p.startswith(".") for p in parts):
        return "the path may not point into a dot-folder (.obsidian/, .trash/, ...)"
    head = path_template.split("{")[0]
    first = head.split("/")[0].casefold()
    into = "/" in head and first in NEVER_OWNED
    # `_{slug}/x.md` could still become `_inbox/x.md`: a placeholder may complete the name
    partial = "/" not in head and "/" in path_template and bool(first) and any(n.startswith(first) for n in NEVER_OWNED)
    if into or partial:
        return "the path may not point into _meta/, _inbox/ or digests/ (never curated)"
    return None
