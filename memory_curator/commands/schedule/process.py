"""Running the schedulers' own programs (launchctl, systemctl, crontab), found on PATH: a question
that changes nothing, and a step of a plan that fails in one line."""

from __future__ import annotations

import shlex
import shutil
import subprocess

from memory_curator.commands.schedule.job import Command
from memory_curator.commands.schedule.registry import flags
from memory_curator.core.errors import CuratorError


def ask_program(argv: tuple[str, ...]) -> tuple[int, str, str]:
    """A question to a scheduler: its exit code, its answer, the last line it wrote on stderr."""
    program = shutil.which(argv[0])
    if program is None:
        return 127, "", f"no {argv[0]} on PATH"
    try:
        proc = subprocess.run([program, *argv[1:]], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError) as exc:
        return 126, "", str(exc)
    lines = proc.stderr.strip().splitlines()
    return proc.returncode, proc.stdout.strip(), lines[-1].strip() if lines else ""


def run(step: Command, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    program = shutil.which(step.argv[0])
    if program is None and step.may_fail:
        return subprocess.CompletedProcess(list(step.argv), 127, "", f"{step.argv[0]}: not found")
    if program is None:
        raise CuratorError(f"{step.argv[0]}: not found on PATH; choose another scheduler ({flags()})")
    proc = subprocess.run([program, *step.argv[1:]], input=stdin, capture_output=True, text=True, timeout=60)
    if proc.returncode != 0 and not step.may_fail:
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        raise CuratorError(
            f"`{shlex.join(step.argv)}` failed ({proc.returncode}): {detail[-1] if detail else 'no output'}"
        )
    return proc
