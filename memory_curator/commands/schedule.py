"""Scheduled sweeps: launchd on macOS, a systemd user timer where `systemctl --user` answers,
cron where `crontab` is installed; where none works, `watch` (a unit for it is printed).

`available` asks each scheduler whether it works here before one is chosen. Pure builders turn
a `Job` into exactly what is written (a plist, two unit files, a crontab line) and run; `show`
prints that plan (`cli.render`), `install`/`uninstall` apply it and return what they did
(`Applied`); an install that fails half-way is rolled back (no file left, nothing registered,
a replaced job put back). `ask` asks the scheduler itself whether a job is loaded (`schedule
status`, `status`, `doctor`). Every scheduled command names the interpreter, the vault
and the state directory by absolute path, so PATH, venv activation and the scheduler's empty
environment do not matter, and every sweep of a vault shares one lock.
"""

from __future__ import annotations

import configparser
import contextlib
import getpass
import os
import platform
import plistlib
import re
import shlex
import shutil
import socket
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal
from xml.parsers.expat import ExpatError

import platformdirs

from memory_curator.core.errors import EXIT_LOCKED, CuratorError
from memory_curator.core.names import INBOX
from memory_curator.core.notes import content_hash
from memory_curator.core.text import duration_seconds, iso
from memory_curator.store import runlog
from memory_curator.store.state import state_folder, vault_id
from memory_curator.store.writer import FILES

LABEL_PREFIX = "org.memory-curator.sweep."
UNIT_PREFIX = "memory-curator-"
CRON_MARKER = "# memory-curator:"
MINUTES = (1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30)
HOURS = (1, 2, 3, 4, 6, 8, 12, 24)
EVERY_HELP = "minutes that divide an hour (1m 2m 3m 4m 5m 6m 10m 12m 15m 20m 30m), hours that divide a day, or 1d"


# --- intervals ---------------------------------------------------------------------------------


def parse_every(text: str) -> int:
    """'15m', '2h', '1d' → seconds. Only intervals that cron and OnCalendar express exactly."""
    seconds = duration_seconds(text, default_unit="m")
    if seconds is None or seconds not in _calendars():
        raise CuratorError(f"--every {text}: use {EVERY_HELP}")
    return seconds


def every_text(seconds: int) -> str:
    if seconds % 86400 == 0:
        return f"{seconds // 86400}d"
    return f"{seconds // 3600}h" if seconds % 3600 == 0 else f"{seconds // 60}m"


def _calendars() -> dict[int, tuple[str, str]]:
    """Each allowed interval → (cron's five fields, systemd's OnCalendar)."""
    out = {}
    for m in MINUTES:
        out[m * 60] = ("* * * * *" if m == 1 else f"*/{m} * * * *", f"*-*-* *:{'*' if m == 1 else f'00/{m}'}:00")
    for h in HOURS:
        if h == 24:
            out[86400] = ("0 0 * * *", "*-*-* 00:00:00")
        else:
            out[h * 3600] = ("0 * * * *" if h == 1 else f"0 */{h} * * *", f"*-*-* {'*' if h == 1 else f'00/{h}'}:00:00")
    return out


def cron_schedule(seconds: int) -> str:
    return _calendars()[seconds][0]


def on_calendar(seconds: int) -> str:
    return _calendars()[seconds][1]


def every_from(text: str, kind: int) -> int | None:
    """The interval one of our own cron schedules (kind 0) or OnCalendar values (kind 1) means."""
    return next((s for s, forms in _calendars().items() if forms[kind] == text.strip()), None)


# --- where each platform keeps things -------------------------------------------------------------


def choose_platform(forced: str | None, system: str, usable: Mapping[str, str | None]) -> str | None:
    """A flag forces one; else launchd on macOS, a reachable systemd user manager, then cron:
    the first that works here (`usable`: each scheduler → why it does not work, None when it
    does). None when none works."""
    if forced:
        return forced
    order = ("launchd", "cron") if system == "Darwin" else ("systemd", "cron")
    return next((name for name in order if name in usable and usable[name] is None), None)


