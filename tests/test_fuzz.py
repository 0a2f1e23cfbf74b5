"""Hypothesis: arbitrary bytes and YAML-ish frontmatter, under arbitrary file names, as
candidates and as vault notes. Whatever it makes, no sweep, `index rebuild`, `check`,
`status` or `doctor` ends with exit 3 (an internal error), and nothing is lost: every
candidate is in exactly one place and the state directory holds its exact bytes.

Each command runs through the real entry point (`cli.main`, the one error boundary) with a
strict UTF-8 stdout and stderr, as a terminal has: a lone surrogate printed (a file name
that is not UTF-8) would be an internal error too.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_curator.cli.app import main
from memory_curator.commands.init import init_vault

from conftest import OLD

KEYS = (
    "type", "entity", "predicate", "value", "date", "observed_at", "confidence", "tags", "source_url",
    "sources", "title", "slug", "name", "aliases", "born", "topic", "participants", "history", "curated_from",
)  # fmt: skip
TYPES = ("fact", "event", "decision", "insight", "research", "person", "project", "preference", "nonsense")
NASTY = (
    "2026-02-30", "2026-13-01T00:00:00Z", "1990-02-30", "2026-02-28", "2026-02-28T25:61:00Z", "NO", "on",
    "1:20", "010", "0x1F", "~", "null", ".nan", "-.inf", "{{date}}", "*a", "&a x", "!!binary aGk=",
    "!!python/object/apply:os.system ['true']", "!!set {a}", "'quoted'", '"\\uDCFF"', '"\\x1b[31m"', "[a, b",
    "{a: 1", "|", ">-", "[[Some note]]", "#tag", "- x", "? k", "https://example.dev/x", "[]", "{}", "''",
)  # fmt: skip

scalar = st.one_of(
    st.sampled_from(NASTY),
    st.sampled_from(TYPES),
    st.integers(1, 600).map(lambda n: "9" * n),  # up to 600 digits (the cap is 40)
    st.integers(1, 1200).map(lambda n: "[" * n + "]" * n),  # nesting up to 1200 deep (the cap is 32)
    st.text(max_size=24),  # any characters, control characters and tabs included
)
line = st.tuples(
    st.one_of(st.sampled_from(KEYS), st.text(min_size=1, max_size=6)),
    st.sampled_from([": ", ":\t", ":", ":  ", " : "]),
    scalar,
).map(lambda t: "".join(t))
yamlish = st.builds(
    lambda lines, dup, body, fence: fence + "\n".join(lines + lines[:dup]) + ("\n---\n" if fence else "\n") + body,
    st.lists(line, max_size=8),
    st.integers(0, 2),  # repeat the first keys: duplicated keys
    st.text(max_size=80),
    st.sampled_from(["---\n", "---\n", "\ufeff---\r\n", ""]),
).map(lambda text: text.encode("utf-8", "surrogatepass"))
# a fact a sweep would promote, or patch into a note of the same key, with nasty lines added
almost = st.builds(
    lambda entity, extra, body: (
        f"---\ntype: fact\nentity: {entity}\npredicate: hq\nvalue: {body[:20] or 'v'}\n"
        f"source_url: https://example.dev/{entity}\nconfidence: 2\n{extra}---\n{body}\n"
    ).encode("utf-8", "surrogatepass"),
    st.sampled_from(["acme", "beta"]),
    st.lists(line, max_size=2).map(lambda lines: "".join(f"{x}\n" for x in lines)),
    st.text("abcdefghij klmnopqrstuvwxyz ABC 0123456789 éüßçøł 😀 .,;!?()-", max_size=60),  # readable
)
content = st.one_of(yamlish, almost, almost, st.binary(max_size=200))

name_bytes = st.one_of(
    st.binary(min_size=1, max_size=40),  # anything but '/' and NUL: not UTF-8, escape sequences, newlines
    st.text(min_size=1, max_size=62).map(lambda t: t.encode("utf-8", "surrogatepass")),  # up to 248 bytes
).map(lambda b: b.replace(b"/", b"_").replace(b"\x00", b"_").lstrip(b".") or b"x")
AGENTS = (b"agent-a", b"agent-\xff", b"esc\x1b[31m", b"")  # b"": the inbox itself (agent `inbox`)
NOTE_FOLDERS = (b"notes", b"facts/acme", b"persons", b"events/2026", b"decisions", b"caf\xe9")

Planted = tuple[bytes, bytes, bytes]  # (folder, file name, content)
candidate = st.tuples(st.sampled_from(AGENTS), name_bytes, content)
vault_note = st.tuples(st.sampled_from(NOTE_FOLDERS), name_bytes, content)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fuzz-template") / "vault"
    init_vault(root)
    return root


def cli(*args: str) -> tuple[int, str]:
    """The real entry point with a strict UTF-8 stdout and stderr: (exit code, both outputs)."""
    out, err = io.BytesIO(), io.BytesIO()
    stdout = io.TextIOWrapper(out, encoding="utf-8", errors="strict", write_through=True)
    stderr = io.TextIOWrapper(err, encoding="utf-8", errors="strict", write_through=True)
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr), pytest.raises(SystemExit) as stop:
        main(list(args))
    code = stop.value.code
    return code if isinstance(code, int) else 0, (out.getvalue() + err.getvalue()).decode("utf-8")


def plant(root: Path, folder: bytes, name: bytes, data: bytes, n: int) -> Path | None:
    """Write one file (its name made unique, within NAME_MAX); None when the name is refused."""
    full = os.fsdecode(name[:240] + b"-%d.md" % n)
    path = root / os.fsdecode(folder) / full if folder else root / full
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        path.write_bytes(data)
    except OSError:  # e.g. a name the file system refuses
        return None
    os.utime(path, (OLD, OLD))
    return path


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.mark.slow
@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)
@given(
    candidates=st.lists(candidate, min_size=1, max_size=4),
    notes=st.lists(vault_note, max_size=3),
)
def test_no_command_exits_3_and_nothing_is_lost(
    template: Path,
    tmp_path: Path,
    candidates: list[tuple[bytes, bytes, bytes]],
    notes: list[tuple[bytes, bytes, bytes]],
) -> None:
    work = tmp_path / f"ex-{os.urandom(4).hex()}"
    root, state = work / "vault", work / "state"
    shutil.copytree(template, root)
    planted: dict[Path, bytes] = {}
    for n, (agent, name, data) in enumerate(candidates):
        data += b"\nfuzz-candidate-%d\n" % n  # unique bytes: one candidate, one hash
        path = plant(root, b"_inbox/" + agent if agent else b"_inbox", name, data, n)
        if path is not None:
            planted[path] = data
    originals: dict[Path, bytes] = {}
    for n, (folder, name, data) in enumerate(notes):
        path = plant(root, folder, name, data, 100 + n)
        if path is not None:
            originals[path] = data
    base = ("--vault", str(root), "--state-dir", str(state))

    for path in planted:
        code, out = cli("check", str(path), "--vault", str(root), "--json")
        assert code in (0, 1), out  # 1: a payload that starts like JSON and is not
    code, out = cli("run", *base, "--no-judge", "--json")
    assert code == 0, out
    for command in (("index", "rebuild"), ("status",), ("status", "--json"), ("log",), ("doctor",)):
        code, out = cli(*command, *base)
        assert code in (0, 1) if command == ("doctor",) else code == 0, (command, out)

    durable = [
        p.read_bytes()
        for p in root.rglob("*.md")
        if p.is_file() and not p.relative_to(root).as_posix().startswith("_inbox/")
    ]
    dropped = [p.read_bytes() for p in (root / "_inbox/.dropped").rglob("*") if p.is_file()]
    for path, data in planted.items():
        digest = sha(data)
        in_inbox = path.exists()
        in_durable = any(digest.encode() in text for text in durable)
        in_dropped = any(text.startswith(data) for text in dropped)
        assert in_inbox + in_durable + in_dropped == 1, (path, in_inbox, in_durable, in_dropped)
        if not in_inbox or path.read_bytes() != data:  # acted on: its exact bytes are kept for `undo`
            assert (state / "preimages" / digest).read_bytes() == data
    for path, data in originals.items():
        assert path.exists()
        if path.read_bytes() != data:  # patched: the note's old bytes are kept
            assert (state / "preimages" / sha(data)).read_bytes() == data
