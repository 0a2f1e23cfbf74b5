"""The one context a command runs in, built once by the CLI and passed down (frozen).

Everything the library would otherwise read from the world — the clock, the machine (its
environment, host, login, pid and the user's folders), the file operations, how to make a
judge and a querier — is here, so no module reads it deep down and a test swaps it by building
a context (`Seams`) instead of patching a module global. Building one reads nothing either:
the CLI reads the machine once (`cli.machine.here`) and hands it in.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from memory_curator.core.candidate import Candidate
from memory_curator.core.clock import Clock, SystemClock
from memory_curator.core.decide import JudgeVerdict
from memory_curator.core.facts import Querier
from memory_curator.core.rules import JudgeSettings, Rules
from memory_curator.index.store import Progress
from memory_curator.store.paths import case_insensitive, find_root
from memory_curator.store.rules_file import load_for_vault
from memory_curator.store.state import state_dir
from memory_curator.store.writer import FILES, Files

if TYPE_CHECKING:
    from memory_curator.index.querier import IndexQuerier

JudgeAnswer = tuple[dict[str, JudgeVerdict], dict[str, Any] | None]
Judge = Callable[[list[Candidate], Rules, Querier], JudgeAnswer]
JudgeFactory = Callable[["Context", JudgeSettings], Judge | None]  # None: inert (disabled, no key)
QuerierFactory = Callable[["Context", Rules], Querier]


def real_judge(ctx: Context, settings: JudgeSettings) -> Judge | None:
    from memory_curator.judge import client  # its pydantic models cost ~75 ms: only sweeps pay

    return client.from_environment(settings, ctx.state, ctx.clock, ctx.env, ctx.files)


def index_querier(ctx: Context, rules: Rules) -> Querier:
    """The vault's index, refreshed on the first question (an empty inbox never refreshes it),
    under the overlay a sweep stages the notes it writes in (`core.facts.Staging`)."""
    from memory_curator.index.overlay import Overlay
    from memory_curator.index.querier import IndexQuerier

    return Overlay(IndexQuerier(ctx.root, rules, ctx.state, **_querier_seams(ctx)))


KEPT_SECONDS = 2.0  # a querier kept for a process's life refreshes its index at most this often (docs/mcp.md)


class KeptQuerier:
    """A querier factory for a long-lived process: one index querier for its life, its index
    refreshed at most once per `every` seconds by the context's clock (`mcp`: an agent's calls
    come in bursts, and each would otherwise open the index and walk the vault), or on every
    call with `every=0` (`watch`: each sweep sees what the last one wrote, by an incremental
    refresh of a connection already open). Each call gets a new overlay over it, so a sweep's
    staged notes never outlive that sweep; rules that changed (another `rules`) start a new
    querier. Thread-safe to hand out; the querier it hands out is for one caller at a time."""

    def __init__(self, every: float = KEPT_SECONDS) -> None:
        self.every = every
        self._kept: IndexQuerier | None = None
        self._for: tuple[Path, Path, Rules] | None = None
        self._at = 0.0
        self._lock = threading.Lock()

    def __call__(self, ctx: Context, rules: Rules) -> Querier:
        from memory_curator.index.overlay import Overlay

        with self._lock:
            return Overlay(self._querier(ctx, rules))

    def _querier(self, ctx: Context, rules: Rules) -> IndexQuerier:
        from memory_curator.index.querier import IndexQuerier

        now = ctx.clock.monotonic()
        key = (ctx.root, ctx.state, rules)
        if self._kept is not None and self._kept.refreshed is not None:
            self._kept.refreshed.take_walk()  # let go: a sweep took it already, if it was a sweep's
        if self._kept is None or self._for != key:
            self.close()
            querier = IndexQuerier(ctx.root, rules, ctx.state, **_querier_seams(ctx))  # refreshed when first asked
            self._kept, self._for = querier, key
        elif now - self._at >= self.every:
            self._kept.expire()  # refreshed on its next question, after a sweep's recovery
        else:
            return self._kept
        self._at = now
        return self._kept

    def expire(self) -> None:
        """Refresh on the next call, however recent the last refresh (the process itself just
        wrote notes: `sweep_now`)."""
        self._at = float("-inf")

    def close(self) -> None:
        if self._kept is not None:
            self._kept.close()
            self._kept = None


def kept(factory: QuerierFactory, every: float = KEPT_SECONDS) -> QuerierFactory:
    """`factory`, kept for a long-lived process when it is the index's (`KeptQuerier`); a
    test's own factory as it is."""
    return KeptQuerier(every) if factory is index_querier else factory


class QuerierSeams(TypedDict):
    """What a context hands the index's querier besides the vault: its clock, files, progress
    bar and environment (`IndexQuerier`'s keyword arguments)."""

    clock: Clock
    files: Files
    progress: Progress | None
    env: Mapping[str, str]


def _querier_seams(ctx: Context) -> QuerierSeams:
    return {"clock": ctx.clock, "files": ctx.files, "progress": ctx.seams.progress, "env": index_env(ctx)}


