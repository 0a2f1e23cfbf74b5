"""`undo`: a sweep of promotes, patches, drops and needs-review rewrites taken back byte for
byte; whatever changed since is left alone and listed; person actions and restores too."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from loop_kit import INSIGHT, PATCHING, UNSOURCED, ZEBRA, fail, sweep

from memory_curator.commands import planning
from memory_curator.commands.log import Entry
from memory_curator.core.compose import dropped_text
from memory_curator.core.notes import content_hash

from conftest import NOW, age, snapshot

ZEBRA_MORE = ZEBRA.replace("https://example.dev/zebra-stripes", "https://example.dev/quagga-zebra-study")


def write_mix(root: Path, write_candidate) -> None:
    """promote + patch of the note just promoted (same sweep) + patch of an old note + drop +
    needs_review, besides the fixtures' own promote and drop."""
    write_candidate(root, "p1-zebra.md", ZEBRA)
    write_candidate(root, "p2-zebra-more.md", ZEBRA_MORE)
    write_candidate(root, "patching.md", PATCHING)
    write_candidate(root, "claim.md", UNSOURCED)
    write_candidate(root, "insight.md", INSIGHT)


def counts(out: dict) -> dict[str, int]:
    return {k: out[k] for k in ("promoted", "patched", "dropped", "needs_review")}


def test_undo_last_leaves_the_vault_byte_identical(vault: Path, invoke, write_candidate) -> None:
    write_mix(vault, write_candidate)
    before = snapshot(vault)
    out = sweep(invoke, vault)
    assert out["promoted"] >= 1 and out["patched"] >= 2 and out["dropped"] == 2, counts(out)
    assert snapshot(vault) != before

    result = json.loads(invoke("undo", "--last", "--vault", str(vault), "--json").output)["data"]
    assert result["run_id"] == out["run_id"] and result["left"] == []
    assert len(result["undone"]) == out["processed"]
    assert snapshot(vault) == before
    assert not (vault / "facts/zebra").exists() and not (vault / "_inbox/.dropped/agent-a").exists()


def folders(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_dir())


def test_undo_removes_the_folders_the_undone_run_made_and_only_those(
    empty_vault: Path, invoke, write_candidate
) -> None:
    write_candidate(empty_vault, "p1-zebra.md", ZEBRA)  # promoted: facts/ and facts/zebra/ made for it
    write_candidate(empty_vault, "claim.md", UNSOURCED)  # dropped: _inbox/.dropped/agent-a/ made for it
    before = folders(empty_vault)
    out = sweep(invoke, empty_vault)
    assert out["promoted"] == out["dropped"] == 1, counts(out)
    assert {"facts", "facts/zebra", "_inbox/.dropped/agent-a"} <= set(folders(empty_vault))
    invoke("undo", "--last", "--vault", str(empty_vault))
    assert folders(empty_vault) == before  # facts/ too; _inbox/agent-a/ holds its candidates again


def test_undo_never_removes_a_folder_the_run_did_not_make(empty_vault: Path, invoke, write_candidate) -> None:
    (empty_vault / "facts/zebra").mkdir(parents=True)  # a person's empty folders, made before the run
    write_candidate(empty_vault, "p1-zebra.md", ZEBRA)
    before = folders(empty_vault)
    assert sweep(invoke, empty_vault)["promoted"] == 1
    invoke("undo", "--last", "--vault", str(empty_vault))
    assert folders(empty_vault) == before


def test_only_folders_the_plan_made_are_pruned_never_the_inbox_or_an_agents() -> None:
    made = ("facts", "facts/zebra", "_inbox/.dropped", "_inbox/.dropped/a", "_inbox", "_inbox/a")
    assert planning.prunable("facts/zebra/x.md", made) == ("facts/zebra", "facts")
    assert planning.prunable("facts/zebra/x.md", ("facts",)) == ()  # facts/zebra/ was there: facts/ holds it
    assert planning.prunable("_inbox/.dropped/a/x.md", made) == ("_inbox/.dropped/a", "_inbox/.dropped")
    assert planning.prunable("_inbox/a/x.md", made) == ()
    assert planning.prunable("x.md", made) == ()


