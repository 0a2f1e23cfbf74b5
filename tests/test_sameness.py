"""Sameness the rules can see without a judge (issue 38): a new note named like a vault note
waits as `subject-note`; the same fact under another predicate waits naming its note; a
candidate restating two or more of a person's notes waits naming them. Each on a sweep, with
the files on disk checked."""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from memory_curator.cli.machine import build_context
from memory_curator.commands.check import check_text
from memory_curator.index.querier import IndexQuerier
from memory_curator.index.questions import Questions
from tests.conftest import snapshot
from tests.test_subjects import vault_with


def sweep(invoke: Callable[..., Result], vault: Path) -> dict[str, dict[str, Any]]:
    result = invoke("run", str(vault / "_inbox"), "--no-judge", "--json")
    assert result.exit_code == 0, result.output
    return {a["inbox_path"]: a for agent in json.loads(result.output)["agents"] for a in agent["actions"]}


def waits(vault: Path, action: dict[str, Any], code: str) -> str:
    """The action waits with `code`, its file still in the inbox marked; its uncertainty line."""
    assert action["verdict"] == "needs_review" and action["reason_code"] == code, action
    text = (vault / action["inbox_path"]).read_text(encoding="utf-8")
    assert "needs-review" in text
    (line,) = [ln for ln in text.splitlines() if "curator uncertainty" in ln]
    return line


THEMES = "# Themes\n\nThemes change how Obsidian looks. Install them from Settings, Appearance.\n"
LOGSEQ = (
    "---\ntype: fact\nentity: logseq\npredicate: themes\n"
    "value: A Logseq theme is a single custom.css file from the marketplace\n"
    "source_url: https://docs.logseq.com/custom-css\nconfidence: 2\n---\nNo theme manifest.\n"
)


def test_a_new_note_named_like_a_persons_note_waits_as_subject_note(
    vault: Path, invoke: Callable[..., Result], write_candidate: Callable[..., Path]
) -> None:
    vault_with(vault, {"Appearance/Themes.md": THEMES})
    before = snapshot(vault)
    write_candidate(vault, "logseq-themes.md", LOGSEQ)
    action = sweep(invoke, vault)["_inbox/agent-a/logseq-themes.md"]
    line = waits(vault, action, "subject-note")
    assert not (vault / "facts/logseq/themes.md").exists(), "no second note answering [[Themes]]"
    assert "your note Appearance/Themes.md" in action["reason"] and "Appearance/Themes.md" in line
    assert "[[Themes]] would be ambiguous" in action["reason"]
    assert (vault / "Appearance/Themes.md").read_bytes() == before["Appearance/Themes.md"]


def test_names_compare_as_obsidian_resolves_links_nfc_and_case_folded(
    vault: Path, invoke: Callable[..., Result], write_candidate: Callable[..., Path]
) -> None:
    decomposed = unicodedata.normalize("NFD", "Notes/データ.md")  # as macOS writes the name
    vault_with(vault, {decomposed: "Our data glossary.\n"})
    write_candidate(
        vault,
        "data.md",
        "---\ntype: fact\nentity: 例の会社\npredicate: データ\nvalue: 毎日のバックアップ\n"
        "source_url: https://backup.kaisha.co.jp/ja/daily\nconfidence: 2\n---\n本文。\n",
    )
    action = sweep(invoke, vault)["_inbox/agent-a/data.md"]
    waits(vault, action, "subject-note")
    assert "Notes/" in action["reason"] and not (vault / action["target_path"]).exists()


def test_facts_of_one_surface_share_a_file_name_by_design(
    vault: Path, invoke: Callable[..., Result], write_candidate: Callable[..., Path]
) -> None:
    owned = "---\ntype: fact\nentity: widget-1\npredicate: size\nvalue: 10 mm\ncurated_from: [{inbox: a/x.md}]\n---\n"
    vault_with(vault, {"facts/widget-1/size.md": owned})
    write_candidate(
        vault,
        "w2.md",
        "---\ntype: fact\nentity: widget-2\npredicate: size\nvalue: 13 mm\n"
        "source_url: https://parts.acme-industrial.com/catalog/widget-2\nconfidence: 2\n---\nCatalog entry.\n",
    )
    action = sweep(invoke, vault)["_inbox/agent-a/w2.md"]
    assert action["verdict"] == "promote", action
    assert (vault / "facts/widget-2/size.md").is_file()


