"""Fake `launchctl`, `systemctl` and `crontab` executables for the schedule and doctor tests.

Each is a small shell script on PATH that records its arguments and keeps what the real one
would remember in files: `crontab` its table (`crontab -l` / `crontab -` round-trip like the
real one); `systemctl` the units `enable --now` enabled and started (`is-enabled`,
`is-active`, `show -p LastTriggerUSec`); `launchctl` the jobs `bootstrap` loaded (`print`).
FAKE_FAIL=<program> makes that program fail the way a missing user bus does; FAKE_FAIL=
"<program> <words>" only the calls that start so (e.g. "systemctl --user enable").
`install_fakes(..., alone=True)` puts nothing but the fakes on PATH (the real schedulers of
this machine are never reached); `Fakes.remove` takes one away, as if it were not installed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

PRELUDE = """#!/bin/sh
PATH=/usr/bin:/bin
echo "{name} $*" >> "{calls}"
case "{name} $*" in "$FAKE_FAIL"*)
  if [ -n "$FAKE_FAIL" ]; then echo "Failed to connect to bus: No medium found" >&2; exit 1; fi ;;
esac
"""

SYSTEMCTL = """
state="{state}/systemd"; mkdir -p "$state"
shift  # --user
case "$1" in
  enable) shift; [ "$1" = "--now" ] && shift; touch "$state/$1.enabled" "$state/$1.active" ;;
  disable) shift; [ "$1" = "--now" ] && shift; rm -f "$state/$1.enabled" "$state/$1.active" ;;
  is-enabled) if [ -f "$state/$2.enabled" ]; then echo enabled; else echo disabled; exit 1; fi ;;
  is-active) if [ -f "$state/$2.active" ]; then echo active; else echo inactive; exit 3; fi ;;
  show) if [ -f "$state/last" ]; then cat "$state/last"; else echo "n/a"; fi ;;
esac
exit 0
"""

LAUNCHCTL = """
state="{state}/launchd"; mkdir -p "$state"
case "$1" in
  bootstrap) touch "$state/$(basename "$3" .plist)" ;;
  bootout) label=$(basename "$2"); if [ -f "$state/$label" ]; then rm "$state/$label";
           else echo "Boot-out failed: 3: No such process" >&2; exit 3; fi ;;
  print) label=$(basename "$2"); if [ -f "$state/$label" ]; then
           printf '%s = {{\\n\\tstate = waiting\\n\\truns = 2\\n\\tlast exit code = 0\\n}}\\n' "$2";
         else echo "Could not find service \\"$label\\" in domain for port" >&2; exit 113; fi ;;
esac
exit 0
"""

CRONTAB = """
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

    def remove(self, *names: str) -> None:
        """As if these schedulers were not installed (with `alone=True`, nothing else has them)."""
        for name in names:
            (self.bin / name).unlink()

    def loaded(self) -> list[str]:
        """What the fake systemd and launchd hold now: enabled or active units, loaded jobs."""
        state = self.bin.parent / "state"
        return sorted(p.name for p in state.glob("*/*") if p.name != "last")

    def last_trigger(self, text: str) -> None:
        """What `systemctl --user show <timer> -p LastTriggerUSec --value` prints from now on."""
        (self.bin.parent / "state/systemd").mkdir(parents=True, exist_ok=True)
        (self.bin.parent / "state/systemd/last").write_text(text + "\n")


def install_fakes(folder: Path, monkeypatch: pytest.MonkeyPatch, alone: bool = False) -> Fakes:
    """Put the fakes first on PATH (the real schedulers, if any, are never reached)."""
    fakes = Fakes(folder / "bin", folder / "calls.log", folder / "crontab.txt")
    fakes.bin.mkdir(parents=True)
    state = folder / "state"
    scripts = {"systemctl": SYSTEMCTL, "launchctl": LAUNCHCTL, "crontab": CRONTAB}
    for name, body in scripts.items():
        prelude = PRELUDE.format(name=name, calls=fakes.calls_file)
        _script(fakes.bin / name, prelude + body.format(state=state, table=fakes.table))
    path = str(fakes.bin) if alone else f"{fakes.bin}{os.pathsep}{os.environ.get('PATH', '')}"
    monkeypatch.setenv("PATH", path)
    monkeypatch.delenv("FAKE_FAIL", raising=False)
    return fakes


def _script(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(0o755)
