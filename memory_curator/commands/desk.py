"""What a person (or an agent acting for one) does with one inbox item: promote it, patch it
into a chosen note, or drop it with a reason.

Each action is planned by the sweep's own planners (`commands.planning`) and applied by the one
executor, so it takes the same lock, writes through the same writer and is journalled like a
sweep's verdict, under a run id of its own (which `undo` accepts). The name of the person is
kept in the journalled reason, and a drop's audit line reads `dropped by memory-curator:
<reason> (by <person>)`.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from memory_curator.commands.context import Context
from memory_curator.commands.planning import (
    NOT_UTF8,
    Planned,
    Planning,
    Target,
    action,
    landing,
    new_run_id,
    patch_plan,
    plan_for,
    read_target,
    refusal,
)
from memory_curator.core import candidate as cand
from memory_curator.core import merge
from memory_curator.core.clock import Clock
from memory_curator.core.decide import Decision
from memory_curator.core.errors import CuratorError
from memory_curator.core.facts import Querier
from memory_curator.core.json_types import JsonObject
from memory_curator.core.names import DROPPED, INBOX, ROOT_AGENT, is_candidate_name
from memory_curator.core.notes import NotEditable, content_hash, edit_frontmatter
from memory_curator.core.ownership import never_owned
from memory_curator.core.plan import Numbering
from memory_curator.core.plan import by as plan_by
from memory_curator.core.result import Action
from memory_curator.core.rules import Rules
from memory_curator.core.text import one_line
from memory_curator.store import recovery, writer
from memory_curator.store.executor import Executor
from memory_curator.store.journal import Journal
from memory_curator.store.paths import oversize, read_capped, relpath, safe_join
from memory_curator.store.state import sweep_lock

PERSON_RULE = "by-person"  # the `rule` a person's drop is journalled under
PERSONS_NOTE = (
    "written by a person; it is changed only when you confirm the diff "
    "(review asks; resolve on a terminal, or with --yes)"
)


@dataclass(frozen=True)
class Preview:
    """A patch as the person confirms it: the diff, and the hash of the note it was made from
    (`Desk.patch(..., seen=)` refuses a note changed since). `persons`: the note is the
    person's own, so writing it needs their second key whatever the screen."""

    target: str
    diff: str
    seen: str
    persons: bool = True
    settle: merge.Settle | None = None


@dataclass(frozen=True)
class Bulk:
    """One choice applied to many items as one run: each item its own journalled plan (so
    `undo RUN` takes all of them back), and the items refused with the reason."""

    run_id: str
    done: tuple[Done, ...]
    refused: tuple[tuple[str, str], ...]

    def to_json(self) -> JsonObject:
        refused = [{"inbox_path": rel, "error": why} for rel, why in self.refused]
        return {"run_id": self.run_id, "actions": [d.action.to_json() for d in self.done], "refused": refused}


Choice = tuple[str, str | None]  # ("promote", surface) | ("patch", note) | ("drop", reason)


SETTLED = {  # how a person settled a contradiction, in the journalled reason
    "new": "the new value current, the old one in history",
    "old": "the old value kept, the new one in history",
    "both": "both values kept, flagged as a contradiction",
}


def vault_file(root: Path, path: str | Path) -> tuple[str, Path]:
    """(vault-relative POSIX path, full path) of a file given relative to the current folder,
    relative to the vault, or absolute; a path outside the vault or a symlink is refused."""
    given = Path(path)
    full = given if given.is_absolute() else (Path.cwd() / given)
    if not full.exists() and not given.is_absolute() and (root / given).exists():
        full = root / given
    try:
        rel = (full.parent.resolve() / full.name).relative_to(root.resolve()).as_posix()
    except ValueError:
        raise CuratorError(f"{path}: not inside the vault {root}") from None
    if full.is_symlink() or not full.is_file():
        raise CuratorError(f"{rel}: no such file (or a symlink, which the curator never follows)")
    return rel, full


