"""Fake `launchctl`, `systemctl` and `crontab` executables for the schedule and doctor tests.

Each is a small shell script on PATH that records its arguments; `crontab` keeps the table
in a file so `crontab -l` / `crontab -` round-trip like the real one. Setting
FAKE_FAIL=<program> makes that program fail the way a missing user bus does.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

RECORD = """#!/bin/sh
echo "{name} $*" >> "{calls}"
if [ "$FAKE_FAIL" = "{name}" ]; then echo "Failed to connect to bus: No medium found" >&2; exit 1; fi
"""

CRONTAB = """#!/bin/sh
echo "crontab $*" >> "{calls}"
case "$1" in
  -l) if [ -f "{table}" ]; then cat "{table}"; else echo "no crontab for $(id -un)" >&2; exit 1; fi ;;
  -) cat > "{table}" ;;
  *) echo "usage" >&2; exit 2 ;;
esac
"""


@dataclass
class Fakes:
    bin: Path
    calls_file: Path
    table: Path

    def calls(self) -> list[str]:
        return self.calls_file.read_text().splitlines() if self.calls_file.exists() else []

    def reset(self) -> None:
        self.calls_file.unlink(missing_ok=True)


def install_fakes(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Fakes:
    """Put the fakes first on PATH (the real schedulers, if any, are never reached)."""
    fakes = Fakes(folder / "bin", folder / "calls.log", folder / "crontab.txt")
    fakes.bin.mkdir(parents=True)
    for name in ("launchctl", "systemctl"):
        _script(fakes.bin / name, RECORD.format(name=name, calls=fakes.calls_file))
    _script(fakes.bin / "crontab", CRONTAB.format(calls=fakes.calls_file, table=fakes.table))
    monkeypatch.setenv("PATH", f"{fakes.bin}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.delenv("FAKE_FAIL", raising=False)
    return fakes


def _script(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(0o755)
