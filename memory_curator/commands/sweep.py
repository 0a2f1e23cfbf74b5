"""A sweep: lock, recover, plan one action per candidate, apply it, summarise.

The imperative shell around the pure core: `candidate` (what it is), `querier` (what the
vault knows), `decide` (the verdict), `commands.planning` (the plan: `compose`/`merge` give
the new text), the executor (bytes).
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path

from memory_curator.commands import pending as later
from memory_curator.commands import review_memory, review_note
from memory_curator.commands.context import Context, Judge
from memory_curator.commands.planning import Planning, action, landing, new_run_id, patch_diff, plan_for
from memory_curator.core import candidate as cand
from memory_curator.core.decide import Decision, JudgeVerdict, decide
from memory_curator.core.errors import CuratorError, OtherHost, UnsafePath
from memory_curator.core.facts import Facts, Settling, Staging, gather_facts, staging, with_neighbours
from memory_curator.core.hosts import host_refusal
from memory_curator.core.ownership import judge_may_change
from memory_curator.core.plan import Numbering, Plan
from memory_curator.core.result import Action, AgentResult, Failure, Skipped, SweepResult
from memory_curator.core.rules import JudgeSettings, Rules
from memory_curator.core.text import describe, one_line
from memory_curator.index.store import IndexUnavailable, Refresh
from memory_curator.judge.settings import resolve_settings
from memory_curator.store import records, recovery, stores, vault_identity, writer
from memory_curator.store.executor import Executor
from memory_curator.store.journal import Journal
from memory_curator.store.paths import (
    relpath,
    scope_agents,
)
from memory_curator.store.state import sweep_lock

Progress = Callable[[int], contextlib.AbstractContextManager[Callable[[], None]]]  # total -> a tick per candidate
PROGRESS_MIN = 36  # "more than a few dozen" candidates
# Notes the overlay holds before the index takes them in: each intake is an FTS5 segment, and at
# 100k notes the 16 intakes of a sweep of 1,000 made every later BM25 query 32% slower.
SETTLE_NOTES = 256
BATCH_BYTES = 4 << 20  # a group commit comes sooner when its candidates weigh this much: a batch holds ~7x (issue 36)


@dataclass(frozen=True)
class Options:
    dry_run: bool = False
    use_judge: bool = True
    wait: bool = False
    only: frozenset[str] | None = None  # watch mode: sweep just these inbox paths
    overdue: frozenset[str] = frozenset()  # watch mode: still changing at the settle ceiling
    observed: frozenset[str] = frozenset()  # watch mode: seen unchanged for the settle window
    stop: Callable[[], bool] | None = None  # watch mode: a stop was asked; finish the current candidate
    judge_settings: tuple[tuple[str, str], ...] = ()  # `--judge-set NAME=VALUE` pairs (override env and rules)
    progress: Progress | None = None  # a bar on a terminal (`report.progress`), for long sweeps only
    settle: float | None = None  # `run --settle SECONDS`: the rules' settle window for this run; 0: files are complete


@dataclass(frozen=True)
class Sweep:
    """One sweep, its own (no other command builds one): its context and options, how its plans
    are built (`planning`) and numbered, the executor they go through, the querier, and what the
    sweep keeps track of as it goes (the review ledger, sightings, files whose reading failed)."""

    ctx: Context
    options: Options
    judge_settings: JudgeSettings
    planning: Planning
    executor: Executor
    querier: Staging
    reviewed: dict[str, str] = field(default_factory=dict)
    sightings: dict[str, stores.Sighting] = field(default_factory=dict)
    broken: dict[str, str] = field(default_factory=dict)  # inbox path -> why reading it failed (flagged as is)
    numbers: Numbering = field(default_factory=Numbering)
    queued: list[_Queued] = field(default_factory=list)  # plans waiting for the next group commit (`_Slot`)

    @property
    def rules(self) -> Rules:
        return self.planning.rules

    @property
    def run_id(self) -> str:
        return self.planning.run_id

    @property
    def now(self) -> dt.datetime:
        return self.planning.now

    @property
    def root(self) -> Path:
        return self.ctx.root

    @property
    def journal(self) -> Journal:
        return self.executor.journal

    @property
    def dry_run(self) -> bool:
        return self.options.dry_run


def run(ctx: Context, scope: Path | None, options: Options = Options()) -> SweepResult:
    rules = ctx.rules
    refusal = None if options.dry_run else host_refusal(rules.settings.curator_host, ctx.host)
    if refusal:
        raise OtherHost(refusal)
    judge, judge_settings = _judge_for(ctx, rules, options)
    journal = Journal(ctx.state / "journal.jsonl", ctx.clock, ctx.files)
    sweep = _begin(ctx, rules, options, judge_settings, journal)
    agents = scope_agents(ctx.root, scope)
    if options.dry_run:
        result = _sweep(sweep, agents, scope, judge)
        return replace(result, notes=tuple(sweep.querier.notices()), ignored=_ignored(ctx, agents, save=False))
    with sweep_lock(ctx.state, ctx.clock, ctx.machine.pid, ctx.host, wait=options.wait):
        started = ctx.clock.monotonic()
        recovered = recovery.recover(ctx.root, ctx.state, journal, ctx.files)
        sweep.reviewed.update(recovered.reviewed)
        notes = recovered.notes + review_note.stray_temps(ctx)
        notes += vault_identity.settle(ctx.root, ctx.state, ctx.machine.state_home, ctx.files)  # the vault's id
        result = _sweep(sweep, agents, scope, judge)
        notes += sweep.querier.notices()  # semantic pairing off this sweep, and why: said once
        sweep.reviewed.update(sweep.executor.held)
        reuse = _reuse(sweep)
        try:  # the work is done; a full disk here costs a re-review or a log line, never content
            stores.save_ledger(ctx.root, ctx.state, sweep.reviewed, ctx.files)
            stores.save_sightings(ctx.root, ctx.state, sweep.sightings, ctx.files)
            _journal_run(sweep, result, ctx.clock.monotonic() - started)
        except OSError as exc:
            notes.append(f"could not save the sweep's state: {exc.strerror or exc}")
        ignored = _ignored(ctx, agents, save=True)
    said, settled, told, restored = review_note.after_sweep(ctx, options.wait, reuse, options.settle)  # review.md
    ready = judge is not None or not options.use_judge
    return SweepResult(
        result.run_id,
        result.agents,
        result.single_agent,
        False,
        result.judge,
        (*notes, *said),
        ready,
        ignored,
        settled,
        told,
        restored,
    )


def _begin(ctx: Context, rules: Rules, options: Options, judge_settings: JudgeSettings, journal: Journal) -> Sweep:
    """The sweep's own state; in a dry run its plans read the notes it would have written from
    the querier's overlay."""
    now = ctx.clock.now()
    run_id = new_run_id(now)
    executor = Executor(ctx.root, ctx.state, journal, ctx.files)
    querier = staging(ctx.querier(ctx, rules))
    planning = Planning(ctx.root, rules, now, run_id, ctx.files, overlay=querier if options.dry_run else None)
    reviewed, sightings = stores.load_ledger(ctx.state), stores.load_sightings(ctx.state)
    return Sweep(ctx, options, judge_settings, planning, executor, querier, reviewed, sightings)


