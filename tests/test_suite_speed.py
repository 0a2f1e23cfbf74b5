"""The fast suite's own costs, shared (docs/testing.md): what a child Python compiles, every other
child reads back, and the next run too."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

from hypothesis import find, settings
from hypothesis import strategies as st
from hypothesis.internal import charmap

from conftest import REPO, THOROUGH, examples, suite_cache

ASK = "import importlib.util, memory_curator.cli.app as m; print(importlib.util.cache_from_source(m.__file__))"


def test_a_child_python_keeps_its_bytecode_for_the_next_one_outside_the_tree() -> None:
    """The CLI a test runs as a process compiles ~100 modules: once per session, not per child
    (PYTHONDONTWRITEBYTECODE would make each child compile them all again)."""
    done = subprocess.run([sys.executable, "-c", ASK], capture_output=True, text=True, check=True)
    cached = Path(done.stdout.strip())
    assert cached.is_file(), f"{cached}: the child's bytecode was not kept"
    assert REPO not in cached.parents, f"{cached}: bytecode written into the checkout"
    assert cached.is_relative_to(os.environ["PYTHONPYCACHEPREFIX"])


def test_hypothesis_keeps_its_unicode_tables_in_one_folder_for_every_worker() -> None:
    """The tables a text strategy needs (~1.3 s of CPU to build) are built once, not once per
    xdist worker: every worker's Hypothesis home is the one folder the controller made."""
    find(st.text(st.characters(codec="utf-8"), min_size=1), lambda text: True)
    table = charmap.charmap_file("codec-v2-utf-8")
    assert table.is_file() and table.is_relative_to(os.environ["MC_TEST_HYPOTHESIS_HOME"]), table
    assert REPO not in table.parents


def test_the_bytecode_and_hypothesis_tables_are_kept_for_the_next_run() -> None:
    """Compiling the tests (assertions rewritten) and the libraries and building Hypothesis's
    tables cost ~12 s of CPU a run (docs/testing.md): both folders are the same for every run of
    this checkout, outside it and outside the run's temp folders, so only what changed is made
    again."""
    bytecode, tables = Path(os.environ["PYTHONPYCACHEPREFIX"]), Path(os.environ["MC_TEST_HYPOTHESIS_HOME"])
    assert (bytecode, tables) == (suite_cache("pycache"), suite_cache("hypothesis"))
    assert bytecode.parent == tables.parent == suite_cache("pycache").parent
    assert REPO not in bytecode.parents and not bytecode.is_relative_to(REPO)
    assert str(REPO) not in bytecode.parent.name  # one folder a checkout, named by its path's hash


def _memory_filesystem_with_room(folder: Path, room: int) -> bool:
    """Whether `folder` is a tmpfs (per /proc/mounts) with `room` bytes free."""
    try:
        mounts = Path("/proc/mounts").read_text().splitlines()
        free = os.statvfs(folder)
    except OSError:
        return False
    kinds = {fields[1]: fields[2] for fields in (line.split() for line in mounts) if len(fields) > 2}
    return kinds.get(str(folder)) == "tmpfs" and free.f_bavail * free.f_frsize >= room


def test_the_tests_temp_folders_are_in_memory_where_the_machine_has_room(tmp_path: Path) -> None:
    """On ext4 each sweep's fsyncs and the files a test writes and a later run deletes cost ~half
    the suite's system time (docs/testing.md); on a tmpfs with room the temp folders cost none of
    it. Not where the runner chose its own temp root (PYTEST_DEBUG_TEMPROOT)."""
    if os.environ.get("MC_TEST_TEMPROOT_GIVEN"):
        return
    if not _memory_filesystem_with_room(Path("/dev/shm"), 2 << 30):
        assert not tmp_path.resolve().is_relative_to(Path("/dev/shm").resolve())
        return
    assert tmp_path.resolve().is_relative_to(Path("/dev/shm").resolve())
    home = Path(os.environ["HOME"])  # each test's home (and the state folders under it) too
    assert home.resolve().is_relative_to(Path("/dev/shm").resolve())


def test_every_property_the_fast_suite_cuts_runs_whole_in_ci() -> None:
    """The fast suite runs each property on a quarter of its examples; CI's thorough run (every
    `hypothesis`-marked test, MC_HYPOTHESIS=thorough) runs them all, so a property written inside a
    test body, which Hypothesis's plugin cannot mark, must be marked by hand or CI never runs it whole."""
    if not THOROUGH:
        assert (examples(600), examples(60), settings.default.max_examples) == (150, 20, 25)
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "MC_HYPOTHESIS=thorough .venv/bin/python -m pytest -m 'hypothesis and not slow'" in ci
    texts = {path: path.read_text(encoding="utf-8") for path in sorted((REPO / "tests").glob("test_*.py"))}
    nested = {path: text for path, text in texts.items() if re.search(r"^[ \t]+@given\(", text, re.M)}
    unmarked = [
        f"{path.name}::{test.name}"
        for path, text in nested.items()  # a property inside a test body is indented: only those files are parsed
        for test in ast.parse(text).body
        if isinstance(test, ast.FunctionDef)
        and test.name.startswith("test_")
        and any(_given(inner) for inner in ast.walk(test) if inner is not test)
        and not any(ast.unparse(d) == "pytest.mark.hypothesis" for d in test.decorator_list)
    ]
    assert unmarked == []


def _given(node: ast.AST) -> bool:
    """A function decorated `@given(...)`."""
    decorators = node.decorator_list if isinstance(node, ast.FunctionDef) else []
    return any(isinstance(d, ast.Call) and ast.unparse(d.func) == "given" for d in decorators)
