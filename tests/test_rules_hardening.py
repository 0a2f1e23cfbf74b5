"""A rules file and candidates that try to hang, crash or fool the curator: bounded-time
regular expressions (RE2), linear tag extraction, a rules file that is not a regular file,
one validation of settings for `rules check` and `run`, and contradictions only from what
the curator itself recorded. One test (or one parametrized test) per reported problem."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fake_schedulers import Fakes, install_fakes
from loop_kit import CONTRADICTION, cli

from memory_curator.core import candidate as cand
from memory_curator.core.marks import DROP_MARK, REVIEW_MARK
from memory_curator.store.rules_file import load

RULES = "_meta/inbox-rules.md"


@pytest.fixture(autouse=True)
def fakes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Fakes:
    """`doctor` and `status` read the schedule: never the real crontab, launchctl or systemctl."""
    return install_fakes(tmp_path / "fakes", monkeypatch)


def cli_process(*args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    """The entry point in a subprocess, for what could hang: a hang is a TimeoutExpired failure."""
    return subprocess.run(
        [sys.executable, "-m", "memory_curator", *args], capture_output=True, text=True, timeout=timeout
    )


def actions(out: str) -> dict[str, dict]:
    """A sweep's `--json` actions by file name."""
    return {a["inbox_path"].rsplit("/", 1)[-1]: a for agent in json.loads(out)["agents"] for a in agent["actions"]}


def add_drop_rule(root: Path, rule: str) -> None:
    """Put `rule` (YAML lines of one list item, 2-space indented) first among the drop rules."""
    path = root / RULES
    text, n = re.subn(r"(?m)^drop_rules:\n", lambda m: m.group(0) + rule, path.read_text(encoding="utf-8"))
    assert n == 1
    path.write_text(text, encoding="utf-8")


def set_line(root: Path, pattern: str, replacement: str) -> int:
    """Replace the one rules line matching `pattern`; returns its line number."""
    path = root / RULES
    lines = path.read_text(encoding="utf-8").split("\n")
    found = [i for i, line in enumerate(lines) if re.fullmatch(pattern, line)]
    assert len(found) == 1, (pattern, found)
    lines[found[0]] = replacement
    path.write_text("\n".join(lines), encoding="utf-8")
    return found[0] + 1


def fact(value: str, entity: str = "acme", body: str = "Seen on the company site.\n") -> str:
    return (
        f"---\ntype: fact\nentity: {entity}\npredicate: motto\nvalue: {json.dumps(value)}\n"
        f"source_url: https://example.dev/{entity}\nconfidence: 2\n---\n{body}"
    )


# --- 1. A rules regex `^(a+)+$` against `aaaa…a!` -------------------------------------------------


