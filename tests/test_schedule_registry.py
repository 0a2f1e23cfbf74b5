"""A scheduler is one module that registers itself (issue 40): a fourth one, written here and
registered through `registry.register`, gets its flag, `schedule show`, `install`, `status`,
`uninstall` and `doctor`, with nothing else in the product touched."""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_schedulers import Fakes, install_fakes

from memory_curator.commands.context import Machine
from memory_curator.commands.schedule import registry
from memory_curator.commands.schedule.job import Installed, Job, JobPlan, Loaded
from memory_curator.commands.schedule.scheduler import Backend
from memory_curator.store.state import vault_id


class Notebook(Backend):
    """A scheduler that keeps each job as one file in ~/.notebook, loaded once written there."""

    name = "notebook"
    program = "sh"
    flag_help = "a notebook of jobs (a test's)."
    rank = 4

    def preference(self, system: str) -> int | None:
        return None  # only by its flag

    def works(self, machine: Machine) -> str | None:
        return None

    def install_plan(self, job: Job, machine: Machine) -> JobPlan:
        line = f"every {job.every}s: {shlex.join(job.command())}\n"
        return JobPlan(self.name, job.id, ((self.path(machine, job.id), line.encode()),))

    def uninstall_plan(self, job_id: str, machine: Machine) -> JobPlan:
        return JobPlan(self.name, job_id, ((self.path(machine, job_id), b""),))

    def find(self, job_id: str, machine: Machine) -> Installed | None:
        path = self.path(machine, job_id)
        if not path.exists():
            return None
        every, command = path.read_text().split(": ", 1)
        return Installed(self.name, str(path), tuple(shlex.split(command)), int(every[6:-1]), path.stat().st_mtime)

    def ask(self, job: Installed, machine: Machine) -> Loaded:
        return Loaded(Path(job.where).name, True, "written down")

    @staticmethod
    def path(machine: Machine, job_id: str) -> Path:
        return machine.home / ".notebook" / f"{job_id}.job"


@pytest.fixture
def notebook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Fakes]:
    """The fourth scheduler registered, and the fake three alone on PATH."""
    fakes = install_fakes(tmp_path / "fakes", monkeypatch, alone=True)
    registry.register(Notebook())
    yield fakes
    registry.unregister("notebook")


def test_a_fourth_scheduler_registered_in_one_module_works_everywhere(vault: Path, notebook: Fakes, invoke) -> None:
    job = Path.home() / ".notebook" / f"{vault_id(vault)}.job"
    helped = invoke("schedule", "install", "--help").output
    assert "--notebook" in helped and "a notebook of jobs (a test's)." in helped
    assert "--notebook" in invoke("schedule", "uninstall", "--help").output

    shown = invoke("schedule", "show", "--notebook", "--every", "1h", "--vault", str(vault))
    assert shown.exit_code == 0, shown.output
    assert f"# {job}" in shown.output and "every 3600s: " in shown.output
    assert not job.exists(), "show changes nothing"

    installed = invoke("schedule", "install", "--notebook", "--every", "1h", "--vault", str(vault))
    assert installed.exit_code == 0, installed.output
    assert f"wrote {job}" in installed.output
    assert job.read_text().startswith("every 3600s: ") and f"--vault {vault}" in job.read_text()

    data = json.loads(invoke("schedule", "status", "--vault", str(vault), "--json").output)["data"]
    assert list(data["available"]) == ["launchd", "systemd", "cron", "notebook"]
    assert data["available"]["notebook"] is None and data["choice"] == "systemd", "only by its flag"
    (found,) = data["jobs"]
    assert (found["platform"], found["where"], found["every_seconds"]) == ("notebook", str(job), 3600)
    assert (found["loaded"], found["state"]) == (True, "written down")

    doctor = json.loads(invoke("doctor", "--vault", str(vault), "--json").output)
    said = [f["message"] for f in doctor["data"] if f["topic"] == "schedule"]
    assert said == [f"notebook every 1h ({job}), written down"]

    removed = invoke("schedule", "uninstall", "--vault", str(vault))
    assert removed.exit_code == 0, removed.output
    assert f"removed {job}" in removed.output and not job.exists()
    assert "no scheduled sweep" in invoke("schedule", "uninstall", "--notebook", "--vault", str(vault)).output


def test_an_unregistered_scheduler_is_gone_from_the_flags(vault: Path, notebook: Fakes, invoke) -> None:
    assert "--notebook" in invoke("schedule", "show", "--help").output
    registry.unregister("notebook")
    assert "--notebook" not in invoke("schedule", "show", "--help").output
    refused = invoke("schedule", "show", "--notebook", "--vault", str(vault))
    assert refused.exit_code == 2 and "No such option '--notebook'" in refused.output