def inbox_item(root: Path, path: str | Path) -> tuple[str, str]:
    """(vault-relative path, agent id) of a candidate file in the inbox; anything else is refused."""
    rel, _ = vault_file(root, path)
    parts = rel.split("/")
    if parts[0] != INBOX or len(parts) not in (2, 3) or (len(parts) == 3 and parts[1].startswith(".")):
        raise CuratorError(f"{rel}: not a candidate in {INBOX}/ or {INBOX}/<agent>/")
    if not is_candidate_name(parts[-1]):
        raise CuratorError(f"{rel}: not a candidate (a markdown file that is not a temp or sync file)")
    return rel, parts[1] if len(parts) == 3 else ROOT_AGENT


@contextmanager
def locked(ctx: Context, wait: bool = False) -> Iterator[Executor]:
    """The sweep lock, with what a crash left half-done finished first (as a sweep does), and
    the executor this command's plans go through."""
    with sweep_lock(ctx.state, ctx.clock, ctx.machine.pid, ctx.host, wait=wait):
        journal = Journal(ctx.state / "journal.jsonl", ctx.clock, ctx.files)
        recovery.recover(ctx.root, ctx.state, journal, ctx.files)
        yield Executor(ctx.root, ctx.state, journal, ctx.files)


@dataclass(frozen=True)
class Done:
    """One applied action and the run id it was journalled under."""

    action: Action
    run_id: str

    def to_json(self) -> JsonObject:
        return {"run_id": self.run_id, **self.action.to_json()}


@dataclass(frozen=True)
class Run:
    """One journalled run of a person's actions (one action, or a bulk choice): what its plans
    are built from, the executor they go through, and their numbering."""

    planning: Planning
    executor: Executor
    numbers: Numbering = field(default_factory=Numbering)