CEO = (
    "---\ntype: fact\nentity: acme\npredicate: {predicate}\nvalue: {value}\n"
    "source_url: https://acme.example-corp.net/about/leadership\nconfidence: 2\n{more}---\n{body}\n"
)


def owned_ceo() -> str:
    return CEO.format(predicate="ceo", value="Jane Roe", more="curated_from: [{inbox: a/x.md}]\n", body="Per the site.")


def test_the_same_fact_under_another_predicate_waits_naming_its_note(
    vault: Path, invoke: Callable[..., Result], write_candidate: Callable[..., Path]
) -> None:
    vault_with(vault, {"facts/acme/ceo.md": owned_ceo()})
    before = snapshot(vault)
    write_candidate(
        vault,
        "acme-chief.md",
        CEO.format(predicate="chief-executive", value="Jane Roe (since 2024)", more="", body="Leadership page."),
    )
    action = sweep(invoke, vault)["_inbox/agent-a/acme-chief.md"]
    line = waits(vault, action, "near-duplicate")
    assert not (vault / "facts/acme/chief-executive.md").exists(), "no second note for one fact"
    assert "facts/acme/ceo.md" in action["reason"] and "facts/acme/ceo.md" in line
    assert "its value holding the note's" in action["reason"]
    assert (vault / "facts/acme/ceo.md").read_bytes() == before["facts/acme/ceo.md"]


def test_another_fact_of_the_entity_from_the_page_is_promoted(
    vault: Path, invoke: Callable[..., Result], write_candidate: Callable[..., Path]
) -> None:
    """`Jane Roe` is not held by `Jane Roerich`, nor by the CFO `John Roe`: other facts."""
    vault_with(vault, {"facts/acme/ceo.md": owned_ceo()})
    write_candidate(vault, "cfo.md", CEO.format(predicate="cfo", value="John Roe", more="", body="Leadership page."))
    write_candidate(vault, "chair.md", CEO.format(predicate="chair", value="Jane Roerich", more="", body="Board."))
    actions = sweep(invoke, vault)
    assert [actions[f"_inbox/agent-a/{n}.md"]["verdict"] for n in ("cfo", "chair")] == ["promote", "promote"]
    assert (vault / "facts/acme/cfo.md").is_file() and (vault / "facts/acme/chair.md").is_file()


RANDOM = (
    "Random note is a core plugin that opens a random note within your vault. "
    "Rediscover notes to add new insights, or link to recently added notes.\n\n"
    "To open a random note, click Open random note in the ribbon.\n"
)
UNIQUE = (
    "Unique note creator is a core plugin that lets you create notes with time-based names, also known as "
    "Zettelkasten notes.\n\nIf a note with the same name exists, the new note uses the next available timestamp. "
    "By default, new unique notes are empty. To use another file as a template, set the template file location.\n"
)
RESTATING = (
    "---\ntype: research\ntopic: core-plugins\ntitle: Capture plugins worth knowing\n"
    "source_url: https://help.obsidian.md/plugins\nconfidence: 2\n---\n"
    "Random note is a core plugin that opens a random note within your vault, so you can rediscover notes.\n\n"
    "Unique note creator lets you create notes with time-based names, also known as Zettelkasten notes.\n\n"
    "When a note with the same name exists, the new note uses the next available timestamp.\n\n"
    "{last}\n"
)


def test_a_candidate_restating_two_persons_notes_waits_naming_both(
    vault: Path, invoke: Callable[..., Result], write_candidate: Callable[..., Path]
) -> None:
    vault_with(vault, {"Plugins/Random note.md": RANDOM, "Plugins/Unique note creator.md": UNIQUE})
    before = snapshot(vault)
    write_candidate(vault, "capture.md", RESTATING.format(last="New unique notes are empty by default."))
    action = sweep(invoke, vault)["_inbox/agent-a/capture.md"]
    line = waits(vault, action, "near-duplicate")
    for note in ("Plugins/Random note.md", "Plugins/Unique note creator.md"):
        assert note in action["reason"] and note in line, action["reason"]
    assert "restates" in action["reason"]
    assert not (vault / action["target_path"]).exists()
    assert snapshot(vault)["Plugins/Random note.md"] == before["Plugins/Random note.md"]