def index_env(ctx: Context) -> Mapping[str, str]:
    """The environment the index's querier is given: it only tells it where a named semantic
    model lives, so the machine's default models folder is filled in where none is set."""
    from memory_curator.index import semantic

    return {**ctx.env, semantic.MODELS_ENV: str(semantic.models_dir(ctx.env, ctx.machine.data_home))}


def fixed_judge(judge: Judge) -> JudgeFactory:
    """A factory that always gives `judge` (a fake with queued answers, in tests)."""
    return lambda ctx, settings: judge


@dataclass(frozen=True)
class Machine:
    """What a command may know of the machine it runs on, read once by the CLI
    (`cli.machine.here`) and passed down in the context: nothing below the CLI reads the
    environment, the home folder, the uid, the platform, the host or the login for itself
    (tests/test_layers.py holds the code to that), so a test states the machine it means (a
    terminal, say, where a person answers)."""

    env: Mapping[str, str]
    home: Path
    uid: int
    system: str  # platform.system(): "Darwin", "Linux"…
    host: str
    login: str
    pid: int
    state_home: Path  # the user's state folder for this app (platformdirs): vaults' state lives below it
    data_home: Path  # the user's data folder for this app (platformdirs): semantic models live below it
    terminal: bool = False  # a person at stdin and stderr (both terminals): `resolve` shows a diff and asks


@dataclass(frozen=True)
class Seams:
    """What the CLI takes from the world; a test passes its own (`CliRunner().invoke(cli, args,
    obj=Seams(...))`): a fixed clock, failing file operations, a fake judge with queued answers,
    another machine or only another environment."""

    clock: Clock = SystemClock()
    files: Files = FILES
    env: Mapping[str, str] | None = None  # None: the machine's environment
    user: str | None = None
    judge: JudgeFactory = real_judge
    querier: QuerierFactory = index_querier
    progress: Progress | None = None  # the index's bar for a long build (the CLI: on a terminal only)
    machine: Machine | None = None  # None: this machine (the CLI group reads it once)
    case_insensitive: bool | None = None  # None: the vault's file system is asked (`Context.folds`)

    def applied(self, machine: Machine) -> Machine:
        """`machine` as these seams say: a test's `env` replaces the machine's."""
        return machine if self.env is None else replace(machine, env=dict(self.env))


@dataclass(frozen=True)
class Context:
    root: Path
    state: Path
    clock: Clock
    files: Files
    machine: Machine  # with the seams' environment, if they gave one
    user: str
    judge: JudgeFactory
    querier: QuerierFactory
    seams: Seams = field(default_factory=Seams, repr=False)

    @classmethod
    def build(
        cls,
        root: Path,
        machine: Machine,
        explicit_state: str | None = None,
        seams: Seams | None = None,
        user: str | None = None,
    ) -> Context:
        """The context for the vault at `root` on `machine`: --state-dir, else MEMORY_CURATOR_STATE,
        else the machine's state folder; --by, else MEMORY_CURATOR_USER, else the login name."""
        seams = seams or Seams()
        machine = seams.applied(machine)
        state = state_dir(root, explicit_state, machine.env, machine.state_home)
        who = person(user or seams.user or machine.env.get("MEMORY_CURATOR_USER"), machine.login)
        return cls(root, state, seams.clock, seams.files, machine, who, seams.judge, seams.querier, seams)

    @property
    def env(self) -> Mapping[str, str]:
        return self.machine.env

    @property
    def host(self) -> str:
        return self.machine.host

    @cached_property
    def folds(self) -> bool:
        """Whether the vault's file system compares names case-insensitively: detected once."""
        found = self.seams.case_insensitive
        return found if found is not None else case_insensitive(self.root)

    @cached_property
    def rules(self) -> Rules:
        """The vault's rules, read on first use (a command that needs none never fails on them)."""
        return load_for_vault(self.root)


@dataclass(frozen=True)
class Invocation:
    """One command line before the vault is looked for: the options every vault command shares
    and what the CLI took from the world. The CLI's `vault_command` turns it into the command's
    Context; `doctor` and `rules FILE` look at it themselves (a missing vault is an answer there)."""

    seams: Seams
    machine: Machine  # as the seams say
    cwd: Path
    vault: str | None = None  # --vault
    state: str | None = None  # --state-dir
    user: str | None = None  # --by
    start: Path | None = None  # the path the command was given: its vault is the one around it

    def root(self) -> Path:
        """Design §1: --vault, else MEMORY_CURATOR_VAULT, else the vault around `start`, else
        around the working folder."""
        return find_root(self.start, self.vault, self.machine.env, self.cwd)

    def context(self, root: Path | None = None) -> Context:
        return Context.build(root or self.root(), self.machine, self.state, self.seams, self.user)


def person(explicit: str | None, login: str) -> str:
    """Who is acting: the name given, else the login name, on one line."""
    return " ".join((explicit or login).split()) or "unknown"