@dataclass
class Desk:
    """A person's actions on one vault; each one is its own journalled run."""

    ctx: Context
    wait: bool = False
    by: str | None = None  # the way the person decided, when not a terminal (`review-note`): journalled as `by`
    copy: str | None = None  # the review note's conflict copy the act was ticked in: journalled as `copy`

    @property
    def root(self) -> Path:
        return self.ctx.root

    @property
    def rules(self) -> Rules:
        return self.ctx.rules

    @property
    def user(self) -> str:
        return self.ctx.user

    @property
    def state(self) -> Path:
        return self.ctx.state

    @property
    def clock(self) -> Clock:
        return self.ctx.clock

    def querier(self) -> Querier:
        """What `review` shows beside an item: the vault's index (the context's querier)."""
        return self.ctx.querier(self.ctx, self.rules)

    def read(self, rel: str) -> tuple[bytes, cand.Candidate]:
        """The item as a person decides it: what they promote or patch is theirs to approve, so
        privacy content they let out carries `user_approved: true` (`compose.approval`)."""
        rel, agent = inbox_item(self.root, rel)
        path = safe_join(self.root, rel)
        limit = self.rules.settings.max_candidate_bytes
        raw = read_capped(path, limit)
        if raw is None:
            raise CuratorError(f"{rel}: {oversize(path, limit)}; split it or move it by hand")
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:  # every action rewrites the text; this one has none to keep
            raise CuratorError(f"{rel}: not UTF-8 text; convert or move it by hand") from None
        return raw, dataclasses.replace(cand.build(raw, rel, agent, self.rules), approved=True)

    def promote(self, rel: str, surface: str | None = None) -> Done:
        """Promote to the computed target, or to the surface the person picked."""
        with self._run() as run:
            return self._promote(run, rel, surface)

    def _promote(self, run: Run, rel: str, surface: str | None) -> Done:
        raw, candidate = self.read(rel)
        if surface:
            candidate = self._as_surface(candidate, raw, surface)
        target = _promotable(candidate, self.rules)
        if safe_join(self.root, target).exists():
            how = f"review: m, or n/k/b on a contradiction; resolve: --patch {target}"
            raise CuratorError(f"{target} already exists; merge into it instead ({how})")
        name = candidate.surface.name if candidate.surface else None
        decision = Decision("promote", f"promoted by {self.user}", name, target)
        return self._apply(run, candidate, decision)

    def patch(
        self,
        rel: str,
        target: str,
        confirmed: bool = False,
        seen: str | None = None,
        settle: merge.Settle | None = None,
    ) -> Done:
        """Merge the candidate into a durable note the person chose.

        A person's note (`ownership.curator_owned` is false) is written only when the person
        confirmed it (`confirmed`; `seen` is the hash of the note they saw the diff of, and a
        note changed since is refused), and stays theirs: no `curated_from`, no `updated_at`.
        `settle` is the person's answer to a value contradiction (`merge.settled`).
        """
        with self._run() as run:
            return self._patch(run, rel, target, confirmed, seen, settle)

    def _patch(
        self, run: Run, rel: str, target: str, confirmed: bool, seen: str | None, settle: merge.Settle | None = None
    ) -> Done:
        candidate, note = self._patching(rel, target)
        if seen is not None and content_hash(note.raw) != seen:
            raise CuratorError(f"{note.path} changed since you saw the diff; nothing done")
        if not note.owned and not confirmed:
            raise CuratorError(f"{note.path}: {PERSONS_NOTE}")
        merged = _merged(note, candidate, run.planning.now, settle)
        surface = candidate.surface.name if candidate.surface else None
        how = f" ({SETTLED[settle]})" if settle else ""
        decision = Decision("patch", f"patched into {note.path} by {self.user}{how}", surface, note.path)
        return self._apply(
            run, candidate, decision, partial(patch_plan, run.planning, candidate, decision, note, merged)
        )

    def drop(self, rel: str, reason: str) -> Done:
        """Drop to `.dropped/` with the person's reason in the audit line."""
        why = one_line(reason)
        if not why:
            raise CuratorError("a drop needs a reason")
        with self._run() as run:
            return self._drop(run, rel, why)

    def _drop(self, run: Run, rel: str, why: str) -> Done:
        _, candidate = self.read(rel)
        surface = candidate.surface.name if candidate.surface else None
        decision = Decision("drop", f"{why} (by {self.user})", surface, rule=PERSON_RULE)
        return self._apply(run, candidate, decision)

    def bulk(self, rels: list[str], choice: Choice, tick: Callable[[], None] = lambda: None) -> Bulk:
        """The same choice for many items, as one run under one lock: each item is its own
        plan (journalled, undoable with the rest by `undo RUN`), and an item that cannot take
        the choice is left as it was, with the reason. A person's own note is never a bulk
        target: each write into it needs its own diff and second key."""
        verb, detail = choice
        if verb == "drop" and not one_line(detail or ""):
            raise CuratorError("a drop needs a reason")
        if verb == "patch":
            note = self._durable(detail or "")
            if not read_target(self.root, self.rules, note).owned:
                raise CuratorError(f"{note}: a note of your own is patched one item at a time (each diff confirmed)")
        done: list[Done] = []
        refused: list[tuple[str, str]] = []
        with self._run() as run:
            for rel in rels:
                try:
                    done.append(self._one_of_bulk(run, rel, choice))
                except CuratorError as exc:
                    refused.append((rel, str(exc)))
                tick()
            return Bulk(run.planning.run_id, tuple(done), tuple(refused))

    def _one_of_bulk(self, run: Run, rel: str, choice: Choice) -> Done:
        verb, detail = choice
        if verb != "drop" and self.read(rel)[1].privacy:
            raise CuratorError(f"{rel}: private content is approved one item at a time, never in bulk")
        if verb != "drop" and self.read(rel)[1].secrets:
            raise CuratorError(f"{rel}: it holds a credential: approved one item at a time, never in bulk")
        if verb == "promote":
            return self._promote(run, rel, detail)
        if verb == "patch":
            return self._patch(run, rel, detail or "", confirmed=False, seen=None)
        if verb == "drop":
            return self._drop(run, rel, one_line(detail or ""))
        raise CuratorError(f"unknown choice {verb!r}")

    @contextmanager
    def session(self) -> Iterator[Run]:
        """One run (one lock, one run id) for several `act`s: how the review note applies its ticks."""
        with self._run() as run:
            yield run

    def act(self, run: Run, rel: str, verb: str, detail: str | None, digest: str, seen: str | None = None) -> Done:
        """One decision within `run`, only while the item still holds `digest` (and the note a
        patch goes into, `seen`): `promote` (`detail` the target it was offered: it must still be
        the computed one), `patch` / `new` / `old` / `both` into the note `detail` (the last three
        settle a contradiction), `drop` for the reason `detail`. A person's own note is never
        written this way: only `review` and `resolve` confirm its diff."""
        _, candidate = self.read(rel)
        if candidate.digest != digest:
            raise CuratorError(f"{candidate.inbox_path} changed since the review note was written; decide it again")
        if verb != "drop" and candidate.secrets:  # a tick never lets a credential into a note
            raise CuratorError(f"{candidate.inbox_path} holds a credential: approved only in `memory-curator review`")
        if verb == "promote":
            if candidate.target != detail:
                raise CuratorError(f"{candidate.inbox_path} would no longer be promoted to {detail}")
            return self._promote(run, rel, None)
        if verb == "drop":
            return self._drop(run, rel, one_line(detail or "") or "dropped")
        if verb in ("patch", "new", "old", "both"):
            note = read_target(self.root, self.rules, self._durable(detail or ""))
            if not note.owned:
                raise CuratorError(f"{note.path}: {PERSONS_NOTE}")
            settle: merge.Settle | None = None if verb == "patch" else verb  # type: ignore[assignment]
            return self._patch(run, rel, note.path, False, seen, settle)
        raise CuratorError(f"unknown action {verb!r}")

    @contextmanager
    def _run(self) -> Iterator[Run]:
        now = self.ctx.clock.now()
        with locked(self.ctx, self.wait) as executor:
            yield Run(Planning(self.root, self.rules, now, new_run_id(now), self.ctx.files), executor)

    def _apply(
        self, run: Run, candidate: cand.Candidate, asked: Decision, build: Callable[[int], Planned] | None = None
    ) -> Done:
        """Plan (`build`, else the sweep's planner of the verdict) and execute; a plan that turned
        into needs_review on the way (a symlink where a note would go) is reported as refused."""
        try:
            decision, plan = run.numbers.take(build or partial(plan_for, run.planning, candidate, asked))
            plan = plan_by(plan, self.by, self.copy)
            moved = landing(run.planning, plan)
            moved = run.executor.execute(plan).get(plan.dest or "", moved)
        except writer.Conflict:
            raise CuratorError(f"{candidate.inbox_path} changed while it was being written; nothing done") from None
        except FileExistsError as exc:
            raise CuratorError(f"{asked.target or exc.filename}: already exists; nothing done") from None
        except OSError as exc:
            raise CuratorError(f"{candidate.inbox_path}: {exc.strerror or exc}; left in the inbox") from None
        if decision.verdict != asked.verdict:
            raise CuratorError(f"{candidate.inbox_path}: not {asked.verdict}ed: {decision.reason}")
        return Done(action(candidate, decision, moved_to=moved), run.planning.run_id)

    def _as_surface(self, candidate: cand.Candidate, raw: bytes, name: str) -> cand.Candidate:
        """The candidate as the surface the person picked (its `type` set); the inbox file's
        own hash is kept, so removing it still checks that nobody changed it meanwhile."""
        surface = self.rules.surface_named(name) or self.rules.surface_for_type(name)
        if surface is None:
            known = ", ".join(s.name for s in self.rules.surfaces)
            raise CuratorError(f"unknown surface {name!r} (one of: {known})")
        heading = _first_heading(candidate.note.body)
        wants_title = "title" in surface.required and not candidate.frontmatter.get("title") and heading

        def retype(data: Any) -> None:
            data["type"] = surface.type
            if wants_title:  # a note with an H1 and no title: the H1 is its title
                data["title"] = heading

        try:
            text = edit_frontmatter(candidate.note.text, retype)
        except NotEditable as exc:
            raise CuratorError(f"{candidate.inbox_path}: {exc}; fix it first (review: e to edit)") from None
        built = cand.build(text, candidate.inbox_path, candidate.agent, self.rules)
        return dataclasses.replace(built, digest=content_hash(raw))

    def preview(self, rel: str, target: str, settle: merge.Settle | None = None) -> Preview:
        """What a patch into `target` would change (a person's note or the curator's), as the
        plan would write it; refused like `patch` would be. Nothing is written."""
        candidate, note = self._patching(rel, target)
        merged = _merged(note, candidate, self.ctx.clock.now(), settle)
        assert note.text is not None  # `_merged` refuses a note that is not text
        diff = merge.note_diff(note.path, note.text, merged.text)
        return Preview(note.path, diff, content_hash(note.raw), not note.owned, settle)

    def patchable(
        self, rel: str, target: str, settles: tuple[merge.Settle | None, ...], read: cand.Candidate | None = None
    ) -> str:
        """Refused as `patch` would refuse the first way of settling it refuses, without a diff
        (the review note offers, it shows none); the note's hash, as it was read. The item is
        `read` when given (`Desk.read`'s), the note read once."""
        candidate, note = self._patching(rel, target, read)
        now = self.ctx.clock.now()
        for settle in settles:
            _merged(note, candidate, now, settle)
        return content_hash(note.raw)

    def _patching(self, rel: str, target: str, read: cand.Candidate | None = None) -> tuple[cand.Candidate, Target]:
        """The item and the durable note it would be patched into, read once."""
        candidate = read if read is not None else self.read(rel)[1]
        if candidate.note.problem:
            raise CuratorError(f"{candidate.inbox_path}: {candidate.note.problem}; fix it first")
        note = self._durable(target)
        return candidate, read_target(self.root, self.rules, note)

    def _durable(self, target: str) -> str:
        """A durable note of this vault a person may patch into, as a vault-relative path."""
        rel = target.removeprefix("./")
        given = Path(target)
        if given.is_absolute():
            try:
                rel = relpath(self.root.resolve(), given.resolve())
            except ValueError:
                raise CuratorError(f"{target}: not inside the vault") from None
        if not rel.endswith(".md"):
            rel += ".md"
        first = rel.split("/")[0]
        if first == INBOX or first.startswith(".") or DROPPED in rel.split("/") or never_owned(rel):
            where = f"outside {INBOX}/, _meta/ and dot-folders"
            raise CuratorError(f"{rel}: not a durable note (patch into a note {where})")
        path = safe_join(self.root, rel)  # a folder on the way that leaves the vault is refused here
        if path.is_symlink():
            raise CuratorError(f"{rel}: a symlink, which the curator never follows nor replaces; nothing done")
        if not path.is_file():
            raise CuratorError(f"{rel}: no such note")
        return rel


