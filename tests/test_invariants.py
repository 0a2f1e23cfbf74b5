"""Invariant 5 (design §6), tried through the installed entry point: a sweep writes nothing
outside the vault but its state directory; nothing under .obsidian/ or .trash/ and no
human-authored note is touched."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from conftest import FIXTURES, age, run_installed

CANDIDATES = {
    "promote.md": "---\ntype: fact\nentity: qwertzium\npredicate: melting-point\nvalue: 1234 K\n"
    "source_url: https://example.dev/qwertzium\nconfidence: 2\n---\nmeasured\n",
    "patch.md": "---\ntype: fact\nentity: obsidian\npredicate: file-format\n"
    "value: Obsidian stores notes as plain Markdown files in a local folder.\n"
    "source_url: https://obsidian.md/about-the-format\nconfidence: 2\n---\nanother source\n",
    "drop.md": "---\ntype: fact\nentity: vendor\npredicate: share\nvalue: big\nconfidence: 1\n---\nrumour\n",
    "review.md": "---\ntype: insight\ntitle: Something to think about\n---\nmaybe\n",
    "human-conflict.md": "---\ntype: decision\ntitle: Keep notes in Markdown\nsource_url: https://x.example.dev\n"
    "confidence: 3\ntags: [new-tag]\n---\nwe changed our mind\n",
    "human-agree.md": "---\ntype: insight\ntitle: Agents need a curator\nsource_url: https://y.example.dev\n"
    "confidence: 2\n---\nagreed\n",
}


def tree(root: Path, skip: tuple[Path, ...] = ()) -> dict[str, tuple[bytes, int]]:
    out = {}
    for path in sorted(root.rglob("*")):
        if any(path == s or s in path.parents for s in skip) or not path.is_file():
            continue
        out[path.relative_to(root).as_posix()] = (path.read_bytes(), path.stat().st_mtime_ns)
    return out


def test_a_sweep_writes_only_the_vault_and_its_state(tmp_path: Path) -> None:
    world = tmp_path / "world"
    vault, home, elsewhere = world / "vault", world / "home", world / "elsewhere"
    shutil.copytree(FIXTURES, vault)
    (vault / ".obsidian").mkdir()
    (vault / ".obsidian/app.json").write_text('{"theme": "dark"}')
    (vault / ".trash").mkdir()
    (vault / ".trash/old.md").write_text("---\ntype: fact\n---\ntrash\n")
    elsewhere.mkdir(parents=True)
    (elsewhere / "untouched.md").write_text("not part of any vault")
    (home / ".local/state").mkdir(parents=True)
    for name, text in CANDIDATES.items():
        path = vault / "_inbox/bot" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        age(path)
    protected = [
        ".obsidian/app.json",
        ".trash/old.md",
        "decisions/keep-notes-in-markdown.md",
        "insights/agents-need-a-curator.md",
    ]
    before_protected = {p: (vault / p).read_bytes() for p in protected}
    state_root = home / ".local/state"
    before_world = tree(world, skip=(vault, state_root))
    env = {
        "HOME": str(home),
        "XDG_STATE_HOME": str(state_root),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "TMPDIR": str(elsewhere / "tmp-that-must-not-appear"),
    }
    proc = run_installed("run", "--vault", str(vault), "--json", cwd=elsewhere, env=env)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    bot = next(ag for ag in out["agents"] if ag["agent_id"] == "bot")
    verdicts = {Path(a["inbox_path"]).name: a["verdict"] for a in bot["actions"]}
    assert verdicts == {
        "promote.md": "promote",
        "patch.md": "patch",
        "drop.md": "drop",
        "review.md": "needs_review",
        "human-conflict.md": "needs_review",
        "human-agree.md": "needs_review",
    }
    assert tree(world, skip=(vault, state_root)) == before_world, "something was written outside the vault"
    assert {p: (vault / p).read_bytes() for p in protected} == before_protected
    written_state = [p for p in state_root.rglob("*") if p.is_file()]
    assert written_state and all("memory-curator" in p.relative_to(state_root).parts[0] for p in written_state)
    assert not os.path.exists(elsewhere / "tmp-that-must-not-appear")
