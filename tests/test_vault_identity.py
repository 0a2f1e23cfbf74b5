"""The state follows the vault, not its path (issue 37): the vault's id lives in the vault, and
the state folder is found by it. A vault moved to a new path keeps one review note, its
sections' ids and its ticks; a copy beside its living original gets a state of its own."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

from test_review_note import MEMO_REL, T0, note_records, obsidian_save, sections, small_vault, state_of, sweep, ticked

from memory_curator.store.vault_identity import ID_FILE

from conftest import REVIEW_NOTE


def test_a_moved_vault_keeps_one_note_its_ids_and_its_ticks(tmp_path: Path, invoke) -> None:
    old = small_vault(tmp_path / "old", invoke)
    before = (old / REVIEW_NOTE).read_text("utf-8")
    state = state_of(old)
    assert (old / ID_FILE).is_file()
    obsidian_save(old / REVIEW_NOTE, ticked(before, MEMO_REL, "drop"))
    new = tmp_path / "elsewhere" / "renamed"
    new.parent.mkdir()
    old.rename(new)

    assert state_of(new) == state
    sweep(invoke, new, T0 + dt.timedelta(minutes=5))
    after = (new / REVIEW_NOTE).read_text("utf-8")
    assert not (new / MEMO_REL).exists()  # the tick was applied
    assert [r["verdict"] for r in note_records(new) if r["event"] == "begin"] == ["drop"]
    assert after.count("# Inbox review") == 1 and after.count("%% mc:begin head %%") == 1
    kept = {k: v for k, v in sections(before).items() if k != MEMO_REL}
    assert sections(after) == kept  # the same ids: no item flagged again under a new one


def test_a_copy_beside_its_original_gets_a_state_of_its_own(tmp_path: Path, invoke) -> None:
    original = small_vault(tmp_path / "original", invoke)
    copy = tmp_path / "copy"
    shutil.copytree(original, copy)
    assert state_of(copy) != state_of(original)
    sweep(invoke, copy, T0 + dt.timedelta(minutes=5))
    assert (copy / ID_FILE).read_bytes() != (original / ID_FILE).read_bytes()
    assert state_of(copy) != state_of(original) and state_of(original) == state_of(original)


def test_an_id_that_is_not_a_plain_folder_name_is_not_followed(tmp_path: Path, invoke) -> None:
    root = small_vault(tmp_path / "v", invoke)
    state = state_of(root)
    for bad in ("../../escape", "/etc", ".hidden", "a/b", "UPPER"):
        (root / ID_FILE).write_text(f"---\nvault_id: {bad}\n---\n", "utf-8")
        assert state_of(root).parent == state.parent and ".." not in state_of(root).parts
        assert state_of(root).name != bad
