"""Issue 28's floors ("Near means near", Must show) on BOTH labeled sets, without a judge: the scorer
(tests/novelty/score.py) runs `python -m memory_curator` (this checkout) on fresh copies of the real vaults,
obsidian-help-en (tests/novelty/) and agent-learnings-es (tests/novelty_es/).

The named `query` questions in the top 3 (`QUERY_TOP3_TARGET`, 90%) are met with semantic pairing on (27 of 30
with WordLlama's vectors, `MC_WORDLLAMA_MODEL`: .ci/run makes it from the wheel); by words alone 25 of 30 (the five
misses ask in other words than the note uses), a floor kept so that the lexical ranking cannot fall back."""

from __future__ import annotations

import importlib.util
import json
import os
import random
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from memory_curator.core import words
from memory_curator.core.notes import parse
from memory_curator.index import similarity
from tests.conftest import SHARED, computed_once, require_shared

HERE = Path(__file__).resolve().parent
SETS = {"novelty": HERE / "novelty", "novelty_es": HERE / "novelty_es"}
VAULTS = {"novelty": "obsidian-help-en", "novelty_es": "agent-learnings-es"}
ACCEPTABLE = 0.97
REVIEW_OVER_JUDGE_LESS_FLOOR = 1.1
PROMOTED = 0.98  # the template and one-page sets
REVIEW_NAMED = 0.95  # issue 28: every needs_review line names the right note (97.1% of 34, 96.1% of 51 today)
NEAR = 0.6  # the shipped rules' near_duplicate_score
# issue 38: contradictions named as such (reason code `contradiction`), of the `contradiction` class. Most of
# them contradict a person's prose ("no size limit" beside the Publish limits page): the rules named only those
# that contradict a note's key (2 of 8, 1 of 7) until `core.conflict` read the prose (7 of 8, 6 of 7; docs/judge.md).
CONTRADICTIONS_NAMED_FLOOR = {"novelty": 7, "novelty_es": 6}
CONTRADICTIONS_NAMED_TARGET = 5 / 6


