#!/usr/bin/env python3
"""Benchmark of semantic pairing (issue 20). A script, not a test: run it by hand.

    .venv/bin/python tests/perf/semantic_bench.py --notes 100000 --workdir /tmp/mc-semantic --out semantic.json

It writes bench.py's synthetic vault (N notes of about 3.4 KB, made in-process; reused when
--workdir already holds one of the same size and seed), then, each phase in its own process so
that its peak RSS is its own:
  (a) build: the index (`Index.rebuild`) and then every note's vector (`semantic.sync`): the
      extra build time, the extra index size, and the peak RSS of the whole build (target
      <= 300 MB);
  (b) an incremental sync after 100 notes changed;
  (c) query: loading the vectors into one matrix once (time, RSS), then for --queries texts
      the nearest 10 notes: `nearest` alone p50/p95 (target p50 <= 10 ms), embedding the text,
      and `nearest_many` over all queries at once (per query);
  (d) sweep: what a sweep pays, through the querier with `semantic.model` set in the rules:
      opening it (refresh, then the pairing: sync and load), then `semantic_neighbours` of
      --queries candidates, end to end (embed, nearest, the notes' paths, keys and texts).
The model is --model (a model2vec folder, e.g. a real one) or, by default, a generated one in
model2vec's format: a word-level vocabulary of the synthetic words (40,000) x 256 dims, random
vectors (the size and shape of potion-base-8M; its vectors mean nothing, only cost).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

import bench as base  # noqa: E402  (tests/perf/bench.py: the synthetic vault)

from memory_curator.index import semantic  # noqa: E402
from memory_curator.index import store as ix  # noqa: E402
from memory_curator.index.walk import walk  # noqa: E402
from memory_curator.store.rules_file import load_for_vault  # noqa: E402

TOUCHED = 100


def synthetic_model(folder: Path, words: list[str], dim: int, seed: int) -> Path:
    """A model2vec folder over these words with random unit vectors."""
    import numpy as np
    from safetensors.numpy import save_file
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    if not semantic.missing_files(folder):
        return folder
    vocab = {"[UNK]": 0} | {word: i for i, word in enumerate(dict.fromkeys(words), 1)}
    tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    matrix = np.random.default_rng(seed).standard_normal((len(vocab), dim)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(folder / "tokenizer.json"))
    save_file({"embeddings": matrix}, str(folder / "model.safetensors"))
    config = {"model_type": "model2vec", "hidden_dim": dim, "normalize": True}
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


def db_bytes(state: Path) -> int:
    path = state / ix.FILE_NAME
    return sum(os.path.getsize(f"{path}{s}") for s in ("", "-wal") if os.path.exists(f"{path}{s}"))


# --- the phases (each run in its own process) ----------------------------------------------------------


def phase_build(root: Path, state: Path, model_dir: Path) -> dict[str, Any]:
    index = ix.Index(root, load_for_vault(root), state)
    started = time.perf_counter()
    index.rebuild()
    index_seconds = time.perf_counter() - started
    index_bytes = db_bytes(state)
    started = time.perf_counter()
    model = semantic.load(model_dir)
    load_seconds = time.perf_counter() - started
    started = time.perf_counter()
    done = semantic.sync(index.conn, model)
    sync_seconds = time.perf_counter() - started
    index.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    vectors_bytes = semantic.index_bytes(index.conn)
    free_pages = index.conn.execute("PRAGMA freelist_count").fetchone()[0]
    total_bytes = db_bytes(state)
    index.close()
    return {
        "index_build_s": round(index_seconds, 2),
        "index_bytes": index_bytes,
        "model_load_s": round(load_seconds, 3),
        "vectors_build_s": round(sync_seconds, 2),
        "embedded": done.embedded,
        "vectors_bytes": vectors_bytes,
        "index_with_vectors_bytes": total_bytes,
        "free_pages_left": free_pages,
        "dim": model.dim,
    }


def phase_refresh(root: Path, state: Path, model_dir: Path, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    files = sorted(walk(root))
    for rel in rng.sample(files, TOUCHED):
        path = root / rel
        path.write_bytes(path.read_bytes() + b"\nA line added for the benchmark.\n")
        os.utime(path, (base.OLD + 7, base.OLD + 7))
    index = ix.Index(root, load_for_vault(root), state)
    model = semantic.load(model_dir)
    started = time.perf_counter()
    refreshed = index.refresh()
    refresh_seconds = time.perf_counter() - started
    started = time.perf_counter()
    done = semantic.sync(index.conn, model)
    sync_seconds = time.perf_counter() - started
    index.close()
    return {
        "touched": TOUCHED,
        "refresh_s": round(refresh_seconds, 3),
        "changed": refreshed.changed,
        "vectors_sync_s": round(sync_seconds, 3),
        "embedded": done.embedded,
        "removed": done.removed,
    }


def phase_query(root: Path, state: Path, model_dir: Path, queries: int, seed: int) -> dict[str, Any]:
    import numpy as np

    index = ix.Index(root, load_for_vault(root), state)
    model = semantic.load(model_dir)
    started = time.perf_counter()
    vectors = semantic.load_vectors(index.conn, model)
    load_seconds = time.perf_counter() - started
    synth = base.Synth(seed + 2)
    texts = [f"{synth.title()}\n{synth.prose(synth.length(40, 600, 1.7))}" for _ in range(queries)]
    embed_times, nearest_times = [], []
    for text in texts:
        started = time.perf_counter()
        query = model.embed([text])[0]
        embed_times.append(time.perf_counter() - started)
        started = time.perf_counter()
        semantic.nearest(vectors, query, 10)
        nearest_times.append(time.perf_counter() - started)
    matrix = model.embed(texts)
    started = time.perf_counter()
    semantic.nearest_many(vectors, matrix, 10)
    many_seconds = time.perf_counter() - started
    index.close()
    return {
        "vectors": len(vectors),
        "matrix_bytes": int(vectors.matrix.nbytes),
        "load_vectors_s": round(load_seconds, 3),
        "nearest_ms": base.quantiles_ms(nearest_times),
        "embed_query_ms": base.quantiles_ms(embed_times),
        "nearest_many_ms_per_query": round(many_seconds / queries * 1000, 3),
        "numpy": np.__version__,
        "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE"),
    }


def phase_sweep(root: Path, state: Path, model_dir: Path, queries: int, seed: int) -> dict[str, Any]:
    from dataclasses import replace

    from memory_curator.core.candidate import build
    from memory_curator.core.settings import SemanticSettings
    from memory_curator.index.querier import IndexQuerier

    rules = load_for_vault(root)
    rules = replace(rules, settings=replace(rules.settings, semantic=SemanticSettings(model=str(model_dir))))
    started = time.perf_counter()
    querier = IndexQuerier(root, rules, state)
    querier.index  # noqa: B018 - refresh, then the pairing
    open_seconds = time.perf_counter() - started
    assert querier.pairing is not None, querier.semantic_problem
    synth = base.Synth(seed + 3)
    times = []
    for i in range(queries):
        text = (
            f"---\ntype: research\ntopic: bench\ntitle: {synth.title()}\nsource_url: https://x.org/{i}\n---\n"
            f"{synth.prose(synth.length(40, 600, 1.7))}\n"
        )
        candidate = build(text, f"_inbox/bench/c{i}.md", "bench", rules)
        started = time.perf_counter()
        querier.semantic_neighbours(candidate, 5)
        times.append(time.perf_counter() - started)
    return {"open_s": round(open_seconds, 3), "semantic_neighbours_ms": base.quantiles_ms(times)}


# --- the driver -----------------------------------------------------------------------------------------


def run_phase(args: argparse.Namespace, phase: str, model_dir: Path) -> dict[str, Any]:
    command = [sys.executable, __file__, "--phase", phase, "--workdir", str(args.workdir), "--model", str(model_dir)]
    command += ["--notes", str(args.notes), "--queries", str(args.queries), "--seed", str(args.seed)]
    out, seconds, rss = base.child(command)
    result: dict[str, Any] = json.loads(out)
    result["process_s"] = round(seconds, 2)
    result["peak_rss_mb"] = round(rss, 1)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/mc-semantic-bench"))
    parser.add_argument("--model", type=Path, help="a model2vec folder (default: a generated 40,000 x 256 model)")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--phase", choices=("build", "refresh", "query", "sweep"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    root, state = args.workdir / "vault", args.workdir / "state"
    if args.phase:
        model_dir = args.model
        if args.phase == "build":
            result = phase_build(root, state, model_dir)
        elif args.phase == "refresh":
            result = phase_refresh(root, state, model_dir, args.seed)
        elif args.phase == "query":
            result = phase_query(root, state, model_dir, args.queries, args.seed)
        else:
            result = phase_sweep(root, state, model_dir, args.queries, args.seed)
        print(json.dumps(result))
        return 0
    synth = base.Synth(args.seed)
    manifest = args.workdir / "manifest.json"
    wanted = {"notes": args.notes, "seed": args.seed, "format": 1}
    if manifest.exists() and json.loads(manifest.read_text())["key"] == wanted and root.exists():
        base.log(f"reusing the vault in {root}")
    else:
        shutil.rmtree(root, ignore_errors=True)
        base.log(f"writing {args.notes} notes to {root}")
        started = time.perf_counter()
        synth.vault(root, args.notes)
        for rel in walk(root):  # settled notes: none is re-read as "too recent" by the refresh
            os.utime(root / rel, (base.OLD, base.OLD))
        manifest.parent.mkdir(parents=True, exist_ok=True)
        manifest.write_text(json.dumps({"key": wanted}))
        base.log(f"written in {time.perf_counter() - started:.0f} s")
    model_dir = args.model or synthetic_model(args.workdir / "model", synth.words, 256, args.seed)
    shutil.rmtree(state, ignore_errors=True)
    state.mkdir(parents=True)
    report: dict[str, Any] = {"notes": args.notes, "model": str(model_dir), "cpus": os.cpu_count()}
    for phase in ("build", "refresh", "query", "sweep"):
        base.log(phase)
        report[phase] = run_phase(args, phase, model_dir)
        base.log(json.dumps(report[phase]))
    build, query = report["build"], report["query"]
    report["targets"] = {
        "peak_rss_whole_build_mb": {"value": build["peak_rss_mb"], "target": 300, "met": build["peak_rss_mb"] <= 300},
        "nearest_p50_ms": {"value": query["nearest_ms"]["p50"], "target": 10, "met": query["nearest_ms"]["p50"] <= 10},
    }
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0 if all(t["met"] for t in report["targets"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
