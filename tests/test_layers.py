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
    """(line, dotted module) of every import in a file, relative ones resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1])
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            found.append((node.lineno, base))
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names if base == "memory_curator"]
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


def test_the_layer_test_sees_a_violation(tmp_path: Path) -> None:
    """The checker itself: a core module importing os or the store is caught."""
    bad = PACKAGE / "core" / "_layer_probe.py"
    bad.write_text("import os\nfrom memory_curator.store import writer\n", encoding="utf-8")
    try:
        found = imports(bad)
    finally:
        bad.unlink()
    assert (1, "os") in found and layer_of("memory_curator.store.writer") == "store"


# What only cli/ may read of the machine it runs on (`cli.machine.here`, issue 26): below it, the
# environment, the home folder, the uid, the platform, the host and the login come from the
# context's `Machine`, so a test states the machine it means.
WORLD_MODULES = {"socket", "platform", "getpass", "platformdirs"}
WORLD_ATTRIBUTES = {("os", "environ"), ("os", "environb"), ("os", "getenv"), ("os", "getuid"), ("Path", "home")}
# commands/schedule.py is being moved onto Machine in parallel (issue 26's schedule part); this
# entry goes when that branch is merged.
READS_THE_WORLD_FOR_NOW = {"commands/schedule.py"}


def world_reads(path: Path) -> list[str]:
    """Every read of the machine in a file: an import of a module that tells it, an `os.environ`
    (`os.getenv`, `os.getuid`, `Path.home`), or the same names imported bare."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found = [f"{line} imports {module}" for line, module in imports(path) if module.split(".")[0] in WORLD_MODULES]
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
            if where not in READS_THE_WORLD_FOR_NOW:
                wrong += [f"{where}:{read}" for read in world_reads(path)]
    assert wrong == []


def test_the_machine_test_sees_a_read(tmp_path: Path) -> None:
    """The checker itself: each way of reading the machine is caught."""
    probe = PACKAGE / "store" / "_machine_probe.py"
    probe.write_text(
        "import os, socket\nfrom os import environ\nfrom pathlib import Path\n"
        "a = os.environ.get('X')\nb = Path.home()\nc = os.getuid()\n",
        encoding="utf-8",
    )
    try:
        found = world_reads(probe)
    finally:
        probe.unlink()
    assert found == [
        "1 imports socket",
        "2 imports os.environ",
        "4 reads os.environ",
        "5 reads Path.home",
        "6 reads os.getuid",
    ]
