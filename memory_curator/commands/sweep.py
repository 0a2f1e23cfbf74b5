"""A sweep: lock, recover, plan one action per candidate, apply it, summarise.

The imperative shell around the pure core: `candidate` (what it is), `querier` (what the
vault knows), `decide` (the verdict), `compose`/`merge` (the new text), `writer` (bytes).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from memory_curator.commands.context import Context, Judge
from memory_curator.core import candidate as cand
from memory_curator.core import compose, merge
from memory_curator.core import plan as plans
from memory_curator.core.decide import Decision, JudgeVerdict, decide
from memory_curator.core.errors import CuratorError, OtherHost, UnsafePath
from memory_curator.core.facts import Facts, Querier, gather_facts, with_neighbours
from memory_curator.core.names import printable
from memory_curator.core.notes import Note, content_hash, parse
from memory_curator.core.ownership import NOT_ITS_NOTE, curator_owned, judge_may_change
from memory_curator.core.plan import Plan, Step
from memory_curator.core.reasons import reason_code
from memory_curator.core.result import Action, AgentResult, Failure, Skipped, SweepResult
from memory_curator.core.rules import JudgeSettings, Rules
from memory_curator.core.text import TOO_LARGE, too_large
from memory_curator.index.store import IndexUnavailable
from memory_curator.store import recovery, stores, writer
from memory_curator.store.executor import Executor
from memory_curator.store.journal import Journal
from memory_curator.store.paths import (
    CandidateFile,
    list_candidates,
    oversize,
    read_capped,
    relpath,
    safe_join,
    scope_agents,
)
from memory_curator.store.state import sweep_lock
from memory_curator.store.writer import Files

T = TypeVar("T")
Progress = Callable[[int], contextlib.AbstractContextManager[Callable[[], None]]]  # total -> a tick per candidate
PROGRESS_MIN = 36  # "more than a few dozen" candidates


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


@dataclass
class Sweep:
    """Everything one sweep shares: its context, the rules, the querier and the executor."""

    ctx: Context
    rules: Rules
    run_id: str
    now: dt.datetime
    executor: Executor
    querier: Querier
    reviewed: dict[str, str] = field(default_factory=dict)
    sightings: dict[str, stores.Sighting] = field(default_factory=dict)
    seq: int = 0
    options: Options = field(default_factory=Options)
    judge_settings: JudgeSettings = field(default_factory=JudgeSettings)
    confirmed: frozenset[str] = frozenset()  # the person's notes a person confirmed writing into (review, resolve)
    settle: merge.Settle | None = None  # a person's answer to a contradiction (review); a sweep has none
    broken: dict[str, str] = field(default_factory=dict)  # inbox path -> why reading it failed (flagged as is)
    stage: str = "deciding"  # what the current candidate is going through, for an internal error's reason

    @property
    def root(self) -> Path:
        return self.ctx.root

    @property
    def state(self) -> Path:
        return self.ctx.state

    @property
    def files(self) -> Files:
        return self.ctx.files

    @property
    def journal(self) -> Journal:
        return self.executor.journal

    @property
    def dry_run(self) -> bool:
        return self.options.dry_run


def new_run_id(now: dt.datetime) -> str:
    return now.strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(2)


def host_refusal(curator_host: str | None, here: str) -> str | None:
    """The line a sweep prints instead of sweeping on a machine that is not the curator host.

    Names compare case-insensitively and by their first label ('mini' = 'Mini.local').
    """
    if not curator_host or _short_host(curator_host) == _short_host(here):
        return None
    return f"not the curator host: the rules name {curator_host!r} (curator_host), this is {here!r}; nothing done"


def _short_host(name: str) -> str:
    return name.strip().casefold().split(".")[0]


def run(ctx: Context, scope: Path | None, options: Options = Options()) -> SweepResult:
    rules = ctx.rules
    refusal = None if options.dry_run else host_refusal(rules.settings.curator_host, ctx.host)
    if refusal:
        raise OtherHost(refusal)
    judge, judge_settings = _judge_for(ctx, rules, options)
    now = ctx.clock.now()
    journal = Journal(ctx.state / "journal.jsonl", ctx.clock, ctx.files)
    sweep = Sweep(
        ctx,
        rules,
        new_run_id(now),
        now,
        Executor(ctx.root, ctx.state, journal, ctx.files),
        ctx.querier(ctx, rules),
        stores.load_ledger(ctx.state),
        stores.load_sightings(ctx.state),
        options=options,
        judge_settings=judge_settings,
    )
    agents = scope_agents(ctx.root, scope)
    if options.dry_run:
        result = _sweep(sweep, agents, scope, judge)
        return replace(result, notes=tuple(sweep.querier.notices()))
    with sweep_lock(ctx.state, ctx.clock, ctx.machine.pid, ctx.host, wait=options.wait):
        started = ctx.clock.monotonic()
        recovered = recovery.recover(ctx.root, ctx.state, journal, ctx.files)
        sweep.reviewed.update(recovered.reviewed)
        notes = recovered.notes
        result = _sweep(sweep, agents, scope, judge)
        notes += sweep.querier.notices()  # semantic pairing off this sweep, and why: said once
        sweep.reviewed.update(sweep.executor.held)
        try:  # the work is done; a full disk here costs a re-review or a log line, never content
            stores.save_ledger(ctx.root, ctx.state, sweep.reviewed, ctx.files)
            stores.save_sightings(ctx.root, ctx.state, sweep.sightings, ctx.files)
            _journal_run(sweep, result, ctx.clock.monotonic() - started)
        except OSError as exc:
            notes.append(f"could not save the sweep's state: {exc.strerror or exc}")
    ready = judge is not None or not options.use_judge
    return SweepResult(result.run_id, result.agents, result.single_agent, False, result.judge, tuple(notes), ready)


def _judge_for(ctx: Context, rules: Rules, options: Options) -> tuple[Judge | None, JudgeSettings]:
    """The judge this sweep asks (None: inert) and its settings (flag > env > rules > default)."""
    from memory_curator.judge import client  # its pydantic models cost ~75 ms: only sweeps pay

    settings = client.resolve_settings(rules.settings.judge, options.judge_settings, ctx.env)
    if not options.use_judge or not settings.enabled:
        return None, settings
    return ctx.judge(ctx, settings), settings


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
    verdicts, judge_stats = _ask_judge(sweep, pending, judge)
    results = []
    with _progress(sweep, len(pending)) as tick:
        for agent, found, skipped in collected:
            actions: list[Action] = []
            errors: list[Failure] = []
            for candidate in found:
                if sweep.options.stop and sweep.options.stop():
                    break
                outcome = _settle(sweep, candidate, verdicts.get(candidate.inbox_path))
                if isinstance(outcome, Action):
                    actions.append(outcome)
                else:
                    errors.append(outcome)
                tick()
            results.append(AgentResult(agent, tuple(actions), tuple(skipped), tuple(errors)))
    single = scope is not None and len(agents) == 1 and scope.resolve() != (sweep.root / "_inbox").resolve()
    return SweepResult(sweep.run_id, tuple(results), single, sweep.dry_run, judge_stats)


def _progress(sweep: Sweep, total: int) -> contextlib.AbstractContextManager[Callable[[], None]]:
    if sweep.options.progress is None or total < PROGRESS_MIN:
        return contextlib.nullcontext(lambda: None)
    return sweep.options.progress(total)


def _ask_judge(
    sweep: Sweep, pending: list[cand.Candidate], judge: Judge | None
) -> tuple[dict[str, JudgeVerdict], dict[str, Any] | None]:
    """Only what the rules left undecided goes to the judge; its answers pass the circuit
    breaker, and each judged candidate's model, prompt version and raw answer is journalled."""
    undecided = [c for c in pending if judge is not None and _undecided(sweep, c)]
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
        record = {"event": "judge", "run": sweep.run_id, "inbox": candidate.inbox_path, "inbox_hash": candidate.digest}
        with contextlib.suppress(OSError):  # an audit record, not needed for recovery
            sweep.journal.append({**record, **verdict.audit, "failure": verdict.failure})
    return verdicts, stats


