"""A plan: every change one verdict or one person's action makes to the vault, as data.

`promote`, `patch`, `drop`, `needs_review`, `restore`, `undo` and a person's `resolve` or
`review` action each build a `Plan` here, with no I/O: the bytes to write and the hash each
file must still hold. `store.executor` journals a plan, applies its steps in order and closes
it; `store.recovery` finishes forward any plan a crash left open. Every plan writes before it
removes (creates and replaces come before removes), so finishing forward never loses a byte.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeVar

from memory_curator.core.notes import content_hash

Op = Literal["keep", "create", "create_unique", "replace", "remove", "hold"]
WRITES: frozenset[str] = frozenset({"create", "create_unique", "replace"})
T = TypeVar("T")


@dataclass(frozen=True)
class Step:
    """One file operation.

    - keep: `data` into the state directory's content-addressed store (for `undo`, `restore`);
    - create: a new file at `path` (never an overwrite); create_unique: `path`, else the first
      free name of its family (`name-2.md`, …);
    - replace: `path`, only while it still holds `expected`; remove: likewise;
    - hold: the inbox item at `path`, holding `expected`, waits for a person (review ledger).

    `proof` (a candidate's hash) lets recovery recognise a written note a person edited since:
    it still records that candidate in its `curated_from`. `prune`: after a remove, the
    folders (vault-relative, deepest first) to remove while each is empty — those the undone
    plan made, as its end record names them.
    """

    op: Op
    path: str = ""
    data: bytes | None = None
    expected: str | None = None
    proof: str | None = None
    prune: tuple[str, ...] = ()

    @property
    def digest(self) -> str | None:
        return content_hash(self.data) if self.data is not None else None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"op": self.op, "path": self.path, "hash": self.digest, "expected": self.expected}
        if self.proof:
            out["proof"] = self.proof
        if self.prune:
            out["prune"] = list(self.prune)
        return out


@dataclass(frozen=True)
class Plan:
    """What one verdict or action does, in order, and what the journal says about it
    (`record`: reason, rule, hashes, … — what `log`, `status` and `undo` read)."""

    run: str
    seq: int
    verdict: str
    inbox: str | None
    dest: str | None
    steps: tuple[Step, ...]
    record: Mapping[str, Any] = field(default_factory=dict)

    def begin(self) -> dict[str, Any]:
        """The journal's begin record: enough for recovery to finish the plan from the files."""
        head = {"event": "begin", "run": self.run, "seq": self.seq, "verdict": self.verdict}
        where = {"inbox": self.inbox, "dest": self.dest}
        return {**head, **where, **self.record, "steps": [s.to_json() for s in self.steps]}

    def written(self, path: str) -> bytes | None:
        """The bytes this plan writes to `path` (a dry run's diff, a staged note)."""
        return next((s.data for s in self.steps if s.op in WRITES and s.path == path), None)

    def kept(self) -> tuple[bytes, ...]:
        return tuple(s.data for s in self.steps if s.op == "keep" and s.data is not None)


class Numbering:
    """The sequence numbers of one run's plans, 1, 2, … in the order they are built, kept by
    whoever runs them: a plan that could not be built takes none, so the journal's numbers have
    no gaps."""

    def __init__(self) -> None:
        self.taken = 0

    def take(self, build: Callable[[int], T]) -> T:
        """What `build` makes of the next number; the number is taken only once it is built."""
        built = build(self.taken + 1)
        self.taken += 1
        return built


def by(plan: Plan, who: str | None, copy: str | None = None) -> Plan:
    """The plan with whose act it was in its journal record (`by: review-note`, and `copy`: the
    review note's sync conflict copy the tick was read from); unchanged for none."""
    if not who:
        return plan
    return replace(plan, record={**plan.record, "by": who, **({"copy": copy} if copy else {})})


def keep(data: bytes) -> Step:
    return Step("keep", data=data)


def move(
    run: str,
    seq: int,
    verdict: str,
    inbox: str,
    digest: str,
    keeps: tuple[bytes, ...],
    dest: Step,
    record: Mapping[str, Any],
) -> Plan:
    """A candidate leaving the inbox: its bytes (and a patched note's) kept, `dest` written, then
    the inbox file removed, only while it still holds the bytes that were decided (`digest`)."""
    steps = (*map(keep, keeps), dest, Step("remove", inbox, expected=digest))
    head = {"inbox_hash": digest, "after_hash": dest.digest}
    return Plan(run, seq, verdict, inbox, dest.path, steps, {**head, **record})


def flag(run: str, seq: int, inbox: str, digest: str, raw: bytes, data: bytes, record: Mapping[str, Any]) -> Plan:
    """needs_review: the inbox file rewritten in place (tag and reason), then held for review."""
    steps = (
        keep(raw),
        Step("replace", inbox, data, expected=digest),
        Step("hold", inbox, expected=content_hash(data)),
    )
    head = {"inbox_hash": digest, "after_hash": content_hash(data)}
    return Plan(run, seq, "needs_review", inbox, inbox, steps, {**head, **record})


def legacy_steps(record: Mapping[str, Any]) -> tuple[dict[str, Any], ...]:
    """The steps of a begin record an older version journalled without them (a move or a
    needs_review), so recovery after an upgrade reads every open record alike."""
    verdict, inbox, dest = record.get("verdict"), record.get("inbox"), record.get("dest")
    after, proof = record.get("after_hash"), record.get("inbox_hash")
    if not isinstance(inbox, str) or not isinstance(dest, str):
        return ()
    if verdict == "needs_review":
        return (
            {"op": "replace", "path": inbox, "hash": after, "expected": proof},
            {"op": "hold", "path": inbox, "expected": after},
        )
    if verdict not in ("promote", "patch", "drop"):
        return ()
    op = {"promote": "create", "patch": "replace", "drop": "create_unique"}[verdict]
    write = {
        "op": op,
        "path": dest,
        "hash": after,
        "expected": record.get("before_hash"),
        "proof": None if verdict == "drop" else proof,
    }
    return (write, {"op": "remove", "path": inbox, "expected": proof})
