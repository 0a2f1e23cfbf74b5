"""`init`: make a folder a vault without touching anything already there."""

from __future__ import annotations

from pathlib import Path

from memory_curator.core.names import INBOX, RULES_PATH
from memory_curator.store import writer
from memory_curator.store.rules_file import DEFAULT_RULES, load


def init_vault(root: Path) -> list[str]:
    """Create the folders and the default rules file; an existing rules file is kept."""
    lines: list[str] = []
    root.mkdir(parents=True, exist_ok=True)
    rules_file = root / RULES_PATH
    if rules_file.exists():
        lines.append(f"kept existing {RULES_PATH}")
    else:
        try:
            writer.create(rules_file, DEFAULT_RULES.read_bytes())
            lines.append(f"wrote {RULES_PATH}")
        except FileExistsError:
            lines.append(f"kept existing {RULES_PATH}")
    rules = load(rules_file)
    folders = [INBOX, f"{INBOX}/.dropped", *sorted({s.path.split("/")[0] for s in rules.surfaces})]
    for name in folders:
        folder = root / name
        if not folder.exists():
            folder.mkdir(parents=True)
            lines.append(f"created {name}/")
    lines.append(f"vault ready: {root.resolve()}")
    return lines
