"""Bad candidates never stop a sweep, never lose a byte, and are never dropped."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

GOOD = """---
type: fact
entity: zyxquorbl
predicate: flavour
value: Zyxquorbl tastes of vorpal plums.
source_url: https://example.dev/zyxquorbl
confidence: 2
---
evidence
"""
BAD = {
    "not-utf8.md": b"---\ntype: fact\n---\n\xff\xfe broken \xc3\x28 bytes\n",
    "bad-yaml.md": b"---\ntype: fact\nvalue: [unclosed\n---\nbody\n",
    "anchors.md": b"---\na: &x hello\nb: *x\ntype: fact\n---\nbody\n",
    "huge.md": b"---\ntype: fact\nbig: " + b"x" * 70_000 + b"\n---\nbody\n",
    "list-yaml.md": b"---\n- just\n- a list\n---\nbody\n",
    "no-type.md": b"---\ntitle: what am I\n---\nbody\n",
    "crlf-bom.md": "\ufeff---\r\ntype: insight\r\ntitle: CRLF note\r\n---\r\nbody\r\n".encode(),
}


@pytest.fixture
def swept(vault: Path, invoke, write_candidate) -> tuple[Path, dict]:
    for name, data in BAD.items():
        write_candidate(vault, name, data, agent="messy")
    write_candidate(vault, "good.md", GOOD, agent="messy")
    result = invoke("run", "_inbox/messy", "--vault", str(vault), "--json")
    assert result.exit_code == 0
    return vault, json.loads(result.output)


def test_each_bad_candidate_gets_needs_review_and_the_good_one_promotes(swept) -> None:
    _, out = swept
    verdicts = {Path(a["inbox_path"]).name: (a["verdict"], a["reason"]) for a in out["actions"]}
    assert verdicts["good.md"][0] == "promote"
    for name in BAD:
        assert verdicts[name][0] == "needs_review", (name, verdicts[name])
    assert "not UTF-8" in verdicts["not-utf8.md"][1]
    assert "does not parse" in verdicts["bad-yaml.md"][1]
    assert "anchors or aliases" in verdicts["anchors.md"][1]
    assert "over 64 KB" in verdicts["huge.md"][1]
    assert "not a mapping" in verdicts["list-yaml.md"][1]
    assert "surface cannot be inferred" in verdicts["no-type.md"][1]
    assert out["dropped"] == 0


@pytest.mark.parametrize("name", ["not-utf8.md", "bad-yaml.md", "anchors.md", "huge.md", "list-yaml.md"])
def test_unsafe_files_keep_every_byte_and_get_only_the_line(swept, name: str) -> None:
    vault, _ = swept
    data = (vault / "_inbox/messy" / name).read_bytes()
    assert data.startswith(BAD[name])
    assert data[len(BAD[name]) :].startswith(b"\n> \xe2\x9a\xa0 curator uncertainty: ")


def test_crlf_bom_file_is_tagged_in_its_own_style(swept) -> None:
    vault, _ = swept
    data = (vault / "_inbox/messy/crlf-bom.md").read_bytes()
    assert data.startswith(
        "\ufeff---\r\ntype: insight\r\ntitle: CRLF note\r\ntags:\r\n  - needs-review\r\n---\r\nbody\r\n".encode()
    )
    assert b"\n" not in data.replace(b"\r\n", b"")


def test_never_candidates_are_never_touched(vault: Path, invoke, write_candidate) -> None:
    names = [
        "draft.md.tmp",
        ".hidden.md",
        "note (conflicted copy 2026-01-01).md",
        "x.sync-conflict-2026.md",
        "stub.md.icloud",
        "image.png",
        "notes.txt",
    ]
    paths = [write_candidate(vault, n, GOOD, agent="debris") for n in names]
    deeper = vault / "_inbox/debris/sub/deep.md"
    deeper.parent.mkdir()
    deeper.write_text(GOOD)
    os.utime(deeper, (1_600_000_000, 1_600_000_000))
    before = {p: p.read_bytes() for p in [*paths, deeper]}
    out = json.loads(invoke("run", "_inbox/debris", "--vault", str(vault), "--json").output)
    assert out["processed"] == 0
    assert {p: p.read_bytes() for p in before} == before


def test_symlinked_candidate_is_not_followed(vault: Path, invoke, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text(GOOD)
    link = vault / "_inbox/links/evil.md"
    link.parent.mkdir(parents=True)
    link.symlink_to(outside)
    out = json.loads(invoke("run", "_inbox/links", "--vault", str(vault), "--json").output)
    assert out["processed"] == 0
    assert outside.read_text() == GOOD and link.is_symlink()
