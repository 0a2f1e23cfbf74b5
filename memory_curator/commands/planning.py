"""Planning: every change a command makes to the vault, built as a `core.plan.Plan` apart from
the commands that run it.

The sweep, `desk` (a person's review and resolve), `restore` and `undo` build their plans here,
then execute them through the one executor. Building a plan reads the vault but writes
nothing, and shares no mutable state: a planner gets a frozen `Planning` and the sequence
number its caller gives the plan (`core.plan.Numbering`).
"""

from __future__ import annotations

import datetime as dt
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from memory_curator.commands.log import Entry
from memory_curator.core import candidate as cand
from memory_curator.core import compose, marks, merge
from memory_curator.core import plan as plans
from memory_curator.core.decide import Decision
from memory_curator.core.facts import Querier
from memory_curator.core.names import DROPPED, INBOX
from memory_curator.core.notes import content_hash, parse
from memory_curator.core.ownership import NOT_ITS_NOTE, curator_owned, judge_may_change
from memory_curator.core.plan import Plan, Step, keep
from memory_curator.core.reasons import reason_code
from memory_curator.core.result import Action
from memory_curator.core.rules import Rules
from memory_curator.store.paths import read_whole, relpath, safe_join
from memory_curator.store.writer import Files

SYMLINK = "it is a symlink, which the curator never follows nor replaces"
NOT_UTF8 = "the note is not UTF-8 text"
ADDS_NOTHING = "it adds nothing"

Planned = tuple[Decision, Plan]  # the decision as planned (it may have become needs_review) and its plan


def new_run_id(now: dt.datetime, token: Callable[[int], str] = secrets.token_hex) -> str:
    """`20261101T120000Z-3fa9`: when the run began, and two random bytes (from `token`) so that
    two runs begun in one second differ."""
    return now.strftime("%Y%m%dT%H%M%SZ") + "-" + token(2)


@dataclass(frozen=True)
class Planning:
    """What every plan of one run is built from. `overlay`: in a dry run, the sweep's querier,
    whose staged notes stand for what the run would have written; a real run reads the disk,
    and `unwritten`: the bytes its plans queued for one group commit write, not on disk yet."""

    root: Path
    rules: Rules
    now: dt.datetime
    run_id: str
    files: Files
    overlay: Querier | None = None
    unwritten: dict[str, bytes] = field(default_factory=dict)


# --- a candidate's verdict ----------------------------------------------------------------------


def plan_for(p: Planning, candidate: cand.Candidate, decision: Decision, seq: int) -> Planned:
    """The plan of `decision`, number `seq` of its run. It may turn into needs_review on the way
    (a symlink, a person's note, a merge refused): a sweep flags such a candidate."""
    return PLAN[decision.verdict](p, candidate, decision, seq)


def _record(decision: Decision, **extra: object) -> dict[str, object]:
    """What the journal says of a verdict besides its files (what `log`, `status`, `undo` read)."""
    return {
        "reason": decision.reason,
        "rule": decision.rule,
        "contradiction": decision.contradiction,  # what `status` lists: the curator's word, not the file's
        **extra,
    }


def _move(
    p: Planning, candidate: cand.Candidate, decision: Decision, seq: int, dest: Step, *keeps: bytes, **record: object
) -> Planned:
    inbox, digest, kept = candidate.inbox_path, candidate.digest, (candidate.raw, *keeps)
    return decision, plans.move(p.run_id, seq, decision.verdict, inbox, digest, kept, dest, _record(decision, **record))


def _to_review(decision: Decision, why: str, code: str, **more: Any) -> Decision:
    """The verdict turned into needs_review on its way to the disk, with its reason and code."""
    return replace(decision, verdict="needs_review", reason=why, code=code, **more)


def _plan_promote(p: Planning, candidate: cand.Candidate, decision: Decision, seq: int) -> Planned:
    assert decision.target is not None
    if safe_join(p.root, decision.target).is_symlink():
        why = f"cannot promote to {decision.target}: {SYMLINK}"
        return _plan_review(p, candidate, _to_review(decision, why, "cannot-write"), seq)
    data = compose.promoted_text(candidate, p.now).encode("utf-8")
    dest = Step("create", decision.target, data, proof=candidate.digest)
    return _move(p, candidate, decision, seq, dest)


def _plan_drop(p: Planning, candidate: cand.Candidate, decision: Decision, seq: int) -> Planned:
    name = compose.dropped_name(Path(candidate.inbox_path).stem, p.now)
    data = compose.dropped_text(candidate.raw, decision.reason, p.now)
    dest = Step("create_unique", f"{INBOX}/{DROPPED}/{candidate.agent}/{name}", data)  # the free name: at the link
    return _move(p, candidate, decision, seq, dest)


