"""A contradiction read from prose is not a rewording (issue 38): notes of a real vault
(`agent-learnings-es`, 1,666 agent-written learnings and the ADRs, dense with "no" and "sin"),
restated by an agent without a changed value, are swept beside the notes they restate: none is
named a contradiction."""

from __future__ import annotations

import json
import random
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from memory_curator.core.notes import parse
from tests.conftest import SHARED, require_shared

VAULT = SHARED / "real-vaults" / "agent-learnings-es"
COUNT = 60
SWAPS = {  # an agent's rewording: connectives and labels, never a negation, a number or a name
    "hay que": "conviene",
    "porque": "ya que",
    "también": "además",
    "Fix:": "Solución:",
    "Síntoma:": "Lo que se ve:",
    "Aplica a": "Vale para",
    "Ver ": "Véase ",
    "**": "",
}


def reworded(path: Path) -> str | None:
    """The note as an agent restates it: another title, its paragraphs in the other order, a
    few words swapped, emphasis dropped; its own date and tags. None for a note too short."""
    note = parse(path.read_text(encoding="utf-8", errors="replace"))
    title = str(note.frontmatter.get("title") or path.stem.replace("-", " "))
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", note.body) if p.strip()]
    if len(" ".join(paragraphs).split()) < 40:
        return None
    body = "\n\n".join(reversed(paragraphs))
    for old, new in SWAPS.items():
        body = body.replace(old, new)
    head = f"---\ntype: insight\ntitle: 'Aprendizaje: {title.replace(chr(39), chr(39) * 2)}'\n"
    return head + f"date: {note.frontmatter.get('date', '2026-08-01')}\nsource: claude-code-session\n---\n{body}\n"


@pytest.mark.slow  # a copy of 1,873 notes indexed and 60 candidates swept: about 15 s
def test_reworded_notes_of_a_real_vault_are_never_named_contradictions(
    tmp_path: Path, invoke: Callable[..., Result]
) -> None:
    source = require_shared(VAULT)
    vault = tmp_path / "vault"
    shutil.copytree(source, vault)
    assert invoke("init", "--vault", str(vault)).exit_code == 0
    paths = sorted([*(vault / "knowledge" / "learnings").glob("*.md"), *(vault / "decisions").glob("ADR-*.md")])
    written = {}
    for path in random.Random(38).sample(paths, 3 * COUNT):
        text = reworded(path)
        if text is not None and len(written) < COUNT:
            inbox = vault / "_inbox" / "claude-code" / f"r-{path.name}"
            inbox.parent.mkdir(parents=True, exist_ok=True)
            inbox.write_text(text, encoding="utf-8")
            written[f"_inbox/claude-code/{inbox.name}"] = path.relative_to(vault).as_posix()
    assert len(written) == COUNT
    args = ["run", "--vault", str(vault), "--no-judge", "--settle", "0", "--json", "--state-dir", str(tmp_path / "s")]
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    actions = {a["inbox_path"]: a for agent in json.loads(result.output)["agents"] for a in agent["actions"]}
    assert set(actions) == set(written)
    named = [(p, a["reason"]) for p, a in actions.items() if a.get("reason_code") == "contradiction"]
    assert named == []
    beside = sum(1 for p, a in actions.items() if written[p].removesuffix(".md") in str(a.get("reason", "")))
    assert beside >= COUNT // 2, "the check must have read the notes they restate"
