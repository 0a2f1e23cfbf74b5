"""The judge's verdict cache in the state directory: a dry run and the real run that follows
pay the model once. Best effort: a cache that cannot be read or written costs money, never a
verdict."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from memory_curator.core.clock import Clock, SystemClock
from memory_curator.core.decide import JudgeVerdict
from memory_curator.core.text import iso
from memory_curator.judge.prompt import PROMPT_VERSION, Answer, Item, stored, to_verdict
from memory_curator.store.writer import FILES, Files

CACHE_FILE = "judge-cache.json"
CACHE_ENTRIES = 5000


@dataclass
class VerdictCache:
    """Answers keyed by (candidate, neighbours, rules, model, prompt version), so a dry run and
    the real run that follows pay once. Only good answers are kept; failures are retried."""

    path: Path
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)
    dirty: bool = False
    clock: Clock = field(default_factory=SystemClock)  # stamps entries (the newest are kept)
    files: Files = FILES

    @classmethod
    def load(cls, path: Path, clock: Clock | None = None, files: Files = FILES) -> VerdictCache:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
        return cls(path, data if isinstance(data, dict) else {}, clock=clock or SystemClock(), files=files)

    def get(self, key: str, item: Item) -> JudgeVerdict | None:
        entry = self.entries.get(key)
        if not isinstance(entry, dict):
            return None
        try:
            answer = Answer.model_validate(entry.get("answer"))
        except ValidationError:
            return None
        target = entry.get("target")
        shown = {n.path: n for n in item.neighbours}
        if target is not None and target not in shown:
            return None
        raw = stored(entry["answer"])  # an entry written before answers were cut is cut here
        audit = {"model": entry.get("model"), "prompt_version": PROMPT_VERSION, "raw": raw, "cached": True}
        candidate = item.candidate
        return to_verdict(answer, shown.get(target or ""), candidate.frontmatter, candidate.note.body, audit)

    def put(self, key: str, verdict: JudgeVerdict) -> None:
        if verdict.failure is not None:
            return
        raw = stored(verdict.audit.get("raw"))
        model, target = verdict.audit.get("model"), verdict.target
        self.entries[key] = {"time": iso(self.clock.now()), "model": model, "answer": raw, "target": target}
        self.dirty = True

    def save(self) -> None:
        """Best effort (the cache only saves money): newest entries kept, written with the state
        file recipe (temp file, fsync, os.replace, folder fsync)."""
        if not self.dirty:
            return
        newest = sorted(self.entries.items(), key=lambda kv: str(kv[1].get("time", "")), reverse=True)
        try:
            self.files.write_state_file(self.path, json.dumps(dict(newest[:CACHE_ENTRIES])).encode("utf-8"))
        except OSError:
            return
        self.dirty = False
