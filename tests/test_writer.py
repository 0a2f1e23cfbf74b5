"""The writer's primitives, the journal and recovery, each against real files in a temp dir."""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path

import pytest
from safety_kit import FaultyOS, temps

from memory_curator.core.clock import FixedClock
from memory_curator.core.notes import content_hash
from memory_curator.store import journal as journal_mod
from memory_curator.store import recovery, writer
from memory_curator.store.writer import FILES, Files

from conftest import NOW


def test_create_never_overwrites(tmp_path: Path) -> None:
    target = tmp_path / "facts" / "x" / "note.md"
    FILES.create(target, b"first\n")
    with pytest.raises(FileExistsError):
        FILES.create(target, b"second\n")
    assert target.read_bytes() == b"first\n"
    assert temps(tmp_path) == []


def test_make_folders_says_what_it_made_and_prune_removes_only_an_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "facts").mkdir()
    assert FILES.make_folders(tmp_path / "facts/x/y") == (tmp_path / "facts/x", tmp_path / "facts/x/y")
    assert FILES.make_folders(tmp_path / "facts/x") == ()
    (tmp_path / "facts/x/y/note.md").write_bytes(b"kept")
    assert not FILES.prune(tmp_path / "facts/x/y") and (tmp_path / "facts/x/y/note.md").exists()
    (tmp_path / "facts/x/y/note.md").unlink()
    faulty = FaultyOS("fsync")
    assert Files(faulty).prune(tmp_path / "facts/x/y") and not (tmp_path / "facts/x/y").exists()
    assert faulty.calls == 1  # the parent's entry is durable
    assert not FILES.prune(tmp_path / "gone")


def test_create_refuses_a_dangling_symlink(tmp_path: Path) -> None:
    (tmp_path / "link.md").symlink_to(tmp_path / "elsewhere.md")
    with pytest.raises(FileExistsError):
        FILES.create(tmp_path / "link.md", b"x")
    assert not (tmp_path / "elsewhere.md").exists()


def test_create_unique_moves_on_to_the_first_free_name(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_bytes(b"one")
    (tmp_path / "a-2.md").write_bytes(b"two")
    placed = FILES.create_unique(tmp_path / "a.md", b"three")
    assert placed == tmp_path / "a-3.md"
    assert [p.read_bytes() for p in (tmp_path / "a.md", tmp_path / "a-2.md", placed)] == [b"one", b"two", b"three"]
    assert temps(tmp_path) == []


def test_create_unique_skips_a_name_taken_after_it_was_chosen(tmp_path: Path) -> None:
    """The name is decided by the link itself: someone taking `a.md` between a free-name
    check and our write costs a suffix, never their file."""
    real_link = os.link

    class Racing(FaultyOS):
        def __getattr__(self, name: str):
            if name == "link":

                def link(src, dst):
                    if Path(dst).name == "a.md" and not Path(dst).exists():
                        Path(dst).write_bytes(b"theirs")
                    return real_link(src, dst)

                return link
            return getattr(os, name)

    assert FILES.free_name(tmp_path / "a.md") == tmp_path / "a.md"
    placed = Files(Racing("link")).create_unique(tmp_path / "a.md", b"ours")
    assert placed.name == "a-2.md" and placed.read_bytes() == b"ours"
    assert (tmp_path / "a.md").read_bytes() == b"theirs"


def test_replace_is_compare_and_swap(tmp_path: Path) -> None:
    note = tmp_path / "n.md"
    note.write_bytes(b"read by us\n")
    seen = content_hash(b"read by us\n")
    note.write_bytes(b"saved by a person\n")
    with pytest.raises(writer.Conflict):
        FILES.replace(note, b"ours\n", seen)
    assert note.read_bytes() == b"saved by a person\n"
    assert temps(tmp_path) == []
    FILES.replace(note, b"ours\n", content_hash(b"saved by a person\n"))
    assert note.read_bytes() == b"ours\n"


def test_replace_keeps_the_mode_and_refuses_a_vanished_file(tmp_path: Path) -> None:
    note = tmp_path / "n.md"
    note.write_bytes(b"x")
    note.chmod(0o640)
    FILES.replace(note, b"y", content_hash(b"x"))
    assert stat.S_IMODE(note.stat().st_mode) == 0o640
    note.unlink()
    with pytest.raises(writer.Conflict):
        FILES.replace(note, b"z", content_hash(b"y"))
    assert not note.exists()


def test_remove_is_compare_and_swap(tmp_path: Path) -> None:
    path = tmp_path / "c.md"
    path.write_bytes(b"v2")
    with pytest.raises(writer.Conflict):
        FILES.remove(path, content_hash(b"v1"))
    assert path.read_bytes() == b"v2"
    FILES.remove(path, content_hash(b"v2"))
    assert not path.exists()


def test_a_long_file_name_still_gets_a_temp_file(tmp_path: Path) -> None:
    """An agent may use a 250-byte name; `.<name>.mcXXXXXXXX.tmp` must still fit NAME_MAX."""
    path = tmp_path / ("x" * 247 + ".md")
    path.write_bytes(b"old")
    FILES.replace(path, b"new", content_hash(b"old"))
    assert path.read_bytes() == b"new"


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EIO])
def test_a_failed_write_leaves_no_temp_and_no_file(tmp_path: Path, code: int) -> None:
    failing = Files(FaultyOS("write", 1, lambda: OSError(code, os.strerror(code))))
    with pytest.raises(OSError) as info:
        failing.create(tmp_path / "n.md", b"data")
    assert info.value.errno == code
    assert list(tmp_path.iterdir()) == []


