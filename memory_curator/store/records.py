"""The journal's records, typed: what each kind holds as written, and a line as read back.

The journal (`store.journal`) writes six kinds of record, each one JSON line stamped with its
`time`: an action's `begin` (a plan: `Plan.begin`, with its steps) and `end` (`store.executor`,
`store.recovery`), a sweep's `run` summary and its `judge` and `error` records
(`commands.sweep`), and an `undo` summary (`commands.undo`). The written kinds have their keys
required (`RunRecord`, …); `Written` is what `Journal.append` takes.

A line read back is a `Record`: every kind's keys, each optional. The journal is years old on
a busy vault and an older version wrote fewer keys (a begin without `steps`, a flag without
`reason_code`, a step's `prune: true`): a reader never assumes a key, and checks a value's type
where a wrong one would do harm (`seq_number`, `isinstance`), as the file is a person's to edit.
TypedDicts rather than dataclasses (docs/architecture.md): the records stay the very dicts
`json` reads and writes, so an old journal reads as it did and a new one writes the same bytes.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Literal, NotRequired, TypedDict, cast

from memory_curator.core.plan import Plan

Event = Literal["begin", "end", "run", "judge", "error", "undo"]


class StepRecord(TypedDict, total=False):
    """One step of a begin record (`core.plan.Step.to_json`): `hash` the bytes it writes, `expected`
    the bytes the file must still hold; `prune` a remove's folders (an older journal: `true`)."""

    op: str
    path: str
    hash: str | None
    expected: str | None
    proof: str | None
    prune: list[str] | bool


class BeginRecord(TypedDict):
    """An action announced, fsynced before its first step: enough for recovery to finish it."""

    event: Literal["begin"]
    run: str
    seq: int
    verdict: str
    inbox: str | None
    dest: str | None
    steps: list[StepRecord]
    reason: NotRequired[str]
    rule: NotRequired[str | None]
    contradiction: NotRequired[bool]
    reason_code: NotRequired[str | None]  # needs_review: why, as a stable word (`core.reasons.CODES`)
    target: NotRequired[str | None]
    inbox_hash: NotRequired[str]
    after_hash: NotRequired[str | None]
    before_hash: NotRequired[str]
    undoes: NotRequired[list[str | int]]  # an undo's action: [run, seq] of the action it takes back
    by: NotRequired[str]  # whose act, when not a person at a terminal (`review-note`)
    copy: NotRequired[str]  # the review note's sync conflict copy a tick was read from


class EndRecord(TypedDict):
    """An action closed: `ok`, or the `error` it failed on; where a drop landed (`dest`), the
    folders it made (`made`, for undo); `recovered` and `closed` when recovery closed it."""

    event: Literal["end"]
    run: str | None
    seq: int | None
    ok: bool
    error: NotRequired[str]
    dest: NotRequired[str]
    made: NotRequired[list[str]]
    recovered: NotRequired[bool]
    closed: NotRequired[str]


class RunRecord(TypedDict):
    """One per sweep that did something: its totals (`status`, `log` and the review note read these)."""

    event: Literal["run"]
    run: str
    started: dt.datetime  # written with `default=str`: "2026-12-05 17:14:18+00:00"
    seconds: float
    processed: int
    promoted: int
    patched: int
    dropped: int
    needs_review: int
    errors: int
    judge: dict[str, object] | None
    by: NotRequired[str]  # "review-note": ticks applied from the note, not a sweep's verdicts
    restored: NotRequired[int]  # drops a restore tick put back


class JudgeRecord(TypedDict):
    """The judge's answer for one candidate, for the audit: its model, prompt version and raw
    answer (the verdict's `audit`, whose keys the judge client chooses), or why it failed."""

    event: Literal["judge"]
    run: str
    inbox: str
    inbox_hash: str
    failure: str | None
    model: NotRequired[object]
    prompt_version: NotRequired[object]
    raw: NotRequired[object]
    cached: NotRequired[bool]
    id: NotRequired[object]


class ErrorRecord(TypedDict):
    """A candidate a bug stopped while it was written, or flagged: the result carries it too."""

    event: Literal["error"]
    run: str
    inbox: str
    inbox_hash: str
    error: str


class UndoRecord(TypedDict):
    """An `undo` summary: the run it took back and how many of its actions."""

    event: Literal["undo"]
    run: str
    undoes: str
    undone: int


Written = BeginRecord | EndRecord | RunRecord | JudgeRecord | ErrorRecord | UndoRecord


class Record(TypedDict, total=False):
    """A journal line as read back: any kind's keys, none assumed (an older version wrote fewer).
    `undoes` is a run id in an `undo` summary, [run, seq] in an undo's begin record; `started` a
    time as text; the judge record's audit values are whatever the judge client wrote."""

    time: str
    event: str
    run: str
    seq: int
    verdict: str
    inbox: str | None
    dest: str | None
    steps: list[StepRecord]
    reason: str
    rule: str | None
    contradiction: bool
    reason_code: str | None
    target: str | None
    inbox_hash: str
    after_hash: str | None
    before_hash: str
    undoes: str | list[str | int]
    by: str
    copy: str
    ok: bool
    error: str
    made: list[str]
    recovered: bool
    closed: str
    started: str
    seconds: float
    processed: int
    promoted: int
    patched: int
    dropped: int
    needs_review: int
    errors: int
    judge: dict[str, object] | None
    undone: int
    failure: str | None
    model: object
    prompt_version: object
    raw: object
    cached: bool
    id: object


def begin(plan: Plan) -> BeginRecord:
    """A plan's begin record: `Plan.begin` (the core holds no journal type) with its keys as
    `commands.planning` writes them, in the same order, so the bytes are as before."""
    return cast(BeginRecord, plan.begin())


def read(line: object) -> Record | None:
    """A JSON value read from a journal line as a record; None when it is not a JSON object
    (a line a person or a disk mangled): the reader skips it, as it skips a torn one."""
    return cast(Record, line) if isinstance(line, dict) else None


def run(
    run_id: str,
    started: dt.datetime,
    seconds: float,
    totals: Mapping[str, int],
    errors: int,
    judge: Mapping[str, object] | None,
) -> RunRecord:
    """A sweep's summary: its totals (`SweepResult.totals`), its errors and the judge's stats."""
    return {
        "event": "run",
        "run": run_id,
        "started": started,
        "seconds": round(seconds, 3),
        "processed": totals.get("processed", 0),
        "promoted": totals.get("promoted", 0),
        "patched": totals.get("patched", 0),
        "dropped": totals.get("dropped", 0),
        "needs_review": totals.get("needs_review", 0),
        "errors": errors,
        "judge": dict(judge) if judge else None,
    }


def judged(run_id: str, inbox: str, inbox_hash: str, audit: Mapping[str, object], failure: str | None) -> JudgeRecord:
    """The judge's answer for one candidate; `audit`'s keys are the judge client's (`JudgeRecord`)."""
    head = {"event": "judge", "run": run_id, "inbox": inbox, "inbox_hash": inbox_hash}
    return cast(JudgeRecord, {**head, **audit, "failure": failure})


def error(run_id: str, inbox: str, inbox_hash: str, why: str) -> ErrorRecord:
    return {"event": "error", "run": run_id, "inbox": inbox, "inbox_hash": inbox_hash, "error": why}