def label(job_id: str) -> str:
    return LABEL_PREFIX + job_id


def plist_path(home: Path, job_id: str) -> Path:
    return home / "Library" / "LaunchAgents" / f"{label(job_id)}.plist"


def unit_dir(home: Path, env: dict[str, str]) -> Path:
    return Path(env.get("XDG_CONFIG_HOME") or home / ".config") / "systemd" / "user"


def unit_name(job_id: str, kind: str) -> str:
    return f"{UNIT_PREFIX}{job_id}.{kind}"


def marker(job_id: str) -> str:
    return CRON_MARKER + job_id


# --- the job and what each platform makes of it ----------------------------------------------------


@dataclass(frozen=True)
class Job:
    vault: Path
    state: Path
    python: str
    every: int
    watch: tuple[Path, ...] = ()  # launchd WatchPaths (--on-change)

    @property
    def id(self) -> str:
        return vault_id(self.vault)

    @property
    def log(self) -> Path:
        return self.state / runlog.LOG_NAME

    def command(self) -> list[str]:
        return [
            self.python,
            "-m",
            "memory_curator",
            "run",
            "--vault",
            str(self.vault),
            "--state-dir",
            str(self.state),
            "--json",
            "--log-file",
            str(self.log),
        ]


def make_job(root: Path, state: Path, every: int, on_change: bool, python: str = sys.executable) -> Job:
    """The inbox and its agent folders are watched: launchd sees changes one level deep only."""
    watch: tuple[Path, ...] = ()
    if on_change:
        inbox = root / INBOX
        agents = (
            sorted(p for p in inbox.iterdir() if p.is_dir() and not p.name.startswith(".")) if inbox.is_dir() else []
        )
        watch = (inbox, *agents)
    return Job(root, state, python, every, watch)


def plist(job: Job) -> dict[str, object]:
    data: dict[str, object] = {
        "Label": label(job.id),
        "ProgramArguments": job.command(),
        "StartInterval": job.every,
        "RunAtLoad": True,
        "ProcessType": "Background",
        "StandardOutPath": str(job.log),
        "StandardErrorPath": str(job.log),
    }
    if job.watch:
        data["WatchPaths"] = [str(p) for p in job.watch]
    return data


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


# --- plans: what install and uninstall do, as data ---------------------------------------------------


@dataclass(frozen=True)
class Command:
    argv: tuple[str, ...]
    may_fail: bool = False  # e.g. `launchctl bootout` of a job that is not loaded


@dataclass(frozen=True)
class JobPlan:
    """Steps `before` the files are written (or removed), then steps `after`; `undo` forgets a
    new job again when the install fails half-way. `unavailable`: no scheduler works here (why,
    in one line), with `fallback`, what `show` prints instead (a unit that keeps `watch` running)."""

    platform: str
    job_id: str
    files: tuple[tuple[Path, bytes], ...] = ()
    before: tuple[Command, ...] = ()
    after: tuple[Command, ...] = ()
    cron_line: str | None = None
    notes: tuple[str, ...] = ()
    state: Path | None = None  # created by install: the log lives there
    undo: tuple[Command, ...] = ()
    unavailable: str | None = None
    fallback: tuple[str, ...] = ()


def install_plan(job: Job, where: str, home: Path, env: dict[str, str], uid: int, linger: bool) -> JobPlan:
    if where == "launchd":
        domain, target = f"gui/{uid}", f"gui/{uid}/{label(job.id)}"
        path = plist_path(home, job.id)
        before = (Command(("launchctl", "bootout", target), may_fail=True),)  # forget the old job first
        after = (Command(("launchctl", "enable", target)), Command(("launchctl", "bootstrap", domain, str(path))))
        return JobPlan(where, job.id, ((path, plistlib.dumps(plist(job))),), before, after, undo=before)
    if where == "systemd":
        folder, timer = unit_dir(home, env), unit_name(job.id, "timer")
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
        return JobPlan(where, job.id, files, (), after, notes=() if linger else (_linger_note(),), undo=undo)
    return JobPlan(where, job.id, cron_line=cron_line(job))


