"""What a sweep returns: frozen data that `report` renders (and the JSON contract pins)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

VERDICT_KEYS = {"promote": "promoted", "patch": "patched", "drop": "dropped", "needs_review": "needs_review"}


@dataclass(frozen=True)
class Action:
    inbox_path: str
    verdict: str
    target_surface: str | None
    reason: str
    target_path: str | None = None
    moved_to: str | None = None
    criteria: Mapping[str, bool | None] = field(default_factory=dict)
    rule: str | None = None
    contradiction: bool = False
    diff: str | None = None
    reason_code: str | None = None  # needs_review: why, as a stable word (`core.reasons.CODES`)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "inbox_path": self.inbox_path,
            "verdict": self.verdict,
            "target_surface": self.target_surface,
        }
        if self.verdict == "drop":
            out["moved_to"] = self.moved_to
        else:
            out["target_path"] = self.target_path
        out["reason"] = self.reason
        if self.verdict == "needs_review":
            out["criteria"] = dict(self.criteria)
            out["reason_code"] = self.reason_code or "other"
        if self.rule:
            out["rule"] = self.rule
        if self.contradiction:
            out["contradiction"] = True
        if self.diff is not None:
            out["diff"] = self.diff
        return out


@dataclass(frozen=True)
class Skipped:
    inbox_path: str
    reason: str
    waiting: str | None = None  # "flagged", "held" or "too-large": it waits for a person (`run` sums these up)

    def to_json(self) -> dict[str, Any]:
        out = {"inbox_path": self.inbox_path, "reason": self.reason}
        return {**out, "waiting": self.waiting} if self.waiting else out


@dataclass(frozen=True)
class Failure:
    inbox_path: str
    error: str


@dataclass(frozen=True)
class AgentResult:
    agent_id: str
    actions: tuple[Action, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    errors: tuple[Failure, ...] = ()

    def counts(self) -> dict[str, int]:
        out = {"processed": len(self.actions)}
        for verdict, key in VERDICT_KEYS.items():
            out[key] = sum(1 for a in self.actions if a.verdict == verdict)
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "agent_id": self.agent_id,
            **self.counts(),
            "actions": [a.to_json() for a in self.actions],
            "skipped": [s.to_json() for s in self.skipped],
            "errors": [{"inbox_path": e.inbox_path, "error": e.error} for e in self.errors],
        }


@dataclass(frozen=True)
class SweepResult:
    run_id: str
    agents: tuple[AgentResult, ...]
    single_agent: bool = False
    dry_run: bool = False
    judge: Mapping[str, Any] | None = None
    notes: tuple[str, ...] = ()  # recovery repairs and other one-line remarks
    judge_ready: bool = True  # False: a judge was wanted but none is configured (the run's hint)
    ignored: tuple[tuple[str, str], ...] = ()  # inbox entries that are no candidates, new since last said: (path, why)
    settled: tuple[str, ...] = ()  # inbox paths the review note's ticks settled after the sweep: no longer waiting
    review_note: Mapping[str, Any] | None = None  # the note left for the next sweep (saved just now), and when
    restored: tuple[str, ...] = ()  # inbox paths the note's restore ticks put back after the sweep: held

    def totals(self) -> dict[str, int]:
        keys = ["processed", *VERDICT_KEYS.values()]
        return {k: sum(a.counts()[k] for a in self.agents) for k in keys}

    @property
    def errors(self) -> list[Failure]:
        return [e for a in self.agents for e in a.errors]

    def waiting(self) -> dict[str, int]:
        """Items that wait for a person after this run: flagged now, flagged before (unchanged
        since), held (put back by undo, or by a restore ticked in the note, never flagged) and too
        large to read (never rewritten); none the review note's ticks settled once the sweep was done."""
        settled = set(self.settled)
        skipped = [s.waiting for a in self.agents for s in a.skipped if s.inbox_path not in settled]
        flagged = sum(
            1 for a in self.agents for x in a.actions if x.verdict == "needs_review" and x.inbox_path not in settled
        )
        return {
            "flagged": flagged + skipped.count("flagged"),
            "held": skipped.count("held") + len(set(self.restored) - settled),
            "too-large": skipped.count("too-large"),
        }

    def to_json(self) -> dict[str, Any]:
        extra: dict[str, Any] = {"run_id": self.run_id, "dry_run": self.dry_run}
        if self.judge is not None:
            extra["judge"] = dict(self.judge)
        if self.notes:
            extra["notes"] = list(self.notes)
        if self.review_note is not None:
            extra["review_note"] = dict(self.review_note)
        if self.ignored:
            extra["ignored"] = [{"path": path, "why": why} for path, why in self.ignored]
        if self.single_agent:
            agent = self.agents[0] if self.agents else AgentResult("inbox")
            return {**agent.to_json(), **extra}
        return {"agents": [a.to_json() for a in self.agents], **self.totals(), **extra}
