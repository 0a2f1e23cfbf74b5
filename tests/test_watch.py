"""Watch mode: a real watchdog observer on real files in a temp vault.

The vault's own rules file sets a short settle window (no test-only code paths); the
`Tracker` (pure) is tested on its own with made-up times and looks.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from watchdog.observers.polling import PollingObserver

from memory_curator.cli.machine import build_context
from memory_curator.commands.context import KeptQuerier
from memory_curator.commands.sweep import OtherHost
from memory_curator.commands.watch import LOOK_GAP, Look, Notice, Swept, Tracker, Watcher, inbox_rel
from memory_curator.core.clock import SystemClock
from memory_curator.store import journal as journal_mod
from memory_curator.store.state import lock_is_free, sweep_lock

from conftest import state_of

pytestmark = pytest.mark.slow  # a real watchdog observer, real settle windows: run by .ci/run, not by default

AGENT = "_inbox/agent-a"


def set_rules(root: Path, settle: float = 0.5, ceiling: float = 3600, reconcile: float = 300) -> None:
    path = root / "_meta" / "inbox-rules.md"
    text = re.sub(r"(?m)^  reconcile_seconds: .*\n", "", path.read_text(encoding="utf-8"))
    text, n = re.subn(
        r"(?m)^  settle_seconds: .*\n  settle_ceiling_seconds: .*\n",
        f"  settle_seconds: {settle}\n  settle_ceiling_seconds: {ceiling}\n  reconcile_seconds: {reconcile}\n",
        text,
    )
    assert n == 1
    path.write_text(text, encoding="utf-8")


def fact(entity: str, value: str = "Berlin", body: str = "Seen on the company site.\n", source: bool = True) -> str:
    """A promotable fact; its own words (from the entity) keep it from looking like its siblings."""
    words = " ".join(hashlib.sha256(f"{entity}{n}".encode()).hexdigest()[:10] for n in range(8))
    src = f"source_url: https://example.dev/{entity}\n" if source else ""
    return (
        f"---\ntype: fact\nentity: {entity}\npredicate: headquarters\nvalue: {value} ({words})\n{src}"
        f"source_skill: web-research\nconfidence: 2\n---\n{body}{words}\n"
    )


def stamp_now(path: Path) -> None:
    """Give `path` the clock's now as its mtime, as a local agent's fresh write has (the kernel
    stamps the real time, which a shifted test clock does not share)."""
    now = time.time()
    os.utime(path, (now, now))


def wait_for(check: Callable[[], object], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def actions(items: list[object], rel: str | None = None) -> list[tuple[int, str, str, str]]:
    """(batch, inbox path, verdict, reason) of every action the watcher reported."""
    return [
        (b.number, x.inbox_path, x.verdict, x.reason)
        for b in list(items)
        if isinstance(b, Swept)
        for a in b.result.agents
        for x in a.actions
        if rel is None or x.inbox_path == rel
    ]


@contextmanager
def watching(root: Path, kind: type[Watcher] = Watcher, **given: Any) -> Iterator[tuple[Watcher, list[object]]]:
    """The watch loop on a thread (`given`: the Watcher's other parameters); stopped (and any
    error re-raised) at the end."""
    watcher = kind(build_context(root), use_judge=False, **given)
    items: list[object] = []
    failures: list[BaseException] = []

    def loop() -> None:
        try:
            items.extend(watcher.run())  # extend consumes lazily: items fill in as they come
        except BaseException as exc:  # surfaced in the test thread
            failures.append(exc)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    wait_for(lambda: items or failures)
    try:
        yield watcher, items
    finally:
        watcher.request_stop()
        thread.join(timeout=10)
        assert not thread.is_alive()
        if failures:
            raise failures[0]


@pytest.fixture
def fast_vault(empty_vault: Path) -> Path:
    set_rules(empty_vault)
    (empty_vault / AGENT).mkdir(parents=True)
    return empty_vault


# --- the tracker (pure) ---------------------------------------------------------------


def test_a_file_is_due_only_after_the_settle_window() -> None:
    tracker = Tracker(settle=3, ceiling=3600)
    tracker.seen("a.md", 100.0, Look(10, 1))
    assert tracker.due(102.9) == []
    tracker.seen("a.md", 102.0, Look(20, 2))  # a second write restarts the window
    assert tracker.due(104.0) == []
    assert tracker.due(105.0) == ["a.md"]


def test_two_equal_looks_make_it_ready_a_different_one_waits_again() -> None:
    tracker = Tracker(settle=3, ceiling=3600)
    tracker.seen("a.md", 100.0, Look(10, 1))
    assert tracker.judge("a.md", 103.0, Look(12, 2), mtime_age=3.0, arriving=False) == "wait"
    assert tracker.due(105.9) == [] and tracker.due(106.0) == ["a.md"]
    assert tracker.judge("a.md", 106.0, Look(12, 2), mtime_age=6.0, arriving=False) == "ready"
    assert tracker.entries == {}


def test_an_unfinished_file_waits_until_the_ceiling_then_goes_to_the_sweep() -> None:
    tracker = Tracker(settle=3, ceiling=60)
    tracker.seen("a.md", 100.0, Look(10, 1))
    assert tracker.judge("a.md", 103.0, Look(10, 1), mtime_age=3.0, arriving=True) == "wait"
    assert tracker.judge("a.md", 106.0, Look(10, 1), mtime_age=60.0, arriving=True) == "ready"


def test_a_file_still_changing_at_the_ceiling_is_overdue() -> None:
    tracker = Tracker(settle=3, ceiling=10)
    for second in range(12):  # a write every second: never quiet for 3
        tracker.seen("a.md", 100.0 + second, Look(second, second))
        assert tracker.due(100.0 + second) == ([] if second < 10 else ["a.md"])
    assert tracker.judge("a.md", 111.0, Look(11, 11), mtime_age=0.0, arriving=False) == "overdue"
    tracker.seen("a.md", 100.0, Look(10, 1))
    assert tracker.judge("a.md", 103.0, Look(11, 2), mtime_age=0.5, arriving=False) == "wait"
    assert tracker.judge("a.md", 110.0, Look(12, 3), mtime_age=0.5, arriving=False) == "overdue"


def test_a_scanned_file_counts_its_mtime_age_as_quiet_time() -> None:
    tracker = Tracker(settle=3, ceiling=3600)
    tracker.seen("old.md", 100.0, Look(10, 1), quiet_for=500.0)
    tracker.seen("new.md", 100.0, Look(10, 1), quiet_for=1.0)
    assert tracker.due(100.0 + LOOK_GAP) == ["old.md"]
    assert tracker.due(102.0) == ["new.md", "old.md"]


def test_an_mtime_in_the_future_is_not_quiet_time_equal_looks_a_window_apart_are() -> None:
    """A sync peer's fast clock (or a shifted test clock) stamps mtimes in our future."""
    tracker = Tracker(settle=3, ceiling=3600)
    tracker.seen("a.md", 100.0, Look(10, 1), quiet_for=0.0)  # a scan: max(mtime age, 0)
    assert tracker.due(102.9) == []
    assert tracker.judge("a.md", 101.0, Look(10, 1), mtime_age=-3600.0, arriving=False) == "wait"
    assert tracker.due(102.9) == [] and tracker.due(103.0) == ["a.md"]  # the rest of the window
    assert tracker.judge("a.md", 103.0, Look(10, 1), mtime_age=-3598.0, arriving=False) == "ready"