def _plan_review(p: Planning, candidate: cand.Candidate, decision: Decision, seq: int) -> Planned:
    data = compose.review_bytes(candidate.raw, decision.reason, p.now)
    record = _record(decision, reason_code=reason_code(decision), target=decision.target)
    return decision, plans.flag(p.run_id, seq, candidate.inbox_path, candidate.digest, candidate.raw, data, record)


# --- a patch: the note read once, merged once ---------------------------------------------------


@dataclass(frozen=True)
class Target:
    """The note a patch goes into, read once: its bytes, its text (None: not UTF-8), its
    frontmatter, and whether the curator owns it (`ownership.curator_owned`)."""

    path: str
    raw: bytes
    text: str | None
    frontmatter: Mapping[str, Any]
    owned: bool

    def merged(self, candidate: cand.Candidate, now: dt.datetime, settle: merge.Settle | None = None) -> merge.Merged:
        """The patch's one merge; into a person's note it adds no provenance (it stays theirs)."""
        assert self.text is not None
        return merge.merge(self.text, candidate, now, person=not self.owned, settle=settle)


def read_target(
    root: Path, rules: Rules, rel: str, overlay: Querier | None = None, unwritten: Mapping[str, bytes] | None = None
) -> Target:
    """The note at `rel` as it is on disk; with an `overlay` (a dry run), as the sweep would
    have left it; with `unwritten`, as a plan queued in the same group commit writes it."""
    staged = overlay.note_at(rel) if overlay is not None else None
    queued = (unwritten or {}).get(rel)
    if staged is not None:
        raw = staged.text.encode("utf-8")
    else:
        raw = queued if queued is not None else read_whole(safe_join(root, rel))
    try:
        text: str | None = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    frontmatter = parse(text).frontmatter if text is not None else {}
    return Target(rel, raw, text, frontmatter, curator_owned(rel, frontmatter, rules))


def refusal(merged: merge.Merged, nothing: str = ADDS_NOTHING) -> str | None:
    """Why a merge makes no patch: the merge refused it, or it adds nothing (`nothing` says so).
    The one rule: a sweep flags the candidate with it, a person is told it before anything is
    written."""
    return merged.refused or (None if merged.changed else nothing)


def _plan_patch(p: Planning, candidate: cand.Candidate, decision: Decision, seq: int) -> Planned:
    """Merge into the note (docs/merge.md); a note the sweep may not change, or a merge refused,
    flags the candidate instead. A person's own note is never a sweep's (design §3)."""
    assert decision.target is not None
    if safe_join(p.root, decision.target).is_symlink():
        return _unpatched(p, candidate, decision, seq, SYMLINK)
    note = read_target(p.root, p.rules, decision.target, p.overlay, p.unwritten)
    if note.text is None:
        return _unpatched(p, candidate, decision, seq, NOT_UTF8)
    if decision.by_judge and not judge_may_change(note.path, note.frontmatter, p.rules):
        why = f"the judge named {note.path}, which {NOT_ITS_NOTE}"
        return _plan_review(p, candidate, _to_review(decision, why, "judge"), seq)
    if not note.owned:
        return _plan_review(p, candidate, _to_review(decision, f"matches your note {note.path}", "persons-note"), seq)
    merged = note.merged(candidate, p.now)
    refused = refusal(merged)
    if refused:
        return _unpatched(p, candidate, decision, seq, refused, merged.contradiction)
    return patch_plan(p, candidate, decision, note, merged, seq)


def patch_plan(
    p: Planning, candidate: cand.Candidate, decision: Decision, note: Target, merged: merge.Merged, seq: int
) -> Planned:
    """The merged text replaces the note only while it holds the bytes read (compare-and-swap),
    then the inbox file goes; the note's pre-image is kept for `undo`."""
    before = content_hash(note.raw)
    dest = Step("replace", note.path, merged.text.encode("utf-8"), expected=before, proof=candidate.digest)
    return _move(p, candidate, decision, seq, dest, note.raw, before_hash=before)


def _unpatched(
    p: Planning, candidate: cand.Candidate, decision: Decision, seq: int, why: str, flag: bool = False
) -> Planned:
    code = "contradiction" if flag else "cannot-write"
    flagged = _to_review(decision, f"cannot patch {decision.target}: {why}", code, contradiction=flag)
    return _plan_review(p, candidate, flagged, seq)


PLAN: dict[str, Callable[[Planning, cand.Candidate, Decision, int], Planned]] = {
    "promote": _plan_promote,
    "patch": _plan_patch,
    "drop": _plan_drop,
    "needs_review": _plan_review,
}


# --- what an action reports -----------------------------------------------------------------------


