"""How many restated notes of a real vault a sweep names contradictions (issue 38, docs/judge.md
"Contradictions without a judge"): COUNT notes restated without a changed value, swept beside them.

    python tests/perf/reworded_contradictions.py agent-learnings-es 300 1          # paragraphs reordered
    python tests/perf/reworded_contradictions.py agent-learnings-es 300 3 --short  # two sentences, file-name title

Prints the count and each one named, with its reason. Uses a copy under a temp folder."""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(HERE))

from memory_curator.core.conflict import sentences  # noqa: E402
from memory_curator.core.notes import parse  # noqa: E402
from tests.test_contradicts_real import reworded  # noqa: E402


def short(path: Path, rng: random.Random) -> str | None:
    """Two of the note's sentences, titled by its file name's words."""
    note = parse(path.read_text(encoding="utf-8", errors="replace"))
    said = [s for s in sentences(note.body) if len(s.split()) >= 6 and not s.startswith(("|", "```", "#"))]
    if not said:
        return None
    body = " ".join(rng.sample(said, min(2, len(said))))
    return f"---\ntype: insight\ntitle: '{path.stem.replace('-', ' ')}'\nsource: claude-code-session\n---\n{body}\n"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("vault", help="a folder of ../shared/real-vaults/")
    parser.add_argument("count", type=int)
    parser.add_argument("seed", type=int)
    parser.add_argument("--short", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        vault = Path(work) / "vault"
        subprocess.run(["cp", "-r", str(HERE.parent / "shared" / "real-vaults" / args.vault), str(vault)], check=True)
        cli = [sys.executable, "-m", "memory_curator"]
        subprocess.run([*cli, "init", "--vault", str(vault)], check=True, cwd=work, capture_output=True)
        skipped = ("_", ".")
        paths = sorted(p for p in vault.rglob("*.md") if not p.relative_to(vault).parts[0].startswith(skipped))
        rng, written = random.Random(args.seed), 0
        for path in rng.sample(paths, min(len(paths), 3 * args.count)):
            text = short(path, rng) if args.short else reworded(path)
            if text is not None and written < args.count:
                inbox = vault / "_inbox" / "agent" / f"r{written}-{path.name}"
                inbox.parent.mkdir(parents=True, exist_ok=True)
                inbox.write_text(text, encoding="utf-8")
                written += 1
        run = [*cli, "run", "--vault", str(vault), "--no-judge", "--settle", "0", "--json", "--state-dir", f"{work}/s"]
        out = subprocess.run(run, cwd=work, capture_output=True, text=True, check=True)
    actions = [a for agent in json.loads(out.stdout)["agents"] for a in agent["actions"]]
    named = [a for a in actions if a.get("reason_code") == "contradiction"]
    print(f"{args.vault}: {len(named)} of {len(actions)} named contradictions")
    for action in named:
        print(f"  {action['inbox_path']}: {action['reason'][:300]}")


if __name__ == "__main__":
    main()
