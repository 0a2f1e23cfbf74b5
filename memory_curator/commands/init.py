"""`init`: make a folder a vault without touching anything already there."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memory_curator.core.json_types import JsonObject
from memory_curator.core.names import INBOX, RULES_PATH
from memory_curator.core.review_note import obsidian_url
from memory_curator.store.rules_file import DEFAULT_RULES, load
from memory_curator.store.writer import FILES


@dataclass(frozen=True)
class Initialised:
    """What `init` did: whether it wrote the rules file (an existing one is kept) and the
    folders it created (vault-relative), in order."""

    root: Path
    rules_path: str
    wrote_rules: bool
    created: tuple[str, ...]
    review_note: str | None = None  # where the review note will be (docs/review.md); None: turned off
    review_url: str | None = None  # the obsidian:// link that opens it

    def to_json(self) -> JsonObject:
        return {
            "root": str(self.root),
            "rules_path": self.rules_path,
            "wrote_rules": self.wrote_rules,
            "created": list(self.created),
            "review_note": self.review_note,
        }


def init_vault(root: Path) -> Initialised:
    """Create `_inbox/` and the default rules file (`_meta/inbox-rules.md`); an existing rules
    file is kept. Nothing else: the rules' surface folders are made by the first note filed there."""
    root.mkdir(parents=True, exist_ok=True)
    rules_file = root / RULES_PATH
    wrote = False
    if not rules_file.exists():
        try:
            FILES.create(rules_file, DEFAULT_RULES.read_bytes())
            wrote = True
        except FileExistsError:
            pass
    rules = load(rules_file)  # a rules file kept from before must still be valid
    folders = [INBOX]  # surface folders (facts/, persons/…) and _inbox/.dropped/ appear with their first note
    created = []
    for name in folders:
        folder = root / name
        if not folder.exists():
            folder.mkdir(parents=True)
            created.append(name)
    note = rules.settings.review_note or None
    url = obsidian_url(root.resolve().name, note) if note else None
    return Initialised(root.resolve(), RULES_PATH, wrote, tuple(created), note, url)
