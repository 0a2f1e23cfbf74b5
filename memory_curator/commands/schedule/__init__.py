"""Scheduled sweeps: launchd on macOS, a systemd user timer where `systemctl --user` answers,
cron where `crontab` is installed; where none works, `watch` (a unit for it is printed).

One module per scheduler (`launchd`, `systemd`, `cron`), each registering itself in the
`registry` (a `registry.Scheduler`, most parts inherited from `scheduler.Backend`): its flag,
when it is preferred, whether it works here, what it writes and where, how that is applied
and removed, how it reads back an installed job and is asked whether that job is loaded, and
what `doctor` says of it. Nothing else here names a scheduler: `detect` asks each before one
is chosen; `plan` turns a vault into exactly what is written (a plist, two unit files, a
crontab line) and run; `show` prints that plan (`cli.render`), `apply`'s `install` and
`uninstall` hand it to its scheduler (files and commands: `files`, an install that fails
half-way rolled back: no file left, nothing registered, a replaced job put back). `query`
reads what is installed and asks the schedulers (`schedule status`, `status`, `doctor`).
Every scheduled command names the interpreter, the vault and the state directory by
absolute path, so PATH, venv activation and the scheduler's empty environment do not
matter, and every sweep of a vault shares one lock. What the package knows of the machine
(home, environment, uid, system, host, login) comes in a `Machine`: it reads none of it.
"""

from __future__ import annotations

from memory_curator.commands.schedule.apply import Applied, Did, install, uninstall
from memory_curator.commands.schedule.cron import (
    CRON_MARKER,
    cron_line,
    crontab_with,
    crontab_without,
    marker,
    read_crontab,
    write_crontab,
)
from memory_curator.commands.schedule.detect import available, choose_platform
from memory_curator.commands.schedule.intervals import (
    EVERY_HELP,
    HOURS,
    MINUTES,
    cron_schedule,
    every_from,
    every_text,
    on_calendar,
    parse_every,
)
from memory_curator.commands.schedule.job import Command, Installed, Job, JobPlan, Loaded, make_job, watch_command
from memory_curator.commands.schedule.launchd import (
    LABEL_PREFIX,
    PROTECTED,
    fda_fix,
    fda_note,
    label,
    plist,
    plist_path,
    protected_location,
)
from memory_curator.commands.schedule.plan import (
    install_plan,
    no_scheduler,
    plan_install,
    plan_uninstall,
    uninstall_plan,
    watch_unit,
)
from memory_curator.commands.schedule.query import (
    JobStatus,
    LastRun,
    ScheduleStatus,
    Summary,
    ask,
    installed,
    status,
    summary,
)
from memory_curator.commands.schedule.registry import Scheduler, get, register, schedulers, unregister
from memory_curator.commands.schedule.scheduler import Backend
from memory_curator.commands.schedule.systemd import (
    UNIT_PREFIX,
    linger_enabled,
    service_unit,
    systemd_quote,
    timer_unit,
    unit_dir,
    unit_name,
)

__all__ = [
    "CRON_MARKER",
    "EVERY_HELP",
    "HOURS",
    "LABEL_PREFIX",
    "MINUTES",
    "PROTECTED",
    "UNIT_PREFIX",
    "Applied",
    "Backend",
    "Command",
    "Did",
    "Installed",
    "Job",
    "JobPlan",
    "JobStatus",
    "LastRun",
    "Loaded",
    "ScheduleStatus",
    "Scheduler",
    "Summary",
    "ask",
    "available",
    "choose_platform",
    "cron_line",
    "cron_schedule",
    "crontab_with",
    "crontab_without",
    "every_from",
    "every_text",
    "fda_fix",
    "fda_note",
    "get",
    "install",
    "install_plan",
    "installed",
    "label",
    "linger_enabled",
    "make_job",
    "marker",
    "no_scheduler",
    "on_calendar",
    "parse_every",
    "plan_install",
    "plan_uninstall",
    "plist",
    "plist_path",
    "protected_location",
    "read_crontab",
    "register",
    "schedulers",
    "service_unit",
    "status",
    "summary",
    "systemd_quote",
    "timer_unit",
    "uninstall",
    "uninstall_plan",
    "unit_dir",
    "unit_name",
    "unregister",
    "watch_command",
    "watch_unit",
    "write_crontab",
]