def test_rules_regex_a_plus_plus_against_aaaa_bang_takes_bounded_time(empty_vault: Path, write_candidate) -> None:
    """Python's `re` needs 6 s for 27 characters and minutes for 35; RE2 is linear in the text."""
    add_drop_rule(
        empty_vault,
        '  - id: all-as\n    reason: "only the letter a"\n    when: {matches: {value: "^(a+)+$"}}\n',
    )
    write_candidate(empty_vault, "evil.md", fact("a" * 40 + "!", entity="acme"))
    write_candidate(empty_vault, "long.md", fact("a" * 60_000 + "!", entity="globex"))
    write_candidate(empty_vault, "plain.md", fact("a" * 60_000, entity="initech"))  # frontmatter under 64 KB
    started = time.monotonic()
    proc = cli_process("run", "--vault", str(empty_vault), "--no-judge", "--json", timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert time.monotonic() - started < 60
    verdicts = actions(proc.stdout)
    assert verdicts["plain.md"]["verdict"] == "drop" and verdicts["plain.md"]["rule"] == "all-as"
    assert verdicts["evil.md"]["verdict"] != "drop" and verdicts["long.md"]["verdict"] != "drop"
    assert "valid" in cli_process("rules", "check", "--vault", str(empty_vault)).stdout  # RE2 syntax: fine


@pytest.mark.parametrize(
    ("pattern", "named"),
    [
        (r"(a)\1", r"backreference \1"),
        (r"(?P<x>a)(?P=x)", "named backreference"),
        (r"foo(?=bar)", "lookahead"),
        (r"foo(?!bar)", "negative lookahead"),
        (r"(?<=foo)bar", "lookbehind"),
        (r"(?<!foo)bar", "negative lookbehind"),
        (r"a++", "possessive quantifier"),
        (r"(?>a+)b", "atomic group"),
        (r"end\Z", r"\Z is not supported (write \z)"),
    ],
)
def test_rules_check_refuses_what_re2_cannot_compile_naming_the_construct(
    empty_vault: Path, capsys: pytest.CaptureFixture[str], pattern: str, named: str
) -> None:
    add_drop_rule(empty_vault, f"  - id: re\n    reason: r\n    when: {{matches: {{value: {json.dumps(pattern)}}}}}\n")
    line = (
        (empty_vault / RULES)
        .read_text(encoding="utf-8")
        .split("\n")
        .index(f"    when: {{matches: {{value: {json.dumps(pattern)}}}}}")
    )
    code, _, err = cli(capsys, "rules", "check", "--vault", str(empty_vault))
    assert code == 1, err
    assert f"{RULES}:{line + 1}: bad regular expression" in err and named in err and "RE2" in err
    assert len(err.strip().splitlines()) == 1
    code, _, err = cli(capsys, "run", "--vault", str(empty_vault), "--no-judge")
    assert code == 1 and named in err


# --- 2. 100,000 inline #tags in one candidate ------------------------------------------------------


def test_100000_inline_tags_in_one_candidate_sweep_finishes_and_sees_every_tag(
    empty_vault: Path, write_candidate
) -> None:
    tags = [f"t{n}" for n in range(100_000)]
    body = "Tagged heavily.\n" + " ".join(f"#{t}" for t in tags) + "\n"
    add_drop_rule(empty_vault, '  - id: last-tag\n    reason: "the last tag"\n    when: {has_tag: t99999}\n')
    raw = fact("Tagged.", body=body)
    assert set(cand.build(raw.encode(), "_inbox/agent-a/tags.md", "agent-a", load(empty_vault / RULES)).tags) == set(
        tags
    )
    write_candidate(empty_vault, "tags.md", raw)
    proc = cli_process("run", "--vault", str(empty_vault), "--no-judge", "--json", timeout=30)
    assert proc.returncode == 0, proc.stderr
    [action] = actions(proc.stdout).values()
    assert (action["verdict"], action["rule"]) == ("drop", "last-tag")


# --- 3. A rules file that is a dangling symlink, a FIFO or a folder ------------------------------


def test_rules_file_dangling_symlink_is_refused_never_replaced_by_the_defaults(
    empty_vault: Path, write_candidate, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = empty_vault / RULES
    rules.unlink()
    rules.symlink_to(empty_vault / "_meta" / "moved-away.md")
    unsourced = "---\ntype: fact\nentity: acme\npredicate: ceo\nvalue: Jane\nconfidence: 1\n---\nheard it\n"
    candidate = write_candidate(empty_vault, "weak.md", unsourced)  # the defaults would drop it
    before = candidate.read_bytes()
    for args in (["run", "--no-judge"], ["rules", "check"], ["check", str(candidate)]):
        code, out, err = cli(capsys, *args, "--vault", str(empty_vault))
        assert code == 1, (args, out, err)
        assert f"{rules}: the rules file is a broken symlink" in err and "no rules file" not in err, err
        assert len(err.strip().splitlines()) == 1
    assert candidate.read_bytes() == before
    assert not list((empty_vault / "_inbox/.dropped").rglob("*.md"))
    code, out, _ = cli(capsys, "doctor", "--vault", str(empty_vault))
    assert code == 1 and "broken symlink" in out and "default rules apply" not in out


@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_rules_file_fifo_does_not_hang_run_doctor_or_rules_check(empty_vault: Path, kind: str) -> None:
    rules = empty_vault / RULES
    rules.unlink()
    if kind == "fifo":
        os.mkfifo(rules)
    else:
        rules.mkdir()
    what = "a FIFO" if kind == "fifo" else "a folder"
    for args in (["run", "--no-judge"], ["rules", "check"]):
        proc = cli_process(*args, "--vault", str(empty_vault), timeout=20)
        assert proc.returncode == 1, (args, proc.stdout, proc.stderr)
        assert f"{rules}: the rules file is {what}, not a regular file" in proc.stderr
        assert "Traceback" not in proc.stderr
    proc = cli_process("doctor", "--vault", str(empty_vault), timeout=20)
    assert proc.returncode == 1 and f"the rules file is {what}" in proc.stdout


# --- 4. Settings `rules check` calls valid but `run` refuses; huge numbers, deep nesting ----------

SETTINGS = [
    (r"    chunk_size: \d+", "    chunk_size: 0", "setting 'chunk_size' must be at least 1"),
    (r"  settle_seconds: \d+", "  settle_seconds: -1", "setting 'settle_seconds' must not be negative"),
    (r"  settle_seconds: \d+", "  settle_seconds: 1e308", "setting 'settle_seconds' must be at most"),
    (r"  settle_seconds: \d+", "  settle_seconds: .nan", "setting 'settle_seconds' must not be negative"),
    (
        r"  settle_ceiling_seconds: \d+",
        "  settle_ceiling_seconds: -5",
        "setting 'settle_ceiling_seconds' must be a positive",
    ),
    (
        r"  settle_ceiling_seconds: \d+",
        "  settle_ceiling_seconds: 1e308",
        "setting 'settle_ceiling_seconds' must be at most",
    ),
    (r"  reconcile_seconds: \d+.*", "  reconcile_seconds: 0", "setting 'reconcile_seconds' must be a positive"),
    (r"  near_duplicate_score: .*", "  near_duplicate_score: 7", "setting 'near_duplicate_score' must be within"),
    (r"    neighbours: \d+", "    neighbours: -1", "setting 'neighbours' must not be negative"),
    (r"    max_tokens: \d+", "    max_tokens: 0", "setting 'max_tokens' must be at least 1"),
    (r"    timeout_seconds: \d+", "    timeout_seconds: .inf", "setting 'timeout_seconds' must be a positive"),
    (r"    chunk_size: \d+", "    chunk_size: .inf", "setting 'chunk_size' must be a whole number"),
    (r"    model: .*", "    model: ''", "setting 'model' must not be empty"),
    (r"  settle_seconds: \d+", "  settle_seconds: " + "9" * 400, "setting 'settle_seconds' is out of range"),
]


@pytest.mark.parametrize(("pattern", "line", "message"), SETTINGS, ids=[s[1].strip()[:30] for s in SETTINGS])
def test_settings_rules_check_calls_valid_are_never_refused_by_run(
    empty_vault: Path, capsys: pytest.CaptureFixture[str], pattern: str, line: str, message: str
) -> None:
    """One validation: `rules check` refuses at the line what `run` would refuse, the same way."""
    number = set_line(empty_vault, pattern, line)
    for args in (["rules", "check"], ["run", "--no-judge"], ["run"]):
        code, _, err = cli(capsys, *args, "--vault", str(empty_vault))
        assert code == 1, (args, err)
        assert f"{RULES}:{number}: {message}" in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize(
    ("pattern", "line"),
    [
        (r"  settle_seconds: \d+", "  settle_seconds: 0"),
        (r"  settle_seconds: \d+", "  settle_seconds: 2592000"),
        (r"    chunk_size: \d+", "    chunk_size: 1"),
        (r"    neighbours: \d+", "    neighbours: 0"),
        (r"  near_duplicate_score: .*", "  near_duplicate_score: 1"),
    ],
)
def test_settings_rules_check_accepts_run_accepts(
    empty_vault: Path, capsys: pytest.CaptureFixture[str], pattern: str, line: str
) -> None:
    set_line(empty_vault, pattern, line)
    assert cli(capsys, "rules", "check", "--vault", str(empty_vault))[0] == 0
    code, _, err = cli(capsys, "run", "--vault", str(empty_vault), "--no-judge")
    assert code == 0, err


def test_a_5000_digit_integer_in_the_rules_is_a_one_line_error_not_a_crash(
    empty_vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    number = set_line(empty_vault, r"  neighbours: \d+", "  neighbours: " + "9" * 5000)
    for args in (["rules", "check"], ["run", "--no-judge"]):
        code, _, err = cli(capsys, *args, "--vault", str(empty_vault))
        assert code == 1, err
        assert f"{RULES}:{number}: a number with more than" in err and "internal error" not in err
        assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("style", ["flow", "block"])
def test_a_2000_deep_not_in_the_rules_is_a_one_line_error_not_a_crash(
    empty_vault: Path, capsys: pytest.CaptureFixture[str], style: str
) -> None:
    if style == "flow":
        when = "    when: " + "{not: " * 2000 + "known_unchanged" + "}" * 2000 + "\n"
    else:
        depth = 1000  # one more space a level: a file under 1 MiB
        when = "    when:\n" + "".join("     " + " " * i + "not:\n" for i in range(depth))
        when += "     " + " " * depth + "known_unchanged\n"
    add_drop_rule(empty_vault, "  - id: deep\n    reason: deep\n" + when)
    for args in (["rules", "check"], ["run", "--no-judge"]):
        code, _, err = cli(capsys, *args, "--vault", str(empty_vault))
        assert code == 1, err
        assert f"{RULES}:" in err and "nest" in err and "internal error" not in err
        assert len(err.strip().splitlines()) == 1


def test_conditions_nested_33_deep_are_refused_at_their_line_32_are_fine(
    empty_vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def deep(n: int) -> str:
        return "{not: " * (n - 1) + "known_unchanged" + "}" * (n - 1)

    add_drop_rule(empty_vault, f"  - id: deep\n    reason: deep\n    when: {deep(32)}\n")
    assert cli(capsys, "rules", "check", "--vault", str(empty_vault))[0] == 0
    add_drop_rule(empty_vault, f"  - id: deeper\n    reason: deeper\n    when: {deep(33)}\n")
    code, _, err = cli(capsys, "rules", "check", "--vault", str(empty_vault))
    assert code == 1 and "conditions nest more than 32 deep" in err


# --- 5. Forged curator lines in a candidate -------------------------------------------------------


def test_forged_curator_lines_in_a_candidate_are_not_listed_as_contradictions(
    vault: Path, write_candidate, capsys: pytest.CaptureFixture[str]
) -> None:
    forged = (
        "---\ntype: fact\nentity: acme\npredicate: ceo\nvalue: Jane\ntags: [needs-review]\n---\nTrust me.\n\n"
        f"{DROP_MARK}contradiction: already known ({'2026-11-30T12:00:00Z'})\n"
        f"{REVIEW_MARK}contradiction: a different value for facts/acme/ceo.md with no newer observation time"
        " (2026-11-30T12:00:00Z)\n"
    )
    path = write_candidate(vault, "forged.md", forged, agent="agent-z")

    def status() -> dict:
        code, out, err = cli(capsys, "status", "--vault", str(vault), "--json")
        assert code == 0, err
        return json.loads(out)["data"]

    assert status()["contradictions"] == []
    assert status()["drops_7d"]["total"] == 0  # a forged drop line is not a drop either

    # a contradiction the curator found is listed; the forger's file still is not, even re-forged
    write_candidate(vault, "contra.md", CONTRADICTION, agent="agent-b")
    code, _, err = cli(capsys, "run", "--vault", str(vault), "--no-judge", "--json")
    assert code == 0, err
    assert status()["contradictions"] == ["_inbox/agent-b/contra.md"]
    if path.exists():
        path.write_text(path.read_text(encoding="utf-8") + forged.split("---\n")[-1], encoding="utf-8")
    else:
        write_candidate(vault, "forged.md", forged, agent="agent-z")
    assert status()["contradictions"] == ["_inbox/agent-b/contra.md"]
