"""Every test runs against a temp vault and a temp state directory; none touches the real
home folder, the network, or needs an API key. None depends on the date it runs: a test that
needs a calendar date injects a `FixedClock`, and one that needs a fresh file sets its mtime
from the clock it sweeps with. Data from ../shared/ is optional (`require_shared`)."""

from __future__ import annotations

import datetime as dt
import fcntl
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result
from hypothesis import settings
from hypothesis.configuration import set_hypothesis_home_dir
from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

from memory_curator.cli.app import cli
from memory_curator.cli.machine import here
from memory_curator.commands.context import Seams
from memory_curator.core.clock import Clock, FixedClock, SystemClock
from memory_curator.store.state import state_dir

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "vault_fixtures"
SHARED = REPO.parent / "shared"  # beside the repo in the workspace, absent from a plain clone
REAL_VAULT = SHARED / "real-vaults" / "obsidian-help-en"
OLD = 1_600_000_000  # an mtime well outside any settle window
NOW = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC)  # "now" for tests that need a calendar date

# No example database (.hypothesis/ in the checkout): tests write only their temp folders, even
# when one fails; the failing example is printed, with a blob to @reproduce_failure it.
# The fast suite runs each property on a quarter of its examples; CI runs every property again
# on all of them (MC_HYPOTHESIS=thorough, .ci/run), as it runs every real note where the fast
# suite reads every tenth. `examples(n)` is the count a test asks for; the default (Hypothesis's
# 100, for a property that names none) is scaled alike.
THOROUGH = os.environ.get("MC_HYPOTHESIS") == "thorough"


