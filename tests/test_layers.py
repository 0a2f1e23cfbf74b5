"""The layers are in the code, not only in docs/architecture.md: each package imports only the
layers below it, and the pure core imports no I/O at all. Read from the source (ast), so a
lazy import inside a function counts too."""

from __future__ import annotations

import ast
import importlib
import re
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "memory_curator"
LAYERS = ("core", "store", "index", "judge", "commands", "cli")
# what each layer may import from the package (besides itself)
ALLOWED: dict[str, set[str]] = {
    "core": set(),
    "store": {"core"},
    "index": {"core", "store"},
    "judge": {"core", "store"},
    "commands": {"core", "store", "index", "judge"},
    "cli": {"core", "store", "index", "judge", "commands"},
}
CORE_FORBIDDEN = {"os", "sqlite3", "fcntl", "click", "rich", "socket", "subprocess", "tempfile", "shutil"}
PRINTERS = {"click", "rich"}  # only cli/ renders


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, dotted module) of every import in a file of the package, relative ones resolved."""
    return imports_of(path.read_text(encoding="utf-8"), module_name(path), str(path))


def module_name(path: Path) -> str:
    """`memory_curator/core/rules.py` -> `memory_curator.core.rules` (a package: its name)."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(source: str, module: str, filename: str = "<probe>") -> list[tuple[int, str]]:
    """(line, dotted module) of every import in `source`, the text of `module` (relative ones
    resolved); `from memory_curator.x import name` gives `memory_curator.x.name`: a submodule,
    or a name defined in `memory_curator.x`."""
    tree = ast.parse(source, filename)
    package = module if filename.endswith("__init__.py") else module.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            if base.startswith("memory_curator"):  # a submodule, or a name of the module (`_owner`)
                found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, base))
    return found


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "memory_curator" or len(parts) < 2:
        return None
    return parts[1] if parts[1] in LAYERS else None


def sources(layer: str) -> list[Path]:
    return sorted((PACKAGE / layer).rglob("*.py"))


def test_every_module_lives_in_a_layer() -> None:
    loose = [p.name for p in PACKAGE.glob("*.py") if p.name not in ("__init__.py", "__main__.py")]
    assert loose == [], f"modules outside the layers: {loose}"
    assert all(sources(layer) for layer in LAYERS)


@pytest.mark.parametrize("layer", LAYERS)
def test_a_layer_imports_only_the_layers_below_it(layer: str) -> None:
    wrong = []
    for path in sources(layer):
        for line, module in imports(path):
            other = layer_of(module)
            if other is not None and other != layer and other not in ALLOWED[layer]:
                wrong.append(f"{path.relative_to(PACKAGE)}:{line} imports {module}")
    assert wrong == []


def test_the_core_imports_no_io() -> None:
    wrong = []
    for path in sources("core"):
        for line, module in imports(path):
            if module.split(".")[0] in CORE_FORBIDDEN:
                wrong.append(f"{path.relative_to(PACKAGE)}:{line} imports {module}")
    assert wrong == []


def test_only_cli_prints() -> None:
    wrong = []
    for layer in LAYERS[:-1]:
        for path in sources(layer):
            if re.search(r"\bprint\(", path.read_text(encoding="utf-8")):
                wrong.append(f"{path.relative_to(PACKAGE)}: print()")
            for line, module in imports(path):
                if module.split(".")[0] in PRINTERS:
                    wrong.append(f"{path.relative_to(PACKAGE)}:{line} imports {module}")
    assert wrong == []


def test_the_layer_test_sees_a_violation() -> None:
    """The checker itself: a core module importing os or the store is caught (read from text:
    nothing is written into the package)."""
    found = imports_of("import os\nfrom memory_curator.store import writer\n", "memory_curator.core._probe")
    assert (1, "os") in found and (2, "memory_curator.store.writer") in found
    assert layer_of("memory_curator.store.writer") == "store"
    relative = imports_of("from ..store import writer\nfrom . import names\n", "memory_curator.core._probe")
    assert {m for _, m in relative} >= {"memory_curator.store.writer", "memory_curator.core.names"}


# --- no import circles --------------------------------------------------------------------------


def module_graph() -> dict[str, set[str]]:
    """Each module of the package -> the package's modules it imports anywhere in its file: at
    the top, inside a function, and under `if TYPE_CHECKING:` too (a circle a type checker
    needs is still a circle in the design)."""
    modules = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph = {}
    for name, path in modules.items():
        owners = {_owner(imported, modules) for _, imported in imports(path)}
        graph[name] = {owner for owner in owners if owner is not None and owner != name}
    return graph


