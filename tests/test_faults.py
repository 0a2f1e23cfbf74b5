"""Fault injection: each filesystem operation of the writer fails in turn (write, fsync, link,
replace, unlink; a bare OSError, ENOSPC, EIO) while a sweep promotes, patches, drops and
flags candidates. That sweep must go on and lose nothing; a clean second sweep must leave
every candidate's content in exactly one place, no temp file and no torn note."""

from __future__ import annotations

import errno
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from safety_kit import KINDS, FaultyOS, assert_conserved, assert_nothing_lost, new_vault, populate, temps

from memory_curator.cli.machine import build_context
from memory_curator.commands import sweep
from memory_curator.commands.context import Seams
from memory_curator.index.store import Index, IndexUnavailable
from memory_curator.store import journal as journal_mod
from memory_curator.store.rules_file import load_for_vault
from memory_curator.store.writer import Files

pytestmark = pytest.mark.slow  # each case sweeps a populated vault twice, ~1-3 s: run by .ci/run, not by default

OPS = ("write", "fsync", "link", "replace", "unlink")
ERRORS: dict[str, Callable[[], OSError]] = {
    "OSError": lambda: OSError("injected failure"),
    "ENOSPC": lambda: OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)),
    "EIO": lambda: OSError(errno.EIO, os.strerror(errno.EIO)),
}
# the operations each verdict's own effects use, so each must be seen failing that verdict
USES = {
    "write": set(KINDS),
    "fsync": set(KINDS),
    "link": {"promote", "drop", "patch"},  # patch: its pre-image for `undo` is created first
    "replace": {"review", "patch"},
    "unlink": {"promote", "drop", "patch"},
}


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = new_vault(tmp_path_factory.mktemp("template") / "vault")
    return root, populate(root, KINDS)


def _sweep(root: Path, state: Path, os_module: object = os) -> sweep.SweepResult:
    ctx = build_context(root, str(state), Seams(files=Files(os_module)))
    return sweep.run(ctx, None, sweep.Options(use_judge=False))


def _fresh(template: tuple[Path, dict[str, str]], where: Path) -> tuple[Path, Path]:
    if where.exists():
        shutil.rmtree(where)
    root, state = where / "vault", where / "state"
    shutil.copytree(template[0], root, symlinks=True)
    state.mkdir()
    Index(root, load_for_vault(root), state).refresh()  # built first: the faults land in the sweep's own writes
    return root, state


def _calls(template: tuple[Path, dict[str, str]], where: Path, op: str) -> int:
    root, state = _fresh(template, where)
    counter = FaultyOS(op)
    result = _sweep(root, state, counter)
    assert not result.errors and result.totals()["processed"] == len(KINDS)
    return counter.calls


@pytest.mark.parametrize("error", sorted(ERRORS))
@pytest.mark.parametrize("op", OPS)
def test_each_operation_failing_in_turn(template, tmp_path: Path, op: str, error: str) -> None:
    markers = template[1]
    kind_of = {f"_inbox/agent-a/{kind}-{m}.md": kind for m, kind in markers.items()}
    total = _calls(template, tmp_path / "count", op)
    assert total >= 1
    failed: set[str] = set()
    for k in range(1, total + 1):
        root, state = _fresh(template, tmp_path / "run")
        faulty = FaultyOS(op, k, ERRORS[error])
        first = _sweep(root, state, faulty)
        assert faulty.fired
        where = f"{op} #{k} ({error})"

        reported = {a.inbox_path for a in first.agents[-1].actions} | {e.inbox_path for e in first.errors}
        assert reported == set(kind_of), where
        for failure in first.errors:
            failed.add(kind_of[failure.inbox_path])
            moved = "after the inbox file was removed" in failure.error
            assert (root / failure.inbox_path).exists() or moved, where
        assert_nothing_lost(root, markers)
        if op != "unlink":  # only a failed unlink of our own temp file can leave one behind
            assert temps(root) == [], where

        second = _sweep(root, state)
        assert not second.errors, (where, second.errors)
        assert_conserved(root, markers, state)
        assert journal_mod.unfinished(journal_mod.Journal(state / "journal.jsonl")) == [], where
    assert failed >= USES[op], f"{op}: never failed {USES[op] - failed}"


def test_a_full_journal_disk_fails_every_candidate_and_moves_nothing(template, tmp_path: Path) -> None:
    root, state = _fresh(template, tmp_path)
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    result = _sweep(root, state, FaultyOS("write", 1, ERRORS["ENOSPC"], sticky=True))
    assert len(result.errors) == len(KINDS)
    assert all("No space left on device" in e.error for e in result.errors)
    assert sorted(p.relative_to(root) for p in root.rglob("*")) == before


def test_a_target_folder_linked_out_of_the_vault_fails_that_candidate_only(template, tmp_path: Path) -> None:
    root, state = _fresh(template, tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    promote = next(m for m, k in template[1].items() if k == "promote")
    (root / "facts" / f"e{promote}").symlink_to(outside, target_is_directory=True)
    result = _sweep(root, state)
    assert [e.inbox_path for e in result.errors] == [f"_inbox/agent-a/promote-{promote}.md"]
    assert "leaves the vault" in result.errors[0].error
    assert list(outside.iterdir()) == []
    assert result.totals()["processed"] == len(KINDS) - 1


def test_a_disk_failing_while_the_index_is_built_stops_the_sweep_in_one_line_and_moves_nothing(
    template, tmp_path: Path
) -> None:
    """The index is the one thing every candidate needs: when it cannot be built (here its
    fsync fails), the sweep stops before deciding anything, and says why."""
    root = tmp_path / "vault"
    shutil.copytree(template[0], root, symlinks=True)
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    with pytest.raises(IndexUnavailable, match=r"cannot build the index: .*Input/output error"):
        _sweep(root, tmp_path / "state", FaultyOS("fsync", 1, ERRORS["EIO"], sticky=True))
    assert sorted(p.relative_to(root) for p in root.rglob("*")) == before
