"""The journal's records, typed (issue 40): a journal written before them reads as it did, the
records written now are the same bytes, and a step recovery does not know is never guessed at.

`data/journal-before-records.jsonl` is a real journal written by the version before
`store/records.py` (a sweep that promoted and dropped, its undo, a sweep that flagged), followed
by lines of older versions: a begin without `steps`, a judge and an error record, an undo whose
remove says `prune: true`, a line that is not an object and a torn last line."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

from memory_curator.commands import log as log_mod
from memory_curator.commands.status import last_sweeps
from memory_curator.core.clock import FixedClock
from memory_curator.store import journal_digest, records
from memory_curator.store.journal import Journal, open_actions
from memory_curator.store.recovery import recover, steps_of
from memory_curator.store.writer import FILES

OLD = Path(__file__).parent / "data" / "journal-before-records.jsonl"
SWEEP, UNDO, FLAGGING, LEGACY = (
    "20261205T171418Z-49b3",
    "20261205T171425Z-853a",
    "20261205T171429Z-29d9",
    "20261205T171502Z-0a1b",
)


def test_a_journal_written_before_the_records_reads_every_record() -> None:
    read = list(Journal(OLD).records())
    kinds = [r.get("event") for r in read]
    assert len(OLD.read_bytes().splitlines()) == 21 and len(read) == 19  # the non-object and the torn line skipped
    assert {k: kinds.count(k) for k in set(kinds)} == {
        "begin": 7,
        "end": 7,
        "run": 2,
        "undo": 1,
        "judge": 1,
        "error": 1,
    }
    judge = next(r for r in read if r.get("event") == "judge")
    assert (judge.get("model"), judge.get("prompt_version"), judge.get("failure")) == ("claude-x", 3, None)
    assert (
        next(r for r in read if r.get("event") == "error").get("error", "").startswith("internal error while writing")
    )


def test_log_and_status_read_the_old_journal_as_before() -> None:
    read = list(Journal(OLD).records())
    shown = [(e.run, e.verdict, e.status, e.undone_by) for e in log_mod.entries(read)]
    assert shown == [
        (SWEEP, "promote", "done", UNDO),
        (SWEEP, "drop", "done", UNDO),
        (UNDO, "undo", "done", None),
        (UNDO, "undo", "done", None),
        (FLAGGING, "needs_review", "done", None),
        (LEGACY, "needs_review", "done", None),
        ("20261205T171503Z-9f9f", "undo", "failed", None),
    ]
    assert [e.undoes for e in log_mod.entries(read) if e.verdict == "undo"] == [
        (SWEEP, 2),
        (SWEEP, 1),
        (LEGACY, 7),
    ]
    sweeps = last_sweeps(read)
    assert [(s.record.get("run"), s.undone) for s in sweeps] == [(SWEEP, True), (FLAGGING, False)]


def test_recovery_reads_an_old_begin_without_steps_and_a_prune_of_true() -> None:
    read = list(Journal(OLD).records())
    legacy = next(r for r in read if r.get("run") == LEGACY and r.get("event") == "begin")
    assert [(s["op"], s["path"]) for s in steps_of(legacy)] == [
        ("replace", "_inbox/scout/old-flag.md"),
        ("hold", "_inbox/scout/old-flag.md"),
    ]
    undo = next(r for r in read if r.get("verdict") == "undo" and r.get("run") != UNDO)
    assert steps_of(undo)[0].get("prune") is True
    assert [r.get("run") for _, r in open_actions(Journal(OLD).entries())] == ["20261205T171503Z-9f9f"]


def test_the_digest_folds_the_old_journal(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journal.jsonl")
    shutil.copy(OLD, journal.path)
    digest = journal_digest.read(journal, tmp_path, dt.datetime(2026, 12, 6, tzinfo=dt.UTC))
    flagged = {r.get("inbox"): r.get("reason_code") for r in digest.flagged()}
    assert flagged == {"_inbox/scout/contra.md": "criteria-failed", "_inbox/scout/old-flag.md": None}
    assert [r.get("run") for r in digest.sweeps()] == [SWEEP, FLAGGING]
    again = journal_digest.read(journal, tmp_path, dt.datetime(2026, 12, 6, tzinfo=dt.UTC))  # from the saved digest
    assert again.records() == digest.records()


def _line(name: str) -> dict[str, object]:
    return next(json.loads(x) for x in OLD.read_text().splitlines() if f'"event": "{name}"' in x)


def _written(tmp_path: Path, record: records.Written, at: str) -> bytes:
    clock = FixedClock(dt.datetime.fromisoformat(at.replace("Z", "+00:00")))
    journal = Journal(tmp_path / f"{record['event']}.jsonl", clock)
    journal.append(record)
    return journal.path.read_bytes()


def test_the_records_written_now_are_the_old_bytes(tmp_path: Path) -> None:
    """The typed builders write what the untyped dicts wrote, byte for byte (key order too)."""
    old = [x for x in OLD.read_text().splitlines(keepends=True)]
    run = _line("run")
    totals = {k: int(str(run[k])) for k in ("processed", "promoted", "patched", "dropped", "needs_review")}
    started = dt.datetime.fromisoformat(str(run["started"]))
    built = records.run(str(run["run"]), started, float(str(run["seconds"])), totals, 0, None)
    assert _written(tmp_path, built, str(run["time"])).decode() in old
    judge = _line("judge")
    audit = {"model": "claude-x", "prompt_version": 3, "raw": judge["raw"]}
    built_judge = records.judged(LEGACY, "_inbox/scout/old-flag.md", "sha256:" + "a" * 64, audit, None)
    assert _written(tmp_path, built_judge, str(judge["time"])).decode() in old
    error = _line("error")
    built_error = records.error(LEGACY, "_inbox/scout/broken.md", "sha256:" + "c" * 64, str(error["error"]))
    assert _written(tmp_path, built_error, str(error["time"])).decode() in old


def test_recovery_never_takes_a_step_it_does_not_know_for_a_remove(tmp_path: Path) -> None:
    """A begin record from a newer version (or a hand-edited one) with an operation this one does
    not know: the file it names stays, and recovery says it left the plan half-done."""
    root, state = tmp_path / "vault", tmp_path / "state"
    (root / "facts").mkdir(parents=True)
    state.mkdir()
    note, written = root / "facts" / "kept.md", root / "facts" / "new.md"
    note.write_bytes(b"a person's note\n")
    written.write_bytes(b"written before the crash\n")  # the plan's write took effect
    create = {"op": "create", "path": "facts/new.md", "hash": FILES.file_hash(written), "expected": None}
    step = {"op": "shred", "path": "facts/kept.md", "hash": None, "expected": FILES.file_hash(note)}
    begin = {"event": "begin", "run": "R", "seq": 1, "verdict": "tidy", "inbox": None, "dest": "facts/kept.md"}
    (state / "journal.jsonl").write_text(json.dumps({**begin, "steps": [create, step]}) + "\n")
    clock = FixedClock(dt.datetime(2026, 12, 5, tzinfo=dt.UTC))
    done = recover(root, state, Journal(state / "journal.jsonl", clock), FILES)
    assert note.read_bytes() == b"a person's note\n"
    assert done.notes == ["left tidy of facts/kept.md half-done: facts/kept.md: unknown step 'shred'; check both files"]
