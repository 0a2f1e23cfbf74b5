#!/usr/bin/env python3
"""Benchmark of the vault querier (issue 4). A script, not a test: run it by hand.

    .venv/bin/python tests/perf/bench.py --notes 100000 --candidates 1000 --repeat 3 --out bench.json

It writes a synthetic vault of N notes (realistic frontmatter of 5-15 keys, bodies of 100-2,000
words, wikilinks, tags; a few with a BOM, CRLF or broken YAML) and M candidates (a mix meant to
promote, patch, drop and need review) under --workdir (default: a temp folder, removed at the
end), then measures in one run, medians over --repeat runs:
  (a) the floors: reading all note bytes; reading + parsing all frontmatter with PyYAML's C
      loader; a bare one-column FTS5 build of all bodies in one transaction (FTS5's defaults,
      and again with the index's own hash size: the stricter floor); an os.scandir + stat walk;
      BM25 top-10 of 10 OR-ed and of 3 AND-ed words; an exact indexed lookup;
  (b) a cold index build (`memory-curator index rebuild`, in its own process: peak RSS);
  (c) a no-change refresh; (d) a refresh after touching 100 notes;
  (e) novelty lookups per candidate (p50/p95): exact key, slug, duplicate hash, neighbours,
      and everything a decision asks (`gather_facts`);
  (f) a full deterministic sweep of the M candidates (`memory-curator run --no-judge`), writes
      included (fsync on), with every sync call it makes counted (`sync_calls`: fsync, fdatasync,
      sync, syncfs, through `strace -f -c` when installed); (g) peak RSS; `memory-curator run` on
      an empty inbox, the review note tended as runs minutes apart find it (`tended_runs`; again
      once the journal holds a year's records: `long_journal_run`), and
      after 100 notes were edited with one probe candidate in the inbox (the stat walk and the
      incremental refresh it pays), process start to exit;
  (h) MCP `check_candidate` and `search_notes` latency (p50/p95) over --mcp-calls calls to one
      long-lived server (`mcp_latency.timed`, the SDK's in-memory client); (i) the index's size
      beside the vault's markdown bytes.
`--only big` (issue 36) sweeps --big candidates of --big-bytes each (default 2,000 of 1 MiB: 2 GB
of inbox in --workdir; check the disk) that share their words with each other and the vault, and
times MCP `check_candidate` of one of 250 KB: wall time, the child's peak RSS, seconds a candidate,
e.g. `--notes 2000 --big 100 --only big --workdir /tmp/big`.
`--only sweep` measures the sweeps alone (wall and CPU seconds, user + system, of the process),
reusing --workdir's vault and index (built once when missing): a quick loop while working on the
sweep, e.g. `--notes 20000 --candidates 1000 --repeat 1 --only sweep --workdir /tmp/sweep20k`.
It prints a JSON report with the ratios to the floors, each figure beside its floor or goal
(issue 29) and whether it is met, and the same as a table on stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memory_curator.core import candidate as cand
from memory_curator.core import notes
from memory_curator.core.facts import gather_facts
from memory_curator.index import querier as iq
from memory_curator.index import store as ix
from memory_curator.index.walk import walk
from memory_curator.store.rules_file import load_for_vault

REPO = Path(__file__).resolve().parents[2]
SYNC_CALLS = ("fsync", "fdatasync", "sync", "syncfs")
OLD = 1_600_000_000  # mtime of settled candidates
COMMON_WORDS = "the of and to a in is that for it as with was on be by this are or from at an which not have has but"
COMMON = tuple(COMMON_WORDS.split())
SYLLABLE_TEXT = "ka ri to mo na se lu vi ra po de el an or is ul im ta ne go ba fi ze xo qu ly pra str gen cor"
SYLLABLES = tuple(SYLLABLE_TEXT.split())
SURFACES = [("facts", 40), ("events", 14), ("research", 14), ("persons", 5), ("projects", 5), ("decisions", 5)]
SURFACES += [("insights", 5), ("notes", 12)]
KINDS = ["promote"] * 30 + ["patch"] * 20 + ["unchanged"] * 10 + ["unsourced"] * 15 + ["tier1"] * 5
KINDS += ["insight"] * 8 + ["missing"] * 6 + ["near"] * 6
LONG_JOURNAL = 120_000  # records: a year of 100 candidates a day (`long_journal_run`)
LONG_JOURNAL_STATE = ("journal.jsonl", "journal.checkpoint", "journal-digest.json", "review-note.json")
SKILLS = ["web-research", "mail-reader", "meeting-notes", "voices-watcher", "code-review"]


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# --- the synthetic vault ---------------------------------------------------------------------------


class Synth:
    """Deterministic notes and candidates drawn from a Zipf vocabulary of made-up words."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.rng = random.Random(seed)
        words, seen = list(COMMON), set(COMMON)
        while len(words) < 40_000:
            word = "".join(self.rng.choice(SYLLABLES) for _ in range(self.rng.randint(2, 4)))
            if word not in seen:
                seen.add(word)
                words.append(word)
        self.words = words
        self.cumulative = list(itertools.accumulate(1.0 / (rank + 1) ** 1.05 for rank in range(len(words))))
        self.predicates = [self.slug(2) for _ in range(300)]
        self.topics = [self.slug(1) for _ in range(60)]

    def sample(self, count: int) -> list[str]:
        return self.rng.choices(self.words, cum_weights=self.cumulative, k=count)

    def slug(self, count: int) -> str:
        return "-".join(self.rng.choice(self.words[300:6000]) for _ in range(count))

    def title(self) -> str:
        return " ".join(self.sample(self.rng.randint(3, 7))).capitalize()

    def prose(self, words: int) -> str:
        sentences, tokens = [], self.sample(words)
        while tokens:
            size = self.rng.randint(8, 16)
            sentences.append(" ".join(tokens[:size]).capitalize() + ".")
            tokens = tokens[size:]
        return "\n\n".join(" ".join(sentences[i : i + 5]) for i in range(0, len(sentences), 5))

    def length(self, low: int, high: int, skew: float) -> int:
        return round(low * (high / low) ** (self.rng.random() ** skew))

    def body(self, links: list[str]) -> str:
        text = self.prose(self.length(100, 2000, 1.7))  # mean ~470 words: ~3.4 KB notes
        extra = [f"[[{self.rng.choice(links)}]]" for _ in range(self.rng.randint(0, 4))] if links else []
        extra += [f"#{self.rng.choice(self.words[200:400])}" for _ in range(self.rng.randint(0, 3))]
        return f"# Notes\n\n{text}\n\n{' '.join(extra)}\n"

    def frontmatter(self, surface: str) -> tuple[str, dict[str, Any]]:
        rng = self.rng
        if surface == "facts":
            entity, predicate = self.slug(2), rng.choice(self.predicates)
            path, fm = f"facts/{entity}/{predicate}.md", {"type": "fact", "entity": entity, "predicate": predicate}
            fm["value"] = self.title()
        elif surface == "events":
            day, slug = f"{rng.randint(2019, 2026)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}", self.slug(3)
            path = f"events/{day[:4]}/{day}-{slug}.md"
            fm = {"type": "event", "date": day, "title": slug.replace("-", " "), "participants": [self.slug(1)]}
        elif surface in ("research", "notes"):
            topic, slug = rng.choice(self.topics), self.slug(3)
            path, fm = f"{surface}/{topic}/{slug}.md", {"title": slug.replace("-", " ")}
            if surface == "research":
                fm = {"type": "research", "topic": topic, **fm}
        else:
            slug = self.slug(3)
            path, fm = f"{surface}/{slug}.md", {"type": surface.rstrip("s")}
            fm["name" if surface in ("persons", "projects") else "title"] = slug.replace("-", " ")
            if surface in ("decisions", "insights"):
                fm["curated_from"] = [{"inbox": f"_inbox/a/{slug}.md", "sha256": "0" * 64}]
        fm["source_url"] = f"https://example.dev/{self.slug(3)}"
        fm["source_skill"] = rng.choice(SKILLS)
        fm["confidence"] = rng.choice([2, 2, 3])
        fm["captured_at"] = f"2026-{rng.randint(1, 10):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:00:00Z"
        optional = {
            "tags": [rng.choice(self.words[200:400]) for _ in range(rng.randint(1, 4))],
            "aliases": [self.title()],
            "observed_at": f"2026-{rng.randint(1, 10):02d}-{rng.randint(1, 28):02d}",
            "status": rng.choice(["active", "stale", "verified"]),
            "related": [f"[[{self.slug(2)}]]"],
            "summary": self.title(),
            "reviewed": rng.choice([True, False]),
        }
        for key in rng.sample(list(optional), rng.randint(0, len(optional))):
            fm[key] = optional[key]
        return path, fm

    def vault(self, root: Path, count: int) -> list[tuple[str, dict[str, Any]]]:
        """Write the vault; return the facts (path, frontmatter) that candidates build on."""
        (root / "_meta").mkdir(parents=True)
        (root / "_inbox").mkdir()
        shutil.copyfile(REPO / "rules" / "inbox-rules.md", root / "_meta" / "inbox-rules.md")
        shares = [name for name, share in SURFACES for _ in range(share)]
        used: set[str] = set()
        links: list[str] = []
        facts = []
        for number in range(count):
            path, fm = self.frontmatter(shares[number % len(shares)])
            while path in used:
                path, fm = self.frontmatter(shares[number % len(shares)])
            used.add(path)
            text = render(fm, self.body(links))
            if number % 997 == 0:
                text = "\ufeff" + text.replace("\n", "\r\n")
            if number % 1999 == 0:
                text = text.replace("---\n", "---\nbroken: [unclosed\n", 1)
            target = root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(text.encode("utf-8"))
            if len(links) < 2000:
                links.append(path[:-3])
            if path.startswith("facts/"):
                facts.append((path, fm))
        return facts

    def candidates(self, root: Path, facts: list[tuple[str, dict[str, Any]]], count: int) -> list[tuple[str, str]]:
        """(inbox path, text) for M candidates, spread over five agents."""
        self.rng = random.Random(self.seed + 1)  # not the stream that wrote the notes: no accidental copies
        out = []
        for number in range(count):
            kind = KINDS[number % len(KINDS)]
            out.append((f"_inbox/agent-{number % 5}/c{number:05d}-{kind}.md", self.candidate(kind, root, facts)))
        return out

    def candidate(self, kind: str, root: Path, facts: list[tuple[str, dict[str, Any]]]) -> str:
        rng = self.rng
        body = self.prose(self.length(60, 600, 1.0)) + "\n"
        if kind == "insight":
            return render({"type": "insight", "title": self.title(), "source_url": "https://example.dev/i"}, body)
        if kind in ("promote", "unsourced", "tier1", "missing"):
            fm: dict[str, Any] = {"type": "fact", "entity": f"{self.slug(2)}-{rng.randint(0, 10**6)}"}
            fm |= {"predicate": rng.choice(self.predicates), "value": self.title()}
            fm |= {"source_url": f"https://example.dev/{self.slug(2)}", "source_skill": rng.choice(SKILLS)}
            fm |= {"confidence": 2, "captured_at": "2026-11-20T10:00:00Z"}
            if kind == "unsourced":
                del fm["source_url"]
                fm["confidence"] = 1
            fm["type"] = "preference" if kind == "tier1" else "fact"
            if kind == "missing":
                del fm["value"]
            return render(fm, body)
        path, existing = rng.choice(facts)
        fm = dict(existing)
        if kind == "patch":
            fm["source_url"] = f"https://example.dev/{self.slug(2)}"
            return render(fm, body)
        if kind == "unchanged":
            return render(fm, body)
        text = (root / path).read_bytes().decode("utf-8").split("---", 2)[-1]  # near: an edited copy
        words = text.split(" ")
        for _ in range(max(1, len(words) // 25)):
            words[rng.randrange(len(words))] = self.sample(1)[0]
        fm |= {"entity": f"{fm['entity']}-{rng.randint(0, 10**6)}", "value": self.title()}
        return render(fm, " ".join(words))


def render(fm: dict[str, Any], body: str) -> str:
    lines = []
    for key, value in fm.items():
        if isinstance(value, list):
            items = "".join(
                f"\n  - {json.dumps(v) if isinstance(v, dict | str) and ':' in str(v) else v}" for v in value
            )
            lines.append(f"{key}:{items}")
        elif isinstance(value, bool):
            lines.append(f"{key}: {str(value).lower()}")
        else:
            text = str(value)
            lines.append(f"{key}: {json.dumps(text) if ':' in text or text[:1] in '[{#&*!|>%@' else text}")
    return "---\n" + "\n".join(lines) + "\n---\n" + body


# --- measuring ----------------------------------------------------------------------------------------


def median_time(fn: Callable[[], object], repeat: int, before: Callable[[], object] | None = None) -> float:
    times = []
    for _ in range(repeat):
        if before:
            before()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return round(statistics.median(times), 4)


def quantiles_ms(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return {"p50": round(pick(0.50) * 1000, 3), "p95": round(pick(0.95) * 1000, 3), "n": len(ordered)}


# Linux counts the parent's resident pages in a forked child's peak RSS (ru_maxrss survives
# exec), and this process holds every note body while it measures the floors. So a small
# launcher process forks the command and reports its time and peak RSS.
LAUNCHER = """
import json, os, subprocess, sys, time
start = time.perf_counter()
proc = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(proc.pid, 0)
seconds = time.perf_counter() - start
with open(sys.argv[1], "w") as report:
    cpu = usage.ru_utime + usage.ru_stime
    code = os.waitstatus_to_exitcode(status)
    json.dump({"exit": code, "seconds": seconds, "rss_kb": usage.ru_maxrss, "cpu": cpu}, report)
"""


def child(args: list[str], cpu: list[float] | None = None) -> tuple[str, float, float]:
    """Run a command; (stdout, wall seconds, peak RSS in MB) of that process alone; its CPU
    seconds (user + system, children included) appended to `cpu` when given."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        subprocess.run([sys.executable, "-c", LAUNCHER, str(report), *args], stdout=out, stderr=err, check=True)
        result = json.loads(report.read_text())
        out.seek(0)
        err.seek(0)
        if result["exit"] != 0:
            raise RuntimeError(f"{args} exited {result['exit']}: {err.read().decode()[-2000:]}")
        if cpu is not None:
            cpu.append(result["cpu"])
        return out.read().decode(), result["seconds"], result["rss_kb"] / 1024


@contextlib.contextmanager
def sync_calls(args: list[str]) -> Any:
    """`args` as a command line whose sync calls are counted: yields (the command line, a dict
    filled with {call: count} once it ran; {} when strace is not installed). The one place that
    counts, so that another counter (an in-process `os` wrapper) can replace it. strace stops
    the process only at these calls (seccomp-bpf), so the timing barely moves."""
    counts: dict[str, int] = {}
    strace = shutil.which("strace")
    if strace is None:
        yield args, counts
        return
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "strace.txt"
        traced = [strace, "-f", "--seccomp-bpf", "-c", "-U", "name,calls", "-e", f"trace={','.join(SYNC_CALLS)}"]
        yield [*traced, "-o", str(out), "--", *args], counts
        for line in out.read_text().splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] in SYNC_CALLS:
                counts[parts[0]] = int(parts[1])
        counts.update({name: counts.get(name, 0) for name in SYNC_CALLS})
        counts["total"] = sum(counts[name] for name in SYNC_CALLS)


def floors(root: Path, files: list[str], work: Path, repeat: int) -> dict[str, Any]:
    def read_all() -> None:
        for rel in files:
            with open(root / rel, "rb") as handle:
                handle.read()

    def parse_all() -> None:
        for rel in files:
            with open(root / rel, "rb") as handle:
                notes.parse(handle.read().decode("utf-8"))

    bodies = [notes.parse((root / rel).read_bytes().decode("utf-8")).body for rel in files]
    database = work / "floor.sqlite3"

    def fresh() -> None:
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(f"{database}{suffix}").unlink(missing_ok=True)

    def fts_insert(hash_bytes: int | None = None) -> None:
        conn = sqlite3.connect(database, isolation_level=None)
        conn.execute("PRAGMA journal_mode = OFF")
        conn.execute("PRAGMA synchronous = OFF")
        conn.execute("CREATE VIRTUAL TABLE f USING fts5(body)")
        if hash_bytes is not None:
            conn.execute("INSERT INTO f(f, rank) VALUES ('hashsize', ?)", (hash_bytes,))
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO f(rowid, body) VALUES (?, ?)", enumerate(bodies, 1))
        conn.execute("COMMIT")
        conn.close()

    out = {
        "stat_walk_s": median_time(lambda: walk(root), repeat),
        "read_bytes_s": median_time(read_all, repeat),
        "parse_frontmatter_s": median_time(parse_all, repeat),
        "fts_insert_s": median_time(fts_insert, repeat, before=fresh),
        "fts_insert_index_hash_s": median_time(lambda: fts_insert(ix.HASH_BYTES), repeat, before=fresh),
    }
    out |= bm25_floors(database)
    fresh()
    return out


def bm25_floors(database: Path) -> dict[str, float]:
    """BM25 top-10 of 10 OR-ed and of 3 AND-ed mid-frequency words in a one-column FTS5 table
    `f` of the bodies (p50, ms): the floors the lookups are compared with."""
    conn = sqlite3.connect(database)
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.v USING fts5vocab(main, f, row)")
    mid = [t for (t,) in conn.execute("SELECT term FROM v WHERE doc BETWEEN 200 AND 2000 LIMIT 30")]
    rng = random.Random(1)
    queries_or = [" OR ".join(f'"{w}"' for w in rng.sample(mid, 10)) for _ in range(20)]
    queries_and = [" AND ".join(f'"{w}"' for w in rng.sample(mid, 3)) for _ in range(20)]
    top10 = "SELECT rowid FROM f WHERE f MATCH ? ORDER BY rank LIMIT 10"
    out = {"bm25_or10_ms": quantiles_ms(_each(conn, top10, queries_or))["p50"]}
    out["bm25_and3_ms"] = quantiles_ms(_each(conn, top10, queries_and))["p50"]
    conn.close()
    return out


def bodies_table(root: Path, files: list[str], database: Path) -> None:
    """The one-column FTS5 table of the bodies that `bm25_floors` queries, built once."""
    conn = sqlite3.connect(database, isolation_level=None)
    conn.execute("CREATE VIRTUAL TABLE f USING fts5(body)")
    conn.execute("BEGIN")
    bodies = (notes.parse((root / rel).read_bytes().decode("utf-8")).body for rel in files)
    conn.executemany("INSERT INTO f(rowid, body) VALUES (?, ?)", enumerate(bodies, 1))
    conn.execute("COMMIT")
    conn.close()


def _each(conn: sqlite3.Connection, sql: str, params: list[Any]) -> list[float]:
    times = []
    for param in params:
        start = time.perf_counter()
        conn.execute(sql, (param,)).fetchall()
        times.append(time.perf_counter() - start)
    return times


def touch(root: Path, files: list[str], count: int, rng: random.Random) -> None:
    stamp = time.time_ns() - 60_000_000_000
    for number, rel in enumerate(rng.sample(files, count)):
        path = root / rel
        with open(path, "ab") as handle:
            handle.write(b"\nTouched by the benchmark.\n")
        os.utime(path, ns=(stamp + number, stamp + number))


def lookups(root: Path, state: Path, candidates: list[tuple[str, str]]) -> dict[str, Any]:
    """p50/p95 of each lookup per candidate, wall time, and this process's CPU time
    (`cpu_p50`, `cpu_p95`: steadier when other work shares the machine)."""
    rules = load_for_vault(root)
    index = ix.Index(root, rules, state)
    querier = iq.IndexQuerier(root, rules, state, index)
    built = [cand.build(text.encode(), rel, rel.split("/")[1], rules) for rel, text in candidates]
    names = ("key", "slug", "duplicate", "subjects", "neighbours", "gather_facts")
    times: dict[str, list[float]] = {name: [] for name in names}
    cpu: dict[str, list[float]] = {name: [] for name in names}

    def timed(name: str, ask: Callable[[], object]) -> None:
        start, used = time.perf_counter(), time.process_time()
        ask()
        times[name].append(time.perf_counter() - start)
        cpu[name].append(time.process_time() - used)

    asks: dict[str, Callable[[cand.Candidate], object]] = {
        "key": lambda c: querier.paths_for_key(c.target or "facts/x/y.md"),
        "slug": lambda c: querier.match_name(str(c.frontmatter.get("title") or c.frontmatter.get("entity") or "x")),
        "duplicate": querier.duplicate_of,
        "subjects": querier.subject_notes,
    }
    alone = iq.IndexQuerier(root, rules, state, index)  # neighbours not cached by the subject question
    for candidate in built:
        for name, ask in asks.items():
            timed(name, lambda: ask(candidate))  # noqa: B023 - called at once
        timed("neighbours", lambda: alone.neighbours(candidate, rules.settings.neighbours))  # noqa: B023
    fresh = iq.IndexQuerier(root, rules, state, index)  # nothing cached: what a sweep pays
    for candidate in built:
        timed("gather_facts", lambda: gather_facts(candidate, fresh, rules.settings))  # noqa: B023
    out = {name: quantiles_ms(values) for name, values in times.items()}
    for name, values in cpu.items():
        spent = quantiles_ms(values)
        out[name] |= {"cpu_p50": spent["p50"], "cpu_p95": spent["p95"]}
    return out


def sweep_once(root: Path, state: Path, cli: list[str], candidates: list[tuple[str, str]]) -> dict[str, Any]:
    """Write the candidates, sweep them through the CLI, then put the vault back as it was."""
    touched = {}
    for rel, _ in candidates:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
    rules = load_for_vault(root)
    for rel, text in candidates:
        built = cand.build(text.encode(), rel, "a", rules)
        if built.target and (root / built.target).exists() and built.target not in touched:
            stat = (root / built.target).stat()
            touched[built.target] = ((root / built.target).read_bytes(), stat.st_mtime_ns)
        (root / rel).write_bytes(text.encode("utf-8"))
        os.utime(root / rel, (OLD, OLD))
    with sync_calls([*cli, "run", "--json", "--no-judge", "--vault", str(root), "--state-dir", str(state)]) as (
        args,
        syncs,
    ):
        cpu: list[float] = []
        out, seconds, rss = child(args, cpu)
    data = json.loads(out)
    for agent in data["agents"]:
        for action in agent["actions"]:
            if action["verdict"] == "promote":
                (root / action["target_path"]).unlink()
    for rel, (raw, mtime) in touched.items():
        (root / rel).write_bytes(raw)
        os.utime(root / rel, ns=(mtime, mtime))
    shutil.rmtree(root / "_inbox")
    (root / "_inbox").mkdir()
    (state / "reviewed.json").unlink(missing_ok=True)
    ix.Index(root, rules, state).refresh()
    verdicts = {k: data[k] for k in ("processed", "promoted", "patched", "dropped", "needs_review")}
    errors = sum(len(agent.get("errors", [])) for agent in data["agents"])
    per = round(syncs["total"] / max(1, len(candidates)), 2) if syncs else None
    return {"seconds": round(seconds, 3), "cpu_s": round(cpu[0], 3), "peak_rss_mb": round(rss, 1), **verdicts,
            "errors": errors, "syncs": syncs, "syncs_per_candidate": per}  # fmt: skip


def edited_run(root: Path, state: Path, cli: list[str], files: list[str], probe: tuple[str, str], seed: int) -> float:
    """`memory-curator run` after 100 notes were edited, with one probe candidate in the inbox
    (held for review: nothing durable written), process start to exit; the inbox put back."""
    touch(root, files, 100, random.Random(seed))
    rel, text = probe
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_bytes(text.encode("utf-8"))
    os.utime(root / rel, (OLD, OLD))
    _, seconds, _ = child([*cli, "run", "--no-judge", "--vault", str(root), "--state-dir", str(state)])
    shutil.rmtree(root / "_inbox")
    (root / "_inbox").mkdir()
    (state / "reviewed.json").unlink(missing_ok=True)
    return seconds


def tended_runs(root: Path, state: Path, cli: list[str]) -> float:
    """`memory-curator run` on an empty inbox, process start to exit, with the review note past
    its settle window so that it is tended, as runs minutes apart find it (a note just written
    is left alone); median of the last 5 of 6 (the first may fold a grown journal in)."""
    note = root / "_meta" / "Inbox review.md"
    seconds = []
    for _ in range(6):
        if note.exists():
            os.utime(note, (OLD, OLD))
        seconds.append(child([*cli, "run", "--no-judge", "--vault", str(root), "--state-dir", str(state)])[1])
    return statistics.median(seconds[1:])


def long_journal_run(root: Path, state: Path, cli: list[str], records: int = LONG_JOURNAL) -> float:
    """`tended_runs` once the journal holds `records` records: the sweeps' own records again,
    each copy under other run ids and inbox paths (a year flags new items every day), spread
    over the year before (about a year of 100 candidates a day). The state and the note put
    back as they were, whatever happens."""
    note = root / "_meta" / "Inbox review.md"
    kept = {p: p.read_bytes() for p in [*(state / n for n in LONG_JOURNAL_STATE), note] if p.exists()}
    mtime = note.stat().st_mtime_ns if note.exists() else None
    journal = state / "journal.jsonl"
    try:
        lines = [json.loads(line) for line in kept.get(journal, b"").splitlines() if line.strip()]
        lines = lines or [{"event": "run", "run": "r"}]
        copies = records // len(lines) + 1
        now = time.time()
        with journal.open("a", encoding="utf-8") as out:
            for n in range(copies):
                day = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - (copies - n) * 365 * 86400 / copies))
                out.writelines(json.dumps(_copied(r, n, day)) + "\n" for r in lines)
        (state / "journal.checkpoint").write_text(str(journal.stat().st_size))  # as after the last run
        return tended_runs(root, state, cli)
    finally:
        for path in [*(state / n for n in LONG_JOURNAL_STATE), note]:
            if path in kept:
                path.write_bytes(kept[path])
            else:
                path.unlink(missing_ok=True)
        if mtime is not None:
            os.utime(note, ns=(mtime, mtime))


def _copied(record: dict[str, Any], n: int, day: str) -> dict[str, Any]:
    """A journal record as the `n`th copy of a year's: its run id and inbox path its own."""
    inbox = record.get("inbox")
    return {**record, "time": day, "run": f"y{n}-{record.get('run')}"} | (
        {"inbox": f"{inbox[:-3]}-y{n}.md"} if isinstance(inbox, str) else {}
    )


def mcp_figures(root: Path, state: Path, candidates: list[tuple[str, str]], calls: int) -> dict[str, Any]:
    """MCP latency against one long-lived server over this vault (`mcp_latency.timed`): the
    candidates' texts checked, three words of each body searched."""
    import anyio  # here, not above: `--only lookups` also measures trees older than the MCP server

    from memory_curator.cli.machine import build_context
    from memory_curator.commands.context import Seams

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import mcp_latency  # beside this script

    texts = [text for _, text in candidates]
    queries = [" ".join(text.split("---", 2)[-1].split()[:3]) for text in texts]
    ctx = build_context(root, str(state), Seams(env={}))
    return dict(anyio.run(mcp_latency.timed, ctx, calls, texts, queries))


def markdown_bytes(root: Path, files: list[str]) -> int:
    return sum(os.path.getsize(root / rel) for rel in files)


def index_bytes(state: Path) -> int:
    """The index file with its WAL (checkpointed or not, it is what the disk holds)."""
    return sum(os.path.getsize(p) for p in state.glob(f"{ix.FILE_NAME}*") if not p.name.endswith("-shm"))


def targets(report: dict[str, Any]) -> list[dict[str, Any]]:
    floor = report["floors"]
    lookup = report["lookup_ms"]
    rows = [
        (
            "cold build <= 1.5 x (parse + FTS5 floors)",
            report["cold_build_s"],
            1.5 * (floor["parse_frontmatter_s"] + floor["fts_insert_s"]),
        ),
        ("cold build peak RSS < 300 MB", report["cold_build_peak_rss_mb"], 300),
        ("no-change refresh <= 2 x stat walk", report["refresh_nochange_s"], 2 * floor["stat_walk_s"]),
        ("exact-key lookup p50 < 1 ms", lookup["key"]["p50"], 1),
        ("slug lookup p50 < 1 ms", lookup["slug"]["p50"], 1),
        ("duplicate-hash lookup p50 < 1 ms", lookup["duplicate"]["p50"], 1),
        ("neighbours p50 <= 5 ms", lookup["neighbours"]["p50"], 5),
        ("subject lookup p50 <= 5 ms", lookup["subjects"]["p50"], 5),
        ("neighbours p95 < 50 ms", lookup["neighbours"]["p95"], 50),
        ("sweep >= 200 candidates/s (issue 29)", -report["sweep"]["candidates_per_s"], -200),
        ("empty-inbox run <= 0.4 s (issue 29)", report["empty_inbox_run_s"], 0.4),
        ("the same with a year's journal <= 0.4 s", report["long_journal_run_s"], 0.4),
        (
            "run after 100 edits <= 2 x stat walk + 0.5 s",
            report["edited_run_s"],
            2 * floor["stat_walk_s"] + 0.5,
        ),
        (
            "cold build <= 1.2 x (parse + FTS5 floors) (issue 29)",
            report["cold_build_s"],
            1.2 * (floor["parse_frontmatter_s"] + floor["fts_insert_s"]),
        ),
        ("sweep peak RSS <= 250 MB", report["sweep"]["peak_rss_mb"], 250),
        ("index bytes <= 1.0 x markdown bytes", report["index_bytes"], report["markdown_bytes"]),
    ]
    if report["sweep"].get("syncs_per_candidate") is not None:
        rows.append(("sync calls <= 2.5 per candidate", report["sweep"]["syncs_per_candidate"], 2.5))
    mcp = report.get("mcp")
    if mcp:
        rows += [
            ("MCP check_candidate p50 <= 15 ms", mcp["check_candidate"]["p50_ms"], 15),
            ("MCP check_candidate p95 <= 40 ms", mcp["check_candidate"]["p95_ms"], 40),
            ("MCP search_notes p50 <= 10 ms", mcp["search_notes"]["p50_ms"], 10),
        ]
    return [
        {"target": name, "value": abs(value), "limit": abs(limit), "met": value <= limit} for name, value, limit in rows
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=100_000, help="N, notes in the synthetic vault")
    parser.add_argument("--candidates", type=int, default=1000, help="M, candidates in the sweep")
    parser.add_argument("--repeat", type=int, default=3, help="repetitions per measurement (the median is kept)")
    parser.add_argument("--out", type=Path, help="also write the JSON report here")
    parser.add_argument("--workdir", type=Path, help="keep the vault here and reuse it (default: a temp folder)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--mcp-calls", type=int, default=200, help="calls of each MCP tool (0: none)")
    parser.add_argument(
        "--only",
        choices=["sweep", "lookups", "big"],
        help="measure only this: sweep, the sweeps, reusing --workdir's vault and index (built when missing); "
        "lookups, the lookups and MCP latency beside the BM25 floors, on the workdir's index as it is "
        "(refreshed; built when missing or of another schema) - minutes, not the whole run; big, a sweep of --big "
        "candidates of --big-bytes (wall time, peak RSS) and MCP check_candidate of 250 KB (issue 36)",
    )
    parser.add_argument("--big", type=int, default=2000, help="`--only big`: candidates in the sweep")
    parser.add_argument("--big-bytes", type=int, default=1 << 20, help="`--only big`: bytes of each candidate")
    args = parser.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="mc-bench-"))
    try:
        report = bench(args, work.resolve())
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    text = json.dumps(report, indent=2)
    print(text)
    for row in report["targets"]:
        met = "met    " if row["met"] else "NOT met"
        log(f"{met} {row['value']:>14,.3f}  vs {row['limit']:>14,.3f}  {row['target']}")
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


def sweep_figures(root: Path, state: Path, cli: list[str], candidates: list[tuple[str, str]], repeat: int) -> Any:
    """The sweep of the candidates, `repeat` times: medians of wall and CPU seconds."""
    sweeps = [sweep_once(root, state, cli, candidates) for _ in range(repeat)]
    seconds = statistics.median(s["seconds"] for s in sweeps)
    figures = {**sweeps[0], "seconds": seconds, "candidates_per_s": round(len(candidates) / seconds, 1)}
    figures["cpu_s"] = statistics.median(s["cpu_s"] for s in sweeps)
    figures["peak_rss_mb"] = max(s["peak_rss_mb"] for s in sweeps)
    figures["each_s"] = [s["seconds"] for s in sweeps]
    figures["each_cpu_s"] = [s["cpu_s"] for s in sweeps]
    return figures


def sweeps_only(root: Path, state: Path, cli: list[str], candidates: list[tuple[str, str]], repeat: int) -> Any:
    """`--only sweep`: the sweeps alone, over the workdir's index (built once when missing)."""
    if not (state / "index.sqlite3").exists():
        log("no index in the workdir: building it")
        state.mkdir(parents=True, exist_ok=True)
        child([*cli, "index", "rebuild", "--json", "--vault", str(root), "--state-dir", str(state)])
    ix.Index(root, load_for_vault(root), state).refresh()
    log("sweeps")
    figures = sweep_figures(root, state, cli, candidates, repeat)
    log(f"sweep {figures['seconds']} s wall, {figures['cpu_s']} s CPU: {figures['candidates_per_s']} candidates/s")
    return {"candidates": len(candidates), "repeat": repeat, "sweep": figures, "targets": []}


def bench(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    root, state, repeat = work / "vault", work / "state", args.repeat
    manifest = work / "manifest.json"
    synth = Synth(args.seed)
    wanted = {"notes": args.notes, "seed": args.seed, "format": 1}
    if manifest.exists() and json.loads(manifest.read_text())["key"] == wanted and root.exists():
        log(f"reusing the vault in {root}")
        facts = [tuple(f) for f in json.loads(manifest.read_text())["facts"]]
    else:
        shutil.rmtree(root, ignore_errors=True)
        log(f"writing {args.notes} notes to {root}")
        facts = synth.vault(root, args.notes)
        manifest.write_text(json.dumps({"key": wanted, "facts": facts}))
    candidates = synth.candidates(root, facts, args.candidates)  # type: ignore[arg-type]
    script = Path(sys.executable).parent / "memory-curator"  # the installed entry point, as cron runs it
    cli = [str(script)] if script.exists() else [sys.executable, "-m", "memory_curator"]
    if args.only == "sweep":
        return sweeps_only(root, state, cli, candidates, repeat)
    if args.only == "lookups":
        return lookups_only(args, work, candidates)
    if args.only == "big":
        return big_figures(args, root, state, cli, synth)
    shutil.rmtree(state, ignore_errors=True)
    state.mkdir(parents=True)
    files = sorted(walk(root))
    size = sum(os.path.getsize(root / rel) for rel in files)
    report: dict[str, Any] = {
        "notes": len(files),
        "avg_note_bytes": round(size / len(files)),
        "candidates": len(candidates),
        "repeat": repeat,
        "machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0], "sqlite": sqlite3.sqlite_version},
    }
    log("floors")
    report["floors"] = floors(root, files, work, repeat)
    log("cold builds")
    rebuild = [*cli, "index", "rebuild", "--json", "--vault", str(root), "--state-dir", str(state)]
    builds = [child(rebuild) for _ in range(repeat)]
    report["cold_build_s"] = statistics.median(json.loads(out)["data"]["seconds"] for out, _, _ in builds)
    report["cold_build_process_s"] = round(statistics.median(seconds for _, seconds, _ in builds), 3)
    report["cold_build_each_s"] = [json.loads(out)["data"]["seconds"] for out, _, _ in builds]
    report["cold_build_peak_rss_mb"] = round(max(rss for _, _, rss in builds), 1)
    floor = report["floors"]
    for name, fts in (("FTS5", "fts_insert_s"), ("FTS5 with the index's hash size", "fts_insert_index_hash_s")):
        total = floor["parse_frontmatter_s"] + floor[fts]
        log(
            f"cold build {report['cold_build_s']:.2f} s / (parse floor {floor['parse_frontmatter_s']:.2f} s + "
            f"{name} floor {floor[fts]:.2f} s) = {report['cold_build_s'] / total:.2f}x (target <= 1.5x); "
            f"each {report['cold_build_each_s']}, peak RSS {report['cold_build_peak_rss_mb']} MB"
        )
    report["index_bytes"] = index_bytes(state)
    report["markdown_bytes"] = markdown_bytes(root, files)
    log(f"index {report['index_bytes'] / 1e6:.1f} MB beside {report['markdown_bytes'] / 1e6:.1f} MB of markdown")
    rules = load_for_vault(root)
    log("refreshes")
    report["refresh_nochange_s"] = median_time(lambda: ix.Index(root, rules, state).refresh(), max(repeat, 5))
    rng = random.Random(args.seed)
    report["refresh_touch100_s"] = median_time(
        lambda: ix.Index(root, rules, state).refresh(), repeat, before=lambda: touch(root, files, 100, rng)
    )
    ix.Index(root, rules, state).refresh()
    log("lookups")
    report["lookup_ms"] = lookups(root, state, candidates)
    idx = ix.Index(root, rules, state)
    keys = [k for (k,) in idx.conn.execute("SELECT key FROM notes WHERE key IS NOT NULL LIMIT 2000")]
    times = _each(idx.conn, "SELECT path FROM notes WHERE key = ?", keys)
    report["floors"]["indexed_lookup_us"] = round(statistics.median(times) * 1e6, 1)
    idx.close()
    log("sweeps")
    report["sweep"] = sweep_figures(root, state, cli, candidates, repeat)
    log("empty-inbox runs, the review note tended")
    report["empty_inbox_run_s"] = round(tended_runs(root, state, cli), 3)
    log(f"empty-inbox runs with a journal of {LONG_JOURNAL} records")
    report["long_journal_run_s"] = round(long_journal_run(root, state, cli), 3)
    log("runs after 100 edits")
    probe = next(c for c in candidates if "-unsourced" in c[0])
    edited = [edited_run(root, state, cli, files, probe, args.seed + n) for n in range(repeat)]
    report["edited_run_s"] = round(statistics.median(edited), 3)
    if args.mcp_calls:
        log(f"MCP latency, {args.mcp_calls} calls of each tool")
        report["mcp"] = mcp_figures(root, state, candidates, args.mcp_calls)
    report["python_startup_s"] = round(statistics.median(child([sys.executable, "-c", "pass"])[1] for _ in range(5)), 3)
    floor = report["floors"]
    floor_sum = floor["parse_frontmatter_s"] + floor["fts_insert_s"]
    strict_sum = floor["parse_frontmatter_s"] + floor["fts_insert_index_hash_s"]
    report["ratios"] = {
        "cold_build_vs_parse_plus_fts": round(report["cold_build_s"] / floor_sum, 2),
        "cold_build_vs_parse_plus_fts_index_hash": round(report["cold_build_s"] / strict_sum, 2),
        "refresh_nochange_vs_stat_walk": round(report["refresh_nochange_s"] / floor["stat_walk_s"], 2),
        "refresh_touch100_vs_stat_walk": round(report["refresh_touch100_s"] / floor["stat_walk_s"], 2),
    }  # fmt: skip
    report["targets"] = targets(report)
    report["all_met"] = all(t["met"] for t in report["targets"])
    return report


def big_candidate(synth: Synth, base: list[str], n: int, size: int) -> bytes:
    """A candidate of `size` bytes whose body is `base` (the vault's Zipf words) with one word
    in 20 drawn again: every such candidate shares most of its 3-word runs with the others and
    its words with the vault (the hostile agent's case, issue 36). A new entity each: promoted."""
    words = list(base)
    for _ in range(len(words) // 20):
        words[synth.rng.randrange(len(words))] = synth.sample(1)[0]
    fm = {"type": "fact", "entity": f"big-{n}", "predicate": "history", "value": f"Big {n} history"}
    fm |= {"source_url": f"https://example.dev/big/{n}", "source_skill": "web-research", "confidence": 2}
    data = render(fm, " ".join(words)).encode("utf-8")[: size - 1]
    return data.decode("utf-8", errors="ignore").encode("utf-8") + b"\n"


def big_note(root: Path, synth: Synth, size: int) -> str:
    """A vault note of `size` bytes drawn from the same Zipf vocabulary as the big candidates
    (their words, not their text: they stay new and are promoted), which each of them reads as
    a neighbour (the trial's 26 s `check_candidate` needed such a long note, issue 36); its path."""
    rel = "research/big/long-history.md"
    fm = {"type": "research", "topic": "big", "title": "Long history", "source_url": "https://example.dev/long"}
    data = render(fm, synth.prose(size // 6)).encode("utf-8")[: size - 1]
    data = data.decode("utf-8", errors="ignore").encode("utf-8") + b"\n"
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_bytes(data)
    return rel


def big_figures(args: argparse.Namespace, root: Path, state: Path, cli: list[str], synth: Synth) -> dict[str, Any]:
    """`--only big`: a sweep of `--big` candidates of `--big-bytes` each (wall time, the child's
    peak RSS, seconds per candidate), and MCP `check_candidate` of one of 250 KB (the agent
    limit, `NOTE_MAX_BYTES`), on the workdir's vault; the inbox and the notes promoted removed."""
    from memory_curator.commands.agent import NOTE_MAX_BYTES

    state.mkdir(parents=True, exist_ok=True)
    ix.Index(root, load_for_vault(root), state).refresh()
    synth.rng = random.Random(args.seed + 2)
    base = synth.prose(args.big_bytes // 6).split(" ")
    report: dict[str, Any] = {"only": "big", "candidates": args.big, "candidate_bytes": args.big_bytes}
    long_note = big_note(root, synth, args.big_bytes)
    ix.Index(root, load_for_vault(root), state).refresh()
    try:
        log(f"writing {args.big} candidates of {args.big_bytes} bytes")
        for n in range(args.big):
            path = root / "_inbox" / f"agent-{n % 5}" / f"big{n:05d}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(big_candidate(synth, base, n, args.big_bytes))
            os.utime(path, (OLD, OLD))
        log("the sweep")
        swept = [*cli, "run", "--json", "--no-judge", "--vault", str(root), "--state-dir", str(state)]
        cpu: list[float] = []
        out, seconds, rss = child(swept, cpu)
        data = json.loads(out)
        verdicts = {k: data[k] for k in ("processed", "promoted", "patched", "dropped", "needs_review")}
        per = round(seconds / max(1, args.big), 3)
        report["sweep"] = {"seconds": round(seconds, 1), "peak_rss_mb": round(rss, 1), "seconds_per_candidate": per}
        report["sweep"] |= {
            "cpu_seconds": round(cpu[0], 1),
            "cpu_seconds_per_candidate": round(cpu[0] / max(1, args.big), 3),
        }
        report["sweep"] |= verdicts
        log(f"sweep {seconds:.1f} s ({cpu[0]:.1f} s CPU: a shared machine), peak RSS {rss:.0f} MB, {per} s a candidate")
    finally:
        shutil.rmtree(root / "_inbox")
        (root / "_inbox").mkdir()
        for folder in (root / "facts").glob("big-*"):
            shutil.rmtree(folder, ignore_errors=True)
        (state / "reviewed.json").unlink(missing_ok=True)
    ix.Index(root, load_for_vault(root), state).refresh()
    log(f"MCP check_candidate of 250 KB (the vault holds {long_note}, of {args.big_bytes} bytes)")
    text = big_candidate(synth, base, 0, NOTE_MAX_BYTES).decode("utf-8")
    mcp = mcp_figures(root, state, [("_inbox/a/big.md", text)], args.mcp_calls or 5)
    report["mcp_check_candidate_250k"] = mcp["check_candidate"]
    report["mcp_check_candidate_250k"]["long_note_bytes"] = args.big_bytes
    report["targets"] = [
        {"target": "big sweep peak RSS < 300 MB", "value": report["sweep"]["peak_rss_mb"], "limit": 300},
        {"target": "a candidate of the size limit < 1 s", "value": per, "limit": 1.0},
        {
            "target": "a candidate of the size limit < 1 s of CPU",
            "value": report["sweep"]["cpu_seconds_per_candidate"],
            "limit": 1.0,
        },
    ]
    for row in report["targets"]:
        row["met"] = row["value"] <= row["limit"]
    return report


def lookups_only(args: argparse.Namespace, work: Path, candidates: list[tuple[str, str]]) -> dict[str, Any]:
    """`--only lookups`: the index kept (refreshed, or built when it cannot be trusted), the
    BM25 floors from a bodies table kept in the workdir, the lookups, MCP latency, the sizes."""
    root, state = work / "vault", work / "state"
    state.mkdir(parents=True, exist_ok=True)
    files = sorted(walk(root))
    floor_db = work / "bm25-floor.sqlite3"
    if not floor_db.exists():
        log("the bodies' FTS5 table for the BM25 floors (once)")
        bodies_table(root, files, floor_db.with_suffix(".tmp"))
        floor_db.with_suffix(".tmp").rename(floor_db)
    report: dict[str, Any] = {"notes": len(files), "candidates": len(candidates), "only": "lookups"}
    report["floors"] = bm25_floors(floor_db)
    rules = load_for_vault(root)
    started = time.perf_counter()
    done = ix.Index(root, rules, state).refresh()
    report["refresh_s"] = round(time.perf_counter() - started, 3)
    report["rebuilt"] = bool(done.rebuilt)
    report["index_bytes"] = index_bytes(state)
    report["markdown_bytes"] = markdown_bytes(root, files)
    log(f"index {report['index_bytes'] / 1e6:.1f} MB beside {report['markdown_bytes'] / 1e6:.1f} MB of markdown")
    log("lookups")
    report["lookup_ms"] = lookups(root, state, candidates)
    floor = report["floors"]["bm25_or10_ms"]
    report["ratios"] = {f"{name}_vs_bm25_or10": round(report["lookup_ms"][name]["p50"] / floor, 3) for name in (
        "neighbours", "subjects", "gather_facts")}  # fmt: skip
    if args.mcp_calls:
        log(f"MCP latency, {args.mcp_calls} calls of each tool")
        report["mcp"] = mcp_figures(root, state, candidates, args.mcp_calls)
    report["targets"] = []
    return report


if __name__ == "__main__":
    sys.exit(main())