def test_stray_temps_are_only_ours(tmp_path: Path) -> None:
    ours = tmp_path / ".note.md.mcab_12x9z.tmp"
    theirs = [".note.md.tmp", "note.md.tmp", ".note.md.swp", ".note.md.mcshort.tmp", "x.mcabcdefgh.tmp"]
    for name in [ours.name, *theirs]:
        (tmp_path / name).write_bytes(b"")
    assert list(FILES.stray_temps(tmp_path)) == [ours]


# --- the journal ---------------------------------------------------------------------------


def test_a_torn_last_line_is_skipped_and_never_swallows_the_next_record(tmp_path: Path) -> None:
    journal = journal_mod.Journal(tmp_path / "journal.jsonl", FixedClock(NOW))
    journal.append({"event": "begin", "run": "r", "seq": 1})
    with open(journal.path, "ab") as handle:
        handle.write(b'{"event": "end", "run": "r", "se')  # a crash mid-append
    journal.append({"event": "begin", "run": "r", "seq": 2})
    assert [(r["event"], r["seq"]) for r in journal.records()] == [("begin", 1), ("begin", 2)]
    assert journal.path.read_bytes().endswith(b"\n")


def test_records_are_stamped_by_the_journals_clock_and_a_reader_cannot_append(tmp_path: Path) -> None:
    journal = journal_mod.Journal(tmp_path / "journal.jsonl", FixedClock(NOW))
    journal.append({"event": "begin", "run": "r", "seq": 1})
    assert [r["time"] for r in journal.records()] == ["2026-11-30T12:00:00Z"]
    with pytest.raises(TypeError, match="without a clock"):
        journal_mod.Journal(journal.path).append({"event": "begin", "run": "r", "seq": 2})
    assert len(list(journal.records())) == 1


def test_checkpoint_is_ignored_when_it_cannot_be_right(tmp_path: Path) -> None:
    journal = journal_mod.Journal(tmp_path / "journal.jsonl", FixedClock(NOW))
    journal.append({"event": "begin", "run": "r", "seq": 1})
    journal.set_checkpoint(10_000)
    assert journal.checkpoint() == 0
    journal.checkpoint_path.write_text("garbage")
    assert journal.checkpoint() == 0
    journal.set_checkpoint(journal.size())
    assert journal.checkpoint() == journal.size()
    assert temps(tmp_path) == []


def test_open_actions_are_unended_or_failed(tmp_path: Path) -> None:
    journal = journal_mod.Journal(tmp_path / "journal.jsonl", FixedClock(NOW))
    for seq in (1, 2, 3):
        journal.append({"event": "begin", "run": "r", "seq": seq})
    journal.append({"event": "end", "run": "r", "seq": 1, "ok": True})
    journal.append({"event": "end", "run": "r", "seq": 2, "ok": False, "error": "EIO"})
    assert sorted(r["seq"] for r in journal_mod.unfinished(journal)) == [2, 3]


# --- recovery ------------------------------------------------------------------------------


def _half_done(root: Path, journal: journal_mod.Journal, verdict: str, dest_rel: str, after: bytes) -> Path:
    """What a crash between 'destination durable' and 'inbox file removed' leaves."""
    inbox = root / "_inbox" / "a" / "c.md"
    inbox.parent.mkdir(parents=True, exist_ok=True)
    inbox.write_bytes(b"---\nentity: x\n---\ncandidate\n")
    journal.append(
        {
            "event": "begin",
            "run": "r1",
            "seq": 1,
            "verdict": verdict,
            "inbox": "_inbox/a/c.md",
            "inbox_hash": content_hash(inbox.read_bytes()),
            "dest": dest_rel,
            "after_hash": content_hash(after),
        }
    )
    return inbox


@pytest.fixture
def journal(tmp_path: Path) -> journal_mod.Journal:
    (tmp_path / "state").mkdir()
    return journal_mod.Journal(tmp_path / "state" / "journal.jsonl", FixedClock(NOW))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "vault").mkdir()
    return tmp_path / "vault"


def test_recovery_finishes_a_move_whose_destination_is_durable(root: Path, journal: journal_mod.Journal) -> None:
    after = b"promoted\n"
    inbox = _half_done(root, journal, "promote", "facts/x/y.md", after)
    FILES.create(root / "facts/x/y.md", after)
    (root / "facts/x/.y.md.mcabcdefgh.tmp").write_bytes(b"partial")
    out = recovery.recover(root, journal.path.parent, journal, FILES)
    assert not inbox.exists()
    assert (root / "facts/x/y.md").read_bytes() == after
    assert temps(root) == []
    assert any("finished promote" in n for n in out.notes)
    assert journal_mod.unfinished(journal) == []