def reach(sweep: Sweep) -> Callable[[str], bool]:
    """Whether the judge may change (patch, or call a duplicate) the note at a path, as the
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
    note with its key (patch, contradiction and person's-note cases stay with the rules)."""
    if candidate.inbox_path in sweep.options.overdue or candidate.note.problem or not candidate.note.text.strip():
        return False
    if candidate.privacy:  # private content never leaves the machine: a person decides it
        return False
    try:
        facts, decision = _decide(sweep, candidate, None)
    except IndexUnavailable:
        raise
    except Exception:  # not asked about; deciding it again in `_settle` flags it with the reason
        return False
    if facts.existing is not None:
        return False
    return decision.verdict == "needs_review" and (facts.near_duplicate or None in decision.criteria.values())


def _collect(sweep: Sweep, agent: str, folder: Path) -> tuple[list[cand.Candidate], list[Skipped]]:
    """Read the settled candidates of one agent folder; report the rest as skipped. Each file is
    read inside its own boundary: whatever reading one raises is that file's problem."""
    found: list[cand.Candidate] = []
    skipped: list[Skipped] = []
    try:
        items = list(list_candidates(folder, agent, sweep.root))
    except OSError as exc:  # a folder we may not list: its files wait, the other agents are swept
        return [], [Skipped(relpath(sweep.root, folder) + "/", f"cannot list the folder: {exc.strerror or exc}")]
    for item in items:
        if sweep.options.only is not None and item.rel not in sweep.options.only:
            continue
        try:
            got = _read(sweep, item)
        except Exception as exc:
            got = _unreadable(sweep, item, exc)
        if isinstance(got, cand.Candidate):
            found.append(got)
        else:
            skipped.append(got)
    return found, skipped


