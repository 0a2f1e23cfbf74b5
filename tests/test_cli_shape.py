"""One shape for every command (issue 26): each is declared by `cli.command.vault_command`, which
finds its vault and hands it its Context (or, for the few that look for the vault themselves,
the Invocation); none builds a Context or reads the environment itself — neither its click
callback nor the `commands/` modules that callback uses. Walks the click group, so a command
added another way fails here."""

from __future__ import annotations

import ast
import importlib
import inspect
import textwrap
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import click
import pytest

from memory_curator.cli.app import cli
from memory_curator.cli.command import VaultCommand

from conftest import cli_commands

# Commands with no vault to find, and why.
NO_VAULT = {
    "init": "it makes the vault",
    "semantic fetch": "it fills the user's models folder, shared by every vault",
}
FIRST_PARAMETER = {"Context", "Invocation"}  # what vault_command hands a command first
PACKAGE = "memory_curator.commands"
BUILDERS = {"Context", "build_context", "find_root"}


def body(command: click.Command) -> Callable[..., object]:
    assert command.callback is not None
    return inspect.unwrap(command.callback)


def own_doing(tree: ast.AST) -> list[str]:
    """What a command must leave to the decorator and the CLI's machine: building a Context
    (`Context.build`, `Context(...)`, `build_context`), finding a vault (`find_root`), or reading
    the environment (`os.environ`, `os.getenv`)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if (node.value.id, node.attr) in {("Context", "build"), ("os", "environ"), ("os", "getenv")}:
                found.append(f"{node.value.id}.{node.attr}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in BUILDERS:
            found.append(f"{node.func.id}()")
    return found


def used_commands_modules(func: Callable[..., object]) -> set[ModuleType]:
    """The `commands/` modules a callback uses: those it names from its module, and those it
    imports itself (a lazy import)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    used = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            value = func.__globals__.get(node.id)  # type: ignore[attr-defined]
            if isinstance(value, ModuleType) and value.__name__.startswith(PACKAGE):
                used.add(value)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(PACKAGE):
            for alias in node.names:
                name = f"{node.module}.{alias.name}" if node.module == PACKAGE else str(node.module)
                used.add(importlib.import_module(name))
    return used


def test_every_command_is_declared_by_vault_command() -> None:
    found = dict(cli_commands())
    assert {"run", "check", "query", "index stats", "rules check", "schedule show"} <= set(found)
    assert set(NO_VAULT) <= set(found), "a command in NO_VAULT is gone: take it out"
    wrong = []
    for typed, command in found.items():
        if typed in NO_VAULT:
            continue
        first = next(iter(inspect.signature(body(command)).parameters.values()), None)
        if not isinstance(command, VaultCommand) or first is None or first.annotation not in FIRST_PARAMETER:
            wrong.append(typed)
    assert wrong == [], "declare these with vault_command (first parameter: ctx: Context)"


@pytest.mark.parametrize("typed", [typed for typed, _ in cli_commands()])
def test_no_command_builds_its_own_context_or_reads_the_environment(typed: str) -> None:
    func = body(dict(cli_commands())[typed])
    wrong = [f"{typed}: {what}" for what in own_doing(ast.parse(textwrap.dedent(inspect.getsource(func))))]
    for module in used_commands_modules(func):
        if module.__name__ != f"{PACKAGE}.context":  # context: where one is built
            source = Path(str(module.__file__))
            wrong += [f"{typed}: {module.__name__}: {what}" for what in own_doing(ast.parse(source.read_text()))]
    assert wrong == []


def test_the_shape_test_sees_a_command_of_its_own(tmp_path: Path) -> None:
    """The checker itself: a callback that builds its context and reads the environment, and
    the modules a callback uses, lazily or not, are seen."""
    probe = textwrap.dedent(
        """
        import os
        def command(vault):
            from memory_curator.commands import status as status_mod
            ctx = Context.build(find_root(None, vault, os.environ, None), machine)
            return status_mod.gather(ctx), build_context(ctx.root)
        """
    )
    assert sorted(own_doing(ast.parse(probe))) == ["Context.build", "build_context()", "find_root()", "os.environ"]
    status_command = body(dict(cli_commands())["status"])
    assert {m.__name__ for m in used_commands_modules(status_command)} == {f"{PACKAGE}.status"}
    review_command = body(dict(cli_commands())["review"])
    assert f"{PACKAGE}.review" in {m.__name__ for m in used_commands_modules(review_command)}


def test_every_command_and_group_shows_an_example() -> None:
    """One example at the end of each --help (`example_epilog`; mcp's is in its help text)."""

    groups = [(name, group) for name, group in cli.commands.items() if isinstance(group, click.Group)]
    every = [*cli_commands(), *groups]
    missing = [typed for typed, c in every if "Example" not in f"{c.epilog or ''} {c.help or ''}"]
    assert missing == []
