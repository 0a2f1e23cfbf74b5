"""Issue 18: a candidate's keys match the rules' field names case-insensitively, a near miss
gets "did you mean", and each problem has one wording shared by `run`, `check` and `submit`."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
from loop_kit import fail

from memory_curator.cli.machine import build_context
from memory_curator.commands.check import check_text
from memory_curator.core import candidate as cand
from memory_curator.core.notes import parse
from memory_curator.store.rules_file import load_for_vault

CAPITALISED = """---
Type: Fact
Entity: copilot
Predicate: data-handling
Value: Does not retain prompts.
Source_URL: https://example.dev/trust
Confidence: 2
Extra: kept as written
---
Evidence.
"""

NO_TITLE_EVENT = """---
type: event
date: 2026-05-01
source_url: https://example.dev/e
confidence: 2
---
Something happened.
"""


def verdict(vault: Path, text: str, name: str = "x") -> dict:
    return check_text(build_context(vault), text, f"_inbox/agent/{name}.md", agent="agent").to_json()


def sweep_one(vault: Path, invoke, write_candidate, text: str) -> dict:
    write_candidate(vault, "c.md", text, agent="bot")
    out = json.loads(invoke("run", "_inbox/bot", "--vault", str(vault), "--json").output)
    return out["actions"][0]


def submit_error(vault: Path, capsys, monkeypatch: pytest.MonkeyPatch, text: str) -> str:
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))
    code, err = fail(capsys, "submit", "--vault", str(vault), "--agent", "a", "-")
    assert code == 1 and len(err.strip().splitlines()) == 1, err
    return err.strip()


# --- keys matched case-insensitively ---------------------------------------------------------


def test_capitalised_keys_and_type_value_are_understood(vault: Path) -> None:
    out = verdict(vault, CAPITALISED)
    assert out["verdict"] == "promote", out
    assert out["target_surface"] == "facts" and out["target_path"] == "facts/copilot/data-handling.md"


def test_the_candidate_keeps_canonical_keys_and_values_as_written(vault: Path) -> None:
    candidate = cand.build(CAPITALISED, "_inbox/a/x.md", "a", load_for_vault(vault))
    assert list(candidate.frontmatter) == [
        "type",
        "entity",
        "predicate",
        "value",
        "source_url",
        "confidence",
        "Extra",
    ]
    assert candidate.frontmatter["type"] == "Fact"
    assert "type: Fact\n" in candidate.note.text and "Extra: kept as written\n" in candidate.note.text
    assert candidate.raw == CAPITALISED.encode()  # the inbox file itself is never rewritten


def test_a_promoted_note_carries_the_canonical_keys(vault: Path, invoke, write_candidate) -> None:
    action = sweep_one(vault, invoke, write_candidate, CAPITALISED)
    assert action["verdict"] == "promote", action
    fm = parse((vault / "facts/copilot/data-handling.md").read_bytes()).frontmatter
    assert fm["type"] == "Fact" and fm["entity"] == "copilot" and fm["source_url"] == "https://example.dev/trust"
    assert "Type" not in fm and "Source_URL" not in fm and fm["Extra"] == "kept as written"


def test_submit_takes_capitalised_keys(vault: Path, invoke) -> None:
    payload = {"frontmatter": {"Type": "Fact", "Entity": "copilot", "Predicate": "p", "Value": "v"}, "body": "b"}
    result = invoke("submit", "--vault", str(vault), "--json", "--agent", "a", "-", input=json.dumps(payload))
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["data"]["inbox_path"] == "_inbox/a/copilot-p.md"


def test_an_exact_key_wins_over_a_capitalised_twin(vault: Path) -> None:
    text = CAPITALISED.replace("Confidence: 2\n", "Confidence: 2\nentity: other\n")
    candidate = cand.build(text, "_inbox/a/x.md", "a", load_for_vault(vault))
    assert candidate.frontmatter["entity"] == "other" and candidate.frontmatter["Entity"] == "copilot"


# --- did you mean ----------------------------------------------------------------------------


def test_a_near_miss_is_named_in_the_review_reason(vault: Path) -> None:
    text = CAPITALISED.replace("Source_URL:", "sorce_url:")
    out = verdict(vault, text)
    assert out["verdict"] == "needs_review"
    assert "did you mean `source_url`?" in out["reason"] and "`sorce_url`" in out["reason"]


def test_a_near_miss_is_named_when_submit_refuses(vault: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    payload = {"frontmatter": {"type": "fact", "entitiy": "x", "predicate": "p", "value": "v"}, "body": "b"}
    err = submit_error(vault, capsys, monkeypatch, json.dumps(payload))
    assert "missing required fields for facts: entity" in err
    assert "`entitiy`: did you mean `entity`?" in err


def test_an_unrelated_key_gets_no_hint(vault: Path) -> None:
    text = CAPITALISED.replace("Source_URL: https://example.dev/trust\n", "")
    out = verdict(vault, text)
    assert out["verdict"] == "needs_review" and "did you mean" not in out["reason"]


def test_a_singular_claim_is_no_typo_of_its_set(vault: Path) -> None:
    """`role: CTO` is a claim the merge compares with the note's (docs/merge.md); `roles` unions:
    naming one as a typo of the other would turn a conflict into a silent union."""
    rules = load_for_vault(vault)
    fm = {"type": "person", "name": "Manu", "role": "CTO", "participant": "x"}
    assert cand.near_misses(fm, rules.field_names) == ()


def test_source_prose_is_no_typo_and_a_source_url_is_named(vault: Path) -> None:
    """`source: claude-code-session` is provenance, no source: no hint would make it count by
    renaming it `sources`. `source: https://…` meant `source_url`."""
    rules = load_for_vault(vault)
    assert cand.near_misses({"type": "insight", "source": "claude-code-session"}, rules.field_names) == ()
    url = {"type": "insight", "source": "https://x.example.dev/a"}
    assert cand.near_misses(url, rules.field_names) == (("source", "source_url"),)
    assert cand.near_misses({**url, "source_url": "https://y.example.dev"}, rules.field_names) == ()


# --- one wording per problem -----------------------------------------------------------------

MISSING_TITLE = "missing required fields for events: title"


def test_a_missing_title_is_worded_alike_by_run_check_and_submit(
    vault: Path, invoke, write_candidate, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    checked = verdict(vault, NO_TITLE_EVENT)
    assert MISSING_TITLE in checked["reason"] and "missing slug" not in checked["reason"]
    err = submit_error(vault, capsys, monkeypatch, NO_TITLE_EVENT)
    assert MISSING_TITLE in err
    swept = sweep_one(vault, invoke, write_candidate, NO_TITLE_EVENT)
    assert swept["verdict"] == "needs_review" and MISSING_TITLE in swept["reason"]
    assert "missing slug" not in swept["reason"]


def test_no_surface_is_worded_alike_by_check_and_submit(vault: Path, capsys, monkeypatch) -> None:
    text = "---\ntype: memo\ntitle: T\n---\nb\n"
    reason = verdict(vault, text)["reason"]
    err = submit_error(vault, capsys, monkeypatch, text)
    assert "unknown type 'memo': set `type` to decision or insight (its fields fit those)" in reason
    assert reason in err


def test_an_unsafe_key_is_worded_alike_by_check_and_submit(vault: Path, capsys, monkeypatch) -> None:
    text = "---\ntype: fact\nentity: ../x\npredicate: p\nvalue: v\n---\nb\n"
    reason = verdict(vault, text)["reason"]
    err = submit_error(vault, capsys, monkeypatch, text)
    assert "no path for facts: unsafe entity '../x'" in reason and "no path for facts: unsafe entity '../x'" in err


def test_one_function_words_it(vault: Path) -> None:
    rules = load_for_vault(vault)
    candidate = cand.build(NO_TITLE_EVENT, "_inbox/a/x.md", "a", rules)
    assert cand.placement_problem(candidate, rules) == MISSING_TITLE
    good = cand.build(CAPITALISED, "_inbox/a/x.md", "a", rules)
    assert cand.placement_problem(good, rules) is None


@pytest.mark.parametrize(("typed", "returned"), [(b"\x04", None), (b"ok\r", "ok")])
def test_a_key_sent_the_moment_the_prompt_shows_is_read_on_a_slow_machine(
    monkeypatch: pytest.MonkeyPatch, typed: bytes, returned: str | None
) -> None:
    """Seen in CI under load: Ctrl-D sent as soon as "Reason for the drop: " showed hung `review`.
    The prompt was written before the terminal left line mode; a Ctrl-D met there is read, after
    the switch, as a NUL byte (ignored), never as end of input. A slow switch shows it every time."""
    import os
    import pty
    import select
    import threading
    import time
    import tty

    from memory_curator.cli import keys

    real = tty.setcbreak

    def slow(fd: int, when: int = 0) -> None:
        time.sleep(0.3)  # a loaded machine between the prompt and the switch
        real(fd, when)

    monkeypatch.setattr(keys.tty, "setcbreak", slow)
    master, slave = pty.openpty()
    echo = os.fdopen(os.dup(slave), "w", encoding="utf-8")
    got: list[str | None] = []
    reader = threading.Thread(target=lambda: got.append(keys.TerminalKeys(slave, echo).line("Reason")), daemon=True)
    reader.start()
    seen = b""
    while b"Reason: " not in seen:
        assert select.select([master], [], [], 5)[0], seen
        seen += os.read(master, 100)
    os.write(master, typed)
    reader.join(5)
    try:
        assert not reader.is_alive(), f"{typed!r} sent when the prompt showed was never read"
        assert got == [returned]
    finally:
        os.write(master, b"\x04")  # frees a hung reader
        reader.join(1)
        echo.close()
        os.close(slave)
        os.close(master)