def _owner(imported: str, modules: dict[str, Path]) -> str | None:
    """The module of the package that `imported` names, or one of its attributes."""
    parts = imported.split(".")
    return next((".".join(parts[:n]) for n in range(len(parts), 0, -1) if ".".join(parts[:n]) in modules), None)


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of a graph: each strongly connected component of more than one
    module, sorted (Tarjan's algorithm)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        order[node] = low[node] = len(order)
        stack.append(node)
        for other in sorted(graph.get(node, ())):
            if other not in order:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], order[other])
        if low[node] == order[node]:
            component = stack[stack.index(node) :]
            del stack[stack.index(node) :]
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in order:
            visit(node)
    return sorted(found)


def test_no_module_imports_itself_back() -> None:
    assert cycles(module_graph()) == []


def test_the_circle_finder_sees_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"f"}, "f": {"e"}, "g": {"a"}}
    assert cycles(graph) == [["a", "b", "c"], ["e", "f"]]
    lazy = imports_of("def later():\n    from memory_curator.core import rules\n", "memory_curator.core.ownership")
    assert (2, "memory_curator.core.rules") in lazy  # an import inside a function counts
    modules = {"memory_curator.core.rules": PACKAGE, "memory_curator.core": PACKAGE}
    assert _owner("memory_curator.core.rules.Rules", modules) == "memory_curator.core.rules"


# What only cli/ may read of the machine it runs on (`cli.machine.here`, issue 26): below it, the
# environment, the home folder, the uid, the platform, the host and the login come from the
# context's `Machine`, so a test states the machine it means.
WORLD_MODULES = {"socket", "platform", "getpass", "platformdirs"}
WORLD_ATTRIBUTES = {("os", "environ"), ("os", "environb"), ("os", "getenv"), ("os", "getuid"), ("Path", "home")}


def world_reads(path: Path) -> list[str]:
    """Every read of the machine in a file of the package (`world_reads_of`)."""
    return world_reads_of(path.read_text(encoding="utf-8"), module_name(path), str(path))


