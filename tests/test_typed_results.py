"""Typed results and records stay typed (issue 40): what an agent reads and searches, and the
schedule `status` shows, are frozen results with the JSON they had; no `dict[str, Any]` comes back
into a command's or the journal's signature, and no module grows past 500 lines. Read from the
source (ast), so the rule holds for code not yet written."""

from __future__ import annotations

import ast
import dataclasses
import json
import re
from pathlib import Path

import pytest

from memory_curator.cli.machine import build_context
from memory_curator.commands import agent
from memory_curator.commands.context import Context, Seams
from memory_curator.commands.schedule import Summary
from memory_curator.commands.status import ScheduleUnread, gather
from memory_curator.core.clock import FixedClock

from conftest import NOW

PACKAGE = Path(__file__).resolve().parent.parent / "memory_curator"
TYPED = ("commands/**/*.py", "store/journal*.py", "store/recovery.py", "store/records.py")  # no dict[str, Any] here
MAX_LINES = 500


@pytest.fixture
def ctx(vault: Path, tmp_path: Path) -> Context:
    return build_context(vault, str(tmp_path / "state"), Seams(clock=FixedClock(NOW), env={}))


def test_an_agents_read_is_a_frozen_result_with_the_json_it_had(ctx: Context) -> None:
    read = agent.read_note(ctx, "facts/obsidian/file-format.md")
    with pytest.raises(dataclasses.FrozenInstanceError):
        read.body = "changed"  # type: ignore[misc]
    data = read.to_json()
    assert list(data) == ["path", "frontmatter", "body", "problem"]
    assert data["path"] == "facts/obsidian/file-format.md" and data["problem"] is None
    assert data["body"] == read.body and isinstance(data["frontmatter"], dict)
    assert json.loads(json.dumps(data)) == data


def test_an_agents_search_is_a_frozen_result_with_the_json_it_had(ctx: Context) -> None:
    found = agent.search(ctx, text="obsidian markdown file format")
    assert found.kind == "text" and found.results
    with pytest.raises(dataclasses.FrozenInstanceError):
        found.results = ()  # type: ignore[misc]
    data = found.to_json()
    assert list(data) == ["kind", "query", "results"]
    assert [list(hit) for hit in data["results"]] == [  # type: ignore[union-attr]
        ["path", "surface", "title", "value", "score", "snippet"] for _ in found.results
    ]
    by_name = agent.search(ctx, name="file-format").to_json()
    assert all("score" not in hit for hit in by_name["results"])  # type: ignore[union-attr]


def test_the_schedule_status_shows_is_a_frozen_result(ctx: Context) -> None:
    shown = gather(ctx).schedule
    assert isinstance(shown, Summary | ScheduleUnread)
    assert gather(ctx).to_json()["schedule"] == shown.to_json()
    assert ScheduleUnread("crontab: not found").to_json() == {"installed": False, "error": "crontab: not found"}


# --- the source: no dict[str, Any] in a command's or the journal's signature; short modules ------


def untyped_signatures(source: str, filename: str = "<probe>") -> list[str]:
    """`line name` of every function whose parameters or return name `dict[str, Any]` (in any
    spelling: `Dict[str, Any]`, inside a union, a list, a tuple)."""
    wrong = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            args = node.args
            params = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
            notes = [p.annotation for p in params if p is not None and p.annotation is not None]
            notes += [node.returns] if node.returns is not None else []
            if any(re.search(r"\b[dD]ict\[str, *(typing\.)?Any\]", ast.unparse(n)) for n in notes):
                wrong.append(f"{node.lineno} {node.name}")
    return wrong


def typed_modules() -> list[Path]:
    return sorted({path for pattern in TYPED for path in PACKAGE.glob(pattern)})


def test_no_command_or_journal_signature_takes_or_returns_a_dict_of_any() -> None:
    assert len(typed_modules()) > 30
    wrong = [f"{p.relative_to(PACKAGE)}:{w}" for p in typed_modules() for w in untyped_signatures(p.read_text())]
    assert wrong == []


def test_no_module_is_over_500_lines() -> None:
    long = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_LINES:
            long[str(path.relative_to(PACKAGE))] = lines
    assert long == {}


def test_the_signature_scan_sees_a_dict_of_any() -> None:
    """The checker itself: each spelling is caught, in parameters and returns; a typed one is not."""
    probe = (
        "def a(x: dict[str, Any]) -> None: ...\n"
        "def b() -> list[dict[str, Any]] | None: ...\n"
        "async def c(*rows: Dict[str, typing.Any]) -> int: ...\n"
        "def d(**kw: dict[str,Any]) -> None: ...\n"
        "def e(x: dict[str, object]) -> Record: ...\n"
        "class K:\n    def f(self) -> 'dict[str, Any]': ...\n"
    )
    assert untyped_signatures(probe) == ["1 a", "2 b", "3 c", "4 d", "7 f"]
