"""Private notes are no neighbours to agents (issue 36, `core/veil.py`).

The trial: MCP `check_candidate` named a private note in `reason` and `compared_with` with its
score, so the score was an oracle (the right salary 0.849, a wrong one 0.698), and a private
fact answered "already known and unchanged" for the true value only. Now an agent gets the same
answer for the true value and a wrong one, and the sweep holds both for a person.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from loop_kit import cli
from test_mcp import call

from memory_curator.cli.machine import build_context
from memory_curator.commands.context import Context, Seams
from memory_curator.core.clock import SystemClock

PRIVATE_FACT = """---
type: fact
entity: acme
predicate: ceo-salary
value: The CEO earns 849k a year.
source_url: https://intranet.acme.dev/hr
confidence: 3
tags: [private]
---
From the HR wiki.
"""
PRIVATE_INSIGHT = "---\ntitle: My pay\ntags: [private]\n---\nMy salary at Acme is 90k a year, keep it to myself.\n"
TRUE, WRONG = "849k", "698k"
DECIDES = "a private note decides this: a person will review it"


def guess(value: str) -> str:
    return (
        f"---\ntype: fact\nentity: acme\npredicate: ceo-salary\nvalue: The CEO earns {value} a year.\n"
        "source_url: https://intranet.acme.dev/hr\nconfidence: 3\n---\nFrom the HR wiki.\n"
    )


def pay(value: str) -> str:
    return (
        "---\ntype: insight\ntitle: Pay at Acme\nsource_url: https://x.dev/p\nconfidence: 2\n---\n"
        f"My salary at Acme is {value} a year, keep it to myself.\n"
    )


@pytest.fixture
def private_vault(vault: Path) -> Path:
    (vault / "facts/acme").mkdir(parents=True)
    (vault / "facts/acme/ceo-salary.md").write_text(PRIVATE_FACT)
    (vault / "insights/my-pay.md").write_text(PRIVATE_INSIGHT)
    return vault


@pytest.fixture
def ctx(private_vault: Path, tmp_path: Path) -> Context:
    return build_context(private_vault, str(tmp_path / "state"), Seams(clock=SystemClock(), env={}))


def checked(ctx: Context, markdown: str) -> dict[str, Any]:
    answer = call(ctx, "check_candidate", markdown=markdown).structured_content
    assert answer is not None
    return answer


def test_check_candidate_answers_the_true_and_a_wrong_salary_alike(ctx: Context) -> None:
    right, wrong = checked(ctx, guess(TRUE)), checked(ctx, guess(WRONG))
    assert right == wrong
    assert (right["verdict"], right["reason"], right["contradiction"]) == ("needs_review", DECIDES, False)
    assert right["compared_with"] == {"existing": None, "neighbours": []}
    assert TRUE not in json.dumps(right)


def test_a_private_neighbour_is_neither_named_nor_scored(ctx: Context) -> None:
    right, wrong = checked(ctx, pay("90k")), checked(ctx, pay("70k"))
    assert right == wrong
    shown = json.dumps(right)
    assert "my-pay" not in shown and "ceo-salary" not in shown
    assert right["reason"] == "load-bearing undecided"


def test_submit_candidate_answers_alike_too(ctx: Context) -> None:
    answers = []
    for value in (TRUE, WRONG):
        submitted = call(ctx, "submit_candidate", markdown=guess(value)).structured_content
        assert submitted is not None
        answers.append({k: v for k, v in submitted["check"].items() if k != "inbox_path"})
    assert answers[0] == answers[1]
    assert answers[0]["reason"] == DECIDES


def test_the_sweep_holds_what_a_private_note_decides_whatever_the_value(
    private_vault: Path, write_candidate: Callable[..., Path], capsys: Any
) -> None:
    note = private_vault / "facts/acme/ceo-salary.md"
    before = hashlib.sha256(note.read_bytes()).hexdigest()
    write_candidate(private_vault, "right.md", guess(TRUE), agent="spy")
    write_candidate(private_vault, "wrong.md", guess(WRONG), agent="spy")
    code, out, _ = cli(capsys, "run", "--vault", str(private_vault), "--settle", "0", "--json", "--no-judge")
    assert code == 0
    actions = {a["inbox_path"]: a for agent in json.loads(out)["agents"] for a in agent["actions"]}
    for name in ("right.md", "wrong.md"):
        action = actions[f"_inbox/spy/{name}"]
        assert (action["verdict"], action["reason"], action["reason_code"]) == ("needs_review", DECIDES, "private")
        assert (private_vault / "_inbox/spy" / name).exists()
    assert hashlib.sha256(note.read_bytes()).hexdigest() == before
    assert not (private_vault / "_inbox/.dropped/spy").exists()