def test_a_note_edited_after_the_sweep_is_left_alone_and_reported(vault: Path, invoke, write_candidate) -> None:
    write_mix(vault, write_candidate)
    before = snapshot(vault)
    out = sweep(invoke, vault)
    note = vault / "facts/obsidian/file-format.md"
    edited = note.read_bytes() + b"\nA person's own line.\n"
    note.write_bytes(edited)

    result = json.loads(invoke("undo", "--last", "--vault", str(vault), "--json").output)["data"]
    assert [(left["verdict"], left["path"]) for left in result["left"]] == [("patch", "facts/obsidian/file-format.md")]
    assert result["left"][0]["reason"] == "facts/obsidian/file-format.md changed since (left as it is)"
    assert len(result["undone"]) == out["processed"] - 1
    assert note.read_bytes() == edited
    assert not (vault / "_inbox/agent-a/patching.md").exists()  # its content stays in the edited note
    after = snapshot(vault)
    for rel, data in before.items():
        if rel not in ("facts/obsidian/file-format.md", "_inbox/agent-a/patching.md"):
            assert after.get(rel) == data, rel


def test_undo_lists_what_it_left_in_text_and_json(vault: Path, invoke, write_candidate) -> None:
    write_candidate(vault, "p1-zebra.md", ZEBRA)
    sweep(invoke, vault)
    (vault / "facts/zebra/stripe-pattern.md").write_text("rewritten by a person\n")
    taken = write_candidate(vault, "claim.md", "a new candidate took the old name\n", agent="test-step-4")
    shutil.move(taken, vault / "_inbox/test-step-4/unsourced-claim.md")
    text = invoke("undo", "--last", "--vault", str(vault)).output
    assert "left alone promote of _inbox/agent-a/p1-zebra.md: facts/zebra/stripe-pattern.md changed since" in text
    assert "_inbox/test-step-4/unsourced-claim.md exists now (not overwritten)" in text
    assert (vault / "facts/zebra/stripe-pattern.md").read_text() == "rewritten by a person\n"
    assert (vault / "_inbox/test-step-4/unsourced-claim.md").read_text() == "a new candidate took the old name\n"


def test_undone_candidates_are_held_so_the_next_sweep_does_not_redo_them(vault: Path, invoke, write_candidate) -> None:
    write_mix(vault, write_candidate)
    first = sweep(invoke, vault)
    invoke("undo", "--last", "--vault", str(vault))
    for path in (vault / "_inbox").rglob("*.md"):
        age(path)  # past the settle window: only holding keeps them from the sweep
    again = sweep(invoke, vault)
    assert again["processed"] == first["needs_review"]  # only the reverted needs-review rewrites
    assert again["promoted"] == again["patched"] == again["dropped"] == 0
    assert (vault / "_inbox/agent-a/p1-zebra.md").read_text() == ZEBRA


def test_undo_of_a_person_action_a_restore_and_refusals(vault: Path, invoke, write_candidate, capsys) -> None:
    original = write_candidate(vault, "insight.md", INSIGHT)
    done = json.loads(invoke("resolve", str(original), "--drop", "not now", "--json").output)["data"]
    assert not original.exists()
    result = json.loads(invoke("undo", done["run_id"], "--vault", str(vault), "--json").output)["data"]
    assert [u["verdict"] for u in result["undone"]] == ["drop"]
    assert original.read_text() == INSIGHT

    invoke("resolve", str(original), "--drop", "not now either")
    [copy] = (vault / "_inbox/.dropped/agent-a").iterdir()
    copy_bytes = copy.read_bytes()
    invoke("restore", str(copy))
    assert original.exists() and not copy.exists()
    result = json.loads(invoke("undo", "--last", "--vault", str(vault), "--json").output)["data"]
    assert [u["verdict"] for u in result["undone"]] == ["restore"]
    assert copy.read_bytes() == copy_bytes and not original.exists()

    code, err = fail(capsys, "undo", "20990101T000000Z-beef", "--vault", str(vault))
    assert code == 1 and "no run '20990101T000000Z-beef' in the journal" in err
    code, err = fail(capsys, "undo", result["undo_run"], "--vault", str(vault))
    assert code == 1 and "is itself an undo" in err
    code, err = fail(capsys, "undo", "--vault", str(vault))
    assert code == 2 and "give a RUN_ID" in err


