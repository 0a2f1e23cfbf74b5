"""Power cuts inside a group commit (`Executor.execute_batch`), simulated through `Files`
(`power_kit.PowerOS`): the sweep is cut at every effectful call in turn, whatever was not yet
fsynced is lost, then a normal sweep (recovery first) runs on what survived. Nothing may be
lost, nothing doubled, a person's note is byte-identical or patched exactly once.

Three vaults: a mix of every verdict over several batches; a batch in which a later candidate
patches the note an earlier one created; a batch in which one plan's compare-and-swap fails
(a person saves the note it patches while the batch is being written)."""

from __future__ import annotations

import errno
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from power_kit import PowerCut, PowerOS
from safety_kit import (
    KINDS,
    add_candidate,
    assert_conserved,
    base_note,
    census,
    new_vault,
    normalized,
    populate,
    set_commit_batch,
    words,
)

from memory_curator.cli.machine import build_context
from memory_curator.commands import sweep
from memory_curator.commands.context import Seams
from memory_curator.core.errors import RulesError
from memory_curator.core.notes import content_hash
from memory_curator.core.rules import parse as parse_rules
from memory_curator.index.store import Index
from memory_curator.store import journal as journal_mod
from memory_curator.store import stores
from memory_curator.store.rules_file import load_for_vault
from memory_curator.store.writer import Files

BATCH = 3
PERSON_EDIT = "A line the person saved while the batch was written.\n"
Vault = tuple[Path, Path, dict[str, str]]  # vault, state, marker -> kind


def _skip(path: Path) -> bool:
    """Files the model leaves alone: they keep their own guarantees (SQLite, the lock, logs)."""
    return path.name.startswith("index.") or path.name in ("lock", "sweeps.log", "crash.log")


def _template(where: Path, fill: Callable[[Path], dict[str, str]]) -> Vault:
    root, state = where / "vault", where / "state"
    new_vault(root)
    set_commit_batch(root, BATCH)
    markers = fill(root)
    state.mkdir()
    Index(root, load_for_vault(root), state).refresh()  # built first: the cuts land in the sweep's writes
    return root, state, markers


def _copy(template: Vault, where: Path) -> tuple[Path, Path]:
    if where.exists():
        shutil.rmtree(where)
    root, state = where / "vault", where / "state"
    shutil.copytree(template[0], root, symlinks=True)
    shutil.copytree(template[1], state)
    return root, state


def _sweep(root: Path, state: Path, files: Files | None = None) -> sweep.SweepResult:
    ctx = build_context(root, str(state), Seams(files=files) if files else None)
    return sweep.run(ctx, None, sweep.Options(use_judge=False, settle=0))


def _cut_sweep(root: Path, state: Path, cut_at: int, person: bool = False) -> PowerOS:
    """The sweep, cut at its `cut_at`-th call; a sweep that finished first is cut right after
    (`disk.dead` False): then everything it reported must have been durable."""
    disk = PowerOS([root, state], cut_at, _skip)
    if person:
        disk.hook = _person_saves(root, disk)
    try:
        _sweep(root, state, Files(disk))
    except PowerCut:
        disk.cut()
        return disk
    disk.cut()
    disk.dead = False
    return disk


def _person_saves(root: Path, disk: PowerOS) -> Callable[[str, tuple[Any, ...]], None]:
    """When the batch's begin records are written (after planning, before any vault write), a
    person saves the patched note in Obsidian (durably, in place)."""

    def hook(name: str, args: tuple[Any, ...]) -> None:
        if name == "write" and b'"event": "begin"' in bytes(args[1]) and not getattr(hook, "done", False):
            hook.done = True  # type: ignore[attr-defined]
            note = root / _CAS_NOTE
            with note.open("ab") as handle:
                handle.write(PERSON_EDIT.encode())
            disk.data[disk.gen_of[note.stat().st_ino]] = note.read_bytes()

    return hook


def _steps(template: Vault, where: Path, person: bool = False) -> int:
    root, state = _copy(template, where)
    disk = _cut_sweep(root, state, 0, person)
    assert not disk.dead
    return disk.calls


def _assert_kept(root: Path, state: Path, where: str) -> None:
    """Every candidate that left the inbox has its kept copy (what `undo` puts back) durable:
    read back from the store, from its own file or its batch's pack."""
    for record in journal_mod.Journal(state / "journal.jsonl").records():
        inbox = record.get("inbox")
        if record.get("event") != "begin" or not inbox or (root / inbox).exists():
            continue
        for step in record["steps"]:
            if step["op"] == "keep":
                assert stores.preimage(state, step["hash"]) is not None, f"{where}: the copy of {inbox} was lost"


def _after_the_cut(root: Path, state: Path, where: str) -> sweep.SweepResult:
    final = _sweep(root, state)
    assert not final.errors, (where, final.errors)
    assert journal_mod.unfinished(journal_mod.Journal(state / "journal.jsonl")) == [], where
    return final


# --- a mix of every verdict, over several batches -----------------------------------------------


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Vault:
    return _template(tmp_path_factory.mktemp("mixed"), lambda root: populate(root, KINDS * 2))


