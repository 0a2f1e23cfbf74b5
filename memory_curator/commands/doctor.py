"""`doctor`: is this vault set up to be swept, and if not, what to do about it.

Each check returns `Finding`s (data; `cli.render` prints them). A problem is something that
stops sweeps from working or from sharing one lock (exit 1); a warning is what a careful
user should know (no schedule, no judge key, not the curator host, the macOS privacy trap).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sqlite3
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from memory_curator.commands import doctor_secrets, schedule
from memory_curator.commands.context import Invocation, Machine
from memory_curator.commands.note_link import conflict_copies
from memory_curator.core.clock import Clock
from memory_curator.core.errors import EXIT_LOCKED, CuratorError, RulesError
from memory_curator.core.hosts import host_refusal
from memory_curator.core.json_types import JsonObject
from memory_curator.core.names import DROPPED, INBOX, RULES_PATH, printable
from memory_curator.core.rules import Rules
from memory_curator.core.text import parse_time
from memory_curator.store import runlog
from memory_curator.store.journal import Journal
from memory_curator.store.paths import ignored_entries
from memory_curator.store.rules_file import DEFAULT_RULES, load, vault_rules_file
from memory_curator.store.state import (
    STATE_FIX,
    lock_holder,
    lock_is_free,
    state_dir,
    state_fix,
    state_problem,
    vault_id,
)
from memory_curator.store.writer import FILES, Files

LOCK_STUCK = dt.timedelta(hours=1)


@dataclass(frozen=True)
class Finding:
    topic: str
    level: str  # "ok", "warn" or "problem"
    message: str
    fix: str | None = None

    def to_json(self) -> JsonObject:
        return {"topic": self.topic, "level": self.level, "message": self.message, "fix": self.fix}


@dataclass(frozen=True)
class Diagnosis:
    """Every finding, in the order they were looked for; `failed`: any of them a problem (exit 1)."""

    findings: tuple[Finding, ...]

    @property
    def failed(self) -> bool:
        return any(f.level == "problem" for f in self.findings)

    def to_json(self) -> list[JsonObject]:
        return [finding.to_json() for finding in self.findings]


def diagnose(asked: Invocation) -> Diagnosis:
    """Every finding for the vault the command line names (none found is the first finding), on
    the machine it runs on; `now` (from the clock) judges a stuck lock and an overdue schedule."""
    try:
        root = asked.root()
    except CuratorError as exc:
        fix = "pass --vault, set MEMORY_CURATOR_VAULT or run inside the vault"
        return Diagnosis((Finding("vault", "problem", str(exc), fix),))
    return Diagnosis(tuple(_findings(root, asked)))


def _findings(root: Path, asked: Invocation) -> list[Finding]:
    machine, clock = asked.machine, asked.seams.clock
    findings = check_vault(root, machine, asked.seams.files)
    rules, found = check_rules(root)
    findings += found
    state, found = check_state(root, asked.state, machine, asked.seams.files)
    findings += found
    if state is not None:
        findings += check_lock(state, clock.now())
        findings += check_schedule(root, state, machine, clock.now())
        findings += check_index(root, rules, state, clock)
    findings += check_secrets(root, rules, state, clock)
    findings += check_judge(rules, machine.env)
    setting = rules.settings.semantic.model if rules is not None else None
    findings += check_semantic(setting, machine.env, root, machine.data_home)
    findings += check_host(rules, machine.host)
    findings += check_review_note(root, rules)
    if state is not None:
        findings += check_queue(root, state, rules)
    return findings


def check_queue(root: Path, state: Path, rules: Rules | None) -> list[Finding]:
    """How many items wait for a person, counted as `status`, `run` and the review note count
    them (held ones included: a restore ticked in the note puts one back)."""
    from memory_curator.commands.status import scan_inbox

    items = [i for i in scan_inbox(root, state, settings=rules.settings if rules else None) if i.waiting_for_person]
    held = sum(1 for i in items if i.held)
    said = f"{len(items)} wait for review" + (f" ({held} put back by undo or restore)" if held else "")
    return [Finding("queue", "ok", said)]


def check_review_note(root: Path, rules: Rules | None) -> list[Finding]:
    """The review note's sync conflict copies: each one's ticks are read once, so what it holds
    beyond that belongs in the note (docs/review.md)."""
    note = rules.settings.review_note if rules is not None else None
    if not note:
        return []
    fix = "merge it into this note and delete it"
    return [
        Finding("review note", "warn", f"{c}: a sync conflict copy of {note}", fix) for c in conflict_copies(root, note)
    ]


def check_vault(root: Path, machine: Machine, files: Files = FILES) -> list[Finding]:
    """Whether sweeps may read and write the vault's folders, asked of the `os` they write through."""
    fix = f"give {machine.login} read and write access (chmod -R u+rwX {root})"
    access = files.os.access
    if not access(root, os.R_OK | os.X_OK):
        return [Finding("vault", "problem", f"{root} is not readable", fix)]
    out = []
    inbox = root / INBOX
    if not inbox.is_dir():
        out.append(Finding("vault", "warn", f"no {INBOX}/ folder: agents have nowhere to write", "memory-curator init"))
    for folder in (root, inbox, inbox / DROPPED):
        if folder.is_dir() and not access(folder, os.R_OK | os.W_OK | os.X_OK):
            out.append(Finding("vault", "problem", f"{folder} is not writable: sweeps cannot move notes", fix))
    if not out:
        out.append(Finding("vault", "ok", f"{root} is readable and writable"))
    out += [Finding("inbox", "warn", f"{e.rel}: not a candidate", e.why) for e in ignored_entries(root)]
    for scheduler in schedule.schedulers().values():  # launchd: the macOS privacy trap
        out += [Finding(area, "warn", note) for area, note in scheduler.doctor_vault(root, sys.executable, machine)]
    return out


