"""A person's actions under faults and crashes: `restore`, `undo`, `resolve` (the same desk
`review` acts through) with each filesystem operation failing in turn, or the process dying at
each effectful call. Then a normal sweep runs (it recovers first). Every item's content must be
in exactly one place, and the vault must equal one uninterrupted history: the action done and
then that sweep, or (an action that failed before changing anything, and said so) that sweep
alone."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from safety_kit import (
    Crash,
    DyingOS,
    FaultyOS,
    add_candidate,
    assert_conserved,
    assert_in_one_place,
    new_vault,
    normalized,
)

from memory_curator.cli.machine import build_context
from memory_curator.commands import restore, sweep, undo
from memory_curator.commands.context import Context, Seams
from memory_curator.commands.desk import Desk
from memory_curator.core.errors import CuratorError
from memory_curator.store.writer import Files

pytestmark = pytest.mark.slow

OPS = ("write", "fsync", "link", "replace", "unlink")
MARKER = "m0001"


def _ctx(root: Path, state: Path, os_module: object = os) -> Context:
    """The context a command runs in, its file operations over `os_module` (failing or dying)."""
    return build_context(root, str(state), Seams(files=Files(os_module), user="pat"))


def _sweep(root: Path, state: Path) -> sweep.SweepResult:
    return sweep.run(build_context(root, str(state)), None, sweep.Options(use_judge=False))


def _dropped(root: Path) -> Path:
    [copy] = (root / "_inbox/.dropped/agent-a").iterdir()
    return copy


def _inbox(kind: str) -> str:
    return f"_inbox/agent-a/{kind}-{MARKER}.md"


# name -> (the candidate's kind, what the vault needs before the action, the action, where the
# content ends: a `safety_kit.WHERE` kind)
Action = Callable[[Context], object]
SCENARIOS: dict[str, tuple[str, bool, Action, str]] = {
    "restore": ("drop", True, lambda ctx: restore.restore(ctx, _dropped(ctx.root)), "review"),
    "undo-promote": ("promote", True, lambda ctx: undo.undo(ctx, None), "review"),
    "undo-patch": ("patch", True, lambda ctx: undo.undo(ctx, None), "review"),
    "undo-drop": ("drop", True, lambda ctx: undo.undo(ctx, None), "review"),
    "resolve-promote": (
        "review",
        False,
        lambda ctx: Desk(ctx).promote(_inbox("review")),
        "promote",
    ),
    "resolve-drop": (
        "review",
        False,
        lambda ctx: Desk(ctx).drop(_inbox("review"), "noise"),
        "drop",
    ),
    "resolve-patch": (
        "patch",
        False,
        lambda ctx: Desk(ctx).patch(_inbox("patch"), f"facts/p{MARKER}/status.md"),
        "patch",
    ),
}


def _template(tmp: Path, name: str) -> tuple[Path, Path]:
    kind, swept, _, _ = SCENARIOS[name]
    root, state = new_vault(tmp / "template" / "vault"), tmp / "template" / "state"
    add_candidate(root, kind, MARKER)
    if swept:
        assert not _sweep(root, state).errors
    if kind == "review" and not swept:  # a candidate the person promotes needs what promotion needs
        path = root / _inbox("review")
        path.write_text(
            path.read_text().replace("confidence: 2\n", "confidence: 2\nsource_url: https://x.example.dev/1\n")
        )
        os.utime(path, (1_600_000_000, 1_600_000_000))  # settled: a sweep alone promotes it, however late it runs
    return root, state


def _copy(template: tuple[Path, Path], where: Path) -> tuple[Path, Path]:
    if where.exists():
        shutil.rmtree(where)
    shutil.copytree(template[0], where / "vault", symlinks=True)
    if template[1].exists():
        shutil.copytree(template[1], where / "state")
    return where / "vault", where / "state"


def _act(name: str, root: Path, state: Path, os_module: object) -> None:
    with contextlib.suppress(CuratorError, OSError, Crash):
        SCENARIOS[name][2](_ctx(root, state, os_module))


Histories = list[tuple[str, dict[str, bytes]]]  # (the kind the content ends as, the vault then), per history


def _histories(template: tuple[Path, Path], where: Path, name: str) -> Histories:
    """The two uninterrupted histories: the action then a sweep; a sweep alone."""
    out: Histories = []
    for acted in (True, False):
        root, state = _copy(template, where)
        if acted:
            SCENARIOS[name][2](_ctx(root, state))
        assert not _sweep(root, state).errors
        kind = SCENARIOS[name][3] if acted else _unacted(name)
        assert_conserved(root, {MARKER: kind}, state)
        out.append((kind, normalized(root)))
    return out


def _unacted(name: str) -> str:
    kind, swept, _, _ = SCENARIOS[name]
    if not swept:  # the person's item, made promotable (`_template`): a sweep alone promotes it
        return "promote" if kind == "review" else kind
    return {"drop": "drop", "promote": "promote", "patch": "patch"}[kind]


def _check(root: Path, state: Path, name: str, histories: Histories, where: str) -> None:
    after = _sweep(root, state)
    assert not after.errors, (where, after.errors)
    errors = []
    for kind, vault in histories:
        try:
            assert_conserved(root, {MARKER: kind}, state)
        except AssertionError as exc:
            errors.append(str(exc))
            continue
        if normalized(root) == vault:
            return
        errors.append(f"ended as {kind}, but not as that history left the vault")
    raise AssertionError(f"{where}: {'; '.join(errors)}")


def _count(template: tuple[Path, Path], where: Path, name: str, op: str) -> int:
    root, state = _copy(template, where)
    counter = FaultyOS(op)
    SCENARIOS[name][2](_ctx(root, state, counter))
    return counter.calls


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_each_operation_failing_in_turn_during_a_persons_action(tmp_path: Path, name: str) -> None:
    template = _template(tmp_path, name)
    histories = _histories(template, tmp_path / "reference", name)
    calls = {op: _count(template, tmp_path / "count", name, op) for op in OPS}
    assert calls["write"] and calls["fsync"] and calls["unlink"], calls  # every action writes and removes
    for op in OPS:
        for k in range(1, calls[op] + 1):
            root, state = _copy(template, tmp_path / "run")
            _act(name, root, state, FaultyOS(op, k, lambda: OSError(errno.EIO, os.strerror(errno.EIO))))
            _check(root, state, name, histories, f"{name}: {op} #{k} fails")


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_a_crash_at_each_step_of_a_persons_action(tmp_path: Path, name: str) -> None:
    template = _template(tmp_path, name)
    histories = _histories(template, tmp_path / "reference", name)
    k = 1
    while True:
        root, state = _copy(template, tmp_path / "run")
        dying = DyingOS(k)
        _act(name, root, state, dying)
        _check(root, state, name, histories, f"{name}: dies at effectful call #{k}")
        if not dying.dead:
            break
        k += 1
    assert k > 3, f"{name}: only {k} effectful calls"


def test_an_unfinished_undo_of_a_note_a_person_edited_since_is_taken_back(tmp_path: Path) -> None:
    """The undo died after putting the candidate back in the inbox, before removing the note;
    then the person added to the note. The note is theirs now: recovery removes the copy the
    undo wrote (the note still holds the content), as if the undo had been refused."""
    template = _template(tmp_path, "undo-promote")
    note, inbox = f"facts/e{MARKER}/status.md", _inbox("promote")
    for k in range(1, 60):
        root, state = _copy(template, tmp_path / "run")
        _act("undo-promote", root, state, DyingOS(k))
        if (root / inbox).exists() and (root / note).exists():
            break
    else:
        pytest.fail("no crash point left both the note and the candidate")
    with open(root / note, "ab") as handle:
        handle.write(b"the person's own line\n")
    after = _sweep(root, state)
    assert any("took back the unfinished undo" in n for n in after.notes), after.notes
    assert not (root / inbox).exists()
    assert (root / note).read_bytes().endswith(b"the person's own line\n")
    assert_in_one_place(root, {MARKER: "promote"})