def examples(count: int) -> int:
    """`count` examples in the thorough run, a quarter of them (at least 20) in the fast suite."""
    return count if THOROUGH else max(20, count // 4)


settings.register_profile("no-files", database=None, print_blob=True, max_examples=examples(100))
settings.load_profile("no-files")


def require_shared(path: Path) -> Path:
    """`path` from ../shared/: without it the test is skipped (a clone runs green on its own),
    unless MC_REQUIRE_SHARED=1 (CI), where a missing file is a failure."""
    if path.exists():
        return path
    reason = f"needs {path} (../shared/ is not beside this checkout)"
    if os.environ.get("MC_REQUIRE_SHARED") == "1":
        pytest.fail(f"{reason}; MC_REQUIRE_SHARED=1", pytrace=False)
    pytest.skip(reason)


def computed_once(factory: pytest.TempPathFactory, key: str, compute: Callable[[], Any]) -> Any:
    """`compute()`'s JSON, computed once per test session and read back by every test (and every
    xdist worker) that asks for `key`: the expensive scorings of a real vault that several tests
    assert different things of. What is computed is never written: each test reads its own copy."""
    base = factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # the workers' common root
    path = shared / f"computed-{key}.json"
    with open(shared / f"computed-{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one worker computes, the others wait for its file
        if not path.is_file():
            path.write_text(json.dumps(compute()), encoding="utf-8")
        loaded = json.loads(path.read_text(encoding="utf-8"))
    return loaded


@pytest.fixture
def real_vault() -> Path:
    """The Obsidian Help vault (a real vault's notes), from ../shared/real-vaults/."""
    return require_shared(REAL_VAULT)


@pytest.fixture
def clock() -> FixedClock:
    """A clock stopped at NOW; `clock.advance(seconds)` moves it."""
    return FixedClock(NOW)


HYPOTHESIS_HOME = "MC_TEST_HYPOTHESIS_HOME"  # the suite's Hypothesis folder, handed to xdist's workers


def suite_cache(name: str) -> Path:
    """A folder of the suite's caches, the same for every run of this checkout: outside it (in
    the system's temp folder, one a checkout, named by its path's hash) and outside any run's
    temp folders, so that what a run compiled or built is read back by the next. Deleting it
    is always safe: it is made again."""
    checkout = hashlib.sha256(os.fsencode(REPO)).hexdigest()[:16]
    folder = Path(tempfile.gettempdir(), f"memory-curator-tests-{os.getuid()}", checkout, name)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    return folder


def pytest_configure(config: pytest.Config) -> None:
    """Hypothesis keeps its caches (filled from collection on) in a folder of the suite's, not in
    .hypothesis/ in the checkout: one folder for every worker and every run, so that its unicode
    tables (~1.3 s of CPU to build) are built once, not per worker nor per run. Bytecode is kept
    so too (`share_bytecode`)."""
    if not hasattr(config, "workerinput"):  # xdist's workers, started after this, inherit both
        os.environ[HYPOTHESIS_HOME] = str(suite_cache("hypothesis"))
        share_bytecode()
        temp_in_memory()
    set_hypothesis_home_dir(os.environ[HYPOTHESIS_HOME])


def share_bytecode() -> None:
    """Every Python of this run (the xdist workers, each CLI a test runs as a process) keeps its
    bytecode in one folder of the suite's and reads the others' back, and the next run reads it
    too: compiled once, not once per process (PYTHONDONTWRITEBYTECODE made each child compile ~100
    modules, 0.15 s) nor once per run (the tests' rewritten assertions, the libraries: ~8 s), and
    never written into the checkout. Python checks each file's source time and size, as always."""
    folder = str(suite_cache("pycache"))
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = folder
    sys.dont_write_bytecode, sys.pycache_prefix = False, folder


MEMORY = Path("/dev/shm")
ROOM = 2 << 30  # a run writes ~450 MB at most (sparse files aside), and its folders go once it passes


def temp_in_memory() -> None:
    """The run's temp folders (every `tmp_path`, each test's home and the state folders under
    it) on a tmpfs when the machine has one with room: on ext4 the sweeps' fsyncs and the ~43,000
    files a run writes, then deletes, cost about half the suite's system time (docs/testing.md).
    A temp root the runner chose (PYTEST_DEBUG_TEMPROOT, pytest's own) is kept; the caches of
    `suite_cache` stay where they are. Set before the first `tmp_path`: the workers inherit it,
    and xdist hands them folders under the controller's."""
    if os.environ.get("PYTEST_DEBUG_TEMPROOT"):
        os.environ["MC_TEST_TEMPROOT_GIVEN"] = "1"
    elif is_tmpfs_with_room(MEMORY, ROOM):
        os.environ["PYTEST_DEBUG_TEMPROOT"] = str(MEMORY)


def is_tmpfs_with_room(folder: Path, room: int) -> bool:
    """Whether `folder` is a mount point of a writable tmpfs with `room` bytes free."""
    try:
        mounts = Path("/proc/mounts").read_text().splitlines()
        free = os.statvfs(folder)
    except OSError:  # no /proc (macOS), no such folder: the system's temp folder, as before
        return False
    kinds = {fields[1]: fields[2] for fields in (line.split() for line in mounts) if len(fields) > 2}
    return kinds.get(str(folder)) == "tmpfs" and os.access(folder, os.W_OK) and free.f_bavail * free.f_frsize >= room


# The tree tests read but never write (their temp folders are theirs): a run fails on any write
# there, watched from the process that runs the session (xdist's controller sees its workers' too).
SHIPPED = ("memory_curator", "rules", "vault_fixtures")
WRITES = [FileCreatedEvent, FileDeletedEvent, FileModifiedEvent, FileMovedEvent]
WRITES += [DirCreatedEvent, DirDeletedEvent, DirMovedEvent]
WATCH = pytest.StashKey[tuple[BaseObserver, "TreeWrites"]]()


class TreeWrites(FileSystemEventHandler):
    """The paths written in the shipped tree, bytecode left out: the interpreter writes it (a
    subprocess with a bare environment included), not a test, and it is no part of the tree."""

    def __init__(self) -> None:
        self.paths = set[str]()

    def on_any_event(self, event: FileSystemEvent) -> None:
        path = os.fsdecode(event.src_path)
        if "__pycache__" not in Path(path).parts:
            self.paths.add(os.path.relpath(path, REPO))


def pytest_sessionstart(session: pytest.Session) -> None:
    if hasattr(session.config, "workerinput"):  # an xdist worker: the controller watches for all
        return
    written, observer = TreeWrites(), Observer()
    for name in SHIPPED:
        observer.schedule(written, str(REPO / name), recursive=True, event_filter=WRITES)
    observer.start()
    session.config.stash[WATCH] = (observer, written)


def pytest_sessionfinish(session: pytest.Session) -> None:
    watch = session.config.stash.get(WATCH, None)
    if watch is None:
        return
    observer, written = watch
    time.sleep(0.2)  # the last test's events on their way
    observer.stop()
    observer.join()
    if written.paths:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    watch = config.stash.get(WATCH, None)
    if watch is not None and watch[1].paths:
        terminalreporter.section("tests wrote into the package tree", red=True)
        for path in sorted(watch[1].paths):
            terminalreporter.write_line(path)


@pytest.fixture(autouse=True)
def isolated_state(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("home")
    isolate(monkeypatch, home)
    return home


def isolate(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    """HOME and the XDG folders under `home`; no vault, state folder or key from the environment
    (`isolated_state` for every test; a module's shared fixture calls it in its own context)."""
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    for name in ("MEMORY_CURATOR_VAULT", "MEMORY_CURATOR_STATE", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


class FailingClock:
    """A clock that raises `error` when read: the command fails at its first look at the time
    (`status` looks first), as a bug or a Ctrl-C there would, through the seams."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def now(self) -> dt.datetime:
        raise self.error

    def timestamp(self) -> float:
        raise self.error

    def monotonic(self) -> float:
        raise self.error


@contextmanager
def signalled(ready: Callable[[], bool] = lambda: True) -> Iterator[None]:
    """SIGTERM to this process's main thread, as a service manager stops `watch`: sent once the
    running command handles it (its handler replaced the one found here) and `ready()`, never
    if the command ends first. The command stops as it would in the world, not by a patch."""
    found, done = signal.getsignal(signal.SIGTERM), threading.Event()

    def send() -> None:
        while not done.is_set():  # not done.wait(0.01): under libfaketime (CI) a timed wait can block
            if signal.getsignal(signal.SIGTERM) is not found and ready():
                signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGTERM)
                return
            time.sleep(0.01)

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    try:
        yield
    finally:
        done.set()
        sender.join()


def state_of(root: Path, explicit: str | Path | None = None) -> Path:
    """The vault's state folder on this machine, created: the one its commands use."""
    machine = here()
    return state_dir(root, explicit, machine.env, machine.state_home)


def age(path: Path) -> None:
    os.utime(path, (OLD, OLD))


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """A copy of vault_fixtures/ with every file's mtime in 2020 (`fixture_vault`)."""
    return fixture_vault(tmp_path / "vault")


def fixture_vault(root: Path) -> Path:
    """A copy of vault_fixtures/ at `root` with every file's mtime in 2020: its inbox files are
    settled, and no note looks freshly written (or written in the future) to any clock."""
    shutil.copytree(FIXTURES, root)
    for path in root.rglob("*"):
        if path.is_file():
            age(path)
    return root


@pytest.fixture
def empty_vault(tmp_path: Path) -> Path:
    """A vault made by `init` with nothing in it."""
    root = tmp_path / "empty"
    result = CliRunner().invoke(cli, ["init", str(root)])
    assert result.exit_code == 0, result.output
    return root


@pytest.fixture
def write_candidate() -> Callable[..., Path]:
    return put_candidate


def put_candidate(root: Path, name: str, text: str | bytes, agent: str = "agent-a", settled: bool = True) -> Path:
    """A candidate file in `agent`'s inbox folder (`inbox`: the inbox root), settled unless told."""
    folder = root / "_inbox" / agent if agent != "inbox" else root / "_inbox"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    if settled:
        age(path)
    return path


@pytest.fixture
def invoke() -> Callable[..., Result]:
    """The CLI in-process; `clock=` is the one clock it passes down (default: the system's),
    `seams=` all it takes from the world (a fixed clock, failing file operations, a fake judge)."""

    def run(*args: str, input: str | None = None, clock: Clock | None = None, seams: Seams | None = None) -> Result:
        return CliRunner().invoke(
            cli, list(args), input=input, obj=seams or Seams(clock=clock or SystemClock()), catch_exceptions=False
        )

    return run


def cli_commands(group: click.Group = cli, prefix: str = "") -> Iterator[tuple[str, click.Command]]:
    """Every command as typed after `memory-curator` (`index stats`), with its click command."""
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            yield from cli_commands(command, f"{prefix}{name} ")
        else:
            yield f"{prefix}{name}", command


def run_installed(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The real entry point in a subprocess (what a user, cron or an agent runs)."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "memory_curator", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=full_env,
        timeout=120,
    )


REVIEW_NOTE = "_meta/Inbox review.md"  # the curator's own file, rewritten by every sweep that has news


VAULT_ID = "_meta/curator-vault.md"  # the vault's id, written by its first sweep (`core.vault_key`)


def snapshot(root: Path, note: bool = False) -> dict[str, bytes]:
    """Every file of the vault and its bytes; the curator's own files (the review note and the
    vault's id) only when `note` (a sweep writes them beside what the test compares:
    `tests/test_review_note.py` compares the note, `tests/test_vault_identity.py` the id)."""
    files = {p.relative_to(root).as_posix(): p for p in sorted(root.rglob("*")) if p.is_file()}
    return {rel: p.read_bytes() for rel, p in files.items() if note or rel not in (REVIEW_NOTE, VAULT_ID)}


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """A semantic test that reached the model hub fails here instead of downloading."""
    import huggingface_hub

    def refuse(*args: object, **kwargs: object) -> str:
        raise AssertionError(f"a test tried to download: {args} {kwargs}")

    monkeypatch.setattr(huggingface_hub, "snapshot_download", refuse)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.fixture
def model_dir(tmp_path: Path) -> Path:
    """The tiny model (`semantic_kit`) in its own folder, as a user's model would be."""
    from semantic_kit import write_model

    return write_model(tmp_path / "models" / "tiny")
