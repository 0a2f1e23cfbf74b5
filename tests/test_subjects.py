"""Subject resolution and a calibrated similarity (issue 16): a candidate about a note a person
keeps anywhere in the vault names that note and never creates a second one; a curator-owned
note named for the subject is patched; a score of 1.0 means the same text."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from memory_curator.cli.machine import build_context
from memory_curator.commands.check import check_text
from memory_curator.core import subject, words
from memory_curator.index import similarity
from tests.conftest import age, snapshot

SOURCE = "source_url: https://obsidian.md/changelog\nconfidence: 2\n"


def vault_with(vault: Path, notes: dict[str, str]) -> Path:
    for rel, text in notes.items():
        path = vault / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        age(path)
    return vault


def check(vault: Path, text: str) -> dict:
    return check_text(build_context(vault), text, "_inbox/agent/c.md", agent="agent").to_json()


KEPANO = "# kepano\n\nSteph Ango, CEO of Obsidian. Maintains [[Minimal]] and the Obsidian Web Clipper.\n"


def test_a_person_kept_as_a_free_form_note_is_named_not_duplicated(
    vault: Path, invoke: Callable[..., Result], write_candidate: Callable[..., Path]
) -> None:
    vault_with(vault, {"People/kepano.md": KEPANO})
    before = snapshot(vault)
    write_candidate(vault, "kepano.md", f"---\ntype: person\nname: kepano\nrole: CEO\n{SOURCE}---\nNew role.\n")
    result = invoke("run", str(vault / "_inbox"), "--no-judge", "--json")
    assert result.exit_code == 0, result.output
    assert not (vault / "persons/kepano.md").exists(), "no second note for a subject that has one"
    assert (vault / "People/kepano.md").read_bytes() == before["People/kepano.md"]
    flagged = (vault / "_inbox/agent-a/kepano.md").read_text(encoding="utf-8")
    assert "the vault has a note about it: your note People/kepano.md" in flagged
    actions = [a for agent in json.loads(result.output)["agents"] for a in agent["actions"]]
    (action,) = [a for a in actions if a["inbox_path"] == "_inbox/agent-a/kepano.md"]
    assert action["verdict"] == "needs_review" and action["reason_code"] == "subject-note"


def test_a_heading_names_a_note_too(vault: Path) -> None:
    vault_with(vault, {"Notes/random-name.md": "# Sync pricing\n\nPlus costs $10 a month.\n"})
    out = check(vault, f"---\ntype: insight\ntitle: Sync Pricing\nload_bearing: true\n{SOURCE}---\nBody.\n")
    assert out["verdict"] == "needs_review" and "Notes/random-name.md" in out["reason"]


def test_a_curator_owned_note_named_by_alias_is_patched(vault: Path) -> None:
    owned = "---\ntype: person\nname: Shida Li\naliases: [Licat]\ncurated_from: [{inbox: a/x.md}]\n---\nCo-founder.\n"
    vault_with(vault, {"persons/shida-li.md": owned})
    out = check(vault, f"---\ntype: person\nname: Licat\ntags: [founder]\n{SOURCE}---\nCo-founder and CEO.\n")
    assert out["verdict"] == "patch" and out["target_path"] == "persons/shida-li.md", out


HUB = "The Git plugin syncs your vault with a Git repository. Maintained by Vinzent and Denis Olehov.\n"


@pytest.mark.parametrize(
    ("predicate", "verdict"),
    [("maintainers", "needs_review"), ("release-cadence", "promote")],
)
def test_a_fact_is_about_its_entitys_note_only_where_the_note_speaks_of_the_predicate(
    vault: Path, predicate: str, verdict: str
) -> None:
    vault_with(vault, {"Plugins/obsidian-git.md": HUB})
    fm = f"---\ntype: fact\nentity: obsidian-git\npredicate: {predicate}\nvalue: Someone new\n{SOURCE}---\nBody.\n"
    out = check(vault, fm)
    assert out["verdict"] == verdict, out
    if verdict == "needs_review":
        assert "your note Plugins/obsidian-git.md" in out["reason"]


def test_the_words_of_a_folder_name_an_entity(vault: Path) -> None:
    vault_with(vault, {"Obsidian Publish/Publish limitations.md": "Publish upload size limit is 50 MB per file.\n"})
    fm = f"---\ntype: fact\nentity: obsidian-publish\npredicate: upload-size-limit\nvalue: 100 MB\n{SOURCE}---\nB.\n"
    out = check(vault, fm)
    assert out["verdict"] == "needs_review" and "Obsidian Publish/Publish limitations.md" in out["reason"]


def test_a_note_found_by_its_path_words_is_never_patched(vault: Path) -> None:
    owned = "---\ntype: fact\nentity: json-canvas\npredicate: file-format\nvalue: JSON\ncurated_from: [{x: 1}]\n---\n"
    vault_with(vault, {"facts/json-canvas/file-format.md": owned})
    fm = f"---\ntype: fact\nentity: canvas\npredicate: file-format\nvalue: JSON Canvas 1.0\n{SOURCE}---\nB.\n"
    out = check(vault, fm)
    assert out["verdict"] != "patch", "another entity's note is not this fact's note"


def test_an_event_of_another_day_is_another_event(vault: Path) -> None:
    weekly = "---\ntype: event\ndate: 2026-11-02\ntitle: Weekly sync\n---\nNotes.\n"
    vault_with(vault, {"events/2026/2026-11-02-weekly-sync.md": weekly})
    fm = f"---\ntype: event\ndate: 2026-11-09\ntitle: Weekly sync\n{SOURCE}---\nOther notes.\n"
    assert check(vault, fm)["verdict"] == "promote"


def test_subject_words() -> None:
    assert subject.speaks_of(("max", "file", "size"), "The maximum file size is 200 MB")
    assert not subject.speaks_of(("release", "cadence", "weekly"), "Maintained by Vinzent")
    assert subject.first_heading("intro\n# Title here #\nbody") == "Title here"


TEXT = "Obsidian Sync keeps version history for one year on the Plus plan and a month on Standard."


def test_the_same_text_scores_one_and_one_rare_word_scores_its_share() -> None:
    probe = similarity.probe(words.tokens(TEXT), {}, 1000, 20.0, "english")

    def both(text: str) -> tuple[float, float]:
        note = similarity.read(probe, text)
        return similarity.same(probe, note), similarity.topic(probe, note)

    assert both(TEXT) == (pytest.approx(1.0), pytest.approx(1.0))
    lone = "A note about version control in general."
    assert max(both(lone)) < 0.3
    inside = "Intro words here. " * 50 + TEXT + " More words after." * 50
    assert both(inside) == (pytest.approx(1.0), pytest.approx(1.0)), "a copy inside a longer note"


def test_query_text_keeps_common_words(real_vault: Path, tmp_path: Path, invoke: Callable[..., Result]) -> None:
    vault = tmp_path / "help"
    shutil.copytree(real_vault, vault)
    assert invoke("init", "--vault", str(vault)).exit_code == 0
    result = invoke("query", "--vault", str(vault), "--text", "sync", "--json")
    assert result.exit_code == 0, result.output
    assert '"results": []' not in result.output and "Sync" in result.output


def test_explain_names_the_exact_duplicate_and_the_rule_drops_it(
    vault: Path, tmp_path: Path, invoke: Callable[..., Result]
) -> None:
    text = (vault / "decisions/keep-notes-in-markdown.md").read_text(encoding="utf-8")
    copy = tmp_path / "copy.md"
    copy.write_text(text.replace("type: decision", "type: insight"), encoding="utf-8")
    result = invoke("check", str(copy), "--vault", str(vault), "--explain")
    assert "exact duplicate: decisions/keep-notes-in-markdown.md" in result.output, result.output
    assert "drop: exact duplicate of decisions/keep-notes-in-markdown.md" in result.output


def test_facts_of_one_template_stay_distinct_once_indexed(
    vault: Path, invoke: Callable[..., Result], write_candidate: Callable[..., Path]
) -> None:
    def widgets(numbers: range) -> None:
        for n in numbers:
            fm = f"type: fact\nentity: widget-{n}\npredicate: size\nvalue: {n * 3 + 7} mm\n{SOURCE}"
            write_candidate(vault, f"widget-{n}.md", f"---\n{fm}---\nCatalog entry for widget {n}.\n", agent="parts")
        assert invoke("run", str(vault / "_inbox/parts"), "--no-judge").exit_code == 0

    widgets(range(1, 13))
    widgets(range(13, 25))  # the first twelve are indexed now, not only staged
    assert sorted(p.name for p in (vault / "facts").glob("widget-*")) == sorted(f"widget-{n}" for n in range(1, 25))
    assert not list((vault / "_inbox/parts").glob("*.md"))


BOILERPLATE = "Checked on the vendor's public pricing page today; the figure was copied as it is shown there."


def test_a_verbatim_copy_under_a_new_title_is_an_exact_duplicate_but_a_shared_boilerplate_body_is_not(
    vault: Path, invoke: Callable[..., Result], write_candidate: Callable[..., Path]
) -> None:
    prose = "Obsidian stores notes as plain Markdown files in a folder. " * 3
    guide = "---\ntitle: How Obsidian stores data\n---\n" + prose
    vault_with(vault, {"Guides/storage.md": guide})
    copy = f"---\ntype: research\ntopic: saved\ntitle: Saved page 1\n{SOURCE}---\n" + guide.split("---\n", 2)[2]
    write_candidate(vault, "copy.md", copy, agent="clipper")
    for n, value in ((1, "$4/month"), (2, "$8/month")):
        fm = f"type: fact\nentity: plan-{n}\npredicate: price\nvalue: {value}\n{SOURCE}"
        write_candidate(vault, f"price-{n}.md", f"---\n{fm}---\n{BOILERPLATE}\n", agent="clipper")
    result = invoke("run", str(vault / "_inbox"), "--no-judge", "--json")
    actions = {a["inbox_path"]: a for agent in json.loads(result.output)["agents"] for a in agent["actions"]}
    dropped = actions["_inbox/clipper/copy.md"]
    assert dropped["verdict"] == "drop" and dropped["rule"] == "exact-duplicate"
    assert "exact duplicate of Guides/storage.md" in dropped["reason"]
    assert [actions[f"_inbox/clipper/price-{n}.md"]["verdict"] for n in (1, 2)] == ["promote", "promote"]


def test_the_rules_file_is_nobodys_neighbour(vault: Path, invoke: Callable[..., Result]) -> None:
    words = "curator rules surfaces criteria drop_rules settle near_duplicate_score judge"
    result = invoke("query", "--vault", str(vault), "--text", words, "--json")
    assert result.exit_code == 0, result.output
    assert "_meta/" not in result.output
