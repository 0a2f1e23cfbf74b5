"""Shared pieces for the human-and-agent-loop tests (review, resolve, restore, undo, status,
log, submit): candidate texts with known verdicts, a flagged queue, and a one-line-error runner."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from memory_curator.cli.app import main
from memory_curator.commands.context import Seams

# Each text's verdict under the default rules, against vault_fixtures/.
INSIGHT = """---
type: insight
title: Agents should batch writes
source_url: https://example.dev/batching
confidence: 2
---
Batching writes keeps the inbox calm.
"""  # needs_review: load-bearing undecided (agent-written insight)

MEMO = """---
type: memo
title: A memo worth keeping
source_url: https://example.dev/memo
confidence: 2
---
Memo body, kept byte for byte.
"""  # needs_review: the surface cannot be inferred

ADA = """---
type: person
name: Ada King
sources:
  - https://example.dev/ada-new
confidence: 1
---
Also known as Ada King.
"""  # needs_review: not future-useful; a person may patch it into persons/ada-lovelace.md

THIN_FACT = """---
type: fact
entity: rust
predicate: memory-safety
value: Rust prevents data races in safe code.
source_url: https://example.dev/rust
confidence: 1
---
From the Rust book.
"""  # needs_review: not future-useful

CONTRADICTION = """---
type: fact
entity: obsidian
predicate: file-format
value: Obsidian stores notes in a proprietary database.
source_url: https://example.dev/other
confidence: 2
---
A different claim, with no observation time.
"""  # needs_review, flagged as a contradiction of facts/obsidian/file-format.md

PATCHING = """---
type: fact
entity: obsidian
predicate: file-format
value: Obsidian stores notes as plain Markdown files in a local folder.
source_url: https://obsidian.md/help/data-storage
confidence: 2
tags: [local-first]
---
Confirmed on the new help site.
"""  # patch: adds a source and a tag to facts/obsidian/file-format.md

UNSOURCED = """---
type: fact
entity: acme
predicate: market-share
value: Leads the market.
confidence: 1
---
Heard it somewhere.
"""  # drop: low-confidence-unsourced

ZEBRA = """---
type: fact
entity: zebra
predicate: stripe-pattern
value: Every zebra has a unique stripe pattern.
source_url: https://example.dev/zebra-stripes
confidence: 2
---
Like fingerprints.
"""  # promote: a new fact

FLAGGED = {"ada.md": ADA, "insight.md": INSIGHT, "memo.md": MEMO, "thin.md": THIN_FACT}


def sweep(invoke: Callable[..., object], root: Path) -> dict:
    result = invoke("run", "--vault", str(root), "--json")
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    return json.loads(result.output)  # type: ignore[attr-defined]


def flag(root: Path, write_candidate: Callable[..., Path], invoke: Callable[..., object]) -> list[Path]:
    """Write FLAGGED into `_inbox/agent-a/` (the fixtures' own candidates are removed, so
    the queue holds exactly these), sweep, and give the flagged files distinct ages in name
    order so the queue order is known."""
    shutil.rmtree(root / "_inbox/test-step-4", ignore_errors=True)
    for name, text in FLAGGED.items():
        write_candidate(root, name, text)
    out = sweep(invoke, root)
    flagged = [a["inbox_path"] for agent in out["agents"] for a in agent["actions"] if a["verdict"] == "needs_review"]
    assert sorted(flagged) == [f"_inbox/agent-a/{n}" for n in sorted(FLAGGED)]
    paths = [root / "_inbox/agent-a" / name for name in sorted(FLAGGED)]
    for age, path in enumerate(paths):
        os.utime(path, (1_700_000_000 + age, 1_700_000_000 + age))
    return paths


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """The real entry point in-process (its one error boundary and exit codes): code, out, err."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as ended:
        main(list(args))
    out, err = capsys.readouterr()
    return int(ended.value.code or 0), out, err


def fail(capsys: pytest.CaptureFixture[str], *args: str, seams: Seams | None = None) -> tuple[int, str]:
    """Run the real entry point (the one error boundary) on `seams`; return (exit code, stderr)."""
    with pytest.raises(SystemExit) as info:
        main(list(args), seams)
    return int(info.value.code or 0), capsys.readouterr().err


def body_of(text: str) -> str:
    """What follows the frontmatter block."""
    return text.split("\n---\n", 1)[1]