def test_a_file_with_a_future_mtime_that_keeps_changing_is_overdue_not_ready() -> None:
    tracker = Tracker(settle=3, ceiling=10)
    for second in range(11):  # a write every second, the last one just before the look
        tracker.seen("a.md", 100.0 + second, Look(second, 10**12 + second))
    assert tracker.judge("a.md", 110.0, Look(10, 10**12 + 10), mtime_age=-3600.0, arriving=False) == "overdue"


def test_a_file_gone_before_its_look_is_forgotten() -> None:
    tracker = Tracker(settle=3, ceiling=3600)
    tracker.seen("a.md", 100.0, Look(10, 1))
    assert tracker.judge("a.md", 103.0, None, mtime_age=0.0, arriving=False) == "gone"
    assert tracker.entries == {}


@pytest.mark.parametrize(
    ("rel", "wanted"),
    [
        ("_inbox/agent-a/note.md", True),
        ("_inbox/note.md", True),
        ("_inbox/agent-a/note (conflicted copy 2026-11-30).md", False),
        ("_inbox/agent-a/note (Conflicted copy).md", False),
        ("_inbox/agent-a/note.sync-conflict-20261130-101010-ABCDEF.md", False),
        ("_inbox/agent-a/note.md.tmp", False),
        ("_inbox/agent-a/.note.md", False),
        ("_inbox/agent-a/note.md.icloud", False),
        ("_inbox/agent-a/note.txt", False),
        ("_inbox/agent-a/sub/note.md", False),
        ("_inbox/.dropped/agent-a/note.md", False),
        ("_inbox/.hidden/note.md", False),
        ("facts/acme/hq.md", False),
    ],
)
def test_only_candidate_names_are_tracked(tmp_path: Path, rel: str, wanted: bool) -> None:
    assert (inbox_rel(tmp_path, str(tmp_path / rel)) == rel) is wanted