def _last_walk(querier: Staging) -> Refresh | None:
    """The last refresh of the index under the sweep's overlay (`Overlay.base`; None: the
    context's querier is another, a test's)."""
    refreshed = getattr(getattr(querier, "base", None), "refreshed", None)
    return refreshed if isinstance(refreshed, Refresh) else None


def _reuse(sweep: Sweep) -> review_memory.Reuse:
    """What the review note written after this sweep takes from it (docs/review.md): its querier,
    which holds every note the sweep wrote over the index it refreshed (no second index, no second
    refresh), and the notes as that refresh's walk found them with the sweep's own (`Overlay.written`)
    stat'ed again. Without a walk this run (a kept querier not asked: its last walk was let go
    when it was handed out), the note walks."""
    walked = _last_walk(sweep.querier)
    staged = getattr(sweep.querier, "written", None)
    seen = walked.take_walk() if walked is not None else {}
    if not seen or not isinstance(staged, dict):
        return review_memory.Reuse(sweep.querier, run=sweep.run_id)
    for rel in staged:
        try:
            stat = (sweep.root / rel).stat()
        except OSError:
            seen.pop(rel, None)
            continue
        seen[rel] = (stat.st_size, stat.st_mtime_ns)
    return review_memory.Reuse(sweep.querier, seen, sweep.run_id)


