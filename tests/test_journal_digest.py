"""The journal's digest (`store.journal_digest`): what the review note reads of the journal, folded
as it grows, so a run reads only what was appended since the last. Through real sweeps, drops,
restores and undos it gives the note exactly what the whole journal gives; a torn or growing last
line, another journal, a shorter one or a broken digest are read again, never half-trusted."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from loop_kit import INSIGHT, PATCHING, UNSOURCED, ZEBRA, sweep

from memory_curator.cli.machine import build_context
from memory_curator.commands import review_items
from memory_curator.commands.context import Context, Seams
from memory_curator.commands.desk import Desk
from memory_curator.commands.review import flag_reasons
from memory_curator.core.clock import FixedClock
from memory_curator.core.notes import content_hash
from memory_curator.store import journal_digest
from memory_curator.store.journal import Journal

from conftest import NOW, REVIEW_NOTE, age


def swept(invoke: Any, vault: Path) -> dict[str, Any]:
    """A sweep whose review note is written (one written just now waits out its settle window)."""
    if (vault / REVIEW_NOTE).exists():
        age(vault / REVIEW_NOTE)
    return sweep(invoke, vault)


def journal_of(ctx: Context) -> Journal:
    return Journal(ctx.state / "journal.jsonl")


def as_whole(ctx: Context, digest: journal_digest.Digest, fewer: bool = True) -> None:
    """The note's readings of the digest's records are those of the whole journal (read from
    fewer records, unless `fewer` is False)."""
    whole = list(journal_of(ctx).records())
    desk = Desk(ctx, False, by="test")
    assert flag_reasons(desk, digest.flagged()) == flag_reasons(desk, whole)
    assert review_items._sweeps(digest.sweeps()) == review_items._sweeps(whole)
    assert review_items._drops(ctx, digest.actions()) == review_items._drops(ctx, whole)
    assert digest.last_run == [r["run"] for r in whole if isinstance(r.get("run"), str)][-1]
    assert len(digest.records()) < len(whole) or not fewer


def digest_now(ctx: Context) -> journal_digest.Digest:
    return journal_digest.read(journal_of(ctx), ctx.state, ctx.clock.now(), ctx.files)


def test_the_digest_gives_the_note_what_the_whole_journal_gives(vault: Path, invoke, write_candidate) -> None:
    """Sweeps of promotes, patches, drops and needs-review, a restore, the undo of that restore,
    and an item flagged again: after each, the flags, the last sweeps and the week's drops read
    from the digest are those read from the whole journal, and the digest was folded from where
    it stopped (the note's own sweeps keep it)."""
    ctx = build_context(vault, None, Seams())
    write_candidate(vault, "zebra.md", ZEBRA)
    write_candidate(vault, "patching.md", PATCHING)
    write_candidate(vault, "claim.md", UNSOURCED)
    write_candidate(vault, "insight.md", INSIGHT)
    first = swept(invoke, vault)
    assert first["dropped"] >= 1 and first["needs_review"] >= 1 and first["promoted"] >= 1
    as_whole(ctx, digest_now(ctx))
    dropped = sorted((vault / "_inbox/.dropped/agent-a").iterdir())
    invoke("restore", str(dropped[0]), "--json")
    swept(invoke, vault)
    as_whole(ctx, digest_now(ctx))
    invoke("undo", "--last", "--vault", str(vault), "--json")
    as_whole(ctx, digest_now(ctx))
    write_candidate(vault, "insight.md", INSIGHT.replace("batch writes", "batch their writes"))  # flagged again
    again = swept(invoke, vault)
    assert [a["inbox_path"] for agent in again["agents"] for a in agent["actions"]] == ["_inbox/agent-a/insight.md"]
    saved = json.loads((ctx.state / journal_digest.DIGEST).read_bytes())
    assert saved["offset"] == journal_of(ctx).size()  # the note's sweep folded all there was
    as_whole(ctx, digest_now(ctx))


def test_a_run_folds_only_what_was_appended_since(vault: Path, invoke, write_candidate) -> None:
    """The records folded are not read again: once the digest is saved, the journal's bytes before
    its offset are not what the next runs read (here they are made to say something else, which
    no real journal does, to show it)."""
    ctx = build_context(vault, None, Seams())
    swept(invoke, vault)  # the fixtures' own candidates: the journal's first line is theirs
    write_candidate(vault, "insight.md", INSIGHT)
    first = swept(invoke, vault)
    flagged = {a["inbox_path"] for agent in first["agents"] for a in agent["actions"] if a["verdict"] == "needs_review"}
    folded = json.loads((ctx.state / journal_digest.DIGEST).read_bytes())["offset"]
    path = ctx.state / "journal.jsonl"
    raw = path.read_bytes()
    head, _, rest = raw[:folded].partition(b"\n")
    path.write_bytes(head + b"\n" + rest.replace(b'"needs_review"', b'"needs_revieX"') + raw[folded:])
    write_candidate(vault, "zebra.md", ZEBRA)
    swept(invoke, vault)
    digest = digest_now(ctx)
    assert digest.offset == journal_of(ctx).size() > folded
    assert flagged and flagged <= set(digest.flags)  # as folded before, not as the bytes say now
    assert not flagged & set(flag_reasons(Desk(ctx, False, by="test"), journal_of(ctx).records()))


def append_raw(ctx: Context, data: bytes) -> None:
    with open(ctx.state / "journal.jsonl", "ab") as handle:
        handle.write(data)


def record(run: str, **fields: Any) -> bytes:
    return (json.dumps({"time": "2026-11-20T09:00:00Z", "run": run, **fields}) + "\n").encode()


@pytest.fixture
def ctx(vault: Path) -> Context:
    context = build_context(vault, None, Seams(clock=FixedClock(NOW)))
    context.state.mkdir(parents=True, exist_ok=True)
    return context


def test_a_last_line_without_its_newline_is_read_once_whole(ctx: Context) -> None:
    append_raw(ctx, record("r1", event="run", processed=1))
    whole = journal_of(ctx).size()
    append_raw(ctx, record("r2", event="run", processed=2)[:-9])  # an append under way
    digest = digest_now(ctx)
    assert digest.offset == whole and digest.last_run == "r1"
    append_raw(ctx, record("r2", event="run", processed=2)[-9:])
    digest = digest_now(ctx)
    assert digest.offset == journal_of(ctx).size() and digest.last_run == "r2"
    assert [r["run"] for r in digest.records()] == ["r1", "r2"]


def test_a_torn_line_is_skipped_as_the_journal_skips_it(ctx: Context) -> None:
    append_raw(ctx, record("r1", event="run", processed=1))
    append_raw(ctx, b'{"time": "2026-11-20T09:00:00Z", "run": "cut\n')  # a crash mid-append, then one more
    append_raw(ctx, record("r3", event="run", processed=3))
    assert [r["run"] for r in digest_now(ctx).records()] == ["r1", "r3"]


@pytest.mark.parametrize(
    "how", ["another journal", "a shorter journal", "a journal written over", "a broken digest", "an old version"]
)
def test_a_digest_that_is_not_this_journals_is_folded_again(ctx: Context, how: str) -> None:
    append_raw(ctx, record("r1", event="run", processed=1))
    append_raw(ctx, record("r2", event="run", processed=2))
    assert digest_now(ctx).last_run == "r2"
    path, saved = ctx.state / journal_digest.DIGEST, ctx.state / "journal.jsonl"
    if how == "another journal":  # replaced by a person, the same size or longer
        saved.write_bytes(record("x1", event="run", processed=5) + record("x2", event="begin", verdict="drop", seq=0))
    elif how == "a shorter journal":
        saved.write_bytes(record("r1", event="run", processed=1))
    elif how == "a journal written over":  # its first line kept, the rest longer: the offset mid-line
        saved.write_bytes(record("r1", event="run", processed=1) + record("rewritten-r2", event="run", processed=2))
    elif how == "a broken digest":
        path.write_bytes(path.read_bytes()[:40])
    else:
        path.write_text(json.dumps({**json.loads(path.read_bytes()), "version": 0}))
    digest = digest_now(ctx)
    assert digest.records() == list(journal_of(ctx).records())[: len(digest.records())]
    assert digest.last_run == list(journal_of(ctx).records())[-1]["run"]
    assert digest.offset == saved.stat().st_size


def test_the_digest_reads_each_action_as_the_log_does_while_they_come(vault: Path) -> None:
    """Drops with a failed then a recovered end, with an ok then a failed end, an undo of a drop,
    a restore, more sweeps than it keeps, an item flagged twice, and the clock moving on past a
    week: read between every two appends, the digest gives the note what the whole journal gives
    (`log`'s pairing of ends included)."""
    t0 = dt.datetime(2026, 11, 20, 9, 0, tzinfo=dt.UTC)
    item = vault / "_inbox/agent-a/flagged.md"
    item.parent.mkdir(parents=True, exist_ok=True)
    for name in ("x", "y", "z"):
        dest = vault / f"_inbox/.dropped/agent-a/{name}.md"
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(f"---\ntype: fact\n---\n{name}\n")

    def drop(run: str, name: str) -> dict[str, Any]:
        return {"event": "begin", "run": run, "seq": 0, "verdict": "drop", "inbox": f"_inbox/agent-a/{name}.md",
                "rule": "r", "dest": f"_inbox/.dropped/agent-a/{name}.md"}  # fmt: skip

    def end(run: str, ok: bool, **more: Any) -> dict[str, Any]:
        return {"event": "end", "run": run, "seq": 0, "ok": ok, **more}

    item.write_text("first")
    first = content_hash(b"first")
    steps: list[tuple[float, dict[str, Any]]] = [
        (0, drop("d1", "x")), (0, end("d1", True)),
        (0.5, {"event": "begin", "run": "f1", "seq": 0, "verdict": "needs_review", "inbox": "_inbox/agent-a/flagged.md",
               "reason_code": "undecided", "after_hash": first, "steps": [{"op": "hold"}]}),
        (1, drop("d2", "y")), (1, end("d2", False, error="disk full")), (1.5, end("d2", True, recovered=True)),
        (2, drop("d3", "z")), (2, end("d3", True)), (2.5, end("d3", False, error="later")),
        (3, {"event": "begin", "run": "u1", "seq": 0, "verdict": "undo", "undoes": ["d1", 0]}), (3, end("u1", True)),
        (4, {"event": "begin", "run": "s1", "seq": "0", "verdict": "restore", "dest": "_inbox/.dropped/agent-a/y.md"}),
        (4, end("s1", True)),
        *[(4 + n / 10, {"event": "run", "run": f"r{n}", "processed": n + 1}) for n in range(12)],
        (5, {"event": "begin", "run": "f2", "seq": 0, "verdict": "needs_review", "inbox": "_inbox/agent-a/flagged.md",
             "reason_code": "contradiction", "target": "facts/a.md", "after_hash": content_hash(b"second")}),
        (8.5, drop("d4", "x")), (8.5, end("d4", True)), (10.5, {"event": "run", "run": "r12", "errors": 1}),
    ]  # fmt: skip
    for n, (days, record) in enumerate(steps):
        now = t0 + dt.timedelta(days=days)
        if n == len(steps) // 2:
            item.write_text("second")  # the agent wrote it again: the second flag is its
        append_raw_to(vault, json.dumps({"time": now.strftime("%Y-%m-%dT%H:%M:%SZ"), **record}) + "\n")
        at = build_context(vault, None, Seams(clock=FixedClock(now)))
        as_whole(at, digest_now(at), fewer=False)
    kept = {r["run"] for r in digest_now(at).records()}
    assert {"d1", "d2", "d3", "f1"}.isdisjoint(kept) and {"u1", "s1", "d4", "f2"} <= kept  # 8 days; the latest flag


def append_raw_to(vault: Path, line: str) -> None:
    ctx = build_context(vault, None, Seams())
    ctx.state.mkdir(parents=True, exist_ok=True)
    append_raw(ctx, line.encode())


def test_drops_restores_and_undos_are_kept_for_the_week_the_note_shows(ctx: Context) -> None:
    now = ctx.clock.now()

    def at(days: float, run: str, **fields: Any) -> bytes:
        time = (now - dt.timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")
        return (json.dumps({"time": time, "run": run, "seq": 0, **fields}) + "\n").encode()

    append_raw(ctx, at(9, "old", event="begin", verdict="drop", inbox="_inbox/a/x.md"))
    append_raw(ctx, at(9, "old", event="end", ok=True, dest="_inbox/.dropped/a/x.md"))
    append_raw(ctx, at(3, "new", event="begin", verdict="drop", inbox="_inbox/a/y.md"))
    append_raw(ctx, at(3, "new", event="end", ok=True, dest="_inbox/.dropped/a/y.md"))
    append_raw(ctx, at(2, "mid", event="begin", verdict="promote", inbox="_inbox/a/z.md"))
    kept = [(r["run"], r["event"]) for r in digest_now(ctx).records()]
    assert kept == [("new", "begin"), ("new", "end")]  # the old drop forgotten, a promote never kept
