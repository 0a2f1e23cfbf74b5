#!/usr/bin/env python3
"""Benchmark of composing promoted notes and flagging candidates (issue 29): the round trip
through ruamel (`notes.edit_frontmatter`, what every compose did before) against the splice
(`core.splice`). A script, not a test: run it by hand.

    .venv/bin/python tests/perf/compose_bench.py --candidates 1000 --repeat 5
    .venv/bin/python tests/perf/compose_bench.py --vault ../shared/real-vaults --repeat 3

Candidates are generated as agents write them (a fact, event or insight; tags as a block list,
a flow list or one text; quoted values, a comment in one of ten, CRLF and a BOM in a few), or
read from every `.md` under --vault. Each run makes the two frontmatter edits of every
candidate, its promote (`compose.promotion`, its file name not its title, so that `aliases` is
written too) and its flag (`compose.add_review_tag`), through each path. It prints JSON:
medians of --repeat runs per path, the speed-up, the share of edits the splice took, and
whether the two paths wrote the same bytes.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ruamel.yaml.comments import CommentedMap

from memory_curator.core import candidate as cand
from memory_curator.core import compose, notes, splice
from memory_curator.store.rules_file import DEFAULT_RULES, load

NOW = dt.datetime(2026, 12, 2, 3, 4, 5, tzinfo=dt.UTC)
Edit = Callable[[CommentedMap], None]
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


def edits(candidates: list[cand.Candidate]) -> list[tuple[str, Edit]]:
    """The frontmatter edits of promoting and of flagging each candidate, on the text each
    is made on (`compose.promoted_text`, `compose.review_text`)."""
    out: list[tuple[str, Edit]] = []
    for candidate in candidates:
        text = compose.strip_review_mark(candidate.note.text)
        out += [(text, compose.promotion(candidate, NOW)), (text, compose.add_review_tag)]
    return out


def run(edit: Callable[[str, Edit], str], work: list[tuple[str, Edit]]) -> list[str | None]:
    out: list[str | None] = []
    for text, change in work:
        try:
            out.append(edit(text, change))
        except notes.NotEditable:
            out.append(None)
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
    work = edits(built)
    report: dict[str, Any] = {"candidates": len(built), "edits": len(work), "repeat": args.repeat}
    outputs: dict[str, list[str | None]] = {}
    times: dict[str, list[float]] = {"before": [], "after": []}
    for _ in range(args.repeat):  # the two paths in turn: a busy machine slows both alike
        for kind, edit in (("before", notes.edit_frontmatter), ("after", splice.edit_frontmatter)):
            start = time.perf_counter()
            outputs[kind] = run(edit, work)
            times[kind].append(time.perf_counter() - start)
    for kind, seconds in ((kind, statistics.median(times[kind])) for kind in times):
        report[kind] = {"seconds": round(seconds, 3), "per_candidate_ms": round(1000 * seconds / len(built), 3)}
    spliced = sum(splice.fast_edit(text, change) is not None for text, change in work)
    report |= {"spliced": spliced, "round_trip": len(work) - spliced, "spliced_share": round(spliced / len(work), 4)}
    report["speedup"] = round(report["before"]["seconds"] / report["after"]["seconds"], 2)
    report["identical"] = outputs["before"] == outputs["after"]
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
