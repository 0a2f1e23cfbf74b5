"""No link in the review note points at an inbox path (issue 37): an item's path vanishes when it
is settled, and a stale link to it, clicked in Obsidian (on a phone whose copy of the note is not
synced yet, in a conflict copy), creates an empty `_inbox/…md` the next sweep flagged as `empty`.
The item's heading names its path as code instead; links go only to notes that stay."""

from __future__ import annotations

import re
from pathlib import Path

from test_review_note import MEMO_REL, small_vault

from memory_curator.core import review_note as rn

from conftest import REVIEW_NOTE

LINKS = re.compile(r"\[\[([^\]|#^]+)|\]\(([^)\s]+)\)|obsidian://[^\s)]*?file=([^\s&)]+)")


def link_targets(text: str) -> list[str]:
    """Every link target Obsidian would follow on a click, outside code (spans and fences)."""
    text = re.sub(r"^(`{3,}).*?^\1\s*$", "", text, flags=re.M | re.S)
    text = re.sub(r"(`+).+?\1", "", text)
    return [next(g for g in m.groups() if g) for m in LINKS.finditer(text)]


def test_the_note_links_no_inbox_path_and_names_each_item_by_title_and_path(tmp_path: Path, invoke) -> None:
    root = small_vault(tmp_path / "v", invoke)
    text = (root / REVIEW_NOTE).read_text("utf-8")
    targets = link_targets(text)
    assert not [t for t in targets if t.replace("%2F", "/").startswith("_inbox")], targets
    assert "## A memo worth keeping · `_inbox/agent-a/memo.md`" in text.splitlines()
    assert MEMO_REL in text


def test_an_items_heading_is_its_title_then_its_path_as_code() -> None:
    item = rn.Item("_inbox/a/x.md", "h", "![[secret]] <b>hi</b> %%c%% #tag", "undecided", "w")
    heading = next(line for line in rn.item_section(item).lines if line.startswith("## "))
    assert heading == "## secret b hi /b c tag · `_inbox/a/x.md`"
    weird = rn.Item("_inbox/a/we]ird`.md", "h", "", "undecided", "w")
    assert next(line for line in rn.item_section(weird).lines if line.startswith("## ")) == (
        "## we ird .md · ``_inbox/a/we]ird`.md``"
    )
