"""The secret scan's cost per candidate at the 1 MiB cap (`core.secrets.scan`), median of runs.

    .venv/bin/python tests/perf/secrets_bench.py [--runs 5] [--vault /work/shared/real-vaults/agent-learnings-es]

The text is the vault's own notes joined up to 1 MiB (real prose, frontmatter, code, links), or
a generated one when no vault is given; the first run pays the detectors' import (~0.2 s) and
is reported apart."""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from memory_curator.core.secrets import scan

MIB = 1 << 20


def text_of(vault: Path | None) -> str:
    if vault is None:
        line = "The agent noted that the config key and the token live in the vault, see `api_key` docs.\n"
        return (line * (MIB // len(line) + 1))[:MIB]
    parts, size = [], 0
    while size < MIB:
        for path in sorted(vault.rglob("*.md")):
            text = path.read_text(encoding="utf-8", errors="replace")
            parts.append(text)
            size += len(text.encode("utf-8"))
            if size >= MIB:
                break
    return "".join(parts).encode("utf-8")[:MIB].decode("utf-8", errors="ignore")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--vault", type=Path)
    args = parser.parse_args()
    text = text_of(args.vault)
    start = time.perf_counter()
    scan(text[:100])
    print(f"first call (imports detect-secrets): {time.perf_counter() - start:.3f} s")
    times = []
    for _ in range(args.runs):
        start = time.perf_counter()
        found = scan(text)
        times.append(time.perf_counter() - start)
    lines = text.count("\n") + 1
    print(f"{len(text.encode('utf-8'))} bytes, {lines} lines, {len(found)} findings")
    print(f"median of {args.runs}: {statistics.median(times) * 1000:.0f} ms per 1 MiB candidate")


if __name__ == "__main__":
    main()
