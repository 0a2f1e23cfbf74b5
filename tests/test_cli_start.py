"""What a CLI process imports to start (docs/testing.md): a cron job starts one every few minutes,
and the suite starts some hundred. A command that prints JSON renders nothing, so it never
imports rich (nor pygments, which rich's Syntax brings); a terminal's output still does."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = """import json, sys
from memory_curator.cli import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
print(json.dumps([code, sorted({m.split('.')[0] for m in sys.modules} & {'rich', 'pygments'})]), file=sys.stderr)
"""


def started(*args: str) -> tuple[int, list[str], str]:
    """The exit code, which of rich and pygments the process imported, and its stdout."""
    proc = subprocess.run([sys.executable, "-c", SCRIPT, *args], capture_output=True, text=True, timeout=60)
    code, imported = json.loads(proc.stderr.strip().splitlines()[-1])
    return code, imported, proc.stdout


TEXT = "---\ntitle: Ports\ntype: insight\n---\nThe staging proxy listens on port 8443, not 443.\n"


@pytest.mark.parametrize("command", [["run", "--settle", "0"], ["status"]])
def test_a_json_command_never_imports_rich(command: list[str], vault: Path, write_candidate) -> None:
    write_candidate(vault, "ports.md", TEXT)
    code, imported, out = started(*command, "--vault", str(vault), "--json")
    assert code == 0 and imported == []
    assert json.loads(out)["version"] == 1


def test_a_command_that_renders_still_renders(vault: Path, write_candidate) -> None:
    write_candidate(vault, "ports.md", TEXT)
    code, imported, out = started("run", "--settle", "0", "--vault", str(vault))
    assert code == 0 and "rich" in imported
    assert "promote" in out and "ports" in out