def uninstall_plan(job_id: str, where: str, home: Path, env: dict[str, str], uid: int) -> JobPlan:
    if where == "launchd":
        bootout = Command(("launchctl", "bootout", f"gui/{uid}/{label(job_id)}"), may_fail=True)
        return JobPlan(where, job_id, ((plist_path(home, job_id), b""),), (bootout,))
    if where == "systemd":
        folder = unit_dir(home, env)
        files = tuple((folder / unit_name(job_id, k), b"") for k in ("timer", "service"))
        disable = Command(("systemctl", "--user", "disable", "--now", unit_name(job_id, "timer")), may_fail=True)
        reload = Command(("systemctl", "--user", "daemon-reload"), may_fail=True)  # the files go even without a bus
        return JobPlan(where, job_id, files, (disable,), (reload,))
    return JobPlan(where, job_id)


def _linger_note() -> str:
    user = getpass.getuser()
    return f"user timers run only while {user} is logged in; to sweep after logout too: loginctl enable-linger {user}"


# --- the imperative shell --------------------------------------------------------------------------


def linger_enabled() -> bool:
    return Path("/var/lib/systemd/linger", getpass.getuser()).exists()


def available(system: str) -> dict[str, str | None]:
    """Each scheduler → why it does not work here, or None when it does. Asks, changes nothing."""
    return {"launchd": _launchd_works(system), "systemd": _systemd_works(), "cron": _cron_works()}


def _launchd_works(system: str) -> str | None:
    if system != "Darwin":
        return "launchd is macOS only"
    return None if shutil.which("launchctl") else "no launchctl on PATH"


def _systemd_works() -> str | None:
    """A user manager that answers: without one (SSH without a session, most containers) a
    user timer can be written but never enabled."""
    code, _, err = _ask(("systemctl", "--user", "show-environment"))
    if code == 127:
        return err
    return None if code == 0 else f"`systemctl --user` cannot reach a user manager ({err or f'exit {code}'})"


def _cron_works() -> str | None:
    return None if shutil.which("crontab") else "no crontab on PATH"


def _ask(argv: tuple[str, ...]) -> tuple[int, str, str]:
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


Did = Literal["wrote", "removed", "ran", "crontab", "uncrontab"]


@dataclass(frozen=True)
class Applied:
    """What `install` or `uninstall` did, in order: ("wrote", file), ("removed", file), ("ran",
    command line), ("crontab", the line added), ("uncrontab", the marker of the line removed);
    plus the plan's notes. No events: there was nothing to uninstall."""

    platform: str
    events: tuple[tuple[Did, str], ...] = ()
    notes: tuple[str, ...] = ()


def install(plan: JobPlan) -> Applied:
    """Idempotent: a re-install replaces this vault's job and leaves everything else alone.
    One plan: when a step fails, every file is put back as it was (a new one removed), a new
    job is forgotten by its scheduler (`undo`) or the replaced one registered again, and the
    error says so."""
    if plan.unavailable:
        raise CuratorError(plan.unavailable)
    table = read_crontab() if plan.cron_line else None
    if plan.cron_line and table is None:
        raise CuratorError("crontab: not found on PATH; choose another scheduler (--launchd/--systemd)")
    previous = {path: _read(path) for path, _ in plan.files}
    made = [f for path, _ in plan.files for f in _missing_folders(path.parent)]
    made += _missing_folders(plan.state) if plan.state else []
    events: list[tuple[Did, str]] = []
    try:
        if plan.state:
            plan.state.mkdir(parents=True, exist_ok=True, mode=0o700)
        _steps(plan.before)  # forgetting the old job is not worth a line
        for path, data in plan.files:
            _write(path, data)
            events.append(("wrote", str(path)))
        events += _steps(plan.after)
        if plan.cron_line:
            write_crontab(crontab_with(table or "", plan.cron_line, plan.job_id))
            events.append(("crontab", plan.cron_line))
    except (CuratorError, OSError, subprocess.SubprocessError) as exc:
        raise CuratorError(f"{exc}; {_roll_back(plan, previous, made)}") from None
    return Applied(plan.platform, tuple(events), plan.notes)


