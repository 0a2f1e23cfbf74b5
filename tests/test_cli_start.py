"""What a CLI process imports to start (docs/testing.md): a cron job starts one every few minutes,
and the suite starts some hundred. A command that prints JSON renders nothing, so it never
imports rich (nor pygments, which rich's Syntax brings); a terminal's output still does."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = """import json, sys
from memory_curator.cli import main
codes = []
for command in json.loads(sys.argv[1]):
    try:
        main(command)
    except SystemExit as exc:
        codes.append(exc.code)
    print(flush=True)
print(json.dumps([codes, sorted({m.split('.')[0] for m in sys.modules} & {'rich', 'pygments'})]), file=sys.stderr)
"""


def started(*commands: list[str]) -> tuple[list[int], list[str], list[str]]:
    """The commands run one after the other in one process: their exit codes, which of rich and
    pygments the process imported, and each command's stdout."""
    argv = [sys.executable, "-c", SCRIPT, json.dumps(commands)]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    codes, imported = json.loads(proc.stderr.strip().splitlines()[-1])
    return codes, imported, proc.stdout.split("\n\n")


TEXT = "---\ntitle: Ports\ntype: insight\n---\nThe staging proxy listens on port 8443, not 443.\n"


def test_a_json_command_never_imports_rich(vault: Path, write_candidate) -> None:
    write_candidate(vault, "ports.md", TEXT)
    where = ["--vault", str(vault), "--json"]
    codes, imported, (swept, status, _) = started(["run", "--settle", "0", *where], ["status", *where])
    assert codes == [0, 0] and imported == []
    assert json.loads(swept)["promoted"] == 1 and json.loads(status)["command"] == "status"


def test_a_command_that_renders_still_renders(vault: Path, write_candidate) -> None:
    write_candidate(vault, "ports.md", TEXT)
    codes, imported, (out, _) = started(["run", "--settle", "0", "--vault", str(vault)])
    assert codes == [0] and "rich" in imported
    assert "promote" in out and "ports" in out
