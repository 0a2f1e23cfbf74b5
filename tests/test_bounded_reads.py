"""Every read of an inbox file is bounded and regular-only (issue 36): a flagged item grown to
3 GiB, swapped for a symlink to /dev/zero or for a FIFO is named, never read whole, never waited
on. Each command runs in a child with a timeout, so a regression fails instead of hanging."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from loop_kit import cli

from memory_curator.store.paths import NotRegular, hash_capped, read_capped

GiB = 1 << 30
RSS_LIMIT_MB = 300
TESTS = Path(__file__).resolve().parent

UNSOURCED = (
    "---\ntype: fact\nentity: widget\npredicate: color\nvalue: The widget is blue.\nconfidence: 2\n---\nI think so.\n"
)
CLASH = (
    "---\ntype: fact\nentity: obsidian\npredicate: file-format\nvalue: Obsidian stores notes in a binary database.\n"
    "source_url: https://example.dev/format\nconfidence: 2\n---\nRead somewhere.\n"
)
FLAGGED = "_inbox/alice/deal.md"  # flagged: not sourced
CLASHING = "_inbox/alice/clash.md"  # flagged: a contradiction (what `status` looks at again)

MCP_STATUS = (
    "import json, sys\n"
    "sys.path.insert(0, sys.argv[1])\n"
    "from test_mcp import call\n"
    "from memory_curator.cli.machine import build_context\n"
    "from memory_curator.commands.context import Seams\n"
    "from memory_curator.core.clock import SystemClock\n"
    "ctx = build_context(__import__('pathlib').Path(sys.argv[2]), None, Seams(clock=SystemClock()))\n"
    "print(json.dumps(call(ctx, 'curator_status').structured_content))\n"
)


def child(argv: list[str], cwd: Path, timeout: float = 60) -> tuple[subprocess.CompletedProcess[str], float]:
    """`argv` in a grandchild, with its peak RSS in MB; a hang is a failure after `timeout`."""
    probe = (
        "import resource, subprocess, sys, json\n"
        "try:\n"
        "    done = subprocess.run(\n"
        f"        sys.argv[1:], capture_output=True, text=True, timeout={timeout}, stdin=subprocess.DEVNULL\n"
        "    )\n"
        "    code, out, err = done.returncode, done.stdout, done.stderr\n"
        "except subprocess.TimeoutExpired as exc:\n"
        "    code, out, err = 'timeout', str(exc.stdout), str(exc.stderr)\n"
        "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024\n"
        "print(json.dumps([code, out, err, peak]))\n"
    )
    argv = [sys.executable, "-c", probe, *argv]
    outer = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout + 30)
    code, out, err, peak = json.loads(outer.stdout)
    assert code != "timeout", f"{argv[3:]} did not return within {timeout} s: {out} {err}"
    return subprocess.CompletedProcess(argv, code, out, err), peak


def curator(*args: str, vault: Path) -> tuple[subprocess.CompletedProcess[str], float]:
    return child([sys.executable, "-m", "memory_curator", *args, "--vault", str(vault)], cwd=vault)


def mcp_status(vault: Path) -> tuple[subprocess.CompletedProcess[str], float]:
    return child([sys.executable, "-c", MCP_STATUS, str(TESTS), str(vault)], cwd=vault)


@pytest.fixture
def flagged(vault: Path, write_candidate, capsys) -> Path:  # type: ignore[no-untyped-def]
    """A vault whose sweep left two items flagged in the inbox (one a contradiction)."""
    write_candidate(vault, "deal.md", UNSOURCED, agent="alice")
    write_candidate(vault, "clash.md", CLASH, agent="alice")
    code, out, err = cli(capsys, "run", "--vault", str(vault), "--settle", "0", "--no-judge")
    assert code == 0 and "2 wait for review" in out, out + err
    return vault


def grow(path: Path) -> None:
    os.truncate(path, 3 * GiB)  # sparse: instant, and 3 GiB to whoever reads it whole


COMMANDS = {
    "status": lambda v: curator("status", vault=v),
    "run": lambda v: curator("run", "--settle", "0", "--no-judge", vault=v),
    "review": lambda v: curator("review", vault=v),
    "mcp curator_status": mcp_status,
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_flagged_item_grown_to_3_gib_is_named_and_never_read_whole(flagged: Path, command: str) -> None:
    for rel in (FLAGGED, CLASHING):
        grow(flagged / rel)
    done, peak = COMMANDS[command](flagged)
    assert done.returncode == 0, done.stderr
    assert peak <= RSS_LIMIT_MB, f"{command}: peak RSS {peak:.0f} MB"
    said = done.stdout.replace("\\/", "/")
    if command != "mcp curator_status":  # MCP names the items it counts too large
        assert "deal.md" in said and "too large: 3 GiB > 1 MiB" in said, said
    else:
        assert "too large" in said, said
    assert (flagged / FLAGGED).stat().st_size == 3 * GiB


@pytest.mark.parametrize("command", ["run", "review", "status"])
def test_a_symlink_to_dev_zero_swapped_in_for_a_flagged_item_is_named(flagged: Path, command: str) -> None:
    for rel in (FLAGGED, CLASHING):
        (flagged / rel).unlink()
        (flagged / rel).symlink_to("/dev/zero")
    done, peak = COMMANDS[command](flagged)
    assert done.returncode == 0, done.stderr
    assert peak <= RSS_LIMIT_MB, f"{command}: peak RSS {peak:.0f} MB"
    if command == "run":  # the first one named, the others counted
        assert "_inbox/alice/clash.md (a symlink) and 1 more" in done.stdout, done.stdout
    if command == "status":
        assert "_inbox/alice/deal.md" in done.stdout and "symlink" in done.stdout, done.stdout


def fifo_for(vault: Path, rel: str) -> None:
    (vault / rel).unlink()
    os.mkfifo(vault / rel)


@pytest.mark.parametrize("command", ["run", "review", "status", "undo"])
def test_a_fifo_swapped_in_for_a_flagged_item_never_blocks(flagged: Path, command: str) -> None:
    for rel in (FLAGGED, CLASHING):
        fifo_for(flagged, rel)
    if command == "undo":
        done, _ = curator("undo", "--last", vault=flagged)
        assert done.returncode in (0, 1), done.stderr
        assert "alice/deal.md" in done.stdout + done.stderr, done.stdout + done.stderr
        assert (flagged / FLAGGED).is_fifo()
        return
    done, _ = COMMANDS[command](flagged)
    assert done.returncode == 0, done.stderr
    if command == "run":
        assert "_inbox/alice/clash.md (not a regular file" in done.stdout, done.stdout
    if command == "status":
        assert "_inbox/alice/deal.md" in done.stdout and "not a regular file" in done.stdout, done.stdout


def test_recovery_of_an_open_plan_whose_file_is_now_a_fifo_returns(flagged: Path) -> None:
    """A sweep killed between flagging a candidate and its end record; then a FIFO in its place."""
    journal = next(Path(os.environ["XDG_STATE_HOME"]).rglob("journal.jsonl"))
    lines = journal.read_text().splitlines(keepends=True)
    ends = [i for i, line in enumerate(lines) if '"event": "end"' in line or '"event":"end"' in line]
    journal.write_text("".join(line for i, line in enumerate(lines) if i not in ends))
    for name in ("journal.checkpoint",):
        (journal.parent / name).unlink(missing_ok=True)
    fifo_for(flagged, FLAGGED)
    done, _ = curator("run", "--settle", "0", "--no-judge", vault=flagged)
    assert done.returncode == 0, done.stderr
    assert (flagged / FLAGGED).is_fifo()


def test_the_reader_refuses_what_is_not_a_regular_file_without_opening_it(tmp_path: Path) -> None:
    fifo, link, folder = tmp_path / "pipe.md", tmp_path / "zero.md", tmp_path / "dir.md"
    os.mkfifo(fifo)
    link.symlink_to("/dev/zero")
    folder.mkdir()
    whys = {}
    for path in (fifo, link, folder, Path("/dev/null")):
        with pytest.raises(NotRegular) as refused:
            read_capped(path, 10)
        whys[path.name] = str(refused.value)
    assert whys == {
        "pipe.md": f"{fifo}: not a regular file (a FIFO)",
        "zero.md": f"{link}: a symbolic link",
        "dir.md": f"{folder}: not a regular file (a folder)",
        "null": "/dev/null: not a regular file (a character device)",
    }
    with pytest.raises(NotRegular):
        hash_capped(fifo)


def test_the_reader_reads_at_most_the_limit_and_hashes_in_chunks(tmp_path: Path) -> None:
    small, sparse = tmp_path / "small.md", tmp_path / "sparse.md"
    small.write_bytes(b"abc")
    sparse.write_bytes(b"")
    os.truncate(sparse, 3 * GiB)
    assert read_capped(small, 3) == b"abc" and read_capped(small, 2) is None
    assert read_capped(sparse, 1 << 20) is None
    assert hash_capped(small) == "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert hash_capped(small, 2) is None and hash_capped(sparse, 1 << 20) is None


def test_max_candidate_bytes_over_32_mib_is_refused_in_one_line(vault: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """Over it, a flagged candidate (its bytes plus the tag lines) could pass the 64 MiB the
    store hashes of any file, and no compare-and-swap on it would ever succeed."""
    rules = vault / "_meta/inbox-rules.md"
    rules.write_text(rules.read_text().replace("max_candidate_bytes: 1048576", "max_candidate_bytes: 67108864", 1))
    code, out, err = cli(capsys, "run", "--vault", str(vault), "--settle", "0", "--no-judge")
    assert code == 1 and "max_candidate_bytes" in err and "32 MiB at most" in err, out + err
