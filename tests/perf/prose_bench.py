"""Time `core.markdown.prose` (the body with code blanked) per note over a vault, and compare
what it leaves for tags and links with the old regular expression (`_CODE`, kept here only as
the reference this replaced).

    .venv/bin/python tests/perf/prose_bench.py /work/shared/real-vaults/agent-learnings-es
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

from memory_curator.core import markdown
from memory_curator.core.notes import parse
from memory_curator.index.rows import tags_and_links

_OLD = re.compile(r"```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)|`[^`\n]*`", re.DOTALL)
_TAG = re.compile(r"(?<![\w/&#\[(])#(\w[\w/-]*)")
_LINK = re.compile(r"!?\[\[([^\]|#^\n]+)")


def old_code(body: str) -> str:
    return _OLD.sub(" ", body) if "`" in body or "~~~" in body else body


def found(text: str) -> tuple[set[str], set[str]]:
    tags = {m.group(1).lower() for m in _TAG.finditer(text) if not m.group(1).replace("/", "").isdigit()}
    return tags, {m.group(1).strip() for m in _LINK.finditer(text) if m.group(1).strip()}


def per_note_us(blank: object, bodies: list[str], rounds: int = 5) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for body in bodies:
            blank(body)  # type: ignore[operator]
        best = min(best, time.perf_counter() - start)
    return best / len(bodies) * 1e6


def main(folder: str) -> None:
    paths = sorted(p for p in Path(folder).rglob("*.md") if ".obsidian" not in p.parts)
    bodies = [parse(p.read_bytes().decode("utf-8", "replace")).body for p in paths]
    parsed = sum(markdown.may_hold_code(b) for b in bodies)
    print(f"{len(bodies)} notes, {parsed} parsed (a backtick, ~~~ or an indented line)")
    print(f"old regex:  {per_note_us(old_code, bodies):.1f} µs/note")
    print(f"prose:      {per_note_us(markdown.prose, bodies):.1f} µs/note")
    print(f"index tags_and_links: {per_note_us(tags_and_links, bodies):.1f} µs/note")
    for path, body in zip(paths, bodies, strict=True):
        before, after = found(old_code(body)), found(markdown.prose(body))
        if before != after:
            rel = path.relative_to(folder)
            print(
                f"{rel}: tags -{sorted(before[0] - after[0])} +{sorted(after[0] - before[0])}"
                f" links -{sorted(before[1] - after[1])} +{sorted(after[1] - before[1])}"
            )


if __name__ == "__main__":
    main(sys.argv[1])