def _mixed_trials(mixed: Vault, tmp_path: Path, every: int) -> int:
    root, state = _copy(mixed, tmp_path / "reference")
    _sweep(root, state)
    reference = normalized(root)
    total = _steps(mixed, tmp_path / "count")
    for k in sorted({*range(1, total + 2, every), total + 1}):
        where = f"power cut at call {k} of {total}"
        root, state = _copy(mixed, tmp_path / "trial")
        if not _cut_sweep(root, state, k).dead:  # cut after the sweep: all it did was durable
            assert normalized(root) == reference, f"{where}: what the sweep reported was not durable"
        _assert_kept(root, state, where)
        _after_the_cut(root, state, where)
        try:
            assert_conserved(root, mixed[2], state)
        except AssertionError as exc:
            raise AssertionError(f"{where}: {exc}") from None
        assert normalized(root) == reference, where
    return total


def test_a_power_cut_in_a_few_places_of_a_batch_loses_nothing(mixed: Vault, tmp_path: Path) -> None:
    """The quick version of the trials below (every 9th call), in the default suite."""
    assert _mixed_trials(mixed, tmp_path, every=9) > 60


@pytest.mark.slow
def test_a_power_cut_at_every_call_of_every_batch_loses_nothing(mixed: Vault, tmp_path: Path) -> None:
    assert _mixed_trials(mixed, tmp_path, every=1) >= 150


# --- a later candidate patches the note an earlier one of the same batch created ---------------


def _chain(root: Path) -> dict[str, str]:
    """`a-…` promotes facts/e<m>/status.md; `b-…`, same key and value with another source,
    patches it (its body appended): both in the first batch of three."""
    first = add_candidate(root, "promote", "c0001")
    first.rename(first.with_name("a-promote.md"))
    entity = "ec0001"
    text = (
        f"---\ntype: fact\nentity: {entity}\npredicate: status\nvalue: {words(entity, 3)}\n"
        "source_url: https://example.dev/second-source\nconfidence: 2\n---\n"
        f"More evidence: {words('c0002')}.\nmarker c0002\nend c0002\n"
    )
    second = root / "_inbox" / "agent-a" / "b-patch.md"
    second.write_text(text, encoding="utf-8")
    return {"c0001": "promote", "c0002": "promote"}


@pytest.fixture(scope="module")
def chain(tmp_path_factory: pytest.TempPathFactory) -> Vault:
    return _template(tmp_path_factory.mktemp("chain"), _chain)


def _assert_chain(root: Path, where: str) -> None:
    seen = census(root)
    note = "facts/ec0001/status.md"
    assert seen == {"c0001": [note], "c0002": [note]}, (where, seen)
    assert sorted(p.name for p in (root / "_inbox" / "agent-a").iterdir()) == [], where
    assert list((root / "facts").iterdir()) == [root / "facts" / "ec0001"], where


def test_a_later_candidate_patches_the_note_an_earlier_one_of_its_batch_created(chain: Vault, tmp_path: Path) -> None:
    root, state = _copy(chain, tmp_path / "one")
    result = _sweep(root, state)
    verdicts = [(a.inbox_path, a.verdict) for a in result.agents[-1].actions]
    assert verdicts == [("_inbox/agent-a/a-promote.md", "promote"), ("_inbox/agent-a/b-patch.md", "patch")]
    _assert_chain(root, "no cut")
    text = (root / "facts/ec0001/status.md").read_text(encoding="utf-8")
    assert "https://example.dev/second-source" in text and text.count("curated_from") == 1


@pytest.mark.slow
def test_a_power_cut_at_every_call_of_a_batch_that_patches_its_own_note(chain: Vault, tmp_path: Path) -> None:
    total = _steps(chain, tmp_path / "count")
    for k in range(1, total + 2):
        root, state = _copy(chain, tmp_path / "trial")
        _cut_sweep(root, state, k)
        _after_the_cut(root, state, f"cut at {k} of {total}")
        _assert_chain(root, f"cut at {k} of {total}")


# --- one plan's compare-and-swap fails -----------------------------------------------------------

_CAS_NOTE = base_note("k0001")[0]


def _cas(root: Path) -> dict[str, str]:
    out = populate(root, ["promote"], prefix="j")
    add_candidate(root, "patch", "k0001")
    return {**out, **populate(root, ["drop"], prefix="l"), "k0001": "patch"}


@pytest.fixture(scope="module")
def cas(tmp_path_factory: pytest.TempPathFactory) -> Vault:
    return _template(tmp_path_factory.mktemp("cas"), _cas)


def _assert_person_note(root: Path, where: str, edited: bool) -> None:
    """The person's save kept, and the candidate's patch in the note exactly once."""
    data = (root / _CAS_NOTE).read_bytes()
    assert data.count(PERSON_EDIT.encode()) == (1 if edited else 0), where
    assert len(re.findall(rb"^marker k0001$", data, re.MULTILINE)) == 1, where
    assert data.count(b"note-marker k0001") == 1, where