def landing(p: Planning, plan: Plan) -> str | None:
    """Where a drop would land now (a dry run's answer; a real one decides at the link)."""
    if plan.verdict != "drop":
        return None
    return relpath(p.root, p.files.free_name(safe_join(p.root, plan.dest or "")))


def patch_diff(plan: Plan) -> str:
    """A dry run's patch, as the plan would write it: the note kept before, the note written."""
    assert plan.dest is not None
    before, after = plan.kept()[-1], plan.written(plan.dest) or b""
    return merge.note_diff(plan.dest, before.decode("utf-8"), after.decode("utf-8"))


def action(
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
        reason_code=reason_code(decision) if decision.verdict == "needs_review" else None,
    )


# --- restore and undo ---------------------------------------------------------------------------


def restore_plan(run: str, inbox: str, dropped: str, raw: bytes, data: bytes, reason: str) -> Plan:
    """The dropped copy's bytes kept (so `undo` can put it back), the item written back to the
    inbox, then the copy removed; the item is held for review, so the rule that dropped it
    does not drop it again."""
    steps = (
        keep(raw),
        Step("create", inbox, data),
        Step("remove", dropped, expected=content_hash(raw)),
        Step("hold", inbox, expected=content_hash(data)),
    )
    record = {"reason": reason, "before_hash": content_hash(raw), "after_hash": content_hash(data)}
    return Plan(run, 1, "restore", inbox, dropped, steps, record)


def undo_plan(run: str, seq: int, entry: Entry, steps: tuple[Step, ...], by: str) -> Plan:
    """Taking back one journalled action (`undo_steps`), recorded as an undo of it."""
    record = {"undoes": [entry.run, entry.seq], "reason": f"undo of {entry.verdict} (by {by})"}
    return Plan(run, seq, "undo", entry.inbox, entry.dest, steps, record)


def undo_steps(
    entry: Entry, load: Callable[[str], bytes | None], read: Callable[[str], bytes | None]
) -> tuple[Step, ...] | str:
    """The steps that take `entry` back, or why they cannot. Pure, given `load` (bytes from the
    store, by hash) and `read` (a vault file's bytes, by path). Each write's bytes are kept
    first, so recovery can finish an interrupted undo forward; a candidate put back in the
    inbox is held for review, so the next sweep does not simply redo it."""
    rec = entry.record
    after, inbox, dest = rec.get("after_hash"), entry.inbox, entry.dest
    if not inbox or not dest or not after:
        return "the journal does not say enough to undo this"
    if entry.verdict == "restore":
        dropped = load(str(rec.get("before_hash")))
        if dropped is None:
            return "the dropped copy's bytes were not kept"
        return (keep(dropped), Step("create", dest, dropped), Step("remove", inbox, expected=after))
    original = load(str(rec.get("inbox_hash")))
    if original is None and entry.verdict == "drop":
        original = from_dropped(read(dest), str(rec.get("inbox_hash")))
    if original is None:
        return "the candidate's original bytes were not kept"
    if entry.verdict == "needs_review":
        return (keep(original), Step("replace", inbox, original, expected=after))
    back = (keep(original), Step("create", inbox, original))
    held = Step("hold", inbox, expected=content_hash(original))
    if entry.verdict == "patch":
        before = load(str(rec.get("before_hash")))
        if before is None:
            return "the note's pre-image was not kept"
        return (*back, keep(before), Step("replace", dest, before, expected=after), held)
    return (*back, Step("remove", dest, expected=after, prune=prunable(dest, entry.made)), held)


def prunable(rel: str, made: tuple[str, ...]) -> tuple[str, ...]:
    """The folders of `rel` the undone plan made (`facts/`, `facts/<entity>/`, `.dropped/<agent>/`),
    deepest first: the undo removes each it leaves empty. Never one it did not make (a person's,
    even empty), the inbox, nor an agent's folder (an agent writes there)."""
    parts = rel.split("/")[:-1]
    ancestors = ("/".join(parts[:n]) for n in range(len(parts), 0, -1))
    out = []
    for folder in ancestors:
        top = folder.split("/")
        if folder not in made or (top[0] == INBOX and (len(top) == 1 or (len(top) == 2 and top[1] != DROPPED))):
            break
        out.append(folder)
    return tuple(out)


def from_dropped(copy: bytes | None, digest: str) -> bytes | None:
    """A drop's audit copy is the original bytes plus a blank line and the audit line: cut
    there (with or without the newline the drop may have added) and check the hash."""
    if copy is None:
        return None
    for newline in (b"\r\n", b"\n"):
        cut = copy.rfind(newline + marks.DROP_MARK.encode("utf-8"))
        if cut < 0:
            continue
        for end in (cut, cut - len(newline)):
            if end >= 0 and content_hash(copy[:end]) == digest:
                return copy[:end]
    return None
