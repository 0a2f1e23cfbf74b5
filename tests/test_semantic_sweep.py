"""Semantic pairing wired into sweeps (issue 20): the rules setting, the `semantic_neighbour`
fact, what a sweep, `check --explain`, the judge, `doctor`, `query --similar` and `index stats`
make of it. The model is `semantic_kit`'s tiny one, read from a local folder as users read
theirs; nothing is downloaded. A semantic match may leave novelty undecided and name the note:
never drop, never patch."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from semantic_kit import write_model

from memory_curator.cli.machine import invocation
from memory_curator.commands import doctor
from memory_curator.core.candidate import build as build_candidate
from memory_curator.core.decide import decide
from memory_curator.core.errors import RulesError
from memory_curator.core.facts import Facts, Neighbour
from memory_curator.core.rules import parse
from memory_curator.index.file_querier import FileQuerier
from memory_curator.judge.client import gather
from memory_curator.store.rules_file import DEFAULT_RULES as DEFAULT_RULES_FILE
from memory_curator.store.rules_file import load_for_vault
from tests.conftest import age, snapshot
from tests.loop_kit import cli

pytestmark = pytest.mark.usefixtures("no_network")  # no test may reach the model hub

pytest.importorskip("numpy")
pytest.importorskip("model2vec")

HOSTING = "---\ntitle: Acme hosting\n---\nAcme stores customer data in Frankfurt.\n"
DINNER = "---\ntitle: Dinner\n---\nA pasta recipe with tomato and basil.\n"
SOURCE = "source_url: https://acme-industrial.com/trust\nconfidence: 2\n"
# the same fact in other words: no word of it is in the note (lexical pairing misses it)
PARAPHRASE = f"---\ntype: research\ntopic: vendors\ntitle: Supplier records\n{SOURCE}---\nThe company keeps client records in Germany.\n"  # noqa: E501
DEFAULT_RULES = DEFAULT_RULES_FILE.read_text(encoding="utf-8")
UNRELATED = f"---\ntype: research\ntopic: vendors\ntitle: Weekly budget\n{SOURCE}---\nThe budget was approved.\n"


def make_vault(empty_vault: Path, model: Path | None, threshold: float | None = None) -> Path:
    """The `init` vault with two notes; semantic pairing on with `model` (None: off)."""
    for rel, text in {"notes/hosting.md": HOSTING, "notes/dinner.md": DINNER}.items():
        path = empty_vault / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        age(path)
    if model is not None:
        setting: dict[str, object] = {"model": str(model)}
        if threshold is not None:
            setting["threshold"] = threshold
        set_semantic(empty_vault, f"  semantic: {json.dumps(setting)}\n")
    return empty_vault


def set_semantic(root: Path, lines: str) -> None:
    rules = root / "_meta" / "inbox-rules.md"
    text = rules.read_text(encoding="utf-8")
    rules.write_text(text.replace("\nsettings:\n", "\nsettings:\n" + lines, 1), encoding="utf-8")


def sweep(invoke: Callable[..., Result], root: Path) -> tuple[dict[str, dict[str, object]], dict[str, object]]:
    result = invoke("run", "--vault", str(root), "--no-judge", "--settle", "0", "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    actions = {a["inbox_path"]: a for agent in out.get("agents", [out]) for a in agent["actions"]}
    return actions, out


# --- the rules ----------------------------------------------------------------------------------------


def rules_with(settings: str = "", drop: str = "") -> str:
    text = DEFAULT_RULES.replace("\nsettings:\n", "\nsettings:\n" + settings, 1)
    return text.replace("\ndrop_rules:\n", "\ndrop_rules:\n" + drop, 1)


def test_semantic_is_off_unless_a_model_is_named() -> None:
    rules = parse(DEFAULT_RULES, "r.md")
    assert rules.settings.semantic.model is None and not rules.settings.semantic.enabled
    assert rules.settings.semantic.threshold == 0.75
    on = parse(rules_with("  semantic: {model: ./models/tiny, threshold: 0.7}\n"), "r.md").settings.semantic
    assert (on.model, on.threshold, on.enabled) == ("./models/tiny", 0.7, True)


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("  semantic: {model: x/y, treshold: 0.7}\n", "unknown setting 'treshold'"),
        ("  semantic: {model: x/y, threshold: 1.5}\n", "setting 'threshold' must be within 0..1"),
        ("  semantic: {model: x/y, threshold: high}\n", "setting 'threshold' must be a number"),
        ("  semantic: {model: ''}\n", "setting 'model' must not be empty"),
        ("  semantic: on\n", "'semantic' must be a mapping of semantic settings"),
    ],
)
def test_a_bad_semantic_setting_is_refused_at_its_line(setting: str, message: str) -> None:
    text = rules_with(setting)
    line = text.splitlines().index(setting.rstrip("\n")) + 1
    with pytest.raises(RulesError) as raised:
        parse(text, "r.md")
    assert message in raised.value.message and raised.value.line == line


@pytest.mark.parametrize("when", ["semantic_neighbour", "{all: [semantic_neighbour, {present: title}]}"])
def test_a_drop_rule_naming_semantic_neighbour_is_refused(when: str) -> None:
    drop = f"  - id: paraphrase\n    reason: said before\n    when: {when}\n"
    with pytest.raises(RulesError, match="uses semantic_neighbour: similarity alone never drops"):
        parse(rules_with(drop=drop), "r.md")


def test_rules_check_refuses_it_too(empty_vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules = empty_vault / "_meta" / "inbox-rules.md"
    drop = "  - id: paraphrase\n    reason: said before\n    when: semantic_neighbour\n"
    rules.write_text(rules.read_text().replace("\ndrop_rules:\n", "\ndrop_rules:\n" + drop, 1))
    code, _, err = cli(capsys, "rules", "check", "--vault", str(empty_vault))
    assert code != 0 and "uses semantic_neighbour: similarity alone never drops" in err


def test_the_default_rules_stay_identical() -> None:
    repo = Path(__file__).resolve().parent.parent
    shipped = (repo / "rules" / "inbox-rules.md").read_text()
    assert shipped == (repo / "vault_fixtures" / "_meta" / "inbox-rules.md").read_text()
    assert "undecided: {any: [near_duplicate, subject_note_exists, semantic_neighbour]}" in shipped
    assert "\n  # semantic:" in shipped  # off by default


# --- the decision: undecided and named, never a drop or a patch ------------------------------------------


def test_a_semantic_match_alone_only_leaves_novelty_undecided() -> None:
    rules = parse(DEFAULT_RULES, "r.md")
    candidate = build_candidate(PARAPHRASE, "_inbox/a/c.md", "a", rules)
    close = Neighbour("notes/hosting.md", "Acme hosting", 0.91)
    assert decide(candidate, rules, Facts()).verdict == "promote"
    decision = decide(candidate, rules, Facts(semantic=(close,), close=(close,)))
    assert decision.verdict == "needs_review" and decision.criteria["novel"] is None
    assert "semantically close to notes/hosting.md (0.91)" in decision.reason
    below = decide(candidate, rules, Facts(semantic=(close,)))  # a neighbour under the threshold
    assert below.verdict == "promote"


def test_a_paraphrase_is_paired_where_lexical_matching_promotes_it(
    tmp_path: Path, model_dir: Path, invoke: Callable[..., Result], write_candidate: Callable[..., Path]
) -> None:
    lexical = tmp_path / "lexical"
    invoke("init", str(lexical))
    make_vault(lexical, None)
    write_candidate(lexical, "records.md", PARAPHRASE)
    actions, _ = sweep(invoke, lexical)
    assert actions["_inbox/agent-a/records.md"]["verdict"] == "promote"

    paired = tmp_path / "paired"
    invoke("init", str(paired))
    make_vault(paired, model_dir)
    write_candidate(paired, "records.md", PARAPHRASE)
    write_candidate(paired, "budget.md", UNRELATED)
    before = snapshot(paired)
    actions, out = sweep(invoke, paired)
    flagged = actions["_inbox/agent-a/records.md"]
    assert flagged["verdict"] == "needs_review" and flagged["reason_code"] == "semantic-neighbour"
    assert "semantically close to notes/hosting.md (0.9" in str(flagged["reason"])
    assert "semantically close" in (paired / "_inbox/agent-a/records.md").read_text()
    assert actions["_inbox/agent-a/budget.md"]["verdict"] == "promote"  # nothing close to it
    assert "notes" not in out
    assert {p: b for p, b in snapshot(paired).items() if p.startswith("notes/")} == {
        p: b for p, b in before.items() if p.startswith("notes/")
    }


def test_a_semantic_match_to_a_curator_note_never_patches_or_drops(
    empty_vault: Path, model_dir: Path, invoke: Callable[..., Result], write_candidate: Callable[..., Path]
) -> None:
    root = make_vault(empty_vault, model_dir)
    fact = root / "facts/acme/hosting.md"
    fact.parent.mkdir(parents=True)
    fact.write_text(
        "---\ntype: fact\nentity: acme\npredicate: hosting\nvalue: Frankfurt\n---\n"
        "Acme stores customer data in Frankfurt.\n"
    )
    age(fact)
    before = fact.read_bytes()
    write_candidate(
        root,
        "vendor.md",
        f"---\ntype: fact\nentity: supplier\npredicate: storage\nvalue: Germany\n{SOURCE}---\n"
        "The company keeps client records in Germany.\n",
    )
    actions, _ = sweep(invoke, root)
    action = actions["_inbox/agent-a/vendor.md"]
    assert action["verdict"] == "needs_review", action
    assert "semantically close to" in str(action["reason"])
    assert fact.read_bytes() == before and not (root / "facts/supplier").exists()


def test_notes_written_earlier_in_the_sweep_are_paired_too(
    empty_vault: Path, model_dir: Path, invoke: Callable[..., Result], write_candidate: Callable[..., Path]
) -> None:
    root = make_vault(empty_vault, model_dir)
    first = f"---\ntype: research\ntopic: team\ntitle: Meeting moved\n{SOURCE}---\nThe meeting moved to Thursday.\n"
    # another surface: two research notes with other keys are `distinct`, as for near-duplicates
    second = (
        f"---\ntype: event\ndate: 2026-11-20\ntitle: Standup\n{SOURCE}---\nThursday: our standup was rescheduled.\n"
    )
    write_candidate(root, "a-first.md", first)
    write_candidate(root, "b-second.md", second)
    actions, _ = sweep(invoke, root)
    assert actions["_inbox/agent-a/a-first.md"]["verdict"] == "promote"
    later = actions["_inbox/agent-a/b-second.md"]
    assert later["verdict"] == "needs_review"
    assert "semantically close to research/team/meeting-moved.md" in str(later["reason"])


def test_check_explain_lists_the_semantic_neighbours(
    empty_vault: Path, model_dir: Path, invoke: Callable[..., Result], tmp_path: Path
) -> None:
    root = make_vault(empty_vault, model_dir)
    candidate = tmp_path / "c.md"
    candidate.write_text(PARAPHRASE)
    result = invoke("check", str(candidate), "--vault", str(root), "--explain")
    assert "semantic_neighbour" in result.output
    assert "semantically close: notes/hosting.md (0.9" in result.output


def test_the_judge_is_shown_semantic_neighbours_too(empty_vault: Path) -> None:
    root = make_vault(empty_vault, None)
    rules = load_for_vault(root)

    class Paired(FileQuerier):
        def neighbours(self, candidate: object, k: int) -> list[Neighbour]:
            return [Neighbour("notes/dinner.md", "Dinner", 0.3)]

        def semantic_neighbours(self, candidate: object, k: int) -> list[Neighbour]:
            return [Neighbour("notes/hosting.md", "Acme hosting", 0.9), Neighbour("notes/dinner.md", "Dinner", 0.2)]

    candidate = build_candidate(PARAPHRASE, "_inbox/a/c.md", "a", rules)
    (item,) = gather([candidate], Paired(root, rules), 5)
    assert [n.path for n in item.neighbours] == ["notes/dinner.md", "notes/hosting.md"]
    (one,) = gather([candidate], Paired(root, rules), 1)
    assert [n.path for n in one.neighbours] == ["notes/dinner.md"]


# --- unavailable: one line, lexical pairing, doctor warns ----------------------------------------------


def test_a_missing_model_is_one_line_and_the_sweep_goes_on_lexically(
    tmp_path: Path, model_dir: Path, invoke: Callable[..., Result], write_candidate: Callable[..., Path]
) -> None:
    verdicts = {}
    for name, model in (("off", None), ("gone", tmp_path / "models" / "gone")):
        root = tmp_path / name
        invoke("init", str(root))
        make_vault(root, model)
        write_candidate(root, "records.md", PARAPHRASE)
        write_candidate(root, "budget.md", UNRELATED)
        result = invoke("run", "--vault", str(root), "--no-judge", "--settle", "0")
        assert result.exit_code == 0, result.output
        said = [line for line in result.output.splitlines() if "semantic" in line]
        verdicts[name] = sorted(p.name for p in (root / "research").rglob("*.md"))
        if model is not None:
            assert len(said) == 1 and "semantic model not found at" in said[0] and "lexically" in said[0], said
            findings = doctor.diagnose(invocation(vault=str(root))).findings
            (finding,) = [f for f in findings if f.topic == "semantic"]
            assert finding.level == "warn" and str(finding.fix).endswith(f"semantic fetch OWNER/NAME --to {model}")
        else:
            assert said == []
            assert [f for f in doctor.diagnose(invocation(vault=str(root))).findings if f.topic == "semantic"] == []
    assert verdicts["gone"] == verdicts["off"] == ["supplier-records.md", "weekly-budget.md"]


def test_the_json_carries_the_line(
    empty_vault: Path, tmp_path: Path, invoke: Callable[..., Result], write_candidate: Callable[..., Path]
) -> None:
    root = make_vault(empty_vault, tmp_path / "nowhere")
    write_candidate(root, "records.md", PARAPHRASE)
    _, out = sweep(invoke, root)
    (note,) = out["notes"]
    assert "semantic model not found at" in str(note)


def test_a_missing_extra_is_one_line_too(
    empty_vault: Path,
    model_dir: Path,
    invoke: Callable[..., Result],
    write_candidate: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = make_vault(empty_vault, model_dir)
    monkeypatch.setitem(sys.modules, "model2vec", None)  # `import model2vec` raises ImportError
    write_candidate(root, "records.md", PARAPHRASE)
    result = invoke("run", "--vault", str(root), "--no-judge", "--settle", "0")
    said = [line for line in result.output.splitlines() if "semantic" in line]
    assert len(said) == 1 and "pip install 'memory-curator[semantic]'" in said[0], said
    assert (root / "research/vendors/supplier-records.md").is_file()  # promoted, as with semantic off
    (finding,) = [f for f in doctor.diagnose(invocation(vault=str(root))).findings if f.topic == "semantic"]
    assert finding.level == "warn" and finding.fix == "pip install 'memory-curator[semantic]'"


def test_doctor_finds_a_model_beside_the_vault(empty_vault: Path, model_dir: Path) -> None:
    root = make_vault(empty_vault, None)
    shutil.copytree(model_dir, root / "models" / "tiny")
    set_semantic(root, "  semantic: {model: ./models/tiny}\n")
    (finding,) = [f for f in doctor.diagnose(invocation(vault=str(root))).findings if f.topic == "semantic"]
    assert finding.level == "ok" and str(root / "models" / "tiny") in finding.message


# --- query --similar and index stats ----------------------------------------------------------------------


def test_query_similar_shows_both_lists(
    empty_vault: Path, model_dir: Path, invoke: Callable[..., Result], tmp_path: Path
) -> None:
    root = make_vault(empty_vault, model_dir)
    note = tmp_path / "c.md"
    note.write_text(PARAPHRASE)
    data = json.loads(invoke("query", "--vault", str(root), "--similar", str(note), "--json").output)["data"]
    assert data["kind"] == "similar" and data["semantic_status"] == "on"
    assert data["semantic"][0]["path"] == "notes/hosting.md" and data["semantic"][0]["score"] > 0.85
    assert "notes/hosting.md" not in [row["path"] for row in data["lexical"]]
    shown = invoke("query", "--vault", str(root), "--similar", "Acme stores customer data in Frankfurt.")
    assert shown.exit_code == 0 and "lexical" in shown.output and "semantic" in shown.output
    assert shown.output.count("notes/hosting.md") == 2  # in both columns
    itself = json.loads(invoke("query", "--vault", str(root), "--similar", "notes/hosting.md", "--json").output)
    assert itself["data"]["file"] == "notes/hosting.md"
    assert "notes/hosting.md" not in [r["path"] for r in itself["data"]["semantic"] + itself["data"]["lexical"]]


def test_query_text_finds_a_note_by_meaning_with_pairing_on(empty_vault: Path, invoke: Callable[..., Result]) -> None:
    """Issue 28's named questions: asked in other words than the note's, `query --text` (and
    MCP's `search_notes`, the same question) finds the note only with semantic pairing on."""
    asked = "Where does the vendor keep client records?"  # no word of it is in notes/hosting.md
    root = make_vault(empty_vault, None)
    off = json.loads(invoke("query", "--vault", str(root), "--text", asked, "--json").output)["data"]
    assert "notes/hosting.md" not in [row["path"] for row in off["results"]]
    set_semantic(root, f"  semantic: {{model: {write_model(root.parent / 'model')}}}\n")
    on = json.loads(invoke("query", "--vault", str(root), "--text", asked, "--json").output)["data"]
    assert on["results"][0]["path"] == "notes/hosting.md", on
    assert 0 < on["results"][0]["score"] <= 1.0
    lexical = json.loads(invoke("query", "--vault", str(root), "--text", "pasta basil", "--json").output)["data"]
    assert lexical["results"][0]["path"] == "notes/dinner.md"  # words the note holds still rank it first


def test_query_similar_says_why_the_semantic_list_is_empty(
    empty_vault: Path, tmp_path: Path, invoke: Callable[..., Result]
) -> None:
    root = make_vault(empty_vault, None)
    off = json.loads(invoke("query", "--vault", str(root), "--similar", "Acme data", "--json").output)["data"]
    assert off["semantic"] == [] and off["semantic_status"].startswith("off")
    set_semantic(root, f"  semantic: {{model: {tmp_path / 'gone'}}}\n")
    gone = invoke("query", "--vault", str(root), "--similar", "Acme data")
    assert "semantic model not found" in gone.output and "notes/hosting.md" in gone.output


def test_index_stats_shows_the_vectors(
    empty_vault: Path, model_dir: Path, invoke: Callable[..., Result], write_candidate: Callable[..., Path]
) -> None:
    root = make_vault(empty_vault, None)
    invoke("index", "rebuild", "--vault", str(root))
    assert "semantic vectors" not in invoke("index", "stats", "--vault", str(root)).output
    set_semantic(root, f"  semantic: {{model: {model_dir}}}\n")
    invoke("query", "--vault", str(root), "--similar", "Acme data")  # opens the pairing: every note embedded
    stats = json.loads(invoke("index", "stats", "--vault", str(root), "--json").output)["data"]
    assert stats["vectors"]["count"] == stats["notes"] and stats["vectors"]["bytes"] > 0
    assert stats["vectors"]["model"] == str(model_dir.resolve())
    assert "semantic vectors: " in invoke("index", "stats", "--vault", str(root)).output


def test_another_model_in_the_rules_rebuilds_the_vectors(
    empty_vault: Path, model_dir: Path, tmp_path: Path, invoke: Callable[..., Result]
) -> None:
    from semantic_kit import word_vectors

    root = make_vault(empty_vault, model_dir)
    invoke("query", "--vault", str(root), "--similar", "Acme data")
    vectors = word_vectors(24)
    other = write_model(tmp_path / "models" / "other", vectors)
    rules = root / "_meta" / "inbox-rules.md"
    rules.write_text(rules.read_text().replace(str(model_dir), str(other)))
    data = json.loads(invoke("query", "--vault", str(root), "--similar", "Acme data", "--json").output)["data"]
    assert data["semantic"][0]["path"] == "notes/hosting.md"
    stats = json.loads(invoke("index", "stats", "--vault", str(root), "--json").output)["data"]
    assert stats["vectors"]["model"] == str(other.resolve()) and stats["vectors"]["count"] == stats["notes"]


def test_a_semantic_neighbour_with_another_key_of_the_surface_is_distinct() -> None:
    """`widget-2 size` is no paraphrase of `widget-1 size`, however close their vectors."""
    from memory_curator.core.facts import with_neighbours

    rules = parse(rules_with("  semantic: {model: x/y}\n"), "r.md")
    text = f"---\ntype: fact\nentity: widget-2\npredicate: size\nvalue: 13 mm\n{SOURCE}---\nCatalog entry.\n"
    candidate = build_candidate(text, "_inbox/a/w2.md", "a", rules)
    other = Neighbour("facts/widget-1/size.md", "size", 0.99, key="facts/widget-1/size.md", value="10 mm")
    free = Neighbour("notes/widgets.md", "Widgets", 0.9)

    class Close(FileQuerier):
        def semantic_neighbours(self, candidate: object, k: int) -> list[Neighbour]:
            return [other, free]

    facts = with_neighbours(Facts(), candidate, Close(Path("/nonexistent"), rules), rules.settings)
    assert facts.semantic == (other, free) and facts.close == (free,) and facts.semantic_neighbour
    off = parse(DEFAULT_RULES, "r.md")
    assert not with_neighbours(Facts(), candidate, Close(Path("/nonexistent"), off), off.settings).semantic


def test_a_named_model_is_looked_for_in_the_contexts_models_folder(
    empty_vault: Path,
    model_dir: Path,
    invoke: Callable[..., Result],
    write_candidate: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`semantic: {model: tiny}` is `MEMORY_CURATOR_MODELS/tiny`, read from the command's context."""
    from memory_curator.commands.context import Seams

    root = make_vault(empty_vault, None)
    set_semantic(root, "  semantic: {model: tiny}\n")
    write_candidate(root, "records.md", PARAPHRASE)
    env = {**os.environ, "MEMORY_CURATOR_MODELS": str(model_dir.parent)}
    result = invoke("run", "--vault", str(root), "--no-judge", "--settle", "0", "--json", seams=Seams(env=env))
    actions = [a for agent in json.loads(result.output)["agents"] for a in agent["actions"]]
    assert len(actions) == 1, result.output
    action = actions[0]
    assert action["reason_code"] == "semantic-neighbour"
    monkeypatch.setenv("MEMORY_CURATOR_MODELS", str(model_dir.parent / "elsewhere"))
    (finding,) = [f for f in doctor.diagnose(invocation(vault=str(root))).findings if f.topic == "semantic"]
    assert finding.level == "warn" and finding.fix == "memory-curator semantic fetch tiny"


def test_the_overlay_replaces_and_removes_indexed_notes_for_pairing(
    empty_vault: Path, model_dir: Path, tmp_path: Path
) -> None:
    """A note the sweep rewrote is paired by its new text, one it removed not at all."""
    from memory_curator.index.overlay import Overlay
    from memory_curator.index.querier import open_querier

    root = make_vault(empty_vault, model_dir)
    (tmp_path / "state").mkdir()
    querier = Overlay(open_querier(root, load_for_vault(root), tmp_path / "state"))
    asked = "The company keeps client records in Germany."
    assert querier.semantic_similar(asked, 1)[0].path == "notes/hosting.md"
    querier.stage("notes/hosting.md", DINNER)
    assert "notes/hosting.md" not in [n.path for n in querier.semantic_similar(asked, 5) if n.score > 0.5]
    assert {n.path for n in querier.semantic_similar("pasta with basil", 2)} == {"notes/hosting.md", "notes/dinner.md"}
    querier.stage("notes/hosting.md", None)
    assert "notes/hosting.md" not in [n.path for n in querier.semantic_similar("pasta with basil", 5)]
    querier.stage("notes/new.md", HOSTING)
    assert querier.semantic_similar(asked, 1)[0].path == "notes/new.md"
