#!/usr/bin/env python3
"""CPU time of each decision of candidates of 1 MiB (issue 36). A script, not a test:

    .venv/bin/python tests/perf/decision_cpu.py /tmp/decisions

The case of `tests/test_decision_speed.py`'s slow test with five candidates, in WORKDIR (emptied):
a research note of 1 MiB of other text, a fact of 1 MiB promoted, then five more sharing its
text (not ASCII), the i-th reading i + 1 notes of 1 MiB. Prints each `_decide`'s process time
(the machine is shared: wall time says little), their median and the sweep's. Run it with
PYTHONPATH pointing at another tree to measure that tree (the test helpers come from this one).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

MAX = 1 << 20
OLD = 1_600_000_000  # a settled candidate's mtime


def fact(n: int, body: str) -> str:
    head = f"---\ntype: fact\nentity: widget-{n}\npredicate: history\nvalue: Widget {n} history.\n"
    return head + f"source_url: https://example.dev/{n}\nconfidence: 2\ntags: [t{n}]\n---\n" + body


def put(root: Path, name: str, text: str, agent: str) -> None:
    folder = root / "_inbox" / agent
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")
    os.utime(folder / name, (OLD, OLD))


def main() -> None:
    sys.path.append(str(Path(__file__).resolve().parents[2]))  # after PYTHONPATH: the tree measured
    from click.testing import CliRunner, Result

    from memory_curator.cli import cli
    from memory_curator.commands import sweep
    from tests.test_similarity_linear import prose

    def invoke(*args: str) -> Result:
        return CliRunner().invoke(cli, list(args), catch_exceptions=False)

    root = Path(sys.argv[1]) / "vault"
    shutil.rmtree(root.parent, ignore_errors=True)
    assert invoke("init", str(root)).exit_code == 0
    (root / "research").mkdir()
    long = "---\ntype: research\ntitle: Long history\n---\nNaïve — " + prose(MAX - 100, 7)
    (root / "research/long-history.md").write_text(long, encoding="utf-8")
    base = "Café — " + prose(MAX - 1000, 3)
    put(root, "big0.md", fact(0, base), "agent-0")
    assert invoke("run", "--no-judge", "--vault", str(root)).exit_code == 0
    for n in range(1, 6):
        put(root, f"big{n}.md", fact(n, base.replace("w5x9", f"v{n}")), f"agent-{n}")
    spent: list[float] = []
    real = sweep._decide

    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.process_time()
        try:
            return real(*args, **kwargs)
        finally:
            spent.append(time.process_time() - started)

    sweep._decide = timed  # type: ignore[assignment]
    started = time.process_time()
    result = invoke("run", "--json", "--no-judge", "--vault", str(root))
    total = time.process_time() - started
    data = json.loads(result.output)
    report = {"decisions_cpu_s": [round(s, 3) for s in spent], "median": round(statistics.median(spent), 3)}
    report |= {"sweep_cpu_s": round(total, 2), "promoted": data["promoted"], "needs_review": data["needs_review"]}
    print(json.dumps(report))


if __name__ == "__main__":
    main()