def test_a_candidate_saying_mostly_new_things_beside_two_notes_is_promoted(
    vault: Path, invoke: Callable[..., Result], write_candidate: Callable[..., Path]
) -> None:
    """One sentence of each note in a text of mostly new sentences is no restatement."""
    vault_with(vault, {"Plugins/Random note.md": RANDOM, "Plugins/Unique note creator.md": UNIQUE})
    new = (
        "Capture workflows benefit from a dedicated inbox folder reviewed weekly.\n\n"
        "Quick capture hotkeys on mobile reduce friction when ideas arrive away from the desk.\n\n"
        "Periodic review sessions turn fleeting captures into permanent literature notes.\n\n"
        "Tagging captures by project keeps the weekly review short and focused."
    )
    text = RESTATING.format(last=new).replace(
        "When a note with the same name exists, the new note uses the next available timestamp.\n\n", ""
    )
    write_candidate(vault, "capture.md", text)
    action = sweep(invoke, vault)["_inbox/agent-a/capture.md"]
    assert action["verdict"] == "promote", action
    assert (vault / action["target_path"]).is_file()


def test_the_surfaces_own_namesakes_are_not_read_to_learn_whose_they_are(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fact's file name is its predicate's (`facts/*/size.md`): on a large vault a candidate
    has hundreds of namesakes on its own surface, all the curator's. Whose each is, the index
    knows; reading and parsing every one of them cost a 100k-note sweep 2.4× its time
    (114.9 → 47.7 candidates/s, tests/perf/bench.py)."""
    owned = "---\ntype: fact\nentity: widget-{n}\npredicate: size\nvalue: {n} mm\ncurated_from: [{{inbox: a/x}}]\n---\n"
    vault_with(vault, {f"facts/widget-{n}/size.md": owned.format(n=n) for n in range(40)})
    vault_with(vault, {"Size.md": "# Size\n\nHow the person measures things.\n"})
    read: list[str] = []
    real = IndexQuerier.text

    def spy(self: IndexQuerier, path: str) -> str | None:
        read.append(path)
        return real(self, path)

    monkeypatch.setattr(IndexQuerier, "text", spy)
    ctx = build_context(vault)
    candidate = (
        "---\ntype: fact\nentity: gizmo\npredicate: size\nvalue: 13 mm\n"
        "source_url: https://parts.acme-industrial.com/catalog/gizmo\nconfidence: 2\n---\nCatalog entry.\n"
    )
    verdict = check_text(ctx, candidate, "_inbox/agent/c.md", agent="agent").to_json()
    assert verdict["verdict"] == "needs_review" and "[[Size]] would be ambiguous" in verdict["reason"], verdict
    namesakes_read = {p for p in read if p.endswith("/size.md")}
    assert len(namesakes_read) <= 5, sorted(namesakes_read)


def test_neighbours_carry_whose_they_are_and_the_curators_are_not_read_again_for_restating(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Restating (a candidate made of a person's sentences) asks only about the person's notes:
    the curator's neighbours, known as such by the index, are not read and parsed again
    (`facts.restating` cost a 100k-note sweep 10% of its CPU, tests/perf/bench.py)."""
    owned = (
        "---\ntype: fact\nentity: gizmo-{n}\npredicate: weight\nvalue: {n} kg\n"
        "curated_from: [{{inbox: a/x}}]\n---\nThe gizmo weighs {n} kg on the catalog scale.\n"
    )
    vault_with(vault, {f"facts/gizmo-{n}/weight.md": owned.format(n=n) for n in range(3)})
    vault_with(vault, {"Gizmos.md": "# Gizmos\n\nThe gizmo weighs little on the catalog scale.\n"})
    asked: list[str] = []
    real = Questions.note_at

    def spy(self: Questions, rel: str) -> Any:
        asked.append(rel)
        return real(self, rel)

    monkeypatch.setattr(Questions, "note_at", spy)
    ctx = build_context(vault)
    candidate = (
        "---\ntype: fact\nentity: gizmo-9\npredicate: weight\nvalue: 9 kg\nconfidence: 2\n"
        "source_url: https://parts.acme-industrial.com/catalog/gizmo-9\n---\n"
        "The gizmo weighs 9 kg on the catalog scale.\n"
    )
    verdict = check_text(ctx, candidate, "_inbox/agent/c.md", agent="agent", with_context=True).to_json()
    near = {n["path"] for n in verdict["compared_with"]["neighbours"]}
    assert {"Gizmos.md", "facts/gizmo-1/weight.md"} <= near, verdict["compared_with"]
    asked_owned = [p for p in asked if p.startswith("facts/gizmo-") and p != "facts/gizmo-9/weight.md"]
    assert asked_owned == [] and "Gizmos.md" in asked, asked