def _read(sweep: Sweep, item: CandidateFile) -> cand.Candidate | Skipped:
    """One inbox file: a candidate to settle, or why it waits."""
    limit = sweep.rules.settings.max_candidate_bytes
    try:
        stat = item.path.stat()
        if stat.st_size > limit:  # never read, never rewritten: it waits for a person as it is
            return Skipped(item.rel, too_large(stat.st_size, limit) or TOO_LARGE, waiting="too-large")
        raw = read_capped(item.path, limit)
        changed = _signature(stat) != _signature(item.path.stat())
    except OSError as exc:
        return Skipped(item.rel, f"cannot read: {exc.strerror}")
    if raw is None:
        return Skipped(item.rel, oversize(item.path, limit), waiting="too-large")
    if changed:
        return Skipped(item.rel, "still being written (it changed while it was read)")
    if sweep.reviewed.get(item.rel) == content_hash(raw):
        return _waiting(item.rel, raw)
    quiet, age = _quiet_for(sweep, item.rel, stat)
    settle, ceiling = _windows(sweep)
    if quiet < settle and item.rel not in sweep.options.overdue:
        return Skipped(item.rel, _unsettled(age, quiet))
    candidate = cand.build(raw, item.rel, item.agent, sweep.rules)
    waiting = _still_arriving(candidate, raw, quiet, ceiling)
    if waiting and item.rel not in sweep.options.overdue:
        return Skipped(item.rel, waiting)
    return candidate


def _waiting(rel: str, raw: bytes) -> Skipped:
    """An item held for a person: flagged by a sweep, or put back untouched by undo (or restore
    of an untagged file) and never flagged. `run` sums both up in one line."""
    if compose.REVIEW_MARK.encode() in raw or compose.REVIEW_TAG.encode() in raw:
        return Skipped(rel, "needs review (unchanged since it was flagged)", waiting="flagged")
    return Skipped(rel, "held for review (put back by undo; unchanged since)", waiting="held")


def _windows(sweep: Sweep) -> tuple[float, float]:
    """(settle window, settle ceiling) of this sweep: the rules', or `run --settle`'s. With
    `--settle 0` every file is taken as complete: an empty file or an unclosed frontmatter is
    decided now (needs_review), not waited for."""
    settings = sweep.rules.settings
    chosen = sweep.options.settle
    if chosen is None:
        return settings.settle_seconds, settings.settle_ceiling_seconds
    return chosen, (max(chosen, settings.settle_ceiling_seconds) if chosen else 0.0)


def _unreadable(sweep: Sweep, item: CandidateFile, exc: Exception) -> cand.Candidate | Skipped:
    """A file whose reading raised: a bare candidate (its bytes, no frontmatter) that `_settle`
    flags needs_review with the reason, so a person sees it and later sweeps pass it by."""
    reason = f"internal error while reading: {one_line(exc)}"
    try:
        raw = item.path.read_bytes()
    except OSError as again:
        return Skipped(item.rel, f"cannot read: {again.strerror or again}")
    sweep.broken[item.rel] = reason
    note = Note(text=raw.decode("utf-8", errors="replace"), problem=reason)
    return cand.Candidate(
        inbox_path=item.rel,
        agent=item.agent,
        note=note,
        digest=content_hash(raw),
        surface=None,
        target=None,
        key_problem=None,
        missing=(),
        raw=raw,
    )


