"""The one context a command runs in, built once by the CLI and passed down (frozen).

Everything the library would otherwise read from the world — the clock, the environment, the
host and user names, the file operations, how to make a judge and a querier — is here, so no
module reads it deep down and a test swaps it by building a context (`Seams`) instead of
patching a module global.
"""

from __future__ import annotations

import getpass
import os
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from memory_curator.core.candidate import Candidate
from memory_curator.core.clock import Clock, SystemClock
from memory_curator.core.decide import JudgeVerdict
from memory_curator.core.errors import CuratorError
from memory_curator.core.facts import Querier
from memory_curator.core.rules import JudgeSettings, Rules
from memory_curator.index.store import Progress
from memory_curator.store.rules_file import load_for_vault
from memory_curator.store.state import state_dir
from memory_curator.store.writer import FILES, Files

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

    return Overlay(
        IndexQuerier(
            ctx.root, rules, ctx.state, clock=ctx.clock, files=ctx.files, progress=ctx.seams.progress, env=ctx.env
        )
    )


def fixed_judge(judge: Judge) -> JudgeFactory:
    """A factory that always gives `judge` (a fake with queued answers, in tests)."""
    return lambda ctx, settings: judge


@dataclass(frozen=True)
class Machine:
    """What a command may know of the machine it runs on, read once by the CLI
    (`cli.machine.here`) and passed down in the context: nothing below the CLI reads the
    environment, the home folder, the uid, the platform, the host or the login for itself
    (tests/test_layers.py holds the code to that), so a test states the machine it means."""

    env: Mapping[str, str]
    home: Path
    uid: int
    system: str  # platform.system(): "Darwin", "Linux"…
    host: str
    login: str
    pid: int
    state_home: Path  # the user's state folder for this app (platformdirs): vaults' state lives below it
    data_home: Path  # the user's data folder for this app (platformdirs): semantic models live below it


@dataclass(frozen=True)
class Seams:
    """What the CLI takes from the world; a test passes its own (`CliRunner().invoke(cli, args,
    obj=Seams(...))`): a fixed clock, failing file operations, a fake judge with queued answers."""

    clock: Clock = SystemClock()
    files: Files = FILES
    env: Mapping[str, str] | None = None  # None: the process's environment
    host: str | None = None
    user: str | None = None
    judge: JudgeFactory = real_judge
    querier: QuerierFactory = index_querier
    progress: Progress | None = None  # the index's bar for a long build (the CLI: on a terminal only)
    machine: Machine | None = None


@dataclass(frozen=True)
class Context:
    root: Path
    state: Path
    clock: Clock
    files: Files
    env: Mapping[str, str]
    host: str
    user: str
    judge: JudgeFactory
    querier: QuerierFactory
    seams: Seams = field(default_factory=Seams, repr=False)
    machine: Machine | None = None

    @classmethod
    def build(
        cls, root: Path, explicit_state: str | None = None, seams: Seams | Clock | None = None, user: str | None = None
    ) -> Context:
        """The context for the vault at `root`: --state-dir, else MEMORY_CURATOR_STATE, else the
        platform's state folder; --by, else MEMORY_CURATOR_USER, else the login name."""
        seams = seams if isinstance(seams, Seams) else Seams(clock=seams) if seams is not None else Seams()
        env = dict(os.environ) if seams.env is None else dict(seams.env)
        state = state_dir(root, explicit_state, env)
        host = seams.host or socket.gethostname()
        who = person(user or seams.user or env.get("MEMORY_CURATOR_USER"))
        return cls(
            root, state, seams.clock, seams.files, env, host, who, seams.judge, seams.querier, seams, seams.machine
        )

    @cached_property
    def rules(self) -> Rules:
        """The vault's rules, read on first use (a command that needs none never fails on them)."""
        return load_for_vault(self.root)

    def as_user(self, user: str | None) -> Context:
        return self if not user else Context.build(self.root, str(self.state), self.seams, user)


def person(explicit: str | None = None) -> str:
    """Who is acting: the name given, else the login name, on one line."""
    name = explicit
    if not name:
        try:
            name = getpass.getuser()
        except (KeyError, OSError):
            name = "unknown"
    return " ".join(name.split()) or "unknown"


def known_machine(machine: Machine | None) -> Machine:
    """The machine the CLI read (`Seams.machine`, `Context.machine`); a clear error when none was
    given (a context built without one, as some tests build theirs)."""
    if machine is None:
        raise CuratorError("the machine is unknown here (no Machine in the seams: cli.machine.here reads it)")
    return machine
