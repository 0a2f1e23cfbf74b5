"""The layers are in the code, not only in docs/architecture.md: each package imports only the
layers below it, and the pure core imports no I/O at all. Read from the source (ast), so a
lazy import inside a function counts too."""

from __future__ import annotations

import ast
import re
from pathlib import Path

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
