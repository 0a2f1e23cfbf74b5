"""Offers only where a careful person would accept them (issue 37): the review note offers a
`patch into` only a note of the candidate's own key (or subject), never one that is merely like
it. Tried on both real vaults in ../shared/real-vaults/: curator notes made from real notes of
the vault, candidates restating them under another key (the ruff *decision* offered a patch into
the Python-version fact), and one contradiction of a fact's own key."""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
from pathlib import Path

import pytest
from test_review_note import sweep

from memory_curator.core.facts import ExistingNote, own_note
from memory_curator.core.notes import parse

from conftest import REVIEW_NOTE, SHARED, age, require_shared

T0 = dt.datetime(2026, 11, 20, 9, 0, tzinfo=dt.UTC)
VAULTS = {"obsidian-help-en": ("", 20), "agent-learnings-es": ("knowledge/learnings", 200)}
FACT = "---\ntype: fact\nentity: python\npredicate: version\nvalue: {value}\nsource_url: {url}\nconfidence: 2\n---\n"
FACT += "{body}"
WRITES = r"^- \[ \] (?:patch into|take the new value into|keep the old value of|keep both values in) \[\[([^|\]]+)"


def body_of(path: Path) -> str:
    text = path.read_text("utf-8", errors="replace")
    return text.split("---", 2)[2] if text.startswith("---") else text


def staged(root: Path, folder: str, step: int) -> dict[str, str]:
    """Six curator research notes holding real notes' bodies, and for each a *decision* candidate
    restating it (another key: only similarity pairs them); a curator fact and a candidate of its
    own key with another value. Candidate path -> the note of its own key."""
    sources = sorted((root / folder).rglob("*.md") if folder else root.glob("*.md"))[::step][:6]
    keyed: dict[str, str] = {}
    for n, path in enumerate(sources):
        slug = f"learned-{n}"
        note = root / "research" / "learned" / f"{slug}.md"
        note.parent.mkdir(parents=True, exist_ok=True)
        head = f"---\ntype: research\ntopic: learned\ntitle: {slug}\nsource_url: https://example.dev/{n}\n---\n"
        note.write_text(head + body_of(path), "utf-8")
        candidate = root / "_inbox" / "ruff" / f"{slug}.md"
        candidate.parent.mkdir(parents=True, exist_ok=True)
        title = f"---\ntype: decision\ntitle: Decided {slug}\nsource_url: https://example.dev/c{n}\n"
        title += "confidence: 2\n---\n"
        candidate.write_text(title + body_of(path) + "\nOne more line.\n", "utf-8")
        keyed[f"_inbox/ruff/{slug}.md"] = f"decisions/decided-{slug}.md"
    fact = root / "facts" / "python" / "version.md"
    fact.parent.mkdir(parents=True)
    fact.write_text(FACT.format(value="3.11", url="https://python.org/a", body="Python 3.11.\n"), "utf-8")
    (root / "_inbox/ruff/python.md").write_text(FACT.format(value="3.12", url="https://python.org/b", body="3.12.\n"))
    keyed["_inbox/ruff/python.md"] = "facts/python/version.md"
    for path in root.rglob("*.md"):
        age(path)
    return keyed


def offers(note: str) -> dict[str, set[str]]:
    """inbox path -> the notes its section offers to write into (patch and the settle choices)."""
    out: dict[str, set[str]] = {}
    for section in re.split(r"^%% mc:begin ", note, flags=re.M)[1:]:
        item = re.search(r"^## .* · `(_inbox/[^`]+)\.md`", section, re.M)
        if item is None:
            continue
        targets = re.findall(WRITES, section, re.M)
        out[item.group(1) + ".md"] = {t + ".md" for t in targets}
    return out


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(VAULTS))
def test_every_offer_into_a_note_is_into_the_note_of_the_candidates_own_key(tmp_path: Path, invoke, name: str) -> None:
    root = tmp_path / name
    shutil.copytree(require_shared(SHARED / "real-vaults" / name), root)
    assert invoke("init", str(root)).exit_code == 0
    keyed = staged(root, *VAULTS[name])
    out = sweep(invoke, root, T0)
    assert out["needs_review"] == len(keyed), json.dumps(out)[:2000]
    shown = offers((root / REVIEW_NOTE).read_text("utf-8"))
    assert set(shown) == set(keyed)
    wrong = {inbox: targets for inbox, targets in shown.items() if targets - {keyed[inbox]}}
    assert wrong == {}
    assert shown["_inbox/ruff/python.md"] == {"facts/python/version.md"}  # its own key is still offered
    note = (root / REVIEW_NOTE).read_text("utf-8")
    assert "Concerns: [[research/learned/" in note  # the note it is like is still named, as a link


def test_only_the_curators_note_of_the_key_or_else_of_the_subject_is_offered() -> None:
    def note(path: str, owned: bool = True) -> ExistingNote:
        return ExistingNote(path, "", parse(""), owned)

    assert own_note(note("facts/python/version.md"), [note("facts/python/about.md")]) == "facts/python/version.md"
    assert own_note(note("decisions/mine.md", owned=False), [note("facts/python/about.md")]) is None
    assert own_note(None, [note("insights/mine.md", owned=False), note("facts/x/y.md")]) == "facts/x/y.md"
    assert own_note(None, []) is None  # a neighbour is never in question
