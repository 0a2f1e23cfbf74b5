"""Issue 28: every needs_review line names the note(s) and the number(s) behind it. When what
held an item names no note (a criterion, a missing surface), the line still names the notes on
its subject: the closest by `same`, and those whose file names hold its title's words — the
signal that crosses languages (an English restatement of a Spanish learning)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
import yaml

from memory_curator.cli.machine import build_context
from memory_curator.commands.check import check_text
from tests.conftest import SHARED, age, require_shared

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


def put(vault: Path, notes: dict[str, str]) -> None:
    for rel, text in notes.items():
        path = vault / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        age(path)


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


def test_review_lines_name_the_right_note_on_the_agent_learnings_set(tmp_path: Path) -> None:
    """Issue 28's floor: >= 95% of the needs_review lines of items about a note name it (the
    first set's floor is in tests/test_novelty.py)."""
    folder = SETS / "novelty_es"
    vault = yaml.safe_load((folder / "set.yaml").read_text(encoding="utf-8"))["vault"]
    require_shared(SHARED / "real-vaults" / vault)
    spec = importlib.util.spec_from_file_location("novelty_score", SETS / "novelty" / "score.py")
    assert spec is not None and spec.loader is not None
    scorer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scorer)
    argv = ["--cli", f"{sys.executable} -m memory_curator", "--set-dir", str(folder), "--sets", "main"]
    m = scorer.main([*argv, "--out", str(tmp_path / "scores.json")])["main"]
    unnamed = [i["file"] for i in m["items"] if i.get("names_about") is False]
    assert m["review_named"] >= 0.95, unnamed


@pytest.mark.slow  # thirty questions over two real vaults: about 25 s
def test_named_questions_find_their_note_in_the_top_three(tmp_path: Path) -> None:
    """A guard on today's figure, 25 of 30 (23 before issue 28); the issue asks for 27. The five
    left ask in other words than the note's (`money back` for a refund policy, `settings files`
    for the configuration folder): no lexical ranking finds them honestly."""
    for vault in ("obsidian-help-en", "agent-learnings-es"):
        require_shared(SHARED / "real-vaults" / vault)
    spec = importlib.util.spec_from_file_location("novelty_queries", SETS / "novelty" / "queries.py")
    assert spec is not None and spec.loader is not None
    sys.path.insert(0, str(SETS / "novelty"))  # queries.py imports the scorer beside it
    try:
        queries = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(queries)
        result = queries.main(["--cli", f"{sys.executable} -m memory_curator", "--out", str(tmp_path / "q.json")])
    finally:
        sys.path.remove(str(SETS / "novelty"))
    missed = [i["name"] for i in result["items"] if not i["hit"]]
    assert result["hits"] >= 25, missed
