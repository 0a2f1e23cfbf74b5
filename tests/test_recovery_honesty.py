"""Recovery says what it did (issue 36): a plan it closed with no effect (a sweep killed after its
begin records, before any write) is logged as closed with no effect, not "recovered", and
`undo` of that run never takes back what a later run wrote, however identical."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from memory_curator.commands.context import Seams

from conftest import snapshot, state_of

FACT = "_inbox/test-step-4/promotable-fact.md"
NOTE = "facts/copilot/data-handling.md"


def killed_before_any_write(vault: Path, invoke, clock, tmp_path: Path) -> str:  # type: ignore[no-untyped-def]
    """Run A, then the vault as it was before A and A's journal cut after its begin records:
    what a sweep killed right after fsyncing its batch's begins leaves behind. A's run id."""
    keep = tmp_path / "before"
    shutil.copytree(vault, keep)
    out = json.loads(invoke("run", "--vault", str(vault), "--json", "--no-judge", clock=clock).output)
    journal = state_of(vault) / "journal.jsonl"
    records = [json.loads(line) for line in journal.read_text().splitlines()]
    begins = [r for r in records if r.get("run") == out["run_id"] and r.get("event") == "begin"]
    assert [b["verdict"] for b in begins] == ["promote", "drop"]
    journal.write_text("".join(json.dumps(r) + "\n" for r in records if r.get("event") == "begin"))
    (state_of(vault) / "journal.checkpoint").unlink(missing_ok=True)
    shutil.rmtree(vault)
    shutil.copytree(keep, vault)
    return str(out["run_id"])


def test_a_plan_closed_with_no_effect_is_logged_as_such(vault: Path, invoke, clock, tmp_path: Path) -> None:
    first = killed_before_any_write(vault, invoke, clock, tmp_path)
    again = json.loads(invoke("run", "--vault", str(vault), "--json", "--no-judge", clock=clock).output)
    assert again["promoted"] == 1 and again["dropped"] == 1  # decided again: the first run had no effect
    log = json.loads(invoke("log", "--vault", str(vault), "--json").output)["data"]
    status = {(e["run"], e["verdict"]): e["status"] for e in log["entries"]}
    assert status[(first, "promote")] == status[(first, "drop")] == "closed: no effect"
    assert status[(again["run_id"], "promote")] == "done"
    shown = invoke("log", "--vault", str(vault)).output
    assert "closed: no effect" in shown and "recovered" not in shown


def test_undo_of_a_run_recovery_closed_takes_back_nothing_a_later_run_wrote(
    vault: Path, invoke, clock, tmp_path: Path
) -> None:
    first = killed_before_any_write(vault, invoke, clock, tmp_path)
    invoke("run", "--vault", str(vault), "--no-judge", clock=clock, seams=Seams(clock=clock))
    after = snapshot(vault)
    assert (vault / NOTE).exists() and not (vault / FACT).exists()
    done = invoke("undo", first, "--vault", str(vault), "--json")
    assert snapshot(vault) == after, done.output  # the later run's note and drop stay
    assert not (vault / FACT).exists()


def test_an_undo_killed_after_its_note_was_put_back_then_the_note_edited_keeps_the_candidate(
    tmp_path: Path,
) -> None:
    """Found by the stateful test in CI: an undo of a patch, killed after it had put the note back
    (the candidate's content out of it) and restored the candidate, then the person typed into the
    note; recovery "took back" the undo because the note had changed since, removing the restored
    candidate: its content was nowhere. Taken back only while the note still records the candidate."""
    from safety_kit import MARK, Crash, DyingOS, add_candidate, census, new_vault

    from memory_curator.cli.machine import build_context
    from memory_curator.commands import sweep, undo
    from memory_curator.store.writer import Files

    def ctx(root: Path, os_module: object = None):  # type: ignore[no-untyped-def]
        import os

        return build_context(root, str(root.parent / "state"), Seams(files=Files(os_module or os), user="pat"))

    hit = 0
    for k in range(1, 60):
        root = new_vault(tmp_path / f"k{k}" / "vault")
        add_candidate(root, "patch", "c0000")
        sweep.run(ctx(root), None, sweep.Options(use_judge=False))
        try:
            undo.undo(ctx(root, DyingOS(k)), None)
        except Crash:
            pass
        else:
            break  # k past the undo's last write: every crash point was tried
        note = root / "facts/pc0000/status.md"
        inbox = root / "_inbox/agent-a/patch-c0000.md"
        if not (inbox.exists() and b"curated_from" not in note.read_bytes()):
            continue  # not the moment of the bug: the note still holds the candidate, or nothing restored
        hit += 1
        with note.open("ab") as handle:
            handle.write(b"person-edit p0000\n")
        sweep.run(ctx(root), None, sweep.Options(use_judge=False))
        assert census(root, MARK).get("c0000"), f"k={k}: the candidate's content is lost"
        assert b"person-edit p0000" in note.read_bytes()
    assert hit, "no crash point fell between the note put back and the undo's end"
