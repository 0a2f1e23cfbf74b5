"""Issue 28: every needs_review line names the note(s) and the number(s) behind it. When what
held an item names no note (a criterion, a missing surface), the line still names the notes on
its subject: the closest by `same`, and those whose file names hold its title's words — the
signal that crosses languages (an English restatement of a Spanish learning)."""

from __future__ import annotations

from pathlib import Path

from memory_curator.cli.machine import build_context
from memory_curator.commands.check import check_text
from tests.test_subjects import vault_with as put

SETS = Path(__file__).resolve().parent

LEARNING = "knowledge/learnings/gate-que-exige-el-artefacto-a-la-fase-que-lo-produce-es-deadlock.md"
SPANISH = (
    "---\ntitle: gate que exige el artefacto a la fase que lo produce es un deadlock\n---\n"
    "Un gate aplicado a todo llamador bloquea también a la fase cuyo trabajo es escribir el artefacto: "
    "ningún elemento nuevo puede estrenarlo y los runs nocturnos morían con `plan_no_aprobado`.\n"
)
ENGLISH = (
    "---\ntype: insight\n"
    "title: A gate that demands an artifact from the phase that produces it deadlocks the pipeline\n"
    "source_url: https://github.com/acme/harness/pull/7\nconfidence: 2\n---\n"
    "If every caller must present an approved plan, the planner that writes it is blocked too.\n"
)


def check(vault: Path, text: str, explain: bool = False) -> dict:
    ctx = build_context(vault)
    return check_text(ctx, text, "_inbox/agent/c.md", agent="agent", with_explanation=explain).to_json()


def test_an_english_restatement_names_the_spanish_note_its_file_name_shares_words_with(vault: Path) -> None:
    put(vault, {LEARNING: SPANISH, "knowledge/learnings/otro-tema-sin-relacion.md": "---\ntitle: x\n---\nNada.\n"})
    out = check(vault, ENGLISH)
    assert out["verdict"] == "needs_review" and out["reason"].startswith("load-bearing undecided"), out
    assert f"titled alike: {LEARNING} (3 of 7 title words)" in out["reason"], out["reason"]
    assert "otro-tema" not in out["reason"]


def test_naming_a_note_titled_alike_never_changes_the_verdict(vault: Path) -> None:
    before = check(vault, ENGLISH)
    put(vault, {LEARNING: SPANISH})
    after = check(vault, ENGLISH)
    assert (after["verdict"], after["criteria"]) == (before["verdict"], before["criteria"])
    assert "titled alike" not in before["reason"] and "titled alike" in after["reason"]


def test_one_shared_title_word_names_nothing(vault: Path) -> None:
    put(vault, {"knowledge/learnings/gate-de-calidad-en-ci.md": "---\ntitle: gate de calidad\n---\nUn gate en CI.\n"})
    out = check(vault, ENGLISH)
    assert "titled alike" not in out["reason"], out["reason"]


def test_explain_lists_the_notes_titled_alike(vault: Path) -> None:
    put(vault, {LEARNING: SPANISH})
    out = check(vault, ENGLISH, explain=True)
    assert f"titled alike: {LEARNING} (3 of 7 title words)" in out["explanation"], out