def test_nothing_to_undo(empty_vault: Path, capsys) -> None:
    code, err = fail(capsys, "undo", "--last", "--vault", str(empty_vault))
    assert code == 1 and err.strip() == "memory-curator: nothing to undo: no run in the journal changed the vault"


def test_a_drop_is_undone_from_its_audit_copy_when_the_store_is_gone(
    vault: Path, invoke, write_candidate, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    write_candidate(vault, "claim.md", UNSOURCED.rstrip("\n"))  # no final newline: the drop adds one
    before = snapshot(vault)
    invoke("run", "--vault", str(vault), "--state-dir", str(state))
    shutil.rmtree(state / "preimages")
    shutil.rmtree(state / "packs")  # the sweep's group commit keeps its copies there too
    undone = invoke("undo", "--last", "--vault", str(vault), "--state-dir", str(state), "--json")
    result = json.loads(undone.output)["data"]
    assert sorted(u["inbox_path"] for u in result["undone"]) == [
        "_inbox/agent-a/claim.md",
        "_inbox/test-step-4/unsourced-claim.md",
    ]
    assert "drop" not in [left["verdict"] for left in result["left"]]  # the others' bytes were only in the store
    assert {left["reason"] for left in result["left"]} == {"the candidate's original bytes were not kept"}
    for rel in ("_inbox/agent-a/claim.md", "_inbox/test-step-4/unsourced-claim.md"):
        assert (vault / rel).read_bytes() == before[rel]


def test_from_dropped_recovers_the_exact_original() -> None:
    for original in (b"abc\n", b"abc", b"x\r\ny\r\n", b""):
        copy = dropped_text(original, "a reason", NOW)
        assert planning.from_dropped(copy, content_hash(original)) == original
    assert planning.from_dropped(b"no audit line\n", content_hash(b"no audit line")) is None


def test_plan_refuses_what_the_journal_cannot_take_back() -> None:
    def entry(verdict: str, **record: object) -> Entry:
        base = {"inbox_hash": "sha256:aa", "after_hash": "sha256:bb", "before_hash": "sha256:cc"}
        return Entry(None, "r", 1, verdict, "_inbox/a/x.md", "facts/x/y.md", "", None, "done", None, {**base, **record})

    known = {"sha256:aa": b"original", "sha256:cc": b"pre-image"}
    steps = planning.undo_steps(entry("patch"), known.get, lambda _: None)
    assert not isinstance(steps, str)
    assert [(s.op, s.path, s.data, s.expected) for s in steps] == [
        ("keep", "", b"original", None),  # kept first: recovery can finish an interrupted undo
        ("create", "_inbox/a/x.md", b"original", None),
        ("keep", "", b"pre-image", None),
        ("replace", "facts/x/y.md", b"pre-image", "sha256:bb"),
        ("hold", "_inbox/a/x.md", None, content_hash(b"original")),  # held: the next sweep leaves it
    ]
    assert planning.undo_steps(entry("patch", before_hash="sha256:zz"), known.get, lambda _: None) == (
        "the note's pre-image was not kept"
    )
    assert planning.undo_steps(entry("promote", after_hash=None), known.get, lambda _: None) == (
        "the journal does not say enough to undo this"
    )
