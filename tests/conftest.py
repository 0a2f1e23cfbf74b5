"""Every test runs against a temp vault and a temp state directory; none touches the real
home folder, the network, or needs an API key."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from memory_curator.cli import cli

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "vault_fixtures"
REAL_VAULT = REPO.parent / "shared" / "real-vaults" / "obsidian-help-en"
OLD = 1_600_000_000  # an mtime well outside any settle window


@pytest.fixture(autouse=True)
def isolated_state(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    for name in ("MEMORY_CURATOR_VAULT", "MEMORY_CURATOR_STATE", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    return home


def age(path: Path) -> None:
    os.utime(path, (OLD, OLD))


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """A copy of vault_fixtures/ with settled inbox files."""
    root = tmp_path / "vault"
    shutil.copytree(FIXTURES, root)
    for path in (root / "_inbox").rglob("*.md"):
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
    def write(root: Path, name: str, text: str | bytes, agent: str = "agent-a", settled: bool = True) -> Path:
        folder = root / "_inbox" / agent if agent != "inbox" else root / "_inbox"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / name
        path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
        if settled:
            age(path)
        return path

    return write


@pytest.fixture
def invoke() -> Callable[..., Result]:
    def run(*args: str, input: str | None = None) -> Result:
        return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)

    return run


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


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}
