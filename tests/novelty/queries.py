"""Score the curator's querier on named questions over the real vaults (issue 28).

    python tests/novelty/queries.py [--cli "memory-curator"] [--queries tests/novelty_es/queries.yaml]
                                    [--out queries.json] [--top 3] [--semantic-model FOLDER]

Each question is `{vault, kind: text|similar, ask, expect}`. Every vault named gets a fresh copy (`<cli> init`,
a temporary state directory); `text` runs `query --text ASK --json`, `similar` runs `query --similar ASK --json`
(its lexical list, and its semantic list when the rules turn semantic pairing on). A question is answered when
`expect` (a vault-relative path) is among the first `--top` results of a list.

With `--semantic-model FOLDER` (a model2vec folder, e.g. WordLlama's: tests/perf/wordllama_model.py) each copy's
rules turn semantic pairing on, so `query --text` ranks by the lexical and the semantic lists made one.
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from score import report  # the scorer beside this file (run as a script: its folder is on the path)

HERE = Path(__file__).resolve().parent
REAL_VAULTS = HERE.parents[2] / "shared" / "real-vaults"
QUERIES = HERE.parent / "novelty_es" / "queries.yaml"
LIMIT = 5  # results kept per question (the report shows them); a hit needs the first `--top`


def call(cli: list[str], cwd: Path, *args: str) -> str:
    done = subprocess.run([*cli, *args], capture_output=True, text=True, timeout=900, check=False, cwd=cwd)
    if done.returncode != 0:  # not the checkout as cwd: `python -m` would import the code beside it
        raise RuntimeError(f"{shlex.join([*cli, *args])} exited {done.returncode}: {done.stderr[-2000:]}")
    return done.stdout


def ask(cli: list[str], work: Path, vault: Path, question: dict[str, Any]) -> dict[str, list[str]]:
    """The result lists of one question: {"text": [...]} or {"lexical": [...], "semantic": [...]}."""
    flag = {"text": "--text", "similar": "--similar"}[question["kind"]]
    out = json.loads(
        call(
            cli,
            work,
            "query",
            "--vault",
            str(vault),
            "--state-dir",
            str(work / f"state-{vault.name}"),
            flag,
            question["ask"],
            "--limit",
            str(LIMIT),
            "--json",
        )
    )["data"]
    if question["kind"] == "text":
        return {"text": [r["path"] for r in out.get("results", [])]}
    return {k: [r["path"] for r in out.get(k) or []] for k in ("lexical", "semantic") if out.get(k) is not None}


SEMANTIC_OFF = "  # semantic:"  # the shipped rules' commented-out setting, turned on by --semantic-model


def pair_by_meaning(vault: Path, model: Path) -> None:
    """Turn semantic pairing on in a fresh copy's rules (as its person would, by editing them)."""
    rules = vault / "_meta" / "inbox-rules.md"
    lines = rules.read_text(encoding="utf-8").split("\n")
    at = [i for i, line in enumerate(lines) if line.startswith(SEMANTIC_OFF)]
    if len(at) != 1:
        raise SystemExit(f"{rules}: no single {SEMANTIC_OFF.strip()!r} line to turn on")
    lines[at[0] : at[0] + 1] = ["  semantic:", f"    model: {model.resolve()}"]
    rules.write_text("\n".join(lines), encoding="utf-8")


def score(
    cli: list[str],
    questions: dict[str, dict[str, Any]],
    top: int,
    vaults_dir: Path,
    model: Path | None = None,
    temp_root: Path | None = None,
) -> dict[str, Any]:
    items: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="queries-", dir=temp_root) as tmp:
        work, copies = Path(tmp), {}
        for name, q in questions.items():
            if q["vault"] not in copies:
                copies[q["vault"]] = work / q["vault"]
                shutil.copytree(vaults_dir / q["vault"], copies[q["vault"]], symlinks=True)
                call(cli, work, "init", "--vault", str(copies[q["vault"]]))
                if model is not None:
                    pair_by_meaning(copies[q["vault"]], model)
            lists = ask(cli, work, copies[q["vault"]], q)
            ranks = [found.index(q["expect"]) + 1 for found in lists.values() if q["expect"] in found]
            items.append(
                {
                    "name": name,
                    **{k: q[k] for k in ("vault", "kind", "ask", "expect")},
                    "rank": min(ranks) if ranks else None,
                    "hit": bool(ranks) and min(ranks) <= top,
                    "results": lists,
                }
            )
    per_vault = {}
    for vault in sorted({i["vault"] for i in items}):
        mine = [i for i in items if i["vault"] == vault]
        per_vault[vault] = {"n": len(mine), "hits": sum(i["hit"] for i in mine), "fraction": _share(mine)}
    return {"n": len(items), "top": top, "hits": sum(i["hit"] for i in items), "fraction": _share(items),
            "per_vault": per_vault, "items": items}  # fmt: skip


def _share(items: list[dict[str, Any]]) -> float:
    return sum(i["hit"] for i in items) / len(items) if items else 0.0


def table(result: dict[str, Any]) -> str:
    top = result["top"]
    lines = [f"| question | vault | kind | rank of the expected note | in top {top} |", "|---|---|---|---|---|"]
    for i in result["items"]:
        rank = "-" if i["rank"] is None else str(i["rank"])
        lines.append(f"| {i['name']} | {i['vault']} | {i['kind']} | {rank} | {'yes' if i['hit'] else 'NO'} |")
    lines.append("")
    for vault, v in result["per_vault"].items():
        lines.append(f"- {vault}: {v['hits']}/{v['n']} in the top {top} ({100 * v['fraction']:.1f}%)")
    lines.append(f"- all: {result['hits']}/{result['n']} in the top {top} ({100 * result['fraction']:.1f}%)")
    lines.append(f"\n{result['seconds']:.1f} s, cli: `{result['cli']}`; a rank past {LIMIT} shows as -\n")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli", default="memory-curator", help="the command that runs the curator")
    parser.add_argument("--queries", type=Path, default=QUERIES, help="the named questions (YAML)")
    parser.add_argument("--vaults", type=Path, default=REAL_VAULTS, help="the folder holding the real vaults")
    parser.add_argument("--top", type=int, default=3, help="a question is answered within this many results")
    parser.add_argument("--out", type=Path, help="write the results as JSON here")
    parser.add_argument("--semantic-model", type=Path, help="turn semantic pairing on with this model folder")
    parser.add_argument("--work", type=Path, help="where the vault copies go (default: the system's temp folder)")
    args = parser.parse_args(argv)
    questions = yaml.safe_load(args.queries.read_text(encoding="utf-8"))
    start = time.monotonic()
    found = score(shlex.split(args.cli), questions, args.top, args.vaults, args.semantic_model, args.work)
    result = {"cli": args.cli, "semantic_model": args.semantic_model and str(args.semantic_model), **found}
    return report(result, start, args.out, table)


if __name__ == "__main__":
    main(sys.argv[1:])
