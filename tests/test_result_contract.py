"""The JSON contract of `run --json` (design §7): these keys are always present."""

from __future__ import annotations

import json
from pathlib import Path

AGENT_KEYS = ["agent_id", "processed", "promoted", "patched", "dropped", "needs_review", "actions"]
ACTION_KEYS = {"inbox_path", "verdict", "target_surface", "reason"}
TOTAL_KEYS = ["agents", "processed", "promoted", "patched", "dropped", "needs_review"]


def check_agent(agent: dict) -> None:
    assert list(agent)[: len(AGENT_KEYS)] == AGENT_KEYS
    for action in agent["actions"]:
        assert set(action) >= ACTION_KEYS
        assert ("moved_to" in action) == (action["verdict"] == "drop")
        assert ("target_path" in action) == (action["verdict"] != "drop")
        assert ("criteria" in action) == (action["verdict"] == "needs_review")
        assert not Path(action["inbox_path"]).is_absolute() and "\\" not in action["inbox_path"]
    counted = {
        v: sum(a["verdict"] == v for a in agent["actions"]) for v in ("promote", "patch", "drop", "needs_review")
    }
    assert (agent["promoted"], agent["patched"], agent["dropped"], agent["needs_review"]) == tuple(counted.values())
    assert agent["processed"] == len(agent["actions"])


def test_single_agent_and_whole_inbox_shapes(vault: Path, invoke, write_candidate) -> None:
    write_candidate(vault, "odd.md", "no frontmatter at all\n", agent="other")
    write_candidate(vault, "root-note.md", "---\ntype: insight\ntitle: T\n---\nx\n", agent="inbox")
    one = json.loads(invoke("run", "_inbox/test-step-4", "--vault", str(vault), "--json", "--dry-run").output)
    check_agent(one)
    everything = json.loads(invoke("run", "--vault", str(vault), "--json").output)
    assert list(everything)[: len(TOTAL_KEYS)] == TOTAL_KEYS
    for agent in everything["agents"]:
        check_agent(agent)
    assert [a["agent_id"] for a in everything["agents"]] == ["inbox", "other", "test-step-4"]
    for key in TOTAL_KEYS[1:]:
        assert everything[key] == sum(a[key] for a in everything["agents"])
    assert everything["processed"] == 4
