"""Issue 18: `rules check` reports every error in one pass with file:line, a surface's key
fields must appear in its path template, and `status` says why sweeps stopped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_schedulers import Fakes, install_fakes
from loop_kit import cli

from memory_curator.core.errors import RulesError
from memory_curator.core.rules import parse
from memory_curator.store.rules_file import DEFAULT_RULES

DEFAULT_TEXT = DEFAULT_RULES.read_text(encoding="utf-8")
THREE_ERRORS = [
    ('path: "facts/{entity}/{predicate}.md"', 'path: "facts/{entity}/{colour}.md"', "unknown placeholder {colour}"),
    ("    when: known_unchanged", "    when: nope", "unknown condition 'nope'"),
    ("  settle_seconds: 3", "  settle_seconds: soon", "setting 'settle_seconds' must be a number"),
]


@pytest.fixture(autouse=True)
def fakes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Fakes:
    return install_fakes(tmp_path / "fakes", monkeypatch)


def line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def broken(text: str = DEFAULT_TEXT) -> str:
    for old, new, _ in THREE_ERRORS:
        assert old in text
        text = text.replace(old, new, 1)
    return text


def test_every_error_in_one_pass_with_its_line() -> None:
    text = broken()
    with pytest.raises(RulesError) as info:
        parse(text, "rules.md")
    problems = info.value.problems
    assert [p.line for p in problems] == sorted(line_of(text, new.strip()) for _, new, _ in THREE_ERRORS)
    for problem, (_, _, message) in zip(problems, THREE_ERRORS, strict=True):
        assert message in problem.message and str(problem).startswith(f"rules.md:{problem.line}: ")
    assert str(info.value) == str(problems[0])  # one line where one line is shown (run, doctor)


def test_one_error_is_still_one_problem() -> None:
    with pytest.raises(RulesError) as info:
        parse(DEFAULT_TEXT.replace("    when: known_unchanged", "    when: nope", 1), "rules.md")
    assert info.value.problems == (info.value,)


def test_a_key_field_the_path_never_uses_is_an_error() -> None:
    old = 'path: "decisions/{slug}.md",               key: [slug]'
    assert old in DEFAULT_TEXT
    text = DEFAULT_TEXT.replace(old, 'path: "decisions/{slug}.md",               key: [slugg]', 1)
    with pytest.raises(RulesError) as info:
        parse(text, "rules.md")
    assert "surface 'decisions': key field 'slugg' is not in its path template" in info.value.message
    assert info.value.line == line_of(text, "key: [slugg]")


def test_rules_check_prints_every_problem(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.md"
    bad.write_text(broken())
    code, out, err = cli(capsys, "rules", "check", str(bad))
    assert code == 1 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 3
    text = bad.read_text()
    for line, (_, new, message) in zip(lines, THREE_ERRORS, strict=True):
        assert line.startswith(f"memory-curator: {bad}:{line_of(text, new.strip())}: ") and message in line


def test_status_says_sweeps_stopped_when_the_rules_are_invalid(vault: Path, capsys) -> None:
    rules = vault / "_meta/inbox-rules.md"
    text = rules.read_text().replace("    when: known_unchanged", "    when: nope", 1)
    rules.write_text(text)
    line = line_of(text, "    when: nope")
    code, out, err = cli(capsys, "status", "--vault", str(vault))
    assert code == 0, err
    expected = f"sweeps stopped: rules file invalid ({rules}:{line}: unknown condition 'nope'"
    assert expected in " ".join(out.split())
    assert "index: unusable" not in out
    code, out, _ = cli(capsys, "status", "--vault", str(vault), "--json")
    data = json.loads(out)["data"]
    assert data["rules"]["valid"] is False
    assert data["rules"]["file"] == str(rules) and data["rules"]["line"] == line
    assert data["rules"]["problem"].startswith("unknown condition 'nope'")


def test_status_with_valid_rules(vault: Path, capsys) -> None:
    _, out, _ = cli(capsys, "status", "--vault", str(vault), "--json")
    data = json.loads(out)["data"]
    assert data["rules"] == {"file": str(vault / "_meta/inbox-rules.md"), "valid": True}
    _, out, _ = cli(capsys, "status", "--vault", str(vault))
    assert "sweeps stopped" not in out
