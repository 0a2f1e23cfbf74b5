"""`FileQuerier`: exact-key answers read from the files themselves, for tools that must not
touch the state directory (no duplicate or similarity search)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from memory_curator.core.candidate import Candidate
from memory_curator.core.facts import Alike, ExistingNote, Neighbour
from memory_curator.core.notes import parse
from memory_curator.core.ownership import curator_owned
from memory_curator.core.rules import Rules
from memory_curator.store.paths import safe_join


@dataclass
class FileQuerier:
    """Exact-key answers from the files themselves; no duplicate or similarity search."""

    root: Path
    rules: Rules
    overlay: dict[str, str | None] = field(default_factory=dict)

    def note_at(self, rel: str) -> ExistingNote | None:
        if rel in self.overlay:
            text = self.overlay[rel]
        else:
            try:
                text = safe_join(self.root, rel).read_bytes().decode("utf-8", errors="replace")
            except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
                return None
        if text is None:
            return None
        note = parse(text)
        return ExistingNote(rel, text, note, curator_owned(rel, note.frontmatter, self.rules))

    def duplicate_of(self, candidate: Candidate) -> str | None:
        return None

    def neighbours(self, candidate: Candidate, k: int) -> list[Neighbour]:
        return []

    def semantic_neighbours(self, candidate: Candidate, k: int) -> list[Neighbour]:
        return []

    def notices(self) -> list[str]:
        return []

    def subject_notes(self, candidate: Candidate) -> list[ExistingNote]:
        return []

    def titled_alike(self, candidate: Candidate) -> list[Alike]:
        return []

    def links_to_durable(self, links: list[str]) -> bool:
        return any(self.note_at(link if link.endswith(".md") else link + ".md") for link in links if "/" in link)

    def stage(self, rel: str, text: str | None) -> None:
        self.overlay[rel] = text