def _judge_for(ctx: Context, rules: Rules, options: Options) -> tuple[Judge | None, JudgeSettings]:
    """The judge this sweep asks (None: inert) and its settings (flag > env > rules > default)."""
    settings = resolve_settings(rules.settings.judge, options.judge_settings, ctx.env)
    if not options.use_judge or not settings.enabled:
        return None, settings
    return ctx.judge(ctx, settings), settings


def _journal_run(sweep: Sweep, result: SweepResult, seconds: float) -> None:
    """One summary record per sweep that did something: `status` and `log` read these."""
    totals = result.totals()
    if not totals["processed"] and not result.errors:
        return
    sweep.journal.append(records.run(sweep.run_id, sweep.now, seconds, totals, len(result.errors), result.judge))


def _sweep(sweep: Sweep, agents: list[tuple[str, Path]], scope: Path | None, judge: Judge | None) -> SweepResult:
    collected = [(agent, *later.collect(sweep, agent, folder)) for agent, folder in agents]
    pending = [c for _, found, _ in collected for c in found]
    verdicts, judge_stats = _ask_judge(sweep, pending, judge)
    results = []
    with _progress(sweep, len(pending)) as tick:
        outcomes: list[tuple[str, list[Action | Failure | _Slot], list[Skipped]]] = []
        for agent, found, skipped in collected:
            settled: list[Action | Failure | _Slot] = []
            for one in found:
                if sweep.options.stop and sweep.options.stop():
                    break
                candidate = later.turn(sweep, one)
                if isinstance(candidate, Skipped):
                    skipped.append(candidate)
                else:
                    settled.append(_settle(sweep, candidate, verdicts.get(candidate.inbox_path)))
                heavy = _queued_bytes(sweep) >= BATCH_BYTES
                if heavy or len(sweep.queued) >= sweep.rules.settings.commit_batch:
                    _commit(sweep, settle=heavy)
                tick()
            outcomes.append((agent, settled, skipped))
        _commit(sweep, settle=True)
    for agent, settled, skipped in outcomes:
        done = [o.outcome if isinstance(o, _Slot) else o for o in settled]
        actions = tuple(o for o in done if isinstance(o, Action))
        errors = tuple(o for o in done if isinstance(o, Failure))
        results.append(AgentResult(agent, actions, tuple(skipped), errors))
    single = scope is not None and len(agents) == 1 and scope.resolve() != (sweep.root / "_inbox").resolve()
    return SweepResult(sweep.run_id, tuple(results), single, sweep.dry_run, judge_stats)


def _heavy(weight: tuple[int, int]) -> bool:
    notes, size = weight
    return notes >= SETTLE_NOTES or size >= BATCH_BYTES


def _queued_bytes(sweep: Sweep) -> int:
    """The bytes of the candidates waiting for the group commit: their plans and what the overlay
    staged for them weigh a few times as much, until the commit lets them go (docs/architecture.md)."""
    return sum(len(q.candidate.raw) for q in sweep.queued)