def _signature(stat: os.stat_result) -> tuple[int, int, int]:
    return stat.st_ino, stat.st_size, stat.st_mtime_ns


def _quiet_for(sweep: Sweep, rel: str, stat: os.stat_result) -> tuple[float, float]:
    """(seconds the file is known unchanged, its mtime's age by the clock).

    Known unchanged: since its mtime, unless that is in the future (a sync peer's skewed
    clock, a shifted test clock), or since sweeps first saw it with this size and mtime,
    whichever is longer. A file the watcher saw quiet for the settle window counts as such.
    """
    now = sweep.ctx.clock.timestamp()
    age = now - stat.st_mtime
    seen = sweep.sightings.get(rel)
    if seen is None or not seen.same(stat.st_size, stat.st_mtime_ns) or seen.seen > now:
        seen = sweep.sightings[rel] = stores.Sighting(stat.st_size, stat.st_mtime_ns, now)
    watched = sweep.rules.settings.settle_seconds if rel in sweep.options.observed and age < 0 else 0.0
    return max(age, now - seen.seen, watched), age


def _unsettled(age: float, quiet: float) -> str:
    if age >= 0:
        return f"still being written (modified {age:.1f}s ago)"
    return f"still being written (its mtime is {-age:.0f}s in the future; unchanged for {quiet:.0f}s)"


def _still_arriving(candidate: cand.Candidate, raw: bytes, quiet: float, ceiling: float) -> str | None:
    """An empty file or an unclosed frontmatter waits, up to the ceiling (then needs_review)."""
    if (not raw.strip() or candidate.note.unclosed) and quiet < ceiling:
        return "empty file, waiting for its content" if not raw.strip() else "frontmatter not closed yet"
    return None


def _settle(sweep: Sweep, candidate: cand.Candidate, verdict: JudgeVerdict | None) -> Action | Failure:
    """Decide, compose and apply one candidate inside its own boundary (design §6, invariant 6):
    reading the vault or writing it may fail, and a bug may raise anything; either fails this
    candidate only, and the sweep goes on. Only an index that cannot be opened at all (every
    candidate would fail alike) stops the sweep."""
    sweep.stage = "deciding"
    try:
        decision = _forced(sweep, candidate)
        if decision is None:
            _, decision = _decide(sweep, candidate, verdict)
        sweep.stage = "composing"
        return apply(sweep, candidate, decision)
    except (OSError, writer.Conflict, UnsafePath) as exc:
        return Failure(candidate.inbox_path, _describe(exc, (sweep.root / candidate.inbox_path).exists()))
    except IndexUnavailable:
        raise
    except Exception as exc:
        return _internal(sweep, candidate, exc)


def _forced(sweep: Sweep, candidate: cand.Candidate) -> Decision | None:
    """A verdict known before deciding: unreadable, never settled, or empty."""
    if candidate.inbox_path in sweep.broken:
        return Decision("needs_review", sweep.broken[candidate.inbox_path])
    if candidate.inbox_path in sweep.options.overdue:
        ceiling = sweep.rules.settings.settle_ceiling_seconds
        return Decision("needs_review", f"never settled: still changing after the settle ceiling ({ceiling:g}s)")
    if not candidate.note.text.strip() and not candidate.note.problem:
        return Decision("needs_review", "empty file")
    return None


def _internal(sweep: Sweep, candidate: cand.Candidate, exc: Exception) -> Action | Failure:
    """A bug met while deciding or composing this candidate makes it needs_review, with a one-line
    reason ('internal error while deciding: ValueError: …'). Met while writing (the journal's open
    action is then recovery's to finish or undo), or when flagging fails too, it is an error entry
    in the result and a record in the journal; the file is never lost either way."""
    reason = f"internal error while {sweep.stage}: {one_line(exc)}"
    if sweep.stage != "writing":
        try:
            return apply(sweep, candidate, Decision("needs_review", reason))
        except Exception as again:
            reason += f"; flagging it failed too: {one_line(again)}"
    still_there = (sweep.root / candidate.inbox_path).exists()
    record = {"event": "error", "run": sweep.run_id, "inbox": candidate.inbox_path, "inbox_hash": candidate.digest}
    if not sweep.dry_run:
        with contextlib.suppress(Exception):  # the result still carries it
            sweep.journal.append({**record, "error": reason})
    return Failure(candidate.inbox_path, _describe(RuntimeError(reason), still_there))


