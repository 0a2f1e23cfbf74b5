"""A sweep: lock, recover, plan one action per candidate, apply it, summarise.

The imperative shell around the pure core: `candidate` (what it is), `querier` (what the
vault knows), `decide` (the verdict), `compose`/`merge` (the new text), `writer` (bytes).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from memory_curator import candidate as cand
from memory_curator import compose, writer
from memory_curator.decide import Decision, JudgeVerdict, decide
from memory_curator.notes import content_hash
from memory_curator.querier import FileQuerier, Querier, gather_facts
from memory_curator.result import Action, AgentResult, Failure, Skipped, SweepResult
from memory_curator.rules import Rules, load_for_vault
from memory_curator.state import state_dir, sweep_lock, utcnow
from memory_curator.vault import list_candidates, relpath, safe_join, scope_agents

Judge = Callable[[list[cand.Candidate], Rules, Querier], tuple[dict[str, JudgeVerdict], dict[str, int] | None]]


@dataclass(frozen=True)
class Options:
    dry_run: bool = False
    use_judge: bool = True
    wait: bool = False
    state_dir: str | None = None
    now: dt.datetime | None = None


@dataclass
class Sweep:
    """Everything one sweep shares: the vault, its rules, the querier and the journal."""

    root: Path
    state: Path
    rules: Rules
    run_id: str
    now: dt.datetime
    dry_run: bool
    journal: writer.Journal
    querier: Querier
    reviewed: dict[str, str] = field(default_factory=dict)
    seq: int = 0


def new_run_id(now: dt.datetime) -> str:
    return now.strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(2)


def run(root: Path, scope: Path | None, options: Options = Options(), judge: Judge | None = None) -> SweepResult:
    rules = load_for_vault(root)
    state = state_dir(root, options.state_dir)
    now = options.now or utcnow()
    sweep = Sweep(
        root,
        state,
        rules,
        new_run_id(now),
        now,
        options.dry_run,
        writer.Journal(state / "journal.jsonl"),
        make_querier(root, rules, state),
        _load_reviewed(state),
    )
    agents = scope_agents(root, scope)
    if options.dry_run:
        return _sweep(sweep, agents, scope, judge if options.use_judge else None)
    with sweep_lock(state, wait=options.wait):
        started = time.monotonic()
        notes = writer.recover(root, sweep.journal)
        result = _sweep(sweep, agents, scope, judge if options.use_judge else None)
        _save_reviewed(root, state, sweep.reviewed)
        _journal_run(sweep, result, time.monotonic() - started)
    return SweepResult(result.run_id, result.agents, result.single_agent, False, result.judge, tuple(notes))


def make_querier(root: Path, rules: Rules, state: Path) -> Querier:
    """The querier a sweep asks (the FTS5 index replaces the file querier)."""
    return FileQuerier(root, rules)


def _journal_run(sweep: Sweep, result: SweepResult, seconds: float) -> None:
    """One summary record per sweep that did something: `status` and `log` read these."""
    totals = result.totals()
    if not totals["processed"] and not result.errors:
        return
    sweep.journal.append(
        {
            "event": "run",
            "run": sweep.run_id,
            "started": sweep.now,
            "seconds": round(seconds, 3),
            **totals,
            "errors": len(result.errors),
            "judge": dict(result.judge) if result.judge else None,
        }
    )


def _sweep(sweep: Sweep, agents: list[tuple[str, Path]], scope: Path | None, judge: Judge | None) -> SweepResult:
    collected = [(agent, *_collect(sweep, agent, folder)) for agent, folder in agents]
    pending = [c for _, found, _ in collected for c in found]
    verdicts, judge_stats = judge(pending, sweep.rules, sweep.querier) if judge and pending else ({}, None)
    results = []
    for agent, found, skipped in collected:
        actions, errors = [], []
        for candidate in found:
            outcome = _settle(sweep, candidate, verdicts.get(candidate.inbox_path))
            (actions if isinstance(outcome, Action) else errors).append(outcome)
        results.append(AgentResult(agent, tuple(actions), tuple(skipped), tuple(errors)))
    single = scope is not None and len(agents) == 1 and scope.resolve() != (sweep.root / "_inbox").resolve()
    return SweepResult(sweep.run_id, tuple(results), single, sweep.dry_run, judge_stats)


def _collect(sweep: Sweep, agent: str, folder: Path) -> tuple[list[cand.Candidate], list[Skipped]]:
    """Read the settled candidates of one agent folder; report the rest as skipped."""
    found, skipped = [], []
    settings = sweep.rules.settings
    for item in list_candidates(folder, agent, sweep.root):
        try:
            stat = item.path.stat()
            raw = item.path.read_bytes()
        except OSError as exc:
            skipped.append(Skipped(item.rel, f"cannot read: {exc.strerror}"))
            continue
        if sweep.reviewed.get(item.rel) == content_hash(raw):
            skipped.append(Skipped(item.rel, "needs review (unchanged since it was flagged)"))
            continue
        age = time.time() - stat.st_mtime
        if age < settings.settle_seconds:
            skipped.append(Skipped(item.rel, f"still being written (modified {age:.1f}s ago)"))
            continue
        candidate = cand.build(raw, item.rel, agent, sweep.rules)
        waiting = _still_arriving(candidate, raw, age, settings.settle_ceiling_seconds)
        if waiting:
            skipped.append(Skipped(item.rel, waiting))
            continue
        found.append(candidate)
    return found, skipped


def _still_arriving(candidate: cand.Candidate, raw: bytes, age: float, ceiling: float) -> str | None:
    """An empty file or an unclosed frontmatter waits, up to the ceiling (then needs_review)."""
    if (not raw.strip() or candidate.note.unclosed) and age < ceiling:
        return "empty file, waiting for its content" if not raw.strip() else "frontmatter not closed yet"
    return None


def _settle(sweep: Sweep, candidate: cand.Candidate, verdict: JudgeVerdict | None) -> Action | Failure:
    if not candidate.note.text.strip() and not candidate.note.problem:
        decision = Decision("needs_review", "empty file")
    else:
        decision = decide(candidate, sweep.rules, gather_facts(candidate, sweep.querier), verdict)
    if decision.verdict == "patch":
        decision = Decision(
            "needs_review",
            f"a note with this key exists: {decision.target}",
            decision.surface,
            decision.target,
            criteria=decision.criteria,
        )
    try:
        return APPLY[decision.verdict](sweep, candidate, decision)
    except (OSError, writer.Conflict) as exc:
        return Failure(candidate.inbox_path, _describe(exc))


def _describe(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror} ({type(exc).__name__}); left in the inbox"
    return f"{exc}; left in the inbox"


def _begin(sweep: Sweep, candidate: cand.Candidate, decision: Decision, dest: str | None, after: str | None) -> int:
    sweep.seq += 1
    sweep.journal.append(
        {
            "event": "begin",
            "run": sweep.run_id,
            "seq": sweep.seq,
            "inbox": candidate.inbox_path,
            "inbox_hash": candidate.digest,
            "verdict": decision.verdict,
            "reason": decision.reason,
            "rule": decision.rule,
            "dest": dest,
            "after_hash": after,
        }
    )
    return sweep.seq


def _end(sweep: Sweep, seq: int, ok: bool = True, error: str | None = None) -> None:
    record = {"event": "end", "run": sweep.run_id, "seq": seq, "ok": ok}
    if error:
        record["error"] = error
    sweep.journal.append(record)


def _journalled(
    sweep: Sweep,
    candidate: cand.Candidate,
    decision: Decision,
    dest: str | None,
    after: bytes | None,
    effect: Callable[[], None],
) -> None:
    """Run `effect` between a begin and an end record; a failure is journalled and re-raised."""
    seq = _begin(sweep, candidate, decision, dest, content_hash(after) if after is not None else None)
    try:
        effect()
    except BaseException as exc:
        _end(sweep, seq, ok=False, error=str(exc))
        raise
    _end(sweep, seq)


def _promote(sweep: Sweep, candidate: cand.Candidate, decision: Decision) -> Action:
    assert decision.target is not None
    text = compose.promoted_text(candidate, sweep.now)
    if not sweep.dry_run:
        data = text.encode("utf-8")
        dest = safe_join(sweep.root, decision.target)
        inbox = safe_join(sweep.root, candidate.inbox_path)

        def effect() -> None:
            writer.create(dest, data)
            writer.remove(inbox, candidate.digest)

        _journalled(sweep, candidate, decision, decision.target, data, effect)
    sweep.querier.stage(decision.target, text)
    return Action(
        candidate.inbox_path,
        "promote",
        decision.surface,
        decision.reason,
        target_path=decision.target,
        criteria=decision.criteria,
    )


def _drop(sweep: Sweep, candidate: cand.Candidate, decision: Decision) -> Action:
    name = compose.dropped_name(Path(candidate.inbox_path).stem, sweep.now)
    data = compose.dropped_text(candidate.note.text.encode("utf-8"), decision.reason, sweep.now)
    wanted = safe_join(sweep.root, f"_inbox/.dropped/{candidate.agent}/{name}")
    dest = writer.free_name(wanted)
    moved = relpath(sweep.root, dest)
    if not sweep.dry_run:
        inbox = safe_join(sweep.root, candidate.inbox_path)

        def effect() -> None:
            writer.create(dest, data)
            writer.remove(inbox, candidate.digest)

        _journalled(sweep, candidate, decision, moved, data, effect)
    return Action(candidate.inbox_path, "drop", decision.surface, decision.reason, moved_to=moved, rule=decision.rule)


def _review(sweep: Sweep, candidate: cand.Candidate, decision: Decision) -> Action:
    text = compose.review_text(candidate.note.text, decision.reason, sweep.now)
    if not sweep.dry_run:
        data = text.encode("utf-8")
        path = safe_join(sweep.root, candidate.inbox_path)
        _journalled(
            sweep,
            candidate,
            decision,
            candidate.inbox_path,
            data,
            lambda: writer.replace(path, data, candidate.digest),
        )
        sweep.reviewed[candidate.inbox_path] = content_hash(data)
    return Action(
        candidate.inbox_path,
        "needs_review",
        decision.surface,
        decision.reason,
        target_path=decision.target,
        criteria=decision.criteria,
        contradiction=decision.contradiction,
    )


APPLY: dict[str, Callable[[Sweep, cand.Candidate, Decision], Action]] = {
    "promote": _promote,
    "drop": _drop,
    "needs_review": _review,
}


def _load_reviewed(state: Path) -> dict[str, str]:
    try:
        data = json.loads((state / "reviewed.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def _save_reviewed(root: Path, state: Path, reviewed: dict[str, str]) -> None:
    """Forget items that left the inbox; write the rest atomically (state, not vault)."""
    kept = {k: v for k, v in reviewed.items() if (root / k).is_file()}
    temp = state / "reviewed.json.tmp"
    temp.write_text(json.dumps(kept, sort_keys=True), encoding="utf-8")
    os.replace(temp, state / "reviewed.json")