# --- the real observer ----------------------------------------------------------------


def test_two_chunks_with_an_open_frontmatter_are_swept_once_and_whole(fast_vault: Path) -> None:
    path = fast_vault / AGENT / "acme.md"
    first, second = fact("acme").split("value:")
    with watching(fast_vault) as (_, items):
        path.write_text(first, encoding="utf-8")
        stamp_now(path)
        time.sleep(1.0)  # twice the settle window: quiet, but the frontmatter is still open
        assert path.read_text(encoding="utf-8") == first
        with path.open("a", encoding="utf-8") as handle:
            handle.write("value:" + second)
        wait_for(lambda: (fast_vault / "facts/acme/headquarters.md").exists())
    note = (fast_vault / "facts/acme/headquarters.md").read_text(encoding="utf-8")
    assert "value: Berlin" in note and "Seen on the company site." in note
    assert not path.exists()
    assert [verdict for _, _, verdict, _ in actions(items)] == ["promote"]


def test_a_pause_shorter_than_the_settle_window_is_not_taken_for_the_end(fast_vault: Path) -> None:
    set_rules(fast_vault, settle=1.5)
    path = fast_vault / AGENT / "acme.md"
    with watching(fast_vault):
        path.write_text(fact("acme", body="Part one.\n"), encoding="utf-8")
        time.sleep(1.0)
        assert path.exists()
        with path.open("a", encoding="utf-8") as handle:
            handle.write("Part two.\n")
        written = time.monotonic()
        wait_for(lambda: not path.exists())
        assert time.monotonic() - written >= 1.5
    note = (fast_vault / "facts/acme/headquarters.md").read_text(encoding="utf-8")
    assert "Part one." in note and "Part two.\n" in note


def test_an_atomic_save_is_swept(fast_vault: Path) -> None:
    folder = fast_vault / AGENT
    with watching(fast_vault) as (_, items):
        for name, temp in (("acme.md", "acme.md.tmp"), ("globex.md", ".globex.md.x1y2")):
            (folder / temp).write_text(fact(name.removesuffix(".md")), encoding="utf-8")
            os.replace(folder / temp, folder / name)  # only a `moved` event names the final file
        wait_for(lambda: not any(folder.iterdir()))
    assert (fast_vault / "facts/acme/headquarters.md").exists()
    assert (fast_vault / "facts/globex/headquarters.md").exists()
    assert sorted((path, verdict) for _, path, verdict, _ in actions(items)) == [
        (f"{AGENT}/acme.md", "promote"),
        (f"{AGENT}/globex.md", "promote"),
    ]


