#!/usr/bin/env python3
"""Peak RSS of one sweep over the review note's hostile corpus (issue 36): every case of
`tests/test_hostile_note.py` (breaks, fences, titles, values, names, folders, dropped items) and a
private curator note, swept by `memory-curator run --no-judge` in its own process.

    .venv/bin/python tests/perf/hostile_rss.py [WORKDIR]
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parents[2])]

import test_hostile_note as corpus  # noqa: E402  (the corpus lives with its tests)


def main(argv: list[str]) -> None:
    work = Path(argv[0]) if argv else Path(tempfile.mkdtemp(prefix="mc-hostile-"))
    root = work / "vault"
    shutil.rmtree(root, ignore_errors=True)
    corpus.vault(root, {**corpus.CORPUS, **corpus.DROPPED_IN}, {"facts/hr/salary.md": corpus.SALARY})
    cmd = [sys.executable, "-m", "memory_curator", "run", "--vault", str(root), "--json", "--no-judge"]
    done = subprocess.run(["/usr/bin/time", "-f", "%M", *cmd], capture_output=True, text=True, check=True)
    out = json.loads(done.stdout)
    verdicts = {k: out[k] for k in ("promoted", "patched", "dropped", "needs_review")}
    peak = int(done.stderr.strip().splitlines()[-1]) / 1024
    print(f"{len(corpus.CORPUS) + len(corpus.DROPPED_IN)} cases, {verdicts}, peak RSS {peak:.1f} MB")


if __name__ == "__main__":
    main(sys.argv[1:])
