"""Hypothesis explores sequences of: an agent writes a candidate, a person edits a durable note,
a sweep, a crash (the process dies at the k-th filesystem call of the writer), and a person's
`restore` or `undo` (which may die too). Whatever the order: nothing a candidate or a person
wrote is ever lost; after every finished sweep each candidate's content is in exactly one
place, whole (where its verdict puts it, until a person moved things), and the journal has
nothing open."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)
from safety_kit import (
    KINDS,
    Crash,
    DyingOS,
    add_candidate,
    assert_conserved,
    assert_in_one_place,
    assert_nothing_lost,
    census,
    new_vault,
    temps,
)

from memory_curator.cli.machine import build_context
from memory_curator.commands import restore, sweep, undo
from memory_curator.commands.context import Context, Seams
from memory_curator.core.errors import CuratorError
from memory_curator.store import journal as journal_mod
from memory_curator.store.writer import Files

PERSON = b"person-edit "
_PERSON_MARK = re.compile(rb"^" + PERSON + rb"(\w+)$", re.MULTILINE)


class Vault(RuleBasedStateMachine):
    @initialize()
    def make_vault(self) -> None:
        self.base = Path(tempfile.mkdtemp(prefix="mc-stateful-"))
        self.root = new_vault(self.base / "vault")
        self.state = self.base / "state"
        self.markers: dict[str, str] = {}
        self.person: dict[str, str] = {}  # person edit -> the note it was typed into
        self.crashed = False
        self.moved_by_person = False  # from then on, a candidate's place is not its verdict's

    def teardown(self) -> None:
        shutil.rmtree(self.base, ignore_errors=True)

    def _ctx(self, os_module: object = os) -> Context:
        return build_context(self.root, str(self.state), Seams(files=Files(os_module), user="pat"))

    def _sweep(self, os_module: object = os) -> sweep.SweepResult:
        return sweep.run(self._ctx(os_module), None, sweep.Options(use_judge=False))

    def _durable(self) -> list[Path]:
        return sorted((self.root / "facts").rglob("*.md"))

    @rule(kind=st.sampled_from(KINDS), agent=st.sampled_from(["agent-a", "agent-b"]))
    def agent_writes_a_candidate(self, kind: str, agent: str) -> None:
        marker = f"c{len(self.markers):04d}"
        add_candidate(self.root, kind, marker, agent)
        self.markers[marker] = kind

    @precondition(lambda self: bool(self._durable()))
    @rule(pick=st.integers(min_value=0))
    def person_edits_a_durable_note(self, pick: int) -> None:
        notes = self._durable()
        note = notes[pick % len(notes)]
        edit = f"p{len(self.person):04d}"
        with open(note, "ab") as handle:
            handle.write(PERSON + edit.encode() + b"\n")
        self.person[edit] = note.relative_to(self.root).as_posix()

    @rule()
    def sweep_runs(self) -> None:
        result = self._sweep()
        event(f"sweep after a crash, {'with' if result.notes else 'without'} repairs" if self.crashed else "sweep")
        self.crashed = False
        assert not result.errors, result.errors
        if self.moved_by_person:
            assert_in_one_place(self.root, self.markers)
        else:
            assert_conserved(self.root, self.markers, self.state)
        assert journal_mod.unfinished(journal_mod.Journal(self.state / "journal.jsonl")) == []

    @rule(k=st.integers(min_value=1, max_value=60))
    def sweep_crashes(self, k: int) -> None:
        dying = DyingOS(k)
        try:
            self._sweep(dying)
        except Crash:
            self.crashed = True
        event("crashed" if dying.dead else "finished before the crash point")

    @rule(action=st.sampled_from(["restore", "undo"]), k=st.integers(min_value=0, max_value=30), pick=st.integers(0))
    def person_acts(self, action: str, k: int, pick: int) -> None:
        """A person restores a dropped item or undoes the last run; with k > 0 the process dies
        at its k-th effectful call."""
        dropped = sorted((self.root / "_inbox/.dropped").rglob("*.md"))
        if action == "restore" and not dropped:
            return
        dying = DyingOS(k) if k else None
        ctx = self._ctx(dying or os)
        try:
            if action == "restore":
                restore.restore(ctx, dropped[pick % len(dropped)])
            else:
                undo.undo(ctx, None)
        except Crash:
            self.crashed = True
        except CuratorError as exc:  # nothing to undo, a name taken: said, and nothing done
            event(f"{action} refused: {str(exc)[:30]}")
        self.moved_by_person = True
        event(f"{action}{' crashed' if dying and dying.dead else ''}")

    @invariant()
    def nothing_is_lost(self) -> None:
        if not hasattr(self, "root"):
            return
        assert_nothing_lost(self.root, self.markers)
        edits = census(self.root, _PERSON_MARK)
        for edit, note in self.person.items():
            assert edits.get(edit) == [note], f"person's edit {edit} in {edits.get(edit)}, typed into {note}"
        if not self.crashed:
            assert temps(self.root) == []


TestConservationOverRandomHistories = pytest.mark.slow(Vault.TestCase)
TestConservationOverRandomHistories.settings = settings(
    max_examples=80, stateful_step_count=20, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
