"""The spec's acceptance (test-step-4) over a copy of vault_fixtures/, through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import FIXTURES, REPO, run_installed, snapshot


def test_step_4_through_the_installed_entry_point(vault: Path) -> None:
    before = snapshot(FIXTURES)
    proc = run_installed("run", "_inbox/test-step-4", "--json", cwd=vault)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert {k: out[k] for k in ("agent_id", "processed", "promoted", "patched", "dropped", "needs_review")} == {
        "agent_id": "test-step-4",
        "processed": 2,
        "promoted": 1,
        "patched": 0,
        "dropped": 1,
        "needs_review": 0,
    }
    actions = {Path(a["inbox_path"]).name: a for a in out["actions"]}
    fact, claim = actions["promotable-fact.md"], actions["unsourced-claim.md"]
    assert fact["verdict"] == "promote"
    assert fact["target_surface"] == "facts"
    assert fact["target_path"] == "facts/copilot/data-handling.md"
    assert fact["inbox_path"] == "_inbox/test-step-4/promotable-fact.md"
    assert claim["verdict"] == "drop"
    assert "confidence=1 AND no source_url" in claim["reason"]
    promoted = (vault / "facts/copilot/data-handling.md").read_text()
    assert "value: GitHub Copilot Business does not retain prompts" in promoted
    assert "curated_from:" in promoted
    assert not (vault / "_inbox/test-step-4/promotable-fact.md").exists()
    assert not (vault / "_inbox/test-step-4/unsourced-claim.md").exists()
    dropped = list((vault / "_inbox/.dropped/test-step-4").glob("*.md"))
    assert [d.relative_to(vault).as_posix() for d in dropped] == [claim["moved_to"]]
    original = (FIXTURES / "_inbox/test-step-4/unsourced-claim.md").read_bytes()
    text = dropped[0].read_bytes()
    assert text.startswith(original), "the dropped copy keeps the original bytes"
    assert "> 🗑 dropped by memory-curator: confidence=1 AND no source_url (" in text.decode()
    assert snapshot(FIXTURES) == before, "the bundled fixtures stay untouched"


def test_whole_inbox_shape(vault: Path, invoke) -> None:
    result = invoke("run", "--vault", str(vault), "--json")
    assert result.exit_code == 0
    out = json.loads(result.output)
    assert set(out) >= {"agents", "processed", "promoted", "patched", "dropped", "needs_review"}
    assert [a["agent_id"] for a in out["agents"]] == ["inbox", "test-step-4"]
    assert (out["processed"], out["promoted"], out["dropped"]) == (2, 1, 1)


def test_rerun_changes_nothing(vault: Path, invoke) -> None:
    assert invoke("run", "--vault", str(vault), "--json").exit_code == 0
    after_first = snapshot(vault)
    second = json.loads(invoke("run", "--vault", str(vault), "--json").output)
    assert second["processed"] == 0
    assert snapshot(vault) == after_first


def test_dry_run_changes_no_byte(vault: Path, invoke) -> None:
    before = snapshot(vault)
    result = invoke("run", "_inbox/test-step-4", "--vault", str(vault), "--dry-run", "--json")
    assert result.exit_code == 0
    out = json.loads(result.output)
    assert (out["promoted"], out["dropped"], out["dry_run"]) == (1, 1, True)
    assert snapshot(vault) == before


def test_bundled_rules_file_is_the_default(vault: Path) -> None:
    shipped = (REPO / "rules/inbox-rules.md").read_bytes()
    assert (FIXTURES / "_meta/inbox-rules.md").read_bytes() == shipped
    assert (REPO / "memory_curator/data/inbox-rules.md").read_bytes() == shipped


def test_init_never_overwrites_rules(tmp_path: Path, invoke) -> None:
    root = tmp_path / "v"
    (root / "_meta").mkdir(parents=True)
    (root / "_meta/inbox-rules.md").write_bytes((REPO / "rules/inbox-rules.md").read_bytes() + b"\nmine\n")
    result = invoke("init", str(root))
    assert result.exit_code == 0
    assert "kept existing" in result.output
    assert (root / "_meta/inbox-rules.md").read_bytes().endswith(b"\nmine\n")
    assert (root / "_inbox").is_dir() and not (root / "facts").exists()  # surface folders come with their first note
