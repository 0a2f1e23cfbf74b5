#!/usr/bin/env python3
"""Latency of the MCP tools an agent calls most (issue 19). A script, not a test:

    .venv/bin/python tests/perf/mcp_latency.py --calls 50

Copies ../shared/real-vaults/obsidian-help-en/ (or --vault) to a temp folder, adds the curator's
rules, warms the index with one call, then times `check_candidate` and `search_notes` through
the SDK's in-memory client, each call a full MCP request and answer. Prints p50 and p95 per
tool in milliseconds as JSON; the target is p50 <= 30 ms for both.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from memory_curator.cli.machine import build_context
from memory_curator.cli.mcp import build_server
from memory_curator.commands.context import Context, Seams
from memory_curator.commands.init import init_vault

HERE = Path(__file__).resolve().parent
REAL = HERE.parent.parent.parent / "shared/real-vaults/obsidian-help-en"
CANDIDATE = """---
type: fact
entity: obsidian
predicate: sync-encryption
value: Obsidian Sync encrypts notes end to end with AES-256.
source_url: https://help.obsidian.md/sync
confidence: 2
---
From the Sync help page: {n}.
"""
QUERIES = ["canvas cards", "sync encryption", "bases views filter", "publish custom domain", "hotkeys plugins"]


def measure(vault: Path, calls: int) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="mc-mcp-latency-"))
    try:
        root = work / "vault"
        shutil.copytree(vault, root)
        init_vault(root)
        ctx = build_context(root, str(work / "state"), Seams(env={}))
        out = {"notes": sum(1 for _ in root.rglob("*.md")), **anyio.run(timed, ctx, calls)}
        for tool in ("check_candidate", "search_notes"):
            out[tool]["target_met"] = out[tool]["p50_ms"] <= 30
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


async def timed(
    ctx: Context, calls: int, candidates: list[str] | None = None, queries: list[str] | None = None
) -> dict[str, Any]:
    """p50 and p95 of `calls` calls of each tool to one server for `ctx`, kept for them all;
    `candidates` and `queries` are cycled through (default: the Obsidian help's)."""
    texts = candidates or [CANDIDATE.format(n=n) for n in range(calls)]
    asked = queries or QUERIES
    async with Client(build_server(ctx, "bench")) as client:
        started = time.perf_counter()
        await client.call_tool("search_notes", {"text": "warm the index"})
        warm = time.perf_counter() - started
        out: dict[str, Any] = {"warm_ms": round(warm * 1000, 1)}
        for tool, args in (
            ("check_candidate", lambda n: {"markdown": texts[n % len(texts)]}),
            ("search_notes", lambda n: {"text": asked[n % len(asked)], "limit": 10}),
        ):
            times, cpu = [], []
            for n in range(calls):
                started, used = time.perf_counter(), time.process_time()
                result = await client.call_tool(tool, args(n))
                times.append((time.perf_counter() - started) * 1000)
                cpu.append((time.process_time() - used) * 1000)
                assert not result.is_error, result.content
            times.sort()
            p95 = times[min(len(times) - 1, int(len(times) * 0.95))]
            out[tool] = {"p50_ms": round(statistics.median(times), 2), "p95_ms": round(p95, 2), "calls": calls}
            out[tool]["cpu_p50_ms"] = round(statistics.median(cpu), 2)  # this process's CPU: steadier under load
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vault", type=Path, default=REAL)
    parser.add_argument("--calls", type=int, default=50)
    args = parser.parse_args()
    print(json.dumps(measure(args.vault, args.calls), indent=2))


if __name__ == "__main__":
    main()