def test_sync_debris_temp_files_and_dot_files_are_never_touched(fast_vault: Path) -> None:
    folder = fast_vault / AGENT
    debris = [
        folder / "acme (conflicted copy 2026-11-30).md",
        folder / "acme.sync-conflict-20261130-101010-ABCDEF.md",
        folder / "acme.md.tmp",
        folder / ".acme.md",
        folder / "acme.md.icloud",
        folder / "deeper" / "acme.md",
        fast_vault / "_inbox/.dropped/agent-a/acme.md",
    ]
    with watching(fast_vault) as (watcher, items):
        for path in debris:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(fact("acme", source=False), encoding="utf-8")
        before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in debris}
        (folder / "sentinel.md").write_text(fact("sentinel"), encoding="utf-8")
        wait_for(lambda: not (folder / "sentinel.md").exists())
        time.sleep(1.0)
        assert watcher.tracker.entries == {}
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in debris} == before
    assert [path for _, path, _, _ in actions(items)] == [f"{AGENT}/sentinel.md"]
    assert not (fast_vault / "facts/acme").exists()


def test_ten_files_dropped_at_once_are_swept_in_one_batch(fast_vault: Path) -> None:
    folder = fast_vault / AGENT
    with watching(fast_vault) as (_, items):
        for n in range(10):
            (folder / f"vendor-{n}.md").write_text(fact(f"vendor-{n}"), encoding="utf-8")
        wait_for(lambda: not any(folder.iterdir()))
    batches = [b for b in items if isinstance(b, Swept) and b.result.totals()["processed"]]
    assert len(batches) == 1
    assert batches[0].result.totals()["promoted"] == 10
    assert len(list((fast_vault / "facts").glob("vendor-*/headquarters.md"))) == 10


def test_the_watchers_own_rewrite_does_not_loop(fast_vault: Path) -> None:
    path = fast_vault / AGENT / "unsourced.md"
    with watching(fast_vault) as (watcher, items):
        path.write_text(fact("acme", source=False).replace("confidence: 2", "confidence: 3"), encoding="utf-8")
        wait_for(lambda: "needs-review" in path.read_text(encoding="utf-8"))
        flagged = path.read_bytes()
        time.sleep(2.0)  # four settle windows: room for a loop to show
        sweeps = watcher.sweeps
        time.sleep(1.0)
        assert watcher.sweeps == sweeps <= 2  # the flagging sweep, at most one no-op for its own write
        assert watcher.tracker.entries == {}
    assert path.read_bytes() == flagged
    assert flagged.decode("utf-8").count("curator uncertainty") == 1
    assert [verdict for _, _, verdict, _ in actions(items)] == ["needs_review"]


def test_a_file_that_never_settles_gets_needs_review_at_the_ceiling(fast_vault: Path) -> None:
    set_rules(fast_vault, settle=0.3, ceiling=1.2)
    path = fast_vault / AGENT / "chatty.md"
    path.write_text(fact("chatty", source=False), encoding="utf-8")
    stamp_now(path)
    stop = threading.Event()

    def keep_writing() -> None:
        for n in itertools.count():
            time.sleep(0.15)  # not stop.wait(0.15): a timed wait hangs under libfaketime
            if stop.is_set():
                return
            with path.open("a", encoding="utf-8") as handle:
                handle.write(f"line {n}\n")
            stamp_now(path)

    writer_thread = threading.Thread(target=keep_writing, daemon=True)
    with watching(fast_vault) as (_, items):
        writer_thread.start()
        try:
            wait_for(lambda: any("settle ceiling" in reason for *_, reason in actions(items)), 8)
        finally:
            stop.set()
            writer_thread.join()
    text = path.read_text(encoding="utf-8")
    assert "never settled: still changing after the settle ceiling (1.2s)" in text
    assert "line 0\n" in text  # nothing the agent wrote was lost