def _progress(sweep: Sweep, total: int) -> contextlib.AbstractContextManager[Callable[[], None]]:
    if sweep.options.progress is None or total < PROGRESS_MIN:
        return contextlib.nullcontext(lambda: None)
    return sweep.options.progress(total)


def _ask_judge(
    sweep: Sweep, pending: list[later.Pending | cand.Candidate], judge: Judge | None
) -> tuple[dict[str, JudgeVerdict], Mapping[str, object] | None]:
    """Only what the rules left undecided goes to the judge (those alone held together, read
    again one by one); its answers pass the circuit breaker, and each judged candidate's model,
    prompt version and raw answer is journalled."""
    loaded = (later.turn(sweep, p) for p in pending) if judge is not None else iter(())
    undecided = [c for c in loaded if isinstance(c, cand.Candidate) and _undecided(sweep, c)]
    if judge is None or not undecided:
        return {}, None
    from memory_curator.judge.prompt import guard

    try:
        verdicts, stats = guard(*judge(undecided, sweep.rules, sweep.querier), sweep.judge_settings, reach(sweep))
    except IndexUnavailable:
        raise
    except Exception as exc:  # fail-open: a bug in the judge leaves its candidates to the rules alone
        problem = f"judge failed ({len(undecided)} left undecided): internal error: {one_line(exc)}"
        return {}, {"failures": len(undecided), "problems": [problem]}
    for candidate in undecided if not sweep.dry_run else []:
        verdict = verdicts.get(candidate.inbox_path) or JudgeVerdict(failure="no verdict")
        record = records.judged(sweep.run_id, candidate.inbox_path, candidate.digest, verdict.audit, verdict.failure)
        with contextlib.suppress(OSError):  # an audit record, not needed for recovery
            sweep.journal.append(record)
    return verdicts, stats


def reach(sweep: Sweep) -> Callable[[str], bool]:
    """Whether the judge may change (patch, or cite a drop rule against) the note at a path, as the
    vault holds it now (`ownership.judge_may_change`); an unreadable note is out of reach."""

    def may_change(rel: str) -> bool:
        try:
            note = sweep.querier.note_at(rel)
        except IndexUnavailable:
            raise
        except (OSError, CuratorError):
            return False
        return note is not None and note.path == rel and judge_may_change(rel, note.frontmatter, sweep.rules)

    return may_change


def _undecided(sweep: Sweep, candidate: cand.Candidate) -> bool:
    """Needs review by the rules alone, with a criterion undecided (or a near-duplicate), and no
    note with its key, or only a person's note with its key (`persons-note`: the judge may find it
    a duplicate of that note), or no surface (the judge may cite `chatter`, or name a contradiction);
    patches and contradictions stay with the rules."""
    if candidate.inbox_path in sweep.options.overdue or candidate.note.problem or not candidate.note.text.strip():
        return False
    if candidate.privacy or candidate.secrets:  # neither private content nor a credential leaves the machine
        return False
    try:  # what the rules leave open, before a contradiction read from prose (the judge may settle it)
        facts, decision = _decide(sweep, candidate, None, prose=False)
    except IndexUnavailable:
        raise
    except Exception:  # not asked about; deciding it again in `_settle` flags it with the reason
        return False
    if facts.existing is not None:  # a person's note with its key: the judge may call it known, or waiting
        return not facts.existing.curator_owned and decision.code == "persons-note"
    if decision.code == "no-surface":
        return True
    return decision.verdict == "needs_review" and (facts.near_duplicate or None in decision.criteria.values())


