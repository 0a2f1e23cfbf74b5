"""cron: one line in the user's crontab, edited through `crontab -l` / `crontab -` and found by
its marker (`# memory-curator:<vault id>`); every other line is kept byte for byte. A line in
the table is loaded: cron has nothing else to ask."""

from __future__ import annotations

import shlex
import shutil

from memory_curator.commands.context import Machine
from memory_curator.commands.schedule.files import Event, install_files
from memory_curator.commands.schedule.intervals import cron_schedule, every_from
from memory_curator.commands.schedule.job import Applied, Command, Installed, Job, JobPlan, Loaded, command_words
from memory_curator.commands.schedule.process import run
from memory_curator.commands.schedule.registry import flags, register
from memory_curator.commands.schedule.scheduler import Backend
from memory_curator.core.errors import CuratorError

CRON_MARKER = "# memory-curator:"


def marker(job_id: str) -> str:
    return CRON_MARKER + job_id


def cron_line(job: Job) -> str:
    """Cron turns an unescaped % into a newline, so every % is escaped."""
    command = " ".join(shlex.quote(a) for a in job.command())
    line = f"{cron_schedule(job.every)} {command} >>{shlex.quote(str(job.log))} 2>&1 {marker(job.id)}"
    return line.replace("%", "\\%")


def crontab_with(table: str, line: str, job_id: str) -> str:
    """The table with this vault's line replaced (or added); every other line kept as it was."""
    kept = crontab_without(table, job_id)
    return kept + ("" if not kept or kept.endswith("\n") else "\n") + line + "\n"


def crontab_without(table: str, job_id: str) -> str:
    tag = marker(job_id)
    return "".join(ln for ln in table.splitlines(keepends=True) if not ln.rstrip().endswith(tag))


def read_crontab() -> str | None:
    """The user's crontab ('' when there is none yet); None when cron is not installed."""
    if shutil.which("crontab") is None:
        return None
    proc = run(Command(("crontab", "-l"), may_fail=True))
    if proc.returncode == 0:
        return proc.stdout
    if "no crontab" in proc.stderr.lower():
        return ""
    raise CuratorError(f"`crontab -l` failed ({proc.returncode}): {proc.stderr.strip() or 'no output'}")


def write_crontab(table: str) -> None:
    run(Command(("crontab", "-")), stdin=table)


class Cron(Backend):
    name = "cron"
    program = "crontab"
    flag_help = "cron (default elsewhere, if installed)."
    rank = 3

    def preference(self, system: str) -> int | None:
        return 1  # after launchd on macOS, after systemd elsewhere

    def works(self, machine: Machine) -> str | None:
        return None if shutil.which("crontab") else "no crontab on PATH"

    def install_plan(self, job: Job, machine: Machine) -> JobPlan:
        line = cron_line(job)
        shown = (f"# crontab line (replaces the line ending in '{marker(job.id)}'):", line)
        return JobPlan(self.name, job.id, entry=line, shown=shown)

    def install(self, plan: JobPlan) -> Applied:
        """The state folder made, then this vault's line put in the table (every other line kept)."""
        table, line = read_crontab(), plan.entry or ""
        if table is None:
            raise CuratorError(f"crontab: not found on PATH; choose another scheduler ({flags(but=self.name)})")

        def add() -> Event:
            write_crontab(crontab_with(table, line, plan.job_id))
            return ("said", f"crontab: {line}")

        return install_files(plan, add, kept="the crontab is unchanged")

    def uninstall(self, plan: JobPlan) -> Applied:
        table = read_crontab()
        if not table or crontab_without(table, plan.job_id) == table:
            return Applied(plan.platform)
        write_crontab(crontab_without(table, plan.job_id))
        return Applied(plan.platform, (("said", f"crontab: removed the line ending in '{marker(plan.job_id)}'"),))

    def uninstall_plan(self, job_id: str, machine: Machine) -> JobPlan:
        return JobPlan(self.name, job_id)

    def find(self, job_id: str, machine: Machine) -> Installed | None:
        table = read_crontab()
        line = next((ln for ln in (table or "").splitlines() if ln.rstrip().endswith(marker(job_id))), None)
        return _from_cron(line) if line else None

    def ask(self, job: Installed, machine: Machine) -> Loaded:
        return Loaded("crontab", True, "in the crontab")  # it was found in `crontab -l`

    def doctor_state(self, said: Loaded) -> str:
        return ""  # a line in the table is all cron says

    def doctor_not_run(self, job: Installed, uid: int) -> str:
        return "check that the cron daemon runs (e.g. systemctl status cron) and look at its log"


def _from_cron(line: str) -> Installed:
    fields = line.split(None, 5)
    words = command_words(fields[5].replace("\\%", "%"), "crontab") if len(fields) == 6 else []
    command = tuple(w for w in words if not w.startswith(">>") and w != "2>&1")
    return Installed("cron", "crontab", command, every_from(" ".join(fields[:5]), 0))


register(Cron())