def test_one_plan_whose_compare_and_swap_fails_fails_alone(cas: Vault, tmp_path: Path) -> None:
    root, state = _copy(cas, tmp_path / "one")
    disk = PowerOS([root, state], 0, _skip)
    disk.hook = _person_saves(root, disk)
    first = _sweep(root, state, Files(disk))
    assert [e.inbox_path for e in first.errors] == ["_inbox/agent-a/patch-k0001.md"]
    assert "changed since it was read" in first.errors[0].error
    assert sorted((a.inbox_path, a.verdict) for a in first.agents[-1].actions) == [
        ("_inbox/agent-a/drop-l0000.md", "drop"),
        ("_inbox/agent-a/promote-j0000.md", "promote"),
    ]
    assert (root / "_inbox/agent-a/patch-k0001.md").exists()
    assert (root / _CAS_NOTE).read_bytes().endswith(PERSON_EDIT.encode())
    _after_the_cut(root, state, "no cut")
    assert_conserved(root, cas[2], state)
    _assert_person_note(root, "no cut", edited=True)


def _pack_fsync_fails(state: Path) -> Callable[[str, tuple[Any, ...]], None]:
    """The disk refuses to make a batch's pack of kept copies durable (EIO on its fsync)."""

    def hook(name: str, args: tuple[Any, ...]) -> None:
        if (
            name == "fsync"
            and os.fstat(args[0]).st_size
            and stores.PACKS in Path(os.readlink(f"/proc/self/fd/{args[0]}")).parts
        ):
            raise OSError(errno.EIO, "Input/output error")

    return hook


def test_a_pack_that_cannot_be_made_durable_leaves_every_note_it_would_have_kept_untouched(
    cas: Vault, tmp_path: Path
) -> None:
    """Seen: the pack was fsynced with the batch's writes, so when its fsync failed the patched
    note's rename was already durable and the copy `undo` needs was not: after a reboot the note
    stayed patched with its old bytes nowhere. The pack is now durable before any write needing it."""
    root, state = _copy(cas, tmp_path / "one")
    before = (root / _CAS_NOTE).read_bytes()
    disk = PowerOS([root, state], 0, _skip)
    disk.hook = _pack_fsync_fails(state)
    result = _sweep(root, state, Files(disk))
    disk.cut()  # the reboot after the run
    assert "_inbox/agent-a/patch-k0001.md" in [e.inbox_path for e in result.errors]
    after = (root / _CAS_NOTE).read_bytes()
    assert after == before or stores.preimage(state, content_hash(before)) is not None, "the note's old bytes are lost"
    assert after == before  # nothing that keeps a copy was written
    assert (root / "_inbox/agent-a/patch-k0001.md").exists()
    _after_the_cut(root, state, "the next sweep")
    assert_conserved(root, cas[2], state)
    _assert_person_note(root, "the next sweep", edited=False)


@pytest.mark.slow
def test_a_power_cut_at_every_call_of_a_batch_with_a_failed_compare_and_swap(cas: Vault, tmp_path: Path) -> None:
    total = _steps(cas, tmp_path / "count", person=True)
    for k in range(1, total + 2):
        where = f"cut at {k} of {total}"
        root, state = _copy(cas, tmp_path / "trial")
        disk = _cut_sweep(root, state, k, person=True)
        _after_the_cut(root, state, where)
        try:
            assert_conserved(root, cas[2], state)
        except AssertionError as exc:
            raise AssertionError(f"{where}: {exc}") from None
        _assert_person_note(root, where, edited=getattr(disk.hook, "done", False))


# --- the setting ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "message"), [("0", "must be within 1..4096"), ("big", "must be a number")])
def test_commit_batch_out_of_range_is_a_rules_error_at_its_line(value: str, message: str) -> None:
    text = (Path(__file__).parents[1] / "rules" / "inbox-rules.md").read_text(encoding="utf-8")
    assert parse_rules(text, "r.md").settings.commit_batch == 64
    bad = text.replace("\nsettings:\n", f"\nsettings:\n  commit_batch: {value}\n", 1)
    line = next(n for n, row in enumerate(bad.splitlines(), 1) if row.startswith("  commit_batch:"))
    with pytest.raises(RulesError) as raised:
        parse_rules(bad, "r.md")
    assert message in raised.value.message and raised.value.line == line


# --- what it saves --------------------------------------------------------------------------------


@pytest.mark.parametrize(("batch", "low", "high"), [(64, 1.0, 2.5), (1, 5.0, 9.0)])
def test_syncs_per_candidate(tmp_path: Path, batch: int, low: float, high: float) -> None:
    """Every fsync through `Files` counted (SQLite's are not: the index is built before): the
    group commit's default against one plan at a time, over the four verdicts alike."""
    template = _template(tmp_path / "template", lambda root: populate(root, KINDS * 10))
    set_commit_batch(template[0], batch)
    root, state = _copy(template, tmp_path / "run")
    disk = PowerOS([root, state], 0, _skip)
    result = _sweep(root, state, Files(disk))
    assert result.totals()["processed"] == 40 and not result.errors
    assert low <= disk.syncs / 40 <= high, disk.syncs / 40
