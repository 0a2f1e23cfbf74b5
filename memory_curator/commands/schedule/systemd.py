"""systemd: a user timer and its oneshot service in ~/.config/systemd/user ($XDG_CONFIG_HOME),
told with `systemctl --user daemon-reload` and `enable --now`, asked with `is-enabled`,
`is-active` and `show -p LastTriggerUSec`. It works only where a user manager answers."""

from __future__ import annotations

import configparser
import re
from collections.abc import Mapping
from pathlib import Path

from memory_curator.commands.context import Machine
from memory_curator.commands.schedule.intervals import every_from, every_text, on_calendar
from memory_curator.commands.schedule.job import Command, Installed, Job, JobPlan, Loaded, command_words, watch_command
from memory_curator.commands.schedule.process import ask_program
from memory_curator.commands.schedule.registry import register
from memory_curator.commands.schedule.scheduler import Backend
from memory_curator.core.errors import EXIT_LOCKED, CuratorError

UNIT_PREFIX = "memory-curator-"


def unit_dir(home: Path, env: Mapping[str, str]) -> Path:
    return Path(env.get("XDG_CONFIG_HOME") or home / ".config") / "systemd" / "user"


def unit_name(job_id: str, kind: str) -> str:
    return f"{UNIT_PREFIX}{job_id}.{kind}"


def systemd_quote(arg: str) -> str:
    """One ExecStart word: `%` and `$` escaped, quoted when it holds anything unusual."""
    arg = arg.replace("%", "%%").replace("$", "$$")
    if re.fullmatch(r"[A-Za-z0-9_./:=@+,%$-]+", arg):
        return arg
    return '"' + arg.replace("\\", "\\\\").replace('"', '\\"') + '"'


def service_unit(job: Job) -> str:
    command = " ".join(systemd_quote(a) for a in job.command())
    return (
        "[Unit]\n"
        f"Description=memory-curator sweep of {job.vault}\n"
        "\n[Service]\n"
        "Type=oneshot\n"
        f"ExecStart={command}\n"
        f"# {EXIT_LOCKED}: another sweep held the lock and did the work; not a failure\n"
        f"SuccessExitStatus={EXIT_LOCKED}\n"
        "Nice=10\n"
    )


def timer_unit(job: Job) -> str:
    return (
        "[Unit]\n"
        f"Description=memory-curator sweep of {job.vault} every {every_text(job.every)}\n"
        "\n[Timer]\n"
        f"OnCalendar={on_calendar(job.every)}\n"
        "Persistent=true\n"
        f"Unit={unit_name(job.id, 'service')}\n"
        "\n[Install]\n"
        "WantedBy=timers.target\n"
    )


def linger_enabled(user: str) -> bool:
    return Path("/var/lib/systemd/linger", user).exists()


def _linger_note(user: str) -> str:
    return f"user timers run only while {user} is logged in; to sweep after logout too: loginctl enable-linger {user}"


