"""`review` and `resolve`: what a person decides about the items waiting for them.

The logic only: which items a `review PATH` covers and in what order, what the curator would
decide about one now (with what a patch would change), and the rule that a person's own note
is patched only once the person confirmed the diff. The interactive queue itself (keys,
prompts, rich panels) is `cli/review.py`; every choice is applied through `desk.Desk`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memory_curator.commands.desk import PERSONS_NOTE, Desk, Done, Preview, inbox_item
from memory_curator.commands.status import InboxItem, scan_inbox
from memory_curator.core import candidate as cand
from memory_curator.core import merge
from memory_curator.core.decide import Decision, decide
from memory_curator.core.errors import CuratorError
from memory_curator.core.facts import Neighbour, Querier, gather_facts
from memory_curator.store.paths import scope_agents


@dataclass(frozen=True)
class View:
    """What the curator would decide about the item now, and what a patch would change."""

    decision: Decision
    neighbours: tuple[Neighbour, ...]
    patch_target: str | None
    diff: str | None
    persons: bool = False  # the patch target is the person's note: writing it needs a second key


@dataclass(frozen=True)
class Tally:
    """What one `review` session did."""

    done: tuple[Done, ...] = ()
    skipped: int = 0
    edited: int = 0
    left: int = 0  # not looked at when the person quit (the current item included)
    quit: bool = False

    def counts(self) -> dict[str, int]:
        counts = {"promote": 0, "patch": 0, "drop": 0}
        for item in self.done:
            counts[item.action.verdict] += 1
        return counts


def scope(root: Path, path: str | None) -> tuple[set[str] | None, str | None]:
    """(agent folders, single item) that `review PATH` covers: the whole inbox, one agent
    folder, or one file."""
    if path is None:
        return None, None
    given = Path(path)
    if given.is_file() or (not given.is_absolute() and (root / given).is_file()):
        return None, inbox_item(root, path)[0]
    folder = given if given.exists() or given.is_absolute() else root / given
    return {name for name, _ in scope_agents(root, folder)}, None


def queue(desk: Desk, agents: set[str] | None = None, only: str | None = None) -> list[InboxItem]:
    """The items waiting for a person (or just `only`), oldest first."""
    items = scan_inbox(desk.root, desk.state)
    if only is not None:
        return [i for i in items if i.rel == only]
    return [i for i in items if i.waiting_for_person and (agents is None or i.agent in agents)]


def patch_confirmed(
    desk: Desk, rel: str, target: str, confirm: Callable[[Preview], bool] | None, yes: bool = False
) -> Done:
    """Patch into `target`. A person's note is written only once the person confirms the diff:
    `yes` (`resolve --yes`), or `confirm(preview)` saying so (the terminal asks); without
    `confirm` (no one to ask) it is refused, unchanged."""
    if yes:
        return desk.patch(rel, target, confirmed=True)
    preview = desk.persons_patch(rel, target)
    if preview is None:  # the curator's note: no confirmation needed
        return desk.patch(rel, target)
    if confirm is None:
        raise CuratorError(f"{preview.target}: {PERSONS_NOTE}")
    if not confirm(preview):
        raise CuratorError(f"{preview.target}: left as it was")
    return desk.patch(rel, preview.target, confirmed=True, seen=preview.seen)


def evaluate(desk: Desk, querier: Querier, candidate: cand.Candidate) -> View:
    facts = gather_facts(candidate, querier, desk.rules.settings)
    decision = decide(candidate, desk.rules, facts)
    try:
        neighbours = tuple(querier.neighbours(candidate, desk.rules.settings.neighbours))
    except CuratorError:
        neighbours = ()
    existing = facts.existing
    if existing is None:
        return View(decision, neighbours, None, None)
    person = not existing.curator_owned  # shown as the person would write it: their note stays theirs
    merged = merge.merge(existing.text, candidate, desk.clock.now(), person=person)
    diff = merge.note_diff(existing.path, existing.text, merged.text) if merged.changed else None
    return View(decision, neighbours, existing.path, diff, person)