def check_rules(root: Path) -> tuple[Rules | None, list[Finding]]:
    path = vault_rules_file(root)  # a broken symlink or a FIFO there is the vault's file: refused, never opened
    if path is None:
        hint = f"memory-curator init {root} (writes an editable copy)"
        return load(DEFAULT_RULES), [
            Finding("rules", "warn", f"no {RULES_PATH}: the shipped default rules apply", hint)
        ]
    try:
        rules = load(path)
    except RulesError as exc:
        fix = "correct that line" if exc.line else "make it a regular file of rules (or remove it)"
        fix += "; `memory-curator rules check` validates again"
        return None, [Finding("rules", "problem", f"{exc} (every sweep stops here)", fix)]
    counts = f"{len(rules.surfaces)} surfaces, {len(rules.drop_rules)} drop rules"
    return rules, [Finding("rules", "ok", f"{RULES_PATH} is valid ({counts})")]


PROBE = ".doctor-probe"
PROBE_BYTES = 64 * 1024  # enough to meet a disk that is full, not only one without a free inode


def check_state(
    root: Path, state_opt: str | None, machine: Machine, files: Files = FILES
) -> tuple[Path | None, list[Finding]]:
    """The state folder, proved as a sweep uses it: real bytes written and fsynced through the one
    writer, then removed (an empty temp file would pass on a full disk, where every sweep fails)."""
    try:
        folder = state_dir(root, state_opt, machine.env, machine.state_home)
    except CuratorError as exc:
        return None, [Finding("state", "problem", str(exc), STATE_FIX)]
    try:
        files.write_state_file(folder / PROBE, b"\0" * PROBE_BYTES)
    except OSError as exc:
        return None, [Finding("state", "problem", state_problem(folder, exc), state_fix(folder, exc))]
    finally:
        files.unlink_quietly(folder / PROBE)
    return folder, [Finding("state", "ok", f"{folder} works (written and fsynced)")]