def one_line(exc: BaseException, limit: int = 300) -> str:
    """`ValueError: …` on one printable line (a reason is written into the file and shown)."""
    text = printable(f"{type(exc).__name__}: {exc}")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _decide(sweep: Sweep, candidate: cand.Candidate, verdict: JudgeVerdict | None) -> tuple[Facts, Decision]:
    """Similarity is asked only of candidates no drop rule takes (no drop rule may name it)."""
    facts = gather_facts(candidate, sweep.querier, neighbours=False)
    decision = decide(candidate, sweep.rules, facts, verdict)
    if decision.verdict != "drop":
        facts = with_neighbours(facts, candidate, sweep.querier)
        decision = decide(candidate, sweep.rules, facts, verdict)
    return facts, decision


def _describe(exc: BaseException, still_there: bool = True) -> str:
    what = f"{exc.strerror} ({type(exc).__name__})" if isinstance(exc, OSError) and exc.strerror else str(exc)
    if still_there:
        return f"{what}; left in the inbox"
    return f"{what} after the inbox file was removed; the next sweep checks its destination is durable"


def _action(
    candidate: cand.Candidate, decision: Decision, moved_to: str | None = None, diff: str | None = None
) -> Action:
    """What was done, as the decision said it (the JSON shows only the keys each verdict has)."""
    return Action(
        candidate.inbox_path,
        decision.verdict,
        decision.surface,
        decision.reason,
        target_path=decision.target,
        criteria=decision.criteria,
        rule=decision.rule,
        contradiction=decision.contradiction,
        moved_to=moved_to,
        diff=diff,
        reason_code=reason_code(decision, candidate) if decision.verdict == "needs_review" else None,
    )


def apply(sweep: Sweep, candidate: cand.Candidate, decision: Decision) -> Action:
    """Plan the decision (it may turn into needs_review on the way: a symlink, a person's note,
    a merge refused), then execute the plan, unless this is a dry run."""
    decision, plan = PLAN[decision.verdict](sweep, candidate, decision)
    moved = _free(sweep, plan.dest) if plan.verdict == "drop" else None
    diff = _diff(sweep, plan) if plan.verdict == "patch" and sweep.dry_run else None
    if not sweep.dry_run:
        sweep.stage = "writing"  # from here on, a failure leaves what recovery finishes
        moved = sweep.executor.execute(plan).get(plan.dest or "", moved)
    if plan.verdict in ("promote", "patch") and plan.dest:
        sweep.querier.stage(plan.dest, (plan.written(plan.dest) or b"").decode("utf-8"))
    return _action(candidate, decision, moved_to=moved, diff=diff)


def _free(sweep: Sweep, rel: str | None) -> str:
    """Where a drop would land now (a dry run's answer; a real one decides at the link)."""
    return relpath(sweep.root, sweep.files.free_name(safe_join(sweep.root, rel or "")))


def _diff(sweep: Sweep, plan: Plan) -> str:
    """A dry run's patch, as the plan would write it: the note kept before, the note written."""
    assert plan.dest is not None
    before, after = plan.kept()[-1], plan.written(plan.dest) or b""
    return merge.note_diff(plan.dest, before.decode("utf-8"), after.decode("utf-8"))


Planned = tuple[Decision, Plan]


def _record(decision: Decision, **extra: object) -> dict[str, object]:
    """What the journal says of a verdict besides its files (what `log`, `status`, `undo` read)."""
    return {
        "reason": decision.reason,
        "rule": decision.rule,
        "contradiction": decision.contradiction,  # what `status` lists: the curator's word, not the file's
        **extra,
    }


def _move(
    sweep: Sweep, candidate: cand.Candidate, decision: Decision, dest: Step, *keeps: bytes, **record: object
) -> Planned:
    sweep.seq += 1
    plan = plans.move(
        sweep.run_id,
        sweep.seq,
        decision.verdict,
        candidate.inbox_path,
        candidate.digest,
        (candidate.raw, *keeps),
        dest,
        _record(decision, **record),
    )
    return decision, plan