def _settle(sweep: Sweep, candidate: cand.Candidate, verdict: JudgeVerdict | None) -> Action | Failure | _Slot:
    """Decide, compose and apply one candidate inside its own boundary (design §6, invariant 6):
    reading the vault or writing it may fail, and a bug may raise anything; either fails this
    candidate only, and the sweep goes on. Only an index that cannot be opened at all (every
    candidate would fail alike) stops the sweep. `stage` is what the candidate is going through,
    for an internal error's reason."""
    stage = "deciding"
    try:
        decision = _forced(sweep, candidate)
        if decision is None:
            _, decision = _decide(sweep, candidate, verdict)
        stage = "composing"
        prepared = _prepare(sweep, candidate, decision)
        if not sweep.dry_run:
            stage = "writing"  # from here on, a failure leaves what recovery finishes
        return _carry_out(sweep, candidate, prepared)
    except (OSError, writer.Conflict, UnsafePath) as exc:
        return Failure(candidate.inbox_path, describe(exc, (sweep.root / candidate.inbox_path).exists()))
    except IndexUnavailable:
        raise
    except Exception as exc:
        return _internal(sweep, candidate, exc, stage)


def _forced(sweep: Sweep, candidate: cand.Candidate) -> Decision | None:
    """A verdict known before deciding: unreadable, never settled, or empty."""
    if candidate.inbox_path in sweep.broken:
        return Decision("needs_review", sweep.broken[candidate.inbox_path], code="internal-error")
    if candidate.inbox_path in sweep.options.overdue:
        why = "never settled: still changing after the settle ceiling ({:g}s)"
        return Decision("needs_review", why.format(sweep.rules.settings.settle_ceiling_seconds), code="unsettled")
    if not candidate.note.text.strip() and not candidate.note.problem:
        return Decision("needs_review", "empty file", code="empty")
    return None


def _internal(sweep: Sweep, candidate: cand.Candidate, exc: Exception, stage: str) -> Action | Failure | _Slot:
    """A bug met while deciding or composing this candidate makes it needs_review, with a one-line
    reason ('internal error while deciding: ValueError: …'). Met while writing (the journal's open
    action is then recovery's to finish or undo), or when flagging fails too, it is an error entry
    in the result and a record in the journal; the file is never lost either way."""
    reason = f"internal error while {stage}: {one_line(exc)}"
    if stage != "writing":
        try:
            return _apply(sweep, candidate, Decision("needs_review", reason, code="internal-error"))
        except Exception as again:
            reason += f"; flagging it failed too: {one_line(again)}"
    still_there = (sweep.root / candidate.inbox_path).exists()
    if not sweep.dry_run:
        with contextlib.suppress(Exception):  # the result still carries it
            sweep.journal.append(records.error(sweep.run_id, candidate.inbox_path, candidate.digest, reason))
    return Failure(candidate.inbox_path, describe(RuntimeError(reason), still_there))


def _decide(
    sweep: Sweep, candidate: cand.Candidate, verdict: JudgeVerdict | None, prose: bool = True
) -> tuple[Facts, Decision]:
    """Similarity is asked only of candidates no drop rule takes (no drop rule may name it)."""
    facts = gather_facts(candidate, sweep.querier, neighbours=False)
    decision = decide(candidate, sweep.rules, facts, verdict, prose=False)
    if decision.verdict != "drop":
        facts = with_neighbours(facts, candidate, sweep.querier)
        decision = decide(candidate, sweep.rules, facts, verdict, prose)
    return facts, decision


@dataclass(frozen=True)
class _Prepared:
    """A candidate's plan, with what its action reports before it runs."""

    decision: Decision  # as planned: it may have turned into needs_review on the way
    plan: Plan
    moved: str | None  # where a drop would land now
    diff: str | None  # a dry run's patch


def _apply(sweep: Sweep, candidate: cand.Candidate, decision: Decision) -> Action | _Slot:
    """Plan the decision, then execute the plan, unless this is a dry run."""
    return _carry_out(sweep, candidate, _prepare(sweep, candidate, decision))


def _prepare(sweep: Sweep, candidate: cand.Candidate, decision: Decision) -> _Prepared:
    """The decision's plan (a symlink, a person's note or a merge refused turn it into
    needs_review), numbered in this sweep."""
    decision, plan = sweep.numbers.take(partial(plan_for, sweep.planning, candidate, decision))
    moved = landing(sweep.planning, plan)
    diff = patch_diff(plan) if plan.verdict == "patch" and sweep.dry_run else None
    return _Prepared(decision, plan, moved, diff)