def test_the_backlog_is_swept_on_start(fast_vault: Path, write_candidate: Callable[..., Path]) -> None:
    for n in range(3):
        write_candidate(fast_vault, f"old-{n}.md", fact(f"old-{n}"))
    with watching(fast_vault) as (_, items):
        wait_for(lambda: not any((fast_vault / AGENT).iterdir()))
    batches = [b for b in items if isinstance(b, Swept)]
    assert batches[0].number == 1 and batches[0].result.totals()["promoted"] == 3


def deaf() -> PollingObserver:
    """An observer that reports nothing within a test (it polls hourly): every event is lost."""
    return PollingObserver(timeout=3600)


class Told(Watcher):
    """A watcher that says when its first scan (the backlog) is done."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.scanned = threading.Event()

    def scan(self, *args: Any, **kwargs: Any) -> None:
        super().scan(*args, **kwargs)
        self.scanned.set()


def test_the_reconcile_scan_sweeps_what_events_missed(fast_vault: Path) -> None:
    set_rules(fast_vault, settle=0.3, reconcile=2.5)
    path = fast_vault / AGENT / "missed.md"
    with watching(fast_vault, Told, observer=deaf) as (watcher, _):
        # Written after the backlog scan (the loop announces itself before that scan, and a file
        # written in between is the backlog's), and well before the reconcile: with 1 s, CI once
        # found it swept at 0.6 s, the test thread late by the 0.4 s of margin the test had.
        assert isinstance(watcher, Told) and watcher.scanned.wait(10)
        path.write_text(fact("missed"), encoding="utf-8")
        time.sleep(0.6)
        assert path.exists()  # no event: only the reconcile scan can find it
        wait_for(lambda: not path.exists(), 8)
    assert (fast_vault / "facts/missed/headquarters.md").exists()


def test_a_batch_waits_for_a_scheduled_sweep_holding_the_lock(fast_vault: Path) -> None:
    path = fast_vault / AGENT / "acme.md"
    with watching(fast_vault) as (watcher, _):
        with sweep_lock(watcher.state, SystemClock(), os.getpid(), socket.gethostname()):
            path.write_text(fact("acme"), encoding="utf-8")
            time.sleep(1.5)
            assert path.exists()
        wait_for(lambda: not path.exists())


def test_a_stop_while_waiting_for_the_lock_ends_promptly_and_touches_nothing(fast_vault: Path) -> None:
    path = fast_vault / AGENT / "acme.md"
    state = state_of(fast_vault)
    with sweep_lock(state, SystemClock(), os.getpid(), socket.gethostname()):
        with watching(fast_vault) as (watcher, _):
            path.write_text(fact("acme"), encoding="utf-8")
            time.sleep(1.2)
            stopped = time.monotonic()
        assert time.monotonic() - stopped < 1.0
    assert path.read_text(encoding="utf-8") == fact("acme")
    assert watcher.sweeps == 0


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_finishes_the_current_candidate_releases_the_lock_and_exits_0(
    fast_vault: Path, tmp_path: Path, signum: int
) -> None:
    state = tmp_path / "state"
    log = tmp_path / "watch.log"
    folder = fast_vault / AGENT
    cmd = [sys.executable, "-m", "memory_curator", "watch", "--vault", str(fast_vault), "--state-dir", str(state)]
    with log.open("w") as err:
        proc = subprocess.Popen([*cmd, "--json"], stdout=subprocess.PIPE, stderr=err, text=True)
        try:
            wait_for(lambda: "watching" in log.read_text())
            names = [f"vendor-{n:02}" for n in range(40)]
            for name in names:
                (folder / f"{name}.md").write_text(fact(name), encoding="utf-8")
            wait_for(lambda: len(list(folder.iterdir())) < 40)  # the sweep has started
            proc.send_signal(signum)
            out, _ = proc.communicate(timeout=20)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 0, log.read_text()
    assert log.read_text().rstrip().endswith("stopped")
    assert lock_is_free(state)
    assert journal_mod.unfinished(journal_mod.Journal(state / "journal.jsonl")) == []
    assert not [p for p in fast_vault.rglob("*.tmp")]
    for name in names:  # each candidate is in exactly one place: done or untouched
        done = (fast_vault / f"facts/{name}/headquarters.md").exists()
        waiting = (folder / f"{name}.md").exists()
        assert done != waiting, name
        if waiting:
            assert (folder / f"{name}.md").read_text(encoding="utf-8") == fact(name)
    for line in out.splitlines():
        assert json.loads(line)["data"]["batch"] >= 1
    time.sleep(0.6)  # past the settle window for `run`
    after = subprocess.run(
        [sys.executable, "-m", "memory_curator", "run", "--vault", str(fast_vault), "--state-dir", str(state)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert after.returncode == 0, after.stderr
    assert len(list((fast_vault / "facts").glob("vendor-*/headquarters.md"))) == 40


def test_a_broken_rules_file_is_logged_and_the_watch_goes_on(fast_vault: Path) -> None:
    set_rules(fast_vault, settle=0.3, reconcile=1.0)
    rules = fast_vault / "_meta" / "inbox-rules.md"
    good = rules.read_text(encoding="utf-8")
    path = fast_vault / AGENT / "acme.md"
    with watching(fast_vault) as (_, items):
        rules.write_text(good.replace("settings:", "settings: [", 1), encoding="utf-8")
        path.write_text(fact("acme"), encoding="utf-8")
        wait_for(lambda: any(isinstance(i, Notice) and "sweep failed" in i.text for i in list(items)))
        assert "inbox-rules.md:" in next(i.text for i in items if isinstance(i, Notice) and "failed" in i.text)
        assert path.read_text(encoding="utf-8") == fact("acme")
        rules.write_text(good, encoding="utf-8")
        wait_for(lambda: not path.exists(), 5)  # the next reconcile scan retries it
    assert (fast_vault / "facts/acme/headquarters.md").exists()


def test_on_a_machine_that_is_not_the_curator_host_watch_refuses_at_start(fast_vault: Path) -> None:
    rules = fast_vault / "_meta" / "inbox-rules.md"
    text = rules.read_text(encoding="utf-8").replace("settings:\n", "settings:\n  curator_host: not-this-machine\n", 1)
    rules.write_text(text, encoding="utf-8")
    with pytest.raises(OtherHost, match="not the curator host"):
        Watcher(build_context(fast_vault))


def test_one_index_querier_serves_every_sweep_each_seeing_what_the_last_wrote(fast_vault: Path) -> None:
    """The watcher keeps one index querier (`KeptQuerier`), refreshed before each sweep: the
    second candidate patches the note the first sweep promoted, through the same querier."""
    folder = fast_vault / AGENT
    kept: list[object] = []
    with watching(fast_vault) as (watcher, items):
        assert isinstance(watcher.ctx.querier, KeptQuerier)
        for number, source in enumerate(("https://example.dev/acme", "https://example.dev/acme-2")):
            text = fact("acme").replace("https://example.dev/acme\n", f"{source}\n")
            (folder / f"acme-{number}.md").write_text(text, encoding="utf-8")
            wait_for(lambda: not any(folder.iterdir()))
            kept.append(watcher.ctx.querier._kept)
    assert [verdict for _, _, verdict, _ in actions(items)] == ["promote", "patch"]
    assert kept[0] is not None and kept[0] is kept[1]
    assert "https://example.dev/acme-2" in (fast_vault / "facts/acme/headquarters.md").read_text(encoding="utf-8")
