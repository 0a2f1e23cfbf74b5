"""Contradictions on any field that carries a claim, and "unchanged" meaning unchanged content
(issue 28): a different `affiliation`, `status` or `unit` is never "already known", nor merged as
"Also reported"; a candidate whose fields are known but whose body adds a sentence is never dropped."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memory_curator.core.comparison import compare

ADA = "persons/ada-lovelace.md"


def _note(vault: Path, extra: str) -> bytes:
    """Ada's note, curator-owned (persons/), with `extra` frontmatter lines; returns its bytes."""
    path = vault / ADA
    text = path.read_text().replace("tags: [history]\n", f"tags: [history]\n{extra}")
    path.write_text(text)
    return path.read_bytes()


def _run(invoke: Callable[..., Any], vault: Path) -> dict[str, Any]:
    result = invoke("run", "--vault", str(vault), "--settle", "0", "--no-judge", "--json", "_inbox/bot")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


CANDIDATE = """---
type: person
name: Ada Lovelace
sources:
  - https://en.wikipedia.org/wiki/Ada_Lovelace
tags: [history]
{extra}---
Wrote the first published algorithm intended for a machine.
"""


@pytest.mark.parametrize(
    ("note_field", "candidate_field"),
    [
        ("affiliation: University of London\n", "affiliation: Stanford University\n"),
        ("status: active\n", "status: archived\n"),
        ("unit: EUR/min\n", "Unit: USD/min\n"),
        ("url: https://ada.example.dev\n", "url: https://old-domain.example.dev\n"),
    ],
)
def test_a_different_claim_on_another_field_is_a_contradiction_never_known_nor_merged(
    vault: Path, write_candidate: Callable[..., Path], invoke: Callable[..., Any], note_field: str, candidate_field: str
) -> None:
    before = _note(vault, note_field)
    write_candidate(
        vault, "ada.md", CANDIDATE.format(extra=candidate_field + "source_url: https://b.example.dev/x\n"), agent="bot"
    )
    (action,) = _run(invoke, vault)["actions"]
    assert action["verdict"] == "needs_review", action
    assert action["contradiction"] is True, action
    field = candidate_field.split(":")[0].lower()
    assert field in action["reason"] and ADA in action["reason"], action["reason"]
    assert (vault / ADA).read_bytes() == before


def test_the_same_claim_in_another_case_is_no_contradiction(
    vault: Path, write_candidate: Callable[..., Path], invoke: Callable[..., Any]
) -> None:
    _note(vault, "status: Active\n")
    write_candidate(vault, "ada.md", CANDIDATE.format(extra="status: active\n"), agent="bot")
    (action,) = _run(invoke, vault)["actions"]
    assert action["verdict"] == "drop", action  # already known and unchanged


def test_a_body_that_adds_a_sentence_is_not_already_known(
    vault: Path, write_candidate: Callable[..., Path], invoke: Callable[..., Any]
) -> None:
    before = (vault / ADA).read_bytes()
    text = CANDIDATE.format(extra="").replace(
        "machine.\n", "machine.\n\nShe also planned a calculus of the nervous system with Babbage's engine.\n"
    )
    write_candidate(vault, "ada.md", text, agent="bot")
    (action,) = _run(invoke, vault)["actions"]
    assert action["verdict"] != "drop", action
    assert ADA in action["reason"], action
    assert (vault / ADA).read_bytes() == before


def test_a_reworded_body_is_still_known(
    vault: Path, write_candidate: Callable[..., Path], invoke: Callable[..., Any]
) -> None:
    text = CANDIDATE.format(extra="").replace(
        "Wrote the first published algorithm intended for a machine.",
        "She wrote the first algorithm published for a machine.",
    )
    write_candidate(vault, "ada.md", text, agent="bot")
    (action,) = _run(invoke, vault)["actions"]
    assert action["verdict"] == "drop", action


def test_compare_names_the_conflicting_fields_and_leaves_sets_times_and_provenance_alone() -> None:
    note = {
        "value": "1",
        "status": "active",
        "tags": ["a"],
        "observed_at": "2026-01-01",
        "confidence": 3,
        "title": "X",
        "source_url": "https://a.dev",
        "role": "lead",
    }
    cand = {
        "value": "1",
        "status": "archived",
        "tags": ["b"],
        "observed_at": "2026-02-01",
        "confidence": 1,
        "title": "Y",
        "source_url": "https://b.dev",
        "role": "Lead",
    }
    got = compare(note, ["a"], cand, ["b"])
    assert got.conflicts == (("status", "active", "archived"),)
