"""`rules check [FILE]`: validate a rules file (default: the vault's) and say what it holds, or
every problem one pass found, each with its line."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memory_curator.core.errors import CuratorError, RulesError
from memory_curator.core.json_types import JsonObject
from memory_curator.core.names import RULES_PATH
from memory_curator.core.rules import Rules
from memory_curator.store import rules_file


@dataclass(frozen=True)
class Checked:
    """A rules file that loads (`rules`), or the problems it holds (two or more: a single one is
    raised, as every other command reports it)."""

    path: Path
    rules: Rules | None
    problems: tuple[RulesError, ...] = ()

    @property
    def exit_code(self) -> int:
        return self.problems[0].exit_code if self.problems else 0

    def to_json(self) -> JsonObject:
        out: JsonObject = {"file": str(self.path), "valid": self.rules is not None}
        if self.rules is not None:
            out["surfaces"] = [s.name for s in self.rules.surfaces]
            out["criteria"] = [c.name for c in self.rules.criteria]
            out["drop_rules"] = [r.id for r in self.rules.drop_rules]
        out["problems"] = [{"line": p.line, "problem": p.message} for p in self.problems]
        return out


def vault_rules(root: Path) -> Path:
    """The vault's rules file; a broken symlink or a FIFO there is named by `load`, not "no file"."""
    found = rules_file.vault_rules_file(root)
    if found is None:
        missing = root / RULES_PATH
        raise CuratorError(f"{missing}: no rules file (run `memory-curator init`)", file=missing)
    return found


def check(path: Path) -> Checked:
    """The rules file at `path`, validated in one pass."""
    try:
        return Checked(path, rules_file.load(path))
    except RulesError as exc:
        if len(exc.problems) == 1:
            raise
        return Checked(path, None, exc.problems)
