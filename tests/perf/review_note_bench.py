#!/usr/bin/env python3
"""What the review note costs a sweep (issue 30). A script, not a test: run it by hand.

    PYTHONPATH=. .venv/bin/python tests/perf/review_note_bench.py --items 100

On a copy of the real vault `obsidian-help-en` (/work/shared/real-vaults) with N waiting items,
each `memory-curator run` in its own process: the first sweep (flags them, writes the note);
a sweep with nothing new, the note on and off (`review_note: false`), medians of 5; and one
sweep applying N drops ticked in the note.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REAL = Path("/work/shared/real-vaults/obsidian-help-en")
OLD = 1.6e9  # an mtime long settled


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=100)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/mc-review-note"))
    args = parser.parse_args()
    shutil.rmtree(args.workdir, ignore_errors=True)
    root, state = args.workdir / REAL.name, args.workdir / "state"
    shutil.copytree(REAL, root)
    cli = [sys.executable, "-m", "memory_curator"]

    def run(*more: str) -> float:
        started = time.perf_counter()
        argv = [*cli, *more, "--vault", str(root), "--state-dir", str(state)]
        subprocess.run(argv, check=True, capture_output=True)
        return time.perf_counter() - started

    subprocess.run([*cli, "init", str(root)], check=True, capture_output=True)
    write_items(root, "i", args.items)
    for path in root.rglob("*"):
        if path.is_file():
            os.utime(path, (OLD, OLD))
    first = run("run", "--no-judge")
    note = root / "_meta/Inbox review.md"

    def quiet_sweeps() -> float:
        times = []
        for _ in range(5):
            if note.exists():
                os.utime(note, (OLD, OLD))  # settled: read, not left for the next sweep
            times.append(run("run", "--no-judge"))
        return statistics.median(times)

    on = quiet_sweeps()
    text = note.read_text("utf-8")
    note.write_text(re.sub(r"^- \[ \] drop ", "- [x] drop ", text, flags=re.M), encoding="utf-8")
    os.utime(note, (OLD, OLD))
    applied = run("run", "--no-judge")
    left = len(list((root / "_inbox/agent").glob("*.md")))
    rules = root / "_meta/inbox-rules.md"
    rules.write_text(rules.read_text().replace("settings:\n", "settings:\n  review_note: false\n", 1))
    write_items(root, "j", args.items)
    run("run", "--no-judge")
    off = quiet_sweeps()
    print(
        f"{REAL.name}, {args.items} waiting: first sweep {first:.2f} s; nothing new: note on {on:.2f} s,"
        f" off {off:.2f} s; {args.items} ticked drops applied by one sweep in {applied:.2f} s, {left} left"
    )


def write_items(root: Path, prefix: str, count: int) -> None:
    folder = root / "_inbox/agent"
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(count):
        path = folder / f"{prefix}{n}.md"
        path.write_text(
            f"---\ntype: insight\ntitle: Obsidian tip {prefix}{n} about canvas and links\n"
            f"source_url: https://example.dev/{prefix}{n}\nconfidence: 2\n---\nCanvas files link notes; {n}.\n"
        )
        os.utime(path, (OLD, OLD))


if __name__ == "__main__":
    main()
