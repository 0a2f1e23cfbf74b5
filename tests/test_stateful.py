"""Hypothesis explores sequences of: an agent writes a candidate, a person edits a durable note,
a sweep, a crash (the process dies at the k-th filesystem call of the writer). Whatever the
order: nothing a candidate or a person wrote is ever lost; after every finished sweep each
candidate's content is in exactly one place, whole, and the journal has nothing open."""

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
    assert_nothing_lost,
    census,
    new_vault,
    temps,
)

from memory_curator.commands import sweep
from memory_curator.store import journal as journal_mod
from memory_curator.store import writer

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

    def teardown(self) -> None:
        writer.os = os
        shutil.rmtree(self.base, ignore_errors=True)

    def _sweep(self) -> sweep.SweepResult:
        return sweep.run(self.root, None, sweep.Options(use_judge=False, state_dir=str(self.state)))

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
        assert_conserved(self.root, self.markers, self.state)
        assert journal_mod.unfinished(journal_mod.Journal(self.state / "journal.jsonl")) == []

    @rule(k=st.integers(min_value=1, max_value=60))
    def sweep_crashes(self, k: int) -> None:
        dying = DyingOS(k)
        writer.os = dying
        try:
            self._sweep()
        except Crash:
            self.crashed = True
        finally:
            writer.os = os
        event("crashed" if dying.dead else "finished before the crash point")

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
