"""Count, across a package, the signatures returning `dict[str, Any]` and those taking an `Any`
parameter (issue 40's figures): `python tests/perf/any_count.py [memory_curator]`."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path


def count(package: Path) -> tuple[int, int, int]:
    """(signatures, returning dict[str, Any], taking Any)."""
    signatures = returns = takes = 0
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            signatures += 1
            returns += node.returns is not None and "dict[str, Any]" in ast.unparse(node.returns)
            a = node.args
            params = [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]
            notes = [ast.unparse(p.annotation) for p in params if p is not None and p.annotation is not None]
            takes += any(re.search(r"\bAny\b", n) for n in notes)
    return signatures, returns, takes


if __name__ == "__main__":
    total, returning, taking = count(Path(sys.argv[1] if len(sys.argv) > 1 else "memory_curator"))
    print(f"signatures {total}; returning dict[str, Any]: {returning}; taking Any: {taking}")