@dataclass
class _Slot:
    """Where a queued candidate's outcome lands once its batch ran: all the sweep keeps of it."""

    outcome: Action | Failure | None = None


@dataclass(frozen=True)
class _Queued:
    """A candidate whose plan waits for the batch's group commit (let go with the batch)."""

    candidate: cand.Candidate
    prepared: _Prepared
    slot: _Slot


def _carry_out(sweep: Sweep, candidate: cand.Candidate, prepared: _Prepared) -> Action | _Slot:
    """Queue the plan for the batch's group commit (`_commit`, run by `_sweep` outside every
    candidate's boundary; a dry run's plan runs nowhere); what it writes answers the later
    candidates' questions (the querier's overlay, and the patches planned before the commit:
    `Planning.unwritten`)."""
    plan = prepared.plan
    written = plan.written(plan.dest) if plan.verdict in ("promote", "patch") and plan.dest else None
    if written is not None and plan.dest:
        sweep.querier.stage(plan.dest, written.decode("utf-8"))
    if sweep.dry_run:
        return action(candidate, prepared.decision, moved_to=prepared.moved, diff=prepared.diff)
    if written is not None and plan.dest:
        sweep.planning.unwritten[plan.dest] = written
    queued = _Queued(candidate, prepared, _Slot())
    sweep.queued.append(queued)
    return queued.slot


def _commit(sweep: Sweep, settle: bool = False) -> None:
    """Execute the queued plans as one group commit (`Executor.execute_batch`) and settle each
    candidate's outcome: a plan that failed fails its candidate only, as when it ran alone.
    The index takes the written notes in after a batch that weighed `BATCH_BYTES`, once the
    overlay holds `SETTLE_NOTES` or `BATCH_BYTES` of them, and at the end (`settle`): not after
    every batch, as each intake is one more FTS5 segment every later query reads."""
    queued = list(sweep.queued)
    sweep.queued.clear()
    if not queued:
        return
    outcomes = sweep.executor.execute_batch([q.prepared.plan for q in queued])
    sweep.planning.unwritten.clear()
    for item, outcome in zip(queued, outcomes, strict=True):
        item.slot.outcome = _outcome(sweep, item, outcome)
    if isinstance(sweep.querier, Settling) and (settle or _heavy(sweep.querier.weight())):
        sweep.querier.settle()  # what it staged is on disk now: the index takes it in


def _outcome(sweep: Sweep, item: _Queued, outcome: dict[str, str] | Exception) -> Action | Failure:
    candidate, prepared = item.candidate, item.prepared
    plan = prepared.plan
    if not isinstance(outcome, Exception):
        moved = outcome.get(plan.dest or "", prepared.moved)
        return action(candidate, prepared.decision, moved_to=moved, diff=prepared.diff)
    if plan.verdict in ("promote", "patch") and plan.dest:  # the overlay says again what the disk holds
        before = plan.kept()[-1] if plan.verdict == "patch" else None
        sweep.querier.stage(plan.dest, before.decode("utf-8", "replace") if before is not None else None)
    if isinstance(outcome, OSError | writer.Conflict | UnsafePath):
        return Failure(candidate.inbox_path, describe(outcome, (sweep.root / candidate.inbox_path).exists()))
    failed = _internal(sweep, candidate, outcome, "writing")
    assert not isinstance(failed, _Slot)  # met while writing: never flagged again
    return failed


def _ignored(ctx: Context, agents: list[tuple[str, Path]], save: bool) -> tuple[tuple[str, str], ...]:
    folders = {relpath(ctx.root, folder) for _, folder in agents}
    return stores.ignored_to_say(ctx.root, ctx.state, folders, ctx.files, save)