class Systemd(Backend):
    name = "systemd"
    program = "systemctl"
    flag_help = "systemd user timer (default if reachable)."
    rank = 2

    def preference(self, system: str) -> int | None:
        return None if system == "Darwin" else 0

    def works(self, machine: Machine) -> str | None:
        """A user manager that answers: without one (SSH without a session, most containers) a
        user timer can be written but never enabled."""
        code, _, err = ask_program(("systemctl", "--user", "show-environment"))
        if code == 127:
            return err
        return None if code == 0 else f"`systemctl --user` cannot reach a user manager ({err or f'exit {code}'})"

    def install_plan(self, job: Job, machine: Machine) -> JobPlan:
        folder, timer = unit_dir(machine.home, machine.env), unit_name(job.id, "timer")
        files = (
            (folder / unit_name(job.id, "service"), service_unit(job).encode()),
            (folder / timer, timer_unit(job).encode()),
        )
        after = (
            Command(("systemctl", "--user", "daemon-reload")),
            Command(("systemctl", "--user", "enable", "--now", timer)),
        )
        undo = (
            Command(("systemctl", "--user", "disable", "--now", timer), may_fail=True),
            Command(("systemctl", "--user", "daemon-reload"), may_fail=True),
        )
        notes = () if linger_enabled(machine.login) else (_linger_note(machine.login),)
        return JobPlan(self.name, job.id, files, (), after, notes=notes, undo=undo)

    def uninstall_plan(self, job_id: str, machine: Machine) -> JobPlan:
        folder = unit_dir(machine.home, machine.env)
        files = tuple((folder / unit_name(job_id, k), b"") for k in ("timer", "service"))
        disable = Command(("systemctl", "--user", "disable", "--now", unit_name(job_id, "timer")), may_fail=True)
        reload = Command(("systemctl", "--user", "daemon-reload"), may_fail=True)  # the files go even without a bus
        return JobPlan(self.name, job_id, files, (disable,), (reload,))

    def find(self, job_id: str, machine: Machine) -> Installed | None:
        service = unit_dir(machine.home, machine.env) / unit_name(job_id, "service")
        return _from_units(service, service.with_suffix(".timer")) if service.exists() else None

    def ask(self, job: Installed, machine: Machine) -> Loaded:
        """Loaded when `enabled, active`; the last trigger is when it last ran."""
        timer = Path(job.where).with_suffix(".timer").name
        _, enabled, err_enabled = ask_program(("systemctl", "--user", "is-enabled", timer))
        _, active, err_active = ask_program(("systemctl", "--user", "is-active", timer))
        if not enabled or not active:
            error = err_enabled or err_active or "no answer"
            return Loaded(timer, None, f"cannot ask systemd ({error})", error=error)
        last = None
        if active == "active":
            _, last, _ = ask_program(("systemctl", "--user", "show", timer, "-p", "LastTriggerUSec", "--value"))
        ran = last if last and last != "n/a" else None
        return Loaded(timer, enabled == "enabled" and active == "active", f"{enabled}, {active}", ran)

    def watch_unit(self, job: Job, machine: Machine) -> tuple[Path, str, str] | None:
        return watch_service(job, machine)

    def doctor_unasked(self, said: Loaded) -> str:
        return f"cannot ask `systemctl --user` whether the timer runs ({said.error})"

    def doctor_load(self, job: Installed, said: Loaded) -> str:
        return f"systemctl --user enable --now {said.name}"

    def doctor_not_run(self, job: Installed, uid: int) -> str:
        timer = Path(job.where).with_suffix(".timer").name
        return f"systemctl --user status {timer}; without `loginctl enable-linger` timers stop at logout"


def _from_units(service: Path, timer: Path) -> Installed:
    exec_start = _ini_value(service, "Service", "ExecStart")
    calendar = _ini_value(timer, "Timer", "OnCalendar")
    args = tuple(a.replace("%%", "%").replace("$$", "$") for a in command_words(exec_start, service))
    every = every_from(calendar, 1) if calendar else None
    return Installed("systemd", str(service), args, every, service.stat().st_mtime)


def _ini_value(path: Path, section: str, key: str) -> str:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    try:
        parser.read_string(path.read_text(encoding="utf-8"), str(path))
    except (OSError, configparser.Error) as exc:
        raise CuratorError(f"{path}: unreadable unit file: {exc}") from None
    return parser.get(section, key, fallback="")


def watch_service(job: Job, machine: Machine) -> tuple[Path, str, str]:
    """A systemd user service that keeps `watch` running: where it goes, its text, how to start it."""
    name = f"{UNIT_PREFIX}watch-{job.id}.service"
    text = (
        "[Unit]\n"
        f"Description=memory-curator watch of {job.vault}\n"
        "\n[Service]\n"
        f"ExecStart={' '.join(systemd_quote(a) for a in watch_command(job))}\n"
        "Restart=on-failure\n"
        "RestartSec=30\n"
        "\n[Install]\n"
        "WantedBy=default.target"
    )
    return (
        unit_dir(machine.home, machine.env) / name,
        text,
        f"systemctl --user enable --now {name}  (from a login session)",
    )


register(Systemd())
