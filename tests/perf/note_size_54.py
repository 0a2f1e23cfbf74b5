"""The review note's size at 54 waiting items (issue 37's "1,539 lines with no bulk choice"):
3 agents x (6 memos: no-surface, 6 insights: undecided, 6 thin facts: criteria-failed) on a copy
of vault_fixtures/, one `run --settle 0 --no-judge`. Run: `.venv/bin/python tests/perf/note_size_54.py`."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
KINDS = {
    "memo": "---\ntype: memo\ntitle: Memo {n}\nsource_url: https://example.dev/m/{n}\nconfidence: 2\n---\nMemo {n}.\n",
    "insight": (
        "---\ntype: insight\ntitle: Agents should batch writes {n}\nsource_url: https://example.dev/b/{n}\n"
        "confidence: 2\n---\nBatching writes keeps inbox {n} calm.\n"
    ),
    "fact": (
        "---\ntype: fact\nentity: lang{n}\npredicate: memory-safety\nvalue: Lang{n} prevents data races.\n"
        "source_url: https://example.dev/l/{n}\nconfidence: 1\n---\nFrom the book {n}.\n"
    ),
}


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "v"
        shutil.copytree(REPO / "vault_fixtures", root)
        shutil.rmtree(root / "_inbox/test-step-4")
        n = 0
        for agent in ("web-research", "coder", "notes-bot"):
            (root / "_inbox" / agent).mkdir(parents=True)
            for kind, text in KINDS.items():
                for _ in range(6):
                    n += 1
                    (root / "_inbox" / agent / f"{kind}-{n}.md").write_text(text.format(n=n))
        for path in root.rglob("*"):
            if path.is_file():
                os.utime(path, (1_600_000_000, 1_600_000_000))
        argv = [str(REPO / ".venv/bin/memory-curator"), "run", "--vault", str(root), "--state-dir", f"{tmp}/s"]
        subprocess.run([*argv, "--no-judge", "--settle", "0"], check=True, capture_output=True, cwd=REPO)
        lines = (root / "_meta/Inbox review.md").read_text("utf-8").splitlines()
        bulk = [line for line in lines if line.startswith("- [ ]") and " all " in line]
        boxes = sum(line.startswith("- [ ]") for line in lines)
        print(f"{n} waiting: {len(lines)} lines, {boxes} boxes ({len(bulk)} on bulk lines)")


if __name__ == "__main__":
    main()