def test_recovery_leaves_the_candidate_when_the_destination_never_arrived(
    root: Path, journal: journal_mod.Journal
) -> None:
    inbox = _half_done(root, journal, "promote", "facts/x/y.md", b"promoted\n")
    before = inbox.read_bytes()
    recovery.recover(root, journal.path.parent, journal, FILES)
    assert inbox.read_bytes() == before


def test_recovery_leaves_a_candidate_an_agent_rewrote(root: Path, journal: journal_mod.Journal) -> None:
    after = b"promoted\n"
    inbox = _half_done(root, journal, "promote", "facts/x/y.md", after)
    FILES.create(root / "facts/x/y.md", after)
    inbox.write_bytes(b"---\nentity: x\n---\nnewer candidate\n")
    recovery.recover(root, journal.path.parent, journal, FILES)
    assert inbox.read_bytes().endswith(b"newer candidate\n")


def test_recovery_when_the_destination_holds_other_bytes(root: Path, journal: journal_mod.Journal) -> None:
    """Someone else's note at the destination is not ours: the candidate stays. Our note that
    a person edited since still names the candidate in its provenance: finished."""
    inbox = _half_done(root, journal, "promote", "facts/x/y.md", b"promoted\n")
    (root / "facts/x").mkdir(parents=True)
    (root / "facts/x/y.md").write_bytes(b"---\nentity: x\n---\nsomeone else's\n")
    recovery.recover(root, journal.path.parent, journal, FILES)
    assert inbox.exists()

    digest = content_hash(inbox.read_bytes()).removeprefix("sha256:")
    edited = f"---\nentity: x\ncurated_from:\n  - inbox: _inbox/a/c.md\n    sha256: {digest}\n---\npromoted\nperson\n"
    (root / "facts/x/y.md").write_text(edited)
    inbox2 = _half_done(root, journal, "promote", "facts/x/y.md", b"promoted\n")
    recovery.recover(root, journal.path.parent, journal, FILES)
    assert not inbox2.exists()
    assert (root / "facts/x/y.md").read_text() == edited


def test_recovery_finds_a_drop_that_moved_on_to_a_suffixed_name(root: Path, journal: journal_mod.Journal) -> None:
    after = b"dropped copy\n"
    inbox = _half_done(root, journal, "drop", "_inbox/.dropped/a/t-c.md", after)
    FILES.create(root / "_inbox/.dropped/a/t-c.md", b"an older drop\n")
    FILES.create(root / "_inbox/.dropped/a/t-c-2.md", after)
    recovery.recover(root, journal.path.parent, journal, FILES)
    assert not inbox.exists()


def test_recovery_records_needs_review_texts_already_written(root: Path, journal: journal_mod.Journal) -> None:
    inbox = _half_done(root, journal, "needs_review", "_inbox/a/c.md", b"reviewed\n")
    inbox.write_bytes(b"reviewed\n")
    assert recovery.recover(root, journal.path.parent, journal, FILES).reviewed == {
        "_inbox/a/c.md": content_hash(b"reviewed\n")
    }
    assert inbox.read_bytes() == b"reviewed\n"


def test_recovery_that_fails_is_tried_again(root: Path, journal: journal_mod.Journal) -> None:
    after = b"promoted\n"
    inbox = _half_done(root, journal, "promote", "facts/x/y.md", after)
    FILES.create(root / "facts/x/y.md", after)
    faulty = FaultyOS("unlink", 1, lambda: OSError(errno.EIO, "Input/output error"))
    out = recovery.recover(root, journal.path.parent, journal, Files(faulty))
    assert faulty.fired and inbox.exists()
    assert any("will retry" in n for n in out.notes)
    recovery.recover(root, journal.path.parent, journal, FILES)
    assert not inbox.exists()


def test_recovery_never_follows_a_journal_path_out_of_the_vault(root: Path, journal: journal_mod.Journal) -> None:
    outside = root.parent / "outside.md"
    outside.write_bytes(b"x")
    journal.append(
        {
            "event": "begin",
            "run": "r",
            "seq": 1,
            "verdict": "promote",
            "inbox": "../outside.md",
            "inbox_hash": content_hash(b"x"),
            "dest": "../outside.md",
            "after_hash": content_hash(b"x"),
        }
    )
    recovery.recover(root, journal.path.parent, journal, FILES)
    assert outside.read_bytes() == b"x"


def test_the_journal_is_json_lines_with_times(journal: journal_mod.Journal) -> None:
    journal.append({"event": "begin", "run": "r", "seq": 1, "inbox": "_inbox/a/ü.md"})
    line = journal.path.read_text(encoding="utf-8")
    assert line.endswith("\n") and line.count("\n") == 1
    assert json.loads(line)["time"].endswith("Z")
    assert stat.S_IMODE(journal.path.stat().st_mode) == 0o600
