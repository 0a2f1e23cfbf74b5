#!/usr/bin/env python3
"""Sync calls per candidate of a sweep (issue 29, group commit). A script, not a test.

    PYTHONPATH=. .venv/bin/python tests/perf/sync_count.py --notes 20000 --candidates 1000

Writes (or reuses, under --workdir) the bench's synthetic vault (`bench.Synth`: same notes, same
candidate mix), builds its index, then sweeps the candidates through the CLI (`run --no-judge`,
writes included, fsync on) twice per repeat, putting the vault back after each:

- once under `strace -f -c -e trace=fsync,fdatasync,sync,syncfs`, which counts
  every sync call of the process and its children (ours, SQLite's, anything's);
- once bare, for the candidates per second (strace stops the process at each traced call).

Prints one JSON object: syncs in all, per candidate, per syscall, and candidates/s (medians).
The code swept is whatever `memory_curator` the environment imports (PYTHONPATH; `-P` keeps the
current folder out of the path), so the same script measures the code before and after a change:

    PYTHONPATH=/tmp/before-tree .venv/bin/python tests/perf/sync_count.py --workdir /tmp/w20k
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # the bench's vault, candidates and sweep, as it measures them

SYNCS = ("fsync", "fdatasync", "sync", "syncfs")
ROW = re.compile(r"^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)\s*$")


def strace_counts(path: Path) -> dict[str, int]:
    """syscall -> calls, from `strace -c`'s table."""
    counts = {}
    for line in path.read_text().splitlines():
        match = ROW.match(line)
        if match and match.group(2) in SYNCS:
            counts[match.group(2)] = int(match.group(1))
    return counts


def measure(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    root, state = work / "vault", work / "state"
    synth = bench.Synth(args.seed)
    manifest = work / "manifest.json"
    wanted = {"notes": args.notes, "seed": args.seed, "format": 1}
    if manifest.exists() and json.loads(manifest.read_text())["key"] == wanted and root.exists():
        facts = [tuple(f) for f in json.loads(manifest.read_text())["facts"]]
    else:
        shutil.rmtree(root, ignore_errors=True)
        bench.log(f"writing {args.notes} notes to {root}")
        facts = synth.vault(root, args.notes)
        manifest.write_text(json.dumps({"key": wanted, "facts": facts}))
    candidates = synth.candidates(root, facts, args.candidates)  # type: ignore[arg-type]
    shutil.rmtree(state, ignore_errors=True)
    state.mkdir(parents=True)
    cli = [sys.executable, "-P", "-m", "memory_curator"]  # -P: PYTHONPATH's code, not the current folder's
    bench.child([*cli, "index", "rebuild", "--json", "--vault", str(root), "--state-dir", str(state)])
    traced, bare = [], []
    for _ in range(args.repeat):
        shutil.rmtree(state / "preimages", ignore_errors=True)  # every kept copy written afresh, as in a first sweep
        out = work / "strace.txt"
        trace = ["strace", "-f", "-c", "-e", "trace=" + ",".join(SYNCS), "-o", str(out)]
        swept = bench.sweep_once(root, state, [*trace, *cli], candidates)
        traced.append({**swept, "syncs": strace_counts(out)})
        bare.append(bench.sweep_once(root, state, cli, candidates))
    totals = [sum(t["syncs"].values()) for t in traced]
    seconds = statistics.median(b["seconds"] for b in bare)
    first = traced[0]
    return {
        "notes": args.notes,
        "candidates": len(candidates),
        "processed": first["processed"],
        "verdicts": {k: first[k] for k in ("promoted", "patched", "dropped", "needs_review")},
        "errors": first["errors"],
        "syncs": statistics.median(totals),
        "syncs_each_run": totals,
        "syncs_by_call": first["syncs"],
        "syncs_per_candidate": round(statistics.median(totals) / len(candidates), 3),
        "sweep_seconds": seconds,
        "candidates_per_s": round(len(candidates) / seconds, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=20000)
    parser.add_argument("--candidates", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workdir", type=Path, help="keep the vault here (reused when it matches)")
    args = parser.parse_args()
    if shutil.which("strace") is None:
        print("sync_count: strace is not installed (apt-get install strace)", file=sys.stderr)
        return 1
    work = args.workdir or Path(tempfile.mkdtemp(prefix="mc-sync-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        print(json.dumps(measure(args, work), indent=2))
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
