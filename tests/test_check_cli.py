"""`check`: the verdict for one candidate, with every evaluation; it changes nothing."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import snapshot

FACT = """---
type: fact
entity: copilot
predicate: data-handling
value: Does not retain prompts.
source_url: https://example.dev/trust
confidence: 2
---
evidence
"""


def test_check_a_file_changes_nothing(vault: Path, invoke, write_candidate) -> None:
    path = write_candidate(vault, "c.md", FACT)
    before = snapshot(vault)
    result = invoke("check", str(path), "--json", "--explain")
    assert result.exit_code == 0
    out = json.loads(result.output)["data"]
    assert out["verdict"] == "promote"
    assert out["target_path"] == "facts/copilot/data-handling.md"
    assert out["inbox_path"] == "_inbox/agent-a/c.md"
    assert out["criteria"] == dict.fromkeys(
        ["novel", "sourced", "specific", "future_useful", "surprise_or_load_bearing"], True
    )
    assert "drop low-confidence-unsourced: no  (confidence<=1 AND no source_url AND no sources)" in out["explanation"]
    assert snapshot(vault) == before


def test_check_stdin_note_and_json_payload(vault: Path, invoke) -> None:
    as_note = invoke(
        "check", "-", "--vault", str(vault), "--json", input=FACT.replace("confidence: 2", "confidence: 1")
    )
    assert json.loads(as_note.output)["data"]["verdict"] == "needs_review"
    payload = {
        "frontmatter": {"type": "fact", "entity": "x", "predicate": "y", "value": "z", "confidence": 1},
        "body": "no source",
    }
    as_json = invoke("check", "-", "--vault", str(vault), "--json", input=json.dumps(payload))
    out = json.loads(as_json.output)["data"]
    assert (out["verdict"], out["rule"]) == ("drop", "low-confidence-unsourced")


def test_check_human_output(vault: Path, invoke, write_candidate) -> None:
    path = write_candidate(vault, "c.md", FACT)
    result = invoke("check", str(path))
    assert result.output.splitlines()[0] == "promote: novel + sourced + specific + future-useful + load-bearing"


def test_check_bad_json_is_one_line_error(vault: Path, capsys) -> None:
    import io
    import sys

    import pytest

    from memory_curator.cli.app import main

    sys_stdin = sys.stdin
    sys.stdin = io.StringIO("{not json")
    try:
        with pytest.raises(SystemExit) as info:
            main(["check", "-", "--vault", str(vault)])
    finally:
        sys.stdin = sys_stdin
    assert info.value.code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("memory-curator: <stdin>: not a note and not valid JSON")


def test_missing_file_is_one_line_error(tmp_path: Path, capsys) -> None:
    import pytest

    from memory_curator.cli.app import main

    with pytest.raises(SystemExit) as info:
        main(["check", str(tmp_path / "nope.md")])
    assert info.value.code == 1
    assert capsys.readouterr().err.strip() == f"memory-curator: {tmp_path / 'nope.md'}: no such file"