def scorer() -> ModuleType:
    spec = importlib.util.spec_from_file_location("novelty_score_floors", HERE / "novelty" / "score.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def score(name: str, sets: str, tmp_path: Path) -> dict[str, Any]:
    require_shared(SHARED / "real-vaults" / VAULTS[name])
    args = ["--cli", f"{sys.executable} -m memory_curator", "--set-dir", str(SETS[name]), "--sets", sets]
    result: dict[str, Any] = scorer().main([*args, "--out", str(tmp_path / "scores.json"), "--work", str(tmp_path)])
    return result


@pytest.mark.parametrize("name", SETS)
def test_labeled_set_meets_issue_28(name: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    require_shared(SHARED / "real-vaults" / VAULTS[name])  # test_novelty.py scores the same set of the same vault
    m = computed_once(tmp_path_factory, f"{name}-main", lambda: score(name, "main", tmp_path_factory.mktemp("s")))
    m = m["main"]
    wrong = [(i["file"], i["verdict"], i["reason"]) for i in m["items"] if not i["acceptable"]]
    assert m["acceptable"] >= ACCEPTABLE, wrong
    assert m["wrong_drops"] == 0, wrong
    assert m["duplicates_promoted"] == 0, wrong
    assert m["second_notes"] == 0, [i["file"] for i in m["items"] if i["second_note"]]
    assert m["contradictions_merged"] == 0, wrong
    assert m["wrong_patches"] == 0, wrong
    assert m["person_notes_identical"], m["person_notes_changed"]
    assert m["review_fraction"] <= REVIEW_OVER_JUDGE_LESS_FLOOR * m["review_floor_judge_less"], (
        m["review_fraction"],
        m["review_floor_judge_less"],
    )
    assert m["review_named"] >= REVIEW_NAMED, m["review_named"]
    assert not m["fate_mismatches"]
    assert m["named_like_vault_note"] == 0, [(i["file"], i["named_like"]) for i in m["items"] if i["named_like"]]
    assert m["contradictions_named"] >= CONTRADICTIONS_NAMED_FLOOR[name], [
        (i["file"], i["code"]) for i in m["items"] if i["class"] == "contradiction"
    ]


@pytest.mark.parametrize("name", SETS)
def test_contradictions_are_named_as_such(name: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    m = computed_once(tmp_path_factory, f"{name}-main", lambda: score(name, "main", tmp_path_factory.mktemp("s")))
    m = m["main"]
    assert m["contradictions_named"] >= CONTRADICTIONS_NAMED_TARGET * m["contradictions_n"]


# --- with the judge: the captured requests, answered once by blind readers, replayed (tests/judge_replay/) ---

REPLAY = HERE / "judge_replay"
JUDGE_REVIEW_TARGET = 1.25  # issue 38: the review fraction at most 1.25 x the only-review floor, judge on
# x1.10 on novelty, x1.23 on novelty_es. A judge's "duplicate" citing a link or date the note lacks waits
# (core.unsaid: 4 wrong drops saved on novelty_es), unless the link is the note's own address (its path's
# words: 6 paraphrases citing their help.obsidian.md page waited so, x1.31).
JUDGED_FLOORS = {  # what the replayed answers reach; one Spanish price note is promoted beside the hub that has it
    "novelty": {"second_notes": 0, "contradictions_named": 8},
    "novelty_es": {"second_notes": 1, "contradictions_named": 7},
}


def judged(name: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    require_shared(SHARED / "real-vaults" / VAULTS[name])
    cli = f"{sys.executable} {REPLAY / 'replay_cli.py'} --dir {REPLAY / name} --"
    args = ["--judge", "--cli", cli, "--set-dir", str(SETS[name]), "--sets", "main"]
    work = tmp_path_factory.mktemp("j")  # the run's temp folder (a tmpfs here: the copies' 1,900 files, fsyncs)
    result: dict[str, Any] = computed_once(
        tmp_path_factory,
        f"{name}-judged",
        lambda: scorer().main([*args, "--out", str(work / "scores.json"), "--work", str(work)]),
    )
    return result["main"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("name", SETS)
def test_with_the_judge_replayed_the_labeled_set_meets_issue_38(name: str, tmp_path_factory) -> None:
    m = judged(name, tmp_path_factory)
    wrong = [(i["file"], i["verdict"], i["reason"]) for i in m["items"] if not i["acceptable"]]
    assert m["acceptable"] >= ACCEPTABLE, wrong
    assert (m["wrong_drops"], m["duplicates_promoted"], m["wrong_patches"], m["contradictions_merged"]) == (0, 0, 0, 0)
    assert m["person_notes_identical"] and not m["fate_mismatches"], m["person_notes_changed"]
    assert m["named_like_vault_note"] == 0, [(i["file"], i["named_like"]) for i in m["items"] if i["named_like"]]
    assert m["second_notes"] <= JUDGED_FLOORS[name]["second_notes"], [i["file"] for i in m["items"] if i["second_note"]]
    assert m["contradictions_named"] >= JUDGED_FLOORS[name]["contradictions_named"]
    assert m["review_fraction"] < m["review_floor_judge_less"], "the judge settles some of what waits without it"


@pytest.mark.parametrize("name", SETS)
def test_with_the_judge_the_review_fraction_is_within_a_quarter_of_its_floor(name: str, tmp_path_factory) -> None:
    assert judged(name, tmp_path_factory)["review_ratio"] <= JUDGE_REVIEW_TARGET


@pytest.mark.parametrize("name", SETS)
def test_with_the_judge_contradictions_are_named_as_such(name: str, tmp_path_factory) -> None:
    m = judged(name, tmp_path_factory)
    assert m["contradictions_named"] >= CONTRADICTIONS_NAMED_TARGET * m["contradictions_n"]


@pytest.mark.slow  # 650 candidates on each vault: about 30 s each on the live code
@pytest.mark.parametrize("name", SETS)
def test_template_one_page_and_retitled_sets(name: str, tmp_path: Path) -> None:
    result = score(name, "template,one_page,retitled", tmp_path)
    template, one_page, retitled = result["template"], result["one_page"], result["retitled"]
    assert template["promoted"] >= PROMOTED * template["n"], template["verdicts"]
    assert one_page["n"] == 50 and one_page["promoted"] >= PROMOTED * one_page["n"], one_page["not_promoted"]
    assert retitled["caught"] == retitled["n"], retitled["verdicts"]


def note_texts(vault: Path, count: int) -> list[str]:
    """`count` notes of the vault with a body of some length, the same ones every run."""
    paths = sorted(p for p in vault.rglob("*.md") if ".obsidian" not in p.parts)
    picked = random.Random(28).sample(paths, min(count, len(paths)))
    texts = [parse(p.read_text(encoding="utf-8", errors="replace")).body for p in picked]
    return [t for t in texts if len(words.tokens(t)) >= 40]


@pytest.mark.parametrize("name", SETS)
def test_a_short_candidate_sharing_one_word_with_a_real_note_is_never_near(name: str) -> None:
    """Under five distinctive words, one of them the note's: never scored at least 0.6 (`same` or `topic`)."""
    vault = require_shared(SHARED / "real-vaults" / VAULTS[name])
    texts = note_texts(vault, 150)
    rng = random.Random(5)
    worst = (0.0, "", "")
    for i, text in enumerate(texts):
        language = words.language_of(text)
        held = set(words.tokens(text))
        own = words.content(words.tokens(text), language)
        others = [w for w in words.content(words.tokens(texts[i - 1]), language) if w not in held and w.isalpha()]
        for size in range(1, 5):
            chosen = [rng.choice(own), *rng.sample(others, min(size - 1, len(others)))]
            candidate = " ".join(dict.fromkeys(chosen))
            probe = similarity.probe(words.tokens(candidate), {}, 1000, 120.0, language)
            read = similarity.read(probe, text)
            found = max(similarity.same(probe, read), similarity.topic(probe, read))
            worst = max(worst, (found, candidate, text[:60]))
    assert worst[0] < NEAR, worst


QUERY_TOP3_TARGET = 0.90  # issue 28: the named question's note in the top 3; met with semantic pairing on
QUERY_TOP3_FLOOR = 0.83  # by words alone (semantic pairing off): 25/30 (83.3%)
MODEL_ENV = "MC_WORDLLAMA_MODEL"  # a model2vec folder made by tests/perf/wordllama_model.py


@pytest.mark.slow  # 30 queries on fresh copies of both vaults: about 60 s
def test_named_queries_keep_their_floor(tmp_path: Path) -> None:
    assert named_queries(tmp_path)["fraction"] >= QUERY_TOP3_FLOOR


@pytest.mark.slow  # the same, with semantic pairing on: about 90 s
def test_named_queries_meet_the_target_with_semantic_pairing(tmp_path: Path) -> None:
    model = os.environ.get(MODEL_ENV)
    if not model:
        reason = f"{MODEL_ENV} names no model folder (.ci/run makes one: tests/perf/wordllama_model.py)"
        if os.environ.get("MC_REQUIRE_SHARED") == "1":  # CI: never skipped
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    assert Path(model, "model.safetensors").is_file(), f"{MODEL_ENV}={model}: not a model2vec folder"
    assert named_queries(tmp_path, "--semantic-model", model)["fraction"] >= QUERY_TOP3_TARGET


def named_queries(tmp_path: Path, *options: str) -> dict[str, Any]:
    """tests/novelty/queries.py's result over both vaults' 30 questions; a miss is named on failure."""
    for vault in VAULTS.values():
        require_shared(SHARED / "real-vaults" / vault)
    out = tmp_path / "queries.json"
    cli = f"{sys.executable} -m memory_curator"
    queries = [sys.executable, str(HERE / "novelty" / "queries.py")]
    done = subprocess.run(
        [*queries, "--cli", cli, "--out", str(out), "--work", str(tmp_path), *options],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    print("missed:", [i["name"] for i in result["items"] if not i["hit"]])
    return result
