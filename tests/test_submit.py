"""`submit`: validated, atomic, never overwriting; the agents' way into the inbox."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from loop_kit import fail
from safety_kit import FaultyOS

from memory_curator.commands.context import Seams
from memory_curator.core.notes import parse
from memory_curator.store.writer import Files

from conftest import age, snapshot

PAYLOAD = {
    "frontmatter": {
        "type": "fact",
        "entity": "Copilot",
        "predicate": "data-handling",
        "value": "Copilot Business does not retain prompts.",
        "source_url": "https://example.dev/trust",
        "confidence": 2,
        "tags": ["ai-tools"],
    },
    "body": "From the trust center.\n",
}


def submit(invoke, root: Path, *args: str, input: str | None = None) -> dict:
    result = invoke("submit", "--vault", str(root), "--json", *args, input=input)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)["data"]


def test_submit_a_json_payload_from_stdin(vault: Path, invoke) -> None:
    out = submit(invoke, vault, "--agent", "web-research", "-", input=json.dumps(PAYLOAD))
    assert out == {"inbox_path": "_inbox/web-research/copilot-data-handling.md", "agent_id": "web-research"}
    note = parse((vault / out["inbox_path"]).read_bytes())
    assert dict(note.frontmatter) == PAYLOAD["frontmatter"] and note.body == PAYLOAD["body"]
    assert [p.name for p in (vault / "_inbox/web-research").iterdir()] == ["copilot-data-handling.md"]  # no temp


def test_submit_a_note_file_with_check_then_a_sweep_takes_it(vault: Path, invoke, tmp_path: Path) -> None:
    source = tmp_path / "draft.md"
    source.write_text(
        "---\ntype: person\nname: Grace Hopper\nsources: [https://example.dev/grace]\nconfidence: 3\n---\nX\n"
    )
    out = submit(invoke, vault, "--agent", "bot", "--check", str(source))
    assert out["inbox_path"] == "_inbox/bot/grace-hopper.md"
    assert out["check"]["verdict"] in ("promote", "needs_review") and out["check"]["inbox_path"] == out["inbox_path"]
    assert out["check"]["target_path"] == "persons/grace-hopper.md"
    assert (vault / out["inbox_path"]).read_bytes() == source.read_bytes()
    age(vault / out["inbox_path"])
    swept = json.loads(invoke("run", "_inbox/bot", "--vault", str(vault), "--json").output)
    assert swept["processed"] == 1 and swept["actions"][0]["verdict"] == out["check"]["verdict"]


def test_a_taken_name_gets_a_suffix_never_an_overwrite(vault: Path, invoke) -> None:
    first = submit(invoke, vault, "--agent", "a", "-", input=json.dumps(PAYLOAD))
    before = (vault / first["inbox_path"]).read_bytes()
    changed = {**PAYLOAD, "body": "another body\n"}
    second = submit(invoke, vault, "--agent", "a", "-", input=json.dumps(changed))
    assert second["inbox_path"] == "_inbox/a/copilot-data-handling-2.md"
    assert (vault / first["inbox_path"]).read_bytes() == before


def test_default_agent_is_the_inbox_root_or_the_environment(
    vault: Path, invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert submit(invoke, vault, "-", input=json.dumps(PAYLOAD))["inbox_path"] == "_inbox/copilot-data-handling.md"
    monkeypatch.setenv("MEMORY_CURATOR_AGENT", "from-env")
    out = submit(invoke, vault, "-", input=json.dumps(PAYLOAD))
    assert out == {"inbox_path": "_inbox/from-env/copilot-data-handling.md", "agent_id": "from-env"}


@pytest.mark.parametrize(
    ("frontmatter", "message"),
    [
        ({"type": "fact", "entity": "x", "source_url": "u"}, "missing required fields for facts: predicate, value"),
        ({"type": "event", "title": "Kickoff"}, "missing required fields for events: date"),
        ({"type": "research", "title": "T"}, "missing required fields for research: topic"),
        (
            {"type": "memo", "title": "T"},
            "unknown type 'memo': set `type` to decision or insight (its fields fit those)",
        ),
        ({"title": "T"}, "no type: set `type` to decision or insight"),
        ({"source_url": "https://a.dev"}, "no type: set `type` to one of fact, event, decision"),
        ({"type": "fact", "entity": "../x", "predicate": "p", "value": "v"}, "no path for facts: unsafe entity"),
    ],
)
def test_refusals_name_what_is_missing_and_write_nothing(
    vault: Path, capsys, monkeypatch: pytest.MonkeyPatch, frontmatter: dict, message: str
) -> None:
    import io
    import sys

    before = snapshot(vault)
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps({"frontmatter": frontmatter, "body": "b"})))
    code, err = fail(capsys, "submit", "--vault", str(vault), "--agent", "a", "-")
    assert code == 1 and len(err.strip().splitlines()) == 1
    assert err.startswith("memory-curator: <stdin>: ") and message in err and err.strip().endswith("; nothing written")
    assert snapshot(vault) == before


def test_bad_input_is_one_line(vault: Path, capsys, tmp_path: Path) -> None:
    bad_yaml = tmp_path / "bad.md"
    bad_yaml.write_text("---\ntype: fact\nentity: [unclosed\n---\nbody\n")
    code, err = fail(capsys, "submit", "--vault", str(vault), str(bad_yaml))
    assert code == 1 and f"memory-curator: {bad_yaml}: the frontmatter does not parse" in err
    code, err = fail(capsys, "submit", "--vault", str(vault), "--agent", "../up", str(bad_yaml))
    assert code == 2 and "agent id '../up'" in err  # a bad option value: a usage error (issue 18)
    code, err = fail(capsys, "submit", "--vault", str(vault), str(tmp_path / "missing.md"))
    assert code == 1 and "missing.md: no such file" in err


def test_a_failed_write_leaves_no_partial_file(vault: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bytes go to a dot-temp file first; a failure before the link leaves nothing a
    sweep could take for a candidate (and no temp file behind)."""
    import io
    import sys

    (vault / "_inbox/a").mkdir()
    full = Files(FaultyOS("fsync", 1, lambda: OSError(28, "No space left on device"), sticky=True))
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(PAYLOAD)))
    code, err = fail(capsys, "submit", "--vault", str(vault), "--agent", "a", "-", seams=Seams(files=full))
    assert code == 1
    assert (
        err.strip() == "memory-curator: _inbox/a/: cannot write the candidate: No space left on device; nothing written"
    )
    assert list((vault / "_inbox/a").iterdir()) == []