def _roll_back(plan: JobPlan, previous: dict[Path, bytes | None], made: list[Path]) -> str:
    """Every file as it was, then the scheduler told: the old job again, or no job at all.
    Best effort: a scheduler that cannot be reached has registered nothing either."""
    replaced = any(old is not None for old in previous.values())
    for path, old in previous.items():
        try:
            if old is None:
                path.unlink(missing_ok=True)
            else:
                _write(path, old)
        except OSError:
            pass
    for step in plan.after if replaced else plan.undo:
        with contextlib.suppress(CuratorError, OSError, subprocess.SubprocessError):
            _run(replace(step, may_fail=True))
    for folder in made:  # the folders install created (innermost first) go too, when empty
        with contextlib.suppress(OSError):
            folder.rmdir()
    if plan.cron_line:
        return "the crontab is unchanged"
    return "the previous job is back" if replaced else "nothing installed (rolled back)"


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _missing_folders(folder: Path) -> list[Path]:
    """`folder` and those of its parents that do not exist yet, innermost first."""
    out = []
    while not folder.exists() and folder != folder.parent:
        out.append(folder)
        folder = folder.parent
    return out


def uninstall(plan: JobPlan) -> Applied:
    """Removes exactly what `install` made for this vault; nothing at all when nothing is there."""
    if plan.platform == "cron":
        table = read_crontab()
        if not table or crontab_without(table, plan.job_id) == table:
            return Applied(plan.platform)
        write_crontab(crontab_without(table, plan.job_id))
        return Applied(plan.platform, (("uncrontab", marker(plan.job_id)),))
    present = [path for path, _ in plan.files if path.exists()]
    if not present:
        return Applied(plan.platform)
    events = _steps(plan.before)
    for path in present:
        path.unlink()
        events.append(("removed", str(path)))
    return Applied(plan.platform, tuple(events + _steps(plan.after)))


def _steps(steps: tuple[Command, ...]) -> list[tuple[Did, str]]:
    """Runs each step; a step that may fail and did is not reported as run."""
    events: list[tuple[Did, str]] = []
    for step in steps:
        if _run(step).returncode == 0:
            events.append(("ran", shlex.join(step.argv)))
    return events


def _write(path: Path, data: bytes) -> None:
    """Atomic, fsynced, and no write at all when the file already holds these bytes."""
    current = FILES.file_hash(path)
    if current is None:
        FILES.create(path, data)
    elif current != content_hash(data):
        FILES.replace(path, data, current)


