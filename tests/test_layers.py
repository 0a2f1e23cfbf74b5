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