def _plan_promote(sweep: Sweep, candidate: cand.Candidate, decision: Decision) -> Planned:
    assert decision.target is not None
    if safe_join(sweep.root, decision.target).is_symlink():
        why = f"cannot promote to {decision.target}: {SYMLINK}"
        return _plan_review(sweep, candidate, replace(decision, verdict="needs_review", reason=why))
    data = compose.promoted_text(candidate, sweep.now).encode("utf-8")
    dest = Step("create", decision.target, data, proof=candidate.digest)
    return _move(sweep, candidate, decision, dest)


SYMLINK = "it is a symlink, which the curator never follows nor replaces"


def _plan_drop(sweep: Sweep, candidate: cand.Candidate, decision: Decision) -> Planned:
    name = compose.dropped_name(Path(candidate.inbox_path).stem, sweep.now)
    data = compose.dropped_text(candidate.raw, decision.reason, sweep.now)
    dest = Step("create_unique", f"_inbox/.dropped/{candidate.agent}/{name}", data)  # the free name: at the link
    return _move(sweep, candidate, decision, dest)


def _plan_review(sweep: Sweep, candidate: cand.Candidate, decision: Decision) -> Planned:
    data = compose.review_bytes(candidate.raw, decision.reason, sweep.now)
    sweep.seq += 1
    record = _record(decision, reason_code=reason_code(decision, candidate), target=decision.target)
    return decision, plans.flag(
        sweep.run_id, sweep.seq, candidate.inbox_path, candidate.digest, candidate.raw, data, record
    )


def _plan_patch(sweep: Sweep, candidate: cand.Candidate, decision: Decision) -> Planned:
    """Merge into the note (docs/merge.md): replaced only while it holds the bytes read
    (compare-and-swap), then the inbox file removed; the note's pre-image is kept for `undo`."""
    assert decision.target is not None
    if safe_join(sweep.root, decision.target).is_symlink():
        return _unpatched(sweep, candidate, decision, SYMLINK)
    old = _note_bytes(sweep, decision.target)
    try:
        text = old.decode("utf-8")
    except UnicodeDecodeError:
        return _unpatched(sweep, candidate, decision, "the note is not UTF-8 text")
    frontmatter = parse(text).frontmatter
    if decision.by_judge and not judge_may_change(decision.target, frontmatter, sweep.rules):
        why = f"the judge named {decision.target}, which {NOT_ITS_NOTE}"
        return _plan_review(sweep, candidate, replace(decision, verdict="needs_review", reason=why))
    owned = curator_owned(decision.target, frontmatter, sweep.rules)
    if not owned and decision.target not in sweep.confirmed:  # the person's: never modified (design §3)
        why = f"matches the person's note {decision.target}"
        return _plan_review(sweep, candidate, replace(decision, verdict="needs_review", reason=why))
    merged = merge.merge(text, candidate, sweep.now, person=not owned, settle=sweep.settle)  # a person's stays theirs
    if merged.refused or not merged.changed:
        return _unpatched(sweep, candidate, decision, merged.refused or "it adds nothing", merged.contradiction)
    before = content_hash(old)
    dest = Step("replace", decision.target, merged.text.encode("utf-8"), expected=before, proof=candidate.digest)
    return _move(sweep, candidate, decision, dest, old, before_hash=before)


def _note_bytes(sweep: Sweep, rel: str) -> bytes:
    """The note as it is on disk; in a dry run, as this sweep would have left it."""
    if sweep.dry_run:
        staged = sweep.querier.note_at(rel)
        if staged is not None:
            return staged.text.encode("utf-8")
    return safe_join(sweep.root, rel).read_bytes()


def _unpatched(sweep: Sweep, candidate: cand.Candidate, decision: Decision, why: str, flag: bool = False) -> Planned:
    reason = f"cannot patch {decision.target}: {why}"
    return _plan_review(sweep, candidate, replace(decision, verdict="needs_review", reason=reason, contradiction=flag))


PLAN: dict[str, Callable[[Sweep, cand.Candidate, Decision], Planned]] = {
    "promote": _plan_promote,
    "patch": _plan_patch,
    "drop": _plan_drop,
    "needs_review": _plan_review,
}