def check_lock(state: Path, now: dt.datetime) -> list[Finding]:
    holder = lock_holder(state)
    if lock_is_free(state):
        return [Finding("lock", "ok", "free" + (f" (last held by {holder})" if holder else ""))]
    since = _lock_since(state)
    if since is not None and now - since > LOCK_STUCK:
        fix = "if that process is stuck, stop it; the lock is released the moment it exits"
        message = f"held for over an hour by {holder}: every other sweep exits {EXIT_LOCKED}"
        return [Finding("lock", "problem", message, fix)]
    return [Finding("lock", "ok", f"a sweep is running now ({holder or 'unknown holder'})")]


def _lock_since(state: Path) -> dt.datetime | None:
    try:
        text = json.loads((state / "lock").read_text(encoding="utf-8"))["since"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return parse_time(text)


def check_schedule(root: Path, state: Path, machine: Machine, now: dt.datetime) -> list[Finding]:
    try:
        jobs = schedule.installed(vault_id(root), machine)
    except CuratorError as exc:
        return [Finding("schedule", "problem", str(exc), "memory-curator schedule install (rewrites it)")]
    out = [_job_finding(job, state, machine) for job in jobs]
    if not jobs:
        usable = schedule.available(machine)
        fix = "memory-curator schedule install"
        if schedule.choose_platform(None, machine.system, usable) is None:
            why = "; ".join(reason for reason in usable.values() if reason)
            fix = f"no scheduler works here ({why}): keep `memory-curator watch` running (schedule show prints a unit)"
        out.append(Finding("schedule", "warn", "no scheduled sweep of this vault", fix))
    elif len(jobs) > 1:
        names = ", ".join(j.platform for j in jobs)
        fix = f"memory-curator schedule uninstall --{jobs[-1].platform}"
        out.append(Finding("schedule", "warn", f"scheduled {len(jobs)} times ({names}); one is enough", fix))
    return out + check_last_run(root, state, jobs, machine, now)


def _job_finding(job: schedule.Installed, state: Path, machine: Machine) -> Finding:
    python = job.command[0] if job.command else ""
    reinstall = "memory-curator schedule install (from the environment that should run the sweeps)"
    if not (os.path.isabs(python) and os.access(python, os.X_OK)):
        return Finding(
            "schedule", "problem", f"{job.platform}: the scheduled interpreter {python!r} is gone", reinstall
        )
    scheduled_state = job.option("--state-dir")
    if scheduled_state and Path(scheduled_state) != state:
        message = (
            f"{job.platform} sweeps use the state dir {scheduled_state}, this shell {state}: two locks, two journals"
        )
        return Finding("schedule", "problem", message, "use the same --state-dir here, or reinstall with this one")
    scheduler = schedule.get(job.platform)
    said = scheduler.ask(job, machine)  # the scheduler itself: files alone schedule nothing
    if said.loaded is None:
        fix = (
            "run doctor in a login session of this user; where that never works, "
            "`memory-curator schedule uninstall` and keep `memory-curator watch` running"
        )
        return Finding("schedule", "problem", f"{job.platform}: {scheduler.doctor_unasked(said)}", fix)
    if not said.loaded:
        message = f"{job.platform}: {said.name} is {said.state}: nothing runs the sweeps"
        fix = scheduler.doctor_load(job, said)
        return Finding("schedule", "problem", message, f"{fix} (or memory-curator schedule install)")
    every = f" every {schedule.every_text(job.every)}" if job.every else ""
    told = scheduler.doctor_state(said)
    told += f"; last ran {said.last_ran}" if said.last_ran else ""
    return Finding("schedule", "ok", f"{job.platform}{every} ({job.where}){told}")


def check_last_run(
    root: Path, state: Path, jobs: list[schedule.Installed], machine: Machine, now: dt.datetime
) -> list[Finding]:
    log = state / runlog.LOG_NAME
    entries = runlog.entries(log)
    out = [*_journal_finding(state)]
    if not entries:
        return out + _never_ran(jobs, now, machine.uid)
    last = entries[-1]
    if last.stray:
        fix = "run the scheduled command by hand (see `memory-curator schedule show`) to see the whole error"
        return [*out, Finding("last run", "problem", f"the last scheduled sweep crashed: {last.summary}", fix)]
    assert last.time is not None
    when = f"{last.time:%Y-%m-%d %H:%M:%SZ}"
    if last.failed:
        return [
            *out,
            Finding("last run", "problem", f"{when} failed: {last.summary}", _failure_fix(last, root, machine)),
        ]
    overdue = _overdue(jobs, last.time, now, machine.uid)
    if overdue:
        return [*out, overdue]
    how = "another sweep held the lock, so it skipped" if last.exit == EXIT_LOCKED else last.summary
    return [*out, Finding("last run", "ok", f"{when}: {how} (log: {log})")]


def _failure_fix(last: runlog.RunRecord, root: Path, machine: Machine) -> str:
    for scheduler in schedule.schedulers().values():  # launchd: a vault macOS keeps it from reading
        fix = scheduler.doctor_failure(last.summary, root, sys.executable, machine)
        if fix:
            return fix
    return "run the same sweep by hand (`memory-curator run --vault …`) and fix what it reports"


def _never_ran(jobs: list[schedule.Installed], now: dt.datetime, uid: int) -> list[Finding]:
    for job in jobs:
        if job.since is not None and job.every:
            installed_at = dt.datetime.fromtimestamp(job.since, dt.UTC)
            if now - installed_at > _grace(job.every):
                message = f"{job.platform} job installed {installed_at:%Y-%m-%d %H:%M}Z but no sweep was ever logged"
                return [Finding("last run", "problem", message, _scheduler_fix(job, uid))]
    return [Finding("last run", "ok", "not run yet")] if jobs else []


def _overdue(jobs: list[schedule.Installed], last: dt.datetime, now: dt.datetime, uid: int) -> Finding | None:
    for job in jobs:
        if job.every and now - last > _grace(job.every):
            every = schedule.every_text(job.every)
            message = f"no sweep logged since {last:%Y-%m-%d %H:%M}Z although scheduled every {every}"
            return Finding("last run", "problem", message, _scheduler_fix(job, uid))
    return None


def _grace(every: int) -> dt.timedelta:
    return dt.timedelta(seconds=2 * every + 300)


def _scheduler_fix(job: schedule.Installed, uid: int) -> str:
    return schedule.get(job.platform).doctor_not_run(job, uid)


def _journal_finding(state: Path) -> list[Finding]:
    """The last sweep that changed something, and the last action ticked in the review note when
    it came later (a tick run is a run too: issue 37)."""
    last, ticked = None, None
    for record in Journal(state / "journal.jsonl").records():
        if record.get("event") == "run":
            last = record
        elif record.get("event") == "begin" and record.get("by") == "review-note":
            ticked = record
    if last is None and ticked is None:
        return []
    said = f"last sweep that changed something: {last.get('time')}: {runlog.summarize(last)}" if last else "no sweep"
    if ticked is not None and str(ticked.get("time")) >= str((last or {}).get("time")):
        what = f"{ticked.get('time')}: {ticked.get('verdict')} (run {ticked.get('run')})"
        said += f"; last tick applied from the review note: {what}"
    return [Finding("journal", "ok", said)]


def check_index(root: Path, rules: Rules | None, state: Path, clock: Clock) -> list[Finding]:
    """The notes the index could read by their body only (bad frontmatter, or a note whose
    reading raised): sweeps go on, but those notes' keys, titles and tags go unseen. An index
    that exists is refreshed first (a stat walk), so a note broken since the last sweep is
    named; one never built is left for the next sweep to build."""
    from memory_curator.index.store import FILE_NAME, Index

    if rules is None or not (state / FILE_NAME).exists():
        return []
    try:
        index = Index(root, rules, state, clock)
        try:
            index.refresh()
            problems, count = index.problems(), index.count()
        finally:
            index.close()
    except (CuratorError, OSError, sqlite3.Error) as exc:
        fix = "memory-curator index rebuild"
        return [Finding("index", "warn", f"cannot read the index: {printable(str(exc))}", fix)]
    if not problems:
        return [Finding("index", "ok", f"{count} notes indexed")]
    named = "; ".join(f"{printable(path)}: {printable(why)}" for path, why in problems[:5])
    more = f"; and {len(problems) - 5} more" if len(problems) > 5 else ""
    message = f"{len(problems)} of {count} notes read by their body only ({named}{more})"
    return [Finding("index", "warn", message, "correct their frontmatter; `memory-curator index stats` lists them")]


def check_semantic(
    setting: str | None, env: Mapping[str, str], root: Path | None = None, data_home: Path | None = None
) -> list[Finding]:
    """Semantic pairing, when the rules name a model (`setting`): the extra, where the model
    lives and its size (a `./folder` beside the vault at `root`). Missing either only warns:
    sweeps then pair lexically. Nothing at all when semantic pairing is off."""
    from memory_curator.index import semantic

    if setting is None:
        return []
    try:
        path = semantic.folder_for(setting, root or Path(), env, data_home)
    except semantic.SemanticUnavailable as exc:
        return [
            Finding("semantic", "warn", f"{exc}: sweeps pair lexically only", "name a model (owner/name) or a folder")
        ]
    told = semantic.availability(path)
    if told.available:
        return [Finding("semantic", "ok", told.message)]
    if not semantic.extra_installed():
        fix = "pip install 'memory-curator[semantic]'"
    elif semantic.names_folder(setting):
        fix = f"put a model2vec model there: memory-curator semantic fetch OWNER/NAME --to {path}"
    else:
        fix = f"memory-curator semantic fetch {setting}"
    return [Finding("semantic", "warn", f"{told.message}; sweeps pair lexically only", fix)]


def check_secrets(root: Path, rules: Rules | None, state: Path | None, clock: Clock) -> list[Finding]:
    """A warning naming the durable notes that already hold a credential (`doctor_secrets`):
    nothing when none does or the scan is off. Read-only: the person edits their note."""
    if rules is None or not rules.settings.secrets.scan:
        return []
    message = doctor_secrets.held(root, rules, state, clock).message()
    fix = "rotate it and edit it out of the note; or, if it is no credential, add that sha1 to secrets.allow"
    return [Finding("secrets", "warn", message, fix)] if message else []


def check_judge(rules: Rules | None, env: Mapping[str, str]) -> list[Finding]:
    if rules is not None and not rules.settings.judge.enabled:
        return [Finding("judge", "ok", "disabled in the rules (judge.enabled: false)")]
    key = env.get("ANTHROPIC_API_KEY")
    if key is None or not key.strip():
        message = "no ANTHROPIC_API_KEY: candidates the rules cannot settle stay needs_review"
        return [Finding("judge", "warn", message, "export ANTHROPIC_API_KEY, or set judge.enabled: false")]
    scheduled = "scheduled sweeps get it only if their scheduler sets it (docs/scheduling.md)"
    return [Finding("judge", "ok", f"ANTHROPIC_API_KEY is set in this shell; {scheduled}")]


def check_host(rules: Rules | None, hostname: str) -> list[Finding]:
    if rules is None:
        return []
    refusal = host_refusal(rules.settings.curator_host, hostname)
    if refusal:
        return [Finding("host", "warn", refusal, f"sweep on {rules.settings.curator_host}, or change curator_host")]
    if rules.settings.curator_host:
        return [Finding("host", "ok", f"this is the curator host ({rules.settings.curator_host})")]
    return []
