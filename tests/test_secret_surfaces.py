"""Where a credential could still be shown or sent once the scan has found it (issue 39): a
durable note holding one is never a judge's neighbour, `doctor` names such notes masked,
`status` says that dropped items keep the candidate whole, and the review masks a title too."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_judge import CURATED, NEIGHBOUR, judged  # noqa: F401  (`judged` is the fixture)

from memory_curator.core.secrets import hashed

TOKEN = "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"
HOLDING = "insights/deploy-keys.md"
KEYED = f"""---
type: insight
title: Deploy keys
source_url: https://example.dev/deploy
---
The deploy bot reads {TOKEN} from its environment.
"""


def test_the_judge_is_never_sent_a_neighbour_holding_a_credential(judged: Any) -> None:  # noqa: F811
    (judged.vault / HOLDING).write_text(KEYED, encoding="utf-8")
    judged.candidates(2)
    judged.links["insight-01.md"] = [HOLDING, NEIGHBOUR]
    judged.links["insight-02.md"] = [HOLDING]
    result, _ = judged.run()
    assert result.exit_code == 0, result.output
    sent = json.dumps(judged.model.requests)
    assert "Sweeping the inbox weekly keeps it small." in sent  # the clean neighbour was shown
    assert TOKEN not in sent and "The deploy bot reads" not in sent
    assert CURATED.splitlines()[2] in sent


@pytest.mark.parametrize("indexed", [True, False], ids=["indexed", "no-index"])
def test_doctor_names_a_durable_note_holding_a_credential_masked(
    vault: Path, invoke: Callable[..., Any], indexed: bool
) -> None:
    (vault / HOLDING).parent.mkdir(parents=True, exist_ok=True)
    (vault / HOLDING).write_text(KEYED, encoding="utf-8")
    if indexed:
        assert invoke("index", "rebuild", "--vault", str(vault)).exit_code == 0
    before = (vault / HOLDING).read_bytes()
    result = invoke("doctor", "--vault", str(vault))
    assert result.exit_code == 0, result.output  # a warning, as doctor's others: it fails nothing
    [line] = [line for line in result.output.splitlines() if "credential" in line]
    assert line.startswith("warn    secrets: 1 durable note holds a credential")
    assert f"{HOLDING}: GitHub Token, line 6: ghp_wWP…INUx (sha1 {hashed(TOKEN)})" in line
    assert TOKEN not in result.output
    data = json.loads(invoke("doctor", "--vault", str(vault), "--json").output)["data"]
    assert [d["level"] for d in data if d["topic"] == "secrets"] == ["warn"]
    assert TOKEN not in json.dumps(data)
    assert (vault / HOLDING).read_bytes() == before  # read-only: a person's note is never rewritten


def test_doctor_says_nothing_of_secrets_in_a_clean_vault(vault: Path, invoke: Callable[..., Any]) -> None:
    assert invoke("index", "rebuild", "--vault", str(vault)).exit_code == 0
    result = invoke("doctor", "--vault", str(vault))
    assert "credential" not in result.output and "secrets:" not in result.output


def insight_with(credential: str, title: str = "Deploy notes") -> str:
    return (
        f"---\ntype: insight\ntitle: {title}\nsource_url: https://example.dev/deploy\n---\n"
        f"The agent pasted {credential} while debugging.\n"
    )


def test_status_says_a_dropped_credential_stays_in_the_audit_copy(
    vault: Path, invoke: Callable[..., Any], write_candidate: Callable[..., Path]
) -> None:
    write_candidate(vault, "keyed.md", insight_with(TOKEN))
    write_candidate(vault, "plain.md", insight_with("nothing secret", "Plain notes"))
    assert invoke("run", "--vault", str(vault), "--settle", "0", "--no-judge").exit_code == 0
    before = invoke("status", "--vault", str(vault))
    assert "credential" not in before.output  # flagged, not dropped yet: no line
    dropped = invoke(
        "resolve", "_inbox/agent-a/keyed.md", "--vault", str(vault), "--drop", "a pasted key", "--by", "me"
    )
    assert dropped.exit_code == 0, dropped.output
    result = invoke("status", "--vault", str(vault))
    assert result.exit_code == 0
    [line] = [line for line in result.output.splitlines() if "credential" in line]
    assert line.startswith("dropped holding a credential: 1 ")
    assert "_inbox/.dropped/" in line and "whole" in line
    assert json.loads(invoke("status", "--vault", str(vault), "--json").output)["data"]["secret_drops"] == 1
    assert TOKEN not in result.output


TITLED = [
    ("github", TOKEN, "ghp_wWP…INUx"),
    ("anthropic", "sk-ant-api03-Qx7Lm2Vr9Kp4Wt8Zn3Hs6Jd1Fb5Gc0Xy_Rq2Nt7Mv4Lk9-a1b2", "sk-ant-…a1b2"),
]


def test_the_review_note_masks_a_credential_in_the_item_title(
    vault: Path, invoke: Callable[..., Any], write_candidate: Callable[..., Path]
) -> None:
    for name, credential, _ in TITLED:
        write_candidate(vault, f"{name}.md", insight_with("nothing else", f"Deploy with {credential} today"))
    assert invoke("run", "--vault", str(vault), "--settle", "0", "--no-judge").exit_code == 0
    note = (vault / "_meta/Inbox review.md").read_text(encoding="utf-8")
    for name, credential, masked in TITLED:
        [heading] = [line for line in note.splitlines() if line.startswith("## ") and f"agent-a/{name}" in line]
        assert f"Deploy with {masked.replace('_', ' ')} today" in heading, heading  # a link's text has no `_`
        assert credential not in note and credential.replace("_", " ") not in note


def test_the_terminal_review_masks_a_credential_in_the_item_title() -> None:
    from rich.console import Console

    from memory_curator.cli.review_screen import _candidate_panel
    from memory_curator.core import candidate as cand
    from memory_curator.store.rules_file import DEFAULT_RULES, load

    for name, credential, masked in TITLED:
        text = insight_with("nothing else", f"Deploy with {credential} today")
        item = cand.build(text, f"_inbox/a/{name}.md", "a", load(DEFAULT_RULES))
        console = Console(width=400, record=True)
        console.print(_candidate_panel(item))
        screen = console.export_text()
        assert f"Deploy with {masked} today" in screen and credential not in screen
