"""The size of the judge's requests in a folder of captured `*.request.json` (replay_cli.py --capture).

    python tests/judge_replay/sizes.py tests/judge_replay/novelty [more folders]

Per folder: the requests, the candidates they carry, and the request size per candidate in tokens,
approximated as characters / 4 (the SDK's token counting is an API call, not offline). The size is
that of the whole canonical request body (system prompt, candidates and notes, output schema).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from replay_cli import canonical

CHARS_PER_TOKEN = 4


def measure(folder: Path) -> dict[str, float]:
    bodies = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.request.json"))]
    chars = sum(len(canonical(b)) for b in bodies)
    user = sum(len(b["messages"][0]["content"]) for b in bodies)
    candidates = sum(b["messages"][0]["content"].count("<candidate id=") for b in bodies)
    per = chars / candidates / CHARS_PER_TOKEN if candidates else 0.0
    return {"requests": len(bodies), "candidates": candidates, "chars": chars, "user_chars": user, "tokens_per": per}


def main(argv: list[str]) -> None:
    print("| set | requests | candidates | request chars | ≈ tokens per candidate (chars/4) |")
    print("|---|---|---|---|---|")
    for name in argv:
        m = measure(Path(name))
        print(f"| {name} | {m['requests']} | {m['candidates']} | {m['chars']:,} | {m['tokens_per']:,.0f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