def world_reads_of(source: str, module: str, filename: str = "<probe>") -> list[str]:
    """Every read of the machine in `source`, the text of `module`: an import of a module that
    tells it, an `os.environ` (`os.getenv`, `os.getuid`, `Path.home`), or the same names imported bare."""
    tree = ast.parse(source, filename)
    found = [
        f"{line} imports {imported}"
        for line, imported in imports_of(source, module, filename)
        if imported.split(".")[0] in WORLD_MODULES
    ]
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if (node.value.id, node.attr) in WORLD_ATTRIBUTES:
                found.append(f"{node.lineno} reads {node.value.id}.{node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module in ("os", "pathlib"):
            bare = {name for module, name in WORLD_ATTRIBUTES if module == "os"} | {"Path.home"}
            found += [f"{node.lineno} imports {node.module}.{a.name}" for a in node.names if a.name in bare]
    return sorted(found, key=lambda read: int(read.split()[0]))


def test_nothing_below_the_cli_reads_the_machine() -> None:
    wrong = []
    for layer in LAYERS[:-1]:
        for path in sources(layer):
            where = path.relative_to(PACKAGE).as_posix()
            wrong += [f"{where}:{read}" for read in world_reads(path)]
    assert wrong == []


def test_the_machine_test_sees_a_read() -> None:
    """The checker itself: each way of reading the machine is caught (read from text: nothing is
    written into the package)."""
    probe = (
        "import os, socket\nfrom os import environ\nfrom pathlib import Path\n"
        "a = os.environ.get('X')\nb = Path.home()\nc = os.getuid()\n"
    )
    assert world_reads_of(probe, "memory_curator.store._machine_probe") == [
        "1 imports socket",
        "2 imports os.environ",
        "4 reads os.environ",
        "5 reads Path.home",
        "6 reads os.getuid",
    ]


# --- tests patch no curator global but those docs/architecture.md lists (issue 26) ---------------

TESTS = Path(__file__).resolve().parent
ARCHITECTURE = TESTS.parent / "docs" / "architecture.md"
PATCHES_HEAD = "Patches of a curator global remain"  # the doc's sentence above its table of them


class _Patches(ast.NodeVisitor):
    """The curator globals a test file patches: a `setattr`/`delattr` (monkeypatch's or the
    builtin), `mock.patch` or `patch.object` on a curator module or what one holds, named through
    an import of the file (at the top or in the function) or as a dotted string."""

    def __init__(self) -> None:
        self.scopes: list[dict[str, str]] = [{}]
        self.found: set[str] = set()

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            bound = alias.asname or alias.name.split(".")[0]
            self.scopes[-1][bound] = alias.name if alias.asname else bound

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            self.scopes[-1][alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.scopes.append(dict(self.scopes[-1]))  # a function's imports are its own
        self.generic_visit(node)
        self.scopes.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Call(self, node: ast.Call) -> None:
        target = self._target(node)
        if target is not None and target.startswith("memory_curator."):
            self.found.add(target)
        self.generic_visit(node)

    def _target(self, call: ast.Call) -> str | None:
        func, args = call.func, call.args
        callee = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if not args or callee not in ("setattr", "delattr", "patch", "object"):
            return None
        if callee == "object" and not (isinstance(func, ast.Attribute) and _last_name(func.value) == "patch"):
            return None
        first, name = args[0], args[1] if len(args) > 1 else None
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return first.value  # "memory_curator.x.name"
        owner = self._dotted(first)
        if owner is None or callee == "patch":
            return None
        return f"{owner}.{name.value if isinstance(name, ast.Constant) else '?'}"

    def _dotted(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Name):
            return self.scopes[-1].get(node.id)
        if isinstance(node, ast.Attribute):
            owner = self._dotted(node.value)
            return None if owner is None else f"{owner}.{node.attr}"
        return None


def _last_name(node: ast.expr) -> str:
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


def canonical(target: str) -> str:
    """`memory_curator.commands.submit.cand.build` -> `core.candidate.build`: the module (or class)
    that holds the patched name, below memory_curator (through another module: where it lives)."""
    *path, name = target.split(".")
    owner: object = None
    for end in range(len(path), 0, -1):
        try:
            owner = importlib.import_module(".".join(path[:end]))
        except ImportError:
            continue
        for attr in path[end:]:
            owner = getattr(owner, attr, None)
        break
    if isinstance(owner, ModuleType):
        where = owner.__name__
    elif isinstance(owner, type):
        where = f"{owner.__module__}.{owner.__qualname__}"
    else:
        where = ".".join(path)
    return f"{where}.{name}".removeprefix("memory_curator.")


def curator_patches(source: str, filename: str = "<probe>") -> set[str]:
    finder = _Patches()
    finder.visit(ast.parse(source, filename))
    return {canonical(target) for target in finder.found}


def documented_patches() -> set[tuple[str, str]]:
    """(test, patched) of every row of the doc's table of patches that remain."""
    section = ARCHITECTURE.read_text(encoding="utf-8").partition(PATCHES_HEAD)[2].partition("\n## ")[0]
    rows = re.findall(r"^\| `(test_\w+)` \| ([^|]+) \|", section, flags=re.M)
    return {(test, patched) for test, cell in rows for patched in re.findall(r"`([\w.]+)`", cell)}


def test_every_patch_of_a_curator_global_is_one_the_docs_list() -> None:
    found = {
        (path.stem, patched)
        for path in sorted(TESTS.rglob("*.py"))
        for patched in curator_patches(path.read_text(encoding="utf-8"), str(path))
    }
    documented = documented_patches()
    assert documented, f"{ARCHITECTURE.name} lost its table of patches"
    assert found - documented == set(), "a patch the docs do not list: use a seam, or list it with its reason"
    assert documented - found == set(), "a row no test needs any more: drop it from the table"


def test_the_patch_finder_sees_a_patch() -> None:
    """The checker itself: every form of patch is seen, through any import, and named where the
    patched name lives; the world outside the curator is not a curator global."""
    probe = textwrap.dedent(
        """
        import sys
        from unittest import mock
        from memory_curator.core import merge as merge_mod
        import memory_curator.commands.submit
        def test_it(monkeypatch):
            from memory_curator.commands import doctor
            monkeypatch.setattr(merge_mod, "merge", None)
            monkeypatch.setattr(memory_curator.commands.submit.cand, "build", None)
            monkeypatch.setattr(doctor.os, "access", None)
            monkeypatch.setattr("memory_curator.store.runlog.MAX_BYTES", 1)
            setattr(doctor, "check_vault", None)
            with mock.patch.object(merge_mod, "Merged"), mock.patch("memory_curator.store.writer.FILES"):
                monkeypatch.setattr(sys, "stdin", None)
        def test_other(monkeypatch):
            monkeypatch.setattr(doctor, "check_rules", None)  # not imported here: another module's name
        """
    )
    assert curator_patches(probe) == {
        "core.merge.merge",
        "core.candidate.build",
        "os.access",
        "store.runlog.MAX_BYTES",
        "commands.doctor.check_vault",
        "core.merge.Merged",
        "store.writer.FILES",
    }
