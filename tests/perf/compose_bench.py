#!/usr/bin/env python3
"""Benchmark of composing promoted notes and flagging candidates (issue 29): the round trip
through ruamel (`notes.edit_frontmatter`, what every compose did before) against the splice
(`core.splice`). A script, not a test: run it by hand.

    .venv/bin/python tests/perf/compose_bench.py --candidates 1000 --repeat 5
    .venv/bin/python tests/perf/compose_bench.py --vault ../shared/real-vaults --repeat 3

Candidates are generated as agents write them (a fact, event or insight; tags as a block list,
a flow list or one text; quoted values, a comment in one of ten, CRLF and a BOM in a few), or
read from every `.md` under --vault. Each run promotes every candidate (`compose.promoted_text`,
its file name not its title, so that `aliases` is written too) and flags it
(`compose.review_bytes`). It prints JSON: medians of --repeat runs per path, the speed-up, the
share of edits the splice took, and whether the two paths wrote the same bytes.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import random
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

from memory_curator.core import candidate as cand
from memory_curator.core import compose, notes, splice
from memory_curator.store.rules_file import DEFAULT_RULES, load

NOW = dt.datetime(2026, 12, 2, 3, 4, 5, tzinfo=dt.UTC)
WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "price",
    "release",
    "obsidian",
    "vault",
    "sync",
    "café",
    "niño",
    "über",
    "plan",
    "ship",
]


def generated(count: int, seed: int) -> list[tuple[str, bytes]]:
    rng = random.Random(seed)
    out = []
    for number in range(count):
        title = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 5))).capitalize()
        tags = rng.sample(WORDS, rng.randint(0, 4))
        lines = [rng.choice(["type: fact", "type: insight", "type: event"]), f"title: {title}"]
        lines += [f"entity: {rng.choice(WORDS)}-{number}", "predicate: price", f"value: '{rng.randint(1, 99)} EUR'"]
        style = rng.choice(["block", "flow", "text", "none"])
        if style == "block" and tags:
            lines += ["tags:", *(f"  - {t}" for t in tags)]
        elif style == "flow":
            lines.append(f"tags: [{', '.join(tags)}]")
        elif style == "text" and tags:
            lines.append(f"tags: {', '.join(tags)}")
        lines += [f"source_url: https://example.dev/{number}", "captured_at: 2026-11-20T10:00:00Z", "confidence: 2"]
        if number % 10 == 0:
            lines[1] += "  # from the agent"
        text = "---\n" + "\n".join(lines) + "\n---\n" + f"# {title}\n\nA body of a few words, {number}.\n"
        if number % 25 == 0:
            text = text.replace("\n", "\r\n")
        if number % 50 == 0:
            text = "\ufeff" + text
        out.append((f"_inbox/agent-{number % 5}/c{number:05d}.md", text.encode("utf-8")))
    return out


def from_vault(folder: Path) -> list[tuple[str, bytes]]:
    return [(f"_inbox/agent/{p.name}", p.read_bytes()) for p in sorted(folder.rglob("*.md"))]


@contextmanager
def path(kind: str) -> Iterator[dict[str, int]]:
    """Compose through the round trip only (`before`) or through the splice (`after`),
    counting the edits each path took."""
    counts = {"spliced": 0, "round trip": 0}

    def after(text: str, mutate: Callable[[Any], None]) -> str:
        fast = splice.fast_edit(text, mutate)
        counts["spliced" if fast is not None else "round trip"] += 1
        return fast if fast is not None else notes.edit_frontmatter(text, mutate)

    with mock.patch.object(compose, "edit_frontmatter", notes.edit_frontmatter if kind == "before" else after):
        yield counts


def run(candidates: list[cand.Candidate]) -> list[bytes]:
    out = []
    for candidate in candidates:
        out.append(compose.promoted_text(candidate, NOW).encode("utf-8"))
        out.append(compose.review_bytes(candidate.raw, "why", NOW))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--candidates", type=int, default=1000)
    parser.add_argument("--vault", type=Path, help="read every .md under this folder instead of generating")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=29)
    args = parser.parse_args()
    rules = load(DEFAULT_RULES)
    raw = from_vault(args.vault) if args.vault else generated(args.candidates, args.seed)
    built = [cand.build(data, name, "agent", rules) for name, data in raw]
    built = [dataclasses.replace(c, target="facts/x/another-name.md") for c in built]
    report: dict[str, Any] = {"candidates": len(built), "edits": 2 * len(built), "repeat": args.repeat}
    outputs = {}
    for kind in ("before", "after"):
        times = []
        for _ in range(args.repeat):
            with path(kind) as counts:
                start = time.perf_counter()
                outputs[kind] = run(built)
                times.append(time.perf_counter() - start)
        report[kind] = {"seconds": round(statistics.median(times), 3), "per_candidate_ms": None}
        report[kind]["per_candidate_ms"] = round(1000 * statistics.median(times) / len(built), 3)
        if kind == "after":
            report["spliced"] = counts["spliced"]
            report["round_trip"] = counts["round trip"]
            report["spliced_share"] = round(counts["spliced"] / max(1, sum(counts.values())), 4)
    report["speedup"] = round(report["before"]["seconds"] / report["after"]["seconds"], 2)
    report["identical"] = outputs["before"] == outputs["after"]
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