def _merged(note: Target, candidate: cand.Candidate, now: dt.datetime, settle: merge.Settle | None) -> merge.Merged:
    """The patch's one merge, refused before anything is written by the sweep's own rule
    (`planning.refusal`): the person is told why, and how a contradiction is settled."""
    if note.text is None:
        raise CuratorError(f"cannot patch {note.path}: {NOT_UTF8}")
    merged = note.merged(candidate, now, settle)
    if merged.contradiction:
        choices = "review: n takes the new value, k keeps the old, b keeps both"
        raise CuratorError(f"cannot patch {note.path}: {merged.refused} ({choices})")
    why = refusal(merged, nothing="the candidate adds nothing to it")
    if why:
        raise CuratorError(f"cannot patch {note.path}: {why}")
    return merged


def _first_heading(body: str) -> str | None:
    """The text of a note's first `# ` heading (what a person would call its title)."""
    for line in body.splitlines():
        if line.startswith("# ") and line[2:].strip():
            return line[2:].strip()
    return None


def _promotable(candidate: cand.Candidate, rules: Rules) -> str:
    """The target path, or why this candidate cannot become a durable note as it is."""
    where = candidate.inbox_path
    if candidate.note.problem:
        raise CuratorError(f"{where}: {candidate.note.problem}; fix it first")
    problem = cand.placement_problem(candidate, rules)  # the wording `run`, `check` and `submit` give it
    if problem or candidate.target is None:
        raise CuratorError(f"{where}: {cand.with_hints(problem or 'no target path', candidate)}")
    return candidate.target