def _run(step: Command, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    program = shutil.which(step.argv[0])
    if program is None and step.may_fail:
        return subprocess.CompletedProcess(list(step.argv), 127, "", f"{step.argv[0]}: not found")
    if program is None:
        raise CuratorError(f"{step.argv[0]}: not found on PATH; choose another scheduler (--cron/--launchd/--systemd)")
    proc = subprocess.run([program, *step.argv[1:]], input=stdin, capture_output=True, text=True, timeout=60)
    if proc.returncode != 0 and not step.may_fail:
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        raise CuratorError(
            f"`{shlex.join(step.argv)}` failed ({proc.returncode}): {detail[-1] if detail else 'no output'}"
        )
    return proc


def read_crontab() -> str | None:
    """The user's crontab ('' when there is none yet); None when cron is not installed."""
    if shutil.which("crontab") is None:
        return None
    proc = _run(Command(("crontab", "-l"), may_fail=True))
    if proc.returncode == 0:
        return proc.stdout
    if "no crontab" in proc.stderr.lower():
        return ""
    raise CuratorError(f"`crontab -l` failed ({proc.returncode}): {proc.stderr.strip() or 'no output'}")


def write_crontab(table: str) -> None:
    _run(Command(("crontab", "-")), stdin=table)


# --- install, show, uninstall on this machine ----------------------------------------------------------

PROTECTED = {
    "Documents": "~/Documents",
    "Desktop": "~/Desktop",
    "Downloads": "~/Downloads",
    "Library/Mobile Documents": "iCloud Drive",
    "Library/CloudStorage": "a cloud-storage folder (~/Library/CloudStorage)",
}


def protected_location(vault: Path, home: Path, system: str) -> str | None:
    """On macOS, the privacy-protected place a vault sits in (launchd jobs need Full Disk Access)."""
    if system != "Darwin":
        return None
    for relative, name in PROTECTED.items():
        area = home / relative
        if vault == area or area in vault.parents:
            return name
    return None


def fda_note(vault: Path, python: str, home: Path, system: str) -> str | None:
    place = protected_location(vault, home, system)
    if place is None:
        return None
    return f"the vault is in {place}: macOS lets a launchd job read it only with Full Disk Access; {fda_fix(python)}"


def fda_fix(python: str) -> str:
    """Privacy permissions attach to the real binary, not to a venv's symlink."""
    return f"System Settings > Privacy & Security > Full Disk Access: add {os.path.realpath(python)}"


def _state_folder(root: Path, state_opt: str | None, env: Mapping[str, str]) -> Path:
    """The vault's state folder under this user's state folder (issue 26: until this module takes a Machine)."""
    return state_folder(root, state_opt, env, platformdirs.user_state_path("memory-curator"))


def plan_install(root: Path, state_opt: str | None, every: str, forced: str | None, on_change: bool) -> JobPlan:
    """What `install` and `show` do for this vault on this machine."""
    env, home, system = dict(os.environ), Path.home(), platform.system()
    usable = {} if forced else available(system)
    where = choose_platform(forced, system, usable)
    if where is None:
        job = make_job(root, _state_folder(root, state_opt, env).resolve(), parse_every(every), False, sys.executable)
        line = no_scheduler(usable, job)
        return JobPlan("none", job.id, unavailable=line, fallback=watch_unit(job, home, env, system))
    if on_change and where != "launchd":
        raise CuratorError(f"--on-change needs launchd (not {where}); `memory-curator watch` sweeps on change anywhere")
    job = make_job(root, _state_folder(root, state_opt, env).resolve(), parse_every(every), on_change, sys.executable)
    plan = install_plan(job, where, home, env, os.getuid(), where != "systemd" or linger_enabled())
    notes = [*plan.notes, *_host_notes(root)]
    program = {"launchd": "launchctl", "systemd": "systemctl", "cron": "crontab"}[where]
    if forced and shutil.which(program) is None:
        notes.insert(0, f"{program}: not found on PATH: `install --{where}` will fail here")
    if where == "launchd":
        notes += [n for n in [fda_note(root, job.python, home, platform.system())] if n]
    notes.append(f"each sweep appends one JSON line to {job.log} (capped at about 2 MB)")
    return replace(plan, notes=tuple(notes), state=job.state)


def no_scheduler(usable: Mapping[str, str | None], job: Job) -> str:
    """The one line `show` and `install` print where no scheduler works."""
    why = "; ".join(reason for reason in usable.values() if reason)
    return (
        f"no scheduler works here ({why}): run `memory-curator watch --vault {shlex.quote(str(job.vault))}` "
        "instead, it sweeps as files settle (`memory-curator schedule show` prints a unit that keeps it running)"
    )


def watch_command(job: Job) -> list[str]:
    return [job.python, "-m", "memory_curator", "watch", "--vault", str(job.vault), "--state-dir", str(job.state)]


def watch_unit(job: Job, home: Path, env: dict[str, str], system: str) -> tuple[str, ...]:
    """A ready unit that keeps `watch` running: a launchd agent on macOS, else a systemd user service."""
    if system == "Darwin":
        name = f"org.memory-curator.watch.{job.id}"
        path = home / "Library" / "LaunchAgents" / f"{name}.plist"
        data = {"Label": name, "ProgramArguments": watch_command(job), "RunAtLoad": True, "KeepAlive": True}
        text = plistlib.dumps(data).decode().rstrip("\n")
        start = f"launchctl bootstrap gui/{os.getuid()} {shlex.quote(str(path))}"
    else:
        name = f"{UNIT_PREFIX}watch-{job.id}.service"
        path = unit_dir(home, env) / name
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
        start = f"systemctl --user enable --now {name}  (from a login session)"
    return (
        f"# to keep `watch` running, save as {path}, then: {start}",
        text,
        "",
        f"# or keep it running in a terminal (tmux, screen): {shlex.join(watch_command(job))}",
    )


def _host_notes(root: Path) -> list[str]:
    from memory_curator.commands.sweep import host_refusal
    from memory_curator.store.rules_file import load_for_vault

    refusal = host_refusal(load_for_vault(root).settings.curator_host, socket.gethostname())
    return [f"scheduled sweeps here will do nothing: {refusal}"] if refusal else []


def plan_uninstall(root: Path, forced: str | None) -> list[JobPlan]:
    """One plan per scheduler holding this vault's job (or just the one asked for)."""
    env, home, job_id = dict(os.environ), Path.home(), vault_id(root)
    wheres = [forced] if forced else [found.platform for found in installed(job_id, home, env)]
    return [uninstall_plan(job_id, where, home, env, os.getuid()) for where in dict.fromkeys(wheres)]


# --- what is installed (for `uninstall` and `doctor`) ------------------------------------------------


@dataclass(frozen=True)
class Installed:
    platform: str
    where: str
    command: tuple[str, ...]
    every: int | None
    since: float | None = None  # when the file was written (cron keeps no such time)

    def option(self, name: str) -> str | None:
        args = list(self.command)
        return args[args.index(name) + 1] if name in args[:-1] else None


def installed(job_id: str, home: Path, env: dict[str, str]) -> list[Installed]:
    """Every scheduled sweep of this vault, on any of the three schedulers."""
    found = []
    path = plist_path(home, job_id)
    if path.exists():
        found.append(_from_plist(path))
    service = unit_dir(home, env) / unit_name(job_id, "service")
    if service.exists():
        found.append(_from_units(service, service.with_suffix(".timer")))
    table = read_crontab()
    line = next((ln for ln in (table or "").splitlines() if ln.rstrip().endswith(marker(job_id))), None)
    if line:
        found.append(_from_cron(line))
    return found


def _from_plist(path: Path) -> Installed:
    try:
        data = plistlib.loads(path.read_bytes())
    except (OSError, ValueError, ExpatError) as exc:  # InvalidFileException is a ValueError
        raise CuratorError(f"{path}: unreadable plist: {exc}") from None
    if not isinstance(data, dict):
        raise CuratorError(f"{path}: unreadable plist: not a dictionary")
    every = data.get("StartInterval")
    args = tuple(str(a) for a in data.get("ProgramArguments", []))
    return Installed("launchd", str(path), args, every if isinstance(every, int) else None, path.stat().st_mtime)


def _from_units(service: Path, timer: Path) -> Installed:
    exec_start = _ini_value(service, "Service", "ExecStart")
    calendar = _ini_value(timer, "Timer", "OnCalendar")
    args = tuple(a.replace("%%", "%").replace("$$", "$") for a in _words(exec_start, service))
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


def _from_cron(line: str) -> Installed:
    fields = line.split(None, 5)
    words = _words(fields[5].replace("\\%", "%"), "crontab") if len(fields) == 6 else []
    command = tuple(w for w in words if not w.startswith(">>") and w != "2>&1")
    return Installed("cron", "crontab", command, every_from(" ".join(fields[:5]), 0))


def _words(command: str, origin: object) -> list[str]:
    try:
        return shlex.split(command, comments=True)
    except ValueError as exc:
        raise CuratorError(f"{origin}: cannot read the scheduled command: {exc}") from None


# --- what the scheduler itself says (for `schedule status`, `status` and `doctor`) -------------------


@dataclass(frozen=True)
class Loaded:
    """The scheduler's answer about one job: `loaded` None when it could not be asked."""

    name: str  # what the scheduler calls it: the timer, the launchd service target, "crontab"
    loaded: bool | None
    state: str  # in its words: "enabled, active", "not loaded", "cannot ask systemd (…)"
    last_ran: str | None = None
    error: str | None = None  # why it could not be asked, in its own words


def ask(job: Installed, uid: int) -> Loaded:
    """`launchctl print`, `systemctl --user is-enabled/is-active`; a cron line is loaded by being
    in `crontab -l`, which is where it was found."""
    if job.platform == "systemd":
        timer = Path(job.where).with_suffix(".timer").name
        _, enabled, err_enabled = _ask(("systemctl", "--user", "is-enabled", timer))
        _, active, err_active = _ask(("systemctl", "--user", "is-active", timer))
        if not enabled or not active:
            error = err_enabled or err_active or "no answer"
            return Loaded(timer, None, f"cannot ask systemd ({error})", error=error)
        last = None
        if active == "active":
            _, last, _ = _ask(("systemctl", "--user", "show", timer, "-p", "LastTriggerUSec", "--value"))
        ran = last if last and last != "n/a" else None
        return Loaded(timer, enabled == "enabled" and active == "active", f"{enabled}, {active}", ran)
    if job.platform == "launchd":
        target = f"gui/{uid}/{Path(job.where).stem}"
        code, out, err = _ask(("launchctl", "print", target))
        if code == 0:
            fields = dict(re.findall(r"^\s*(state|runs|last exit code) = (.+)$", out, re.MULTILINE))
            detail = ", ".join(f"{k} = {v}" for k, v in fields.items())
            return Loaded(target, True, "loaded" + (f" ({detail})" if detail else ""))
        if code == 113 or "could not find" in err.lower():
            return Loaded(target, False, "not loaded")
        error = err or f"exit {code}"
        return Loaded(target, None, f"cannot ask launchd ({error})", error=error)
    return Loaded("crontab", True, "in the crontab")


def summary(root: Path, state: Path, home: Path, env: dict[str, str]) -> dict[str, Any]:
    """This vault's jobs, what each scheduler says of it, and the last logged sweep (`status`)."""
    jobs = installed(vault_id(root), home, env)
    out: dict[str, Any] = {"installed": bool(jobs), "jobs": []}
    for job in jobs:
        said = ask(job, os.getuid())
        out["jobs"].append(
            {
                "platform": job.platform,
                "where": job.where,
                "every_seconds": job.every,
                "loaded": said.loaded,
                "state": said.state,
                "last_ran": said.last_ran,
            }
        )
    last = runlog.entries(state / runlog.LOG_NAME)
    if last:
        out["last_run"] = {
            "time": iso(last[-1].time) if last[-1].time else None,
            "exit": last[-1].exit,
            "summary": last[-1].summary,
        }
    return out


def status(root: Path, state_opt: str | None) -> dict[str, Any]:
    """`schedule status`: the summary, which schedulers work here and which `install` would use."""
    env, home, system = dict(os.environ), Path.home(), platform.system()
    state = _state_folder(root, state_opt, env).resolve()
    usable = available(system)
    return {**summary(root, state, home, env), "available": usable, "choice": choose_platform(None, system, usable)}
