"""Issue #25, trust nothing an agent writes: whatever an agent (or a synced note) put in a
title, a body, a value, a file name or a reason reaches a person's terminal as visible text,
never as an escape sequence, a bidi override, rich markup or an emoji code.

`printable` (one line) and `printable_block` (newlines and tabs kept) are the one sanitiser;
`output.shown` escapes rich's markup too, `output.shown_block` is a Text (never markup),
`output.diff_view` a sanitised diff. Then a hostile vault through
the real CLI (run --dry-run, run, status, log, check --explain, query, doctor, resolve) and
through `review` on a pseudo-terminal."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from loop_kit import CONTRADICTION, cli

from memory_curator.cli import output
from memory_curator.core.names import printable, printable_block

from conftest import REPO

# --- the sanitiser ---------------------------------------------------------------------------

ESCAPED = [
    ("\x1b[2J", "\\x1b[2J"),  # ESC: clears the screen
    ("\x9b31m", "\\x9b31m"),  # C1 CSI: an escape sequence on its own to some terminals
    ("\x07", "\\x07"),  # BEL
    ("a\x08b", "a\\x08b"),  # backspace: overwrites what was shown
    ("\x7f", "\\x7f"),  # DEL
    ("\x00", "\\x00"),
    ("\u202e", "\\u202e"),  # right-to-left override: the rest reads backwards
    ("\u2066", "\\u2066"),  # left-to-right isolate
    ("\u200f", "\\u200f"),  # right-to-left mark
    ("\u061c", "\\u061c"),  # Arabic letter mark
    ("\u2028", "\\u2028"),  # line separator
    ("\u2029", "\\u2029"),  # paragraph separator
    ("name\udcff.md", "name\\xff.md"),  # os.fsdecode's stand-in for a byte that is not UTF-8
    ("\ud800", "\\ud800"),  # a lone surrogate that stands for no byte
]
UNCHANGED = ["café", "同期は月額4ドル", "emoji 🙂 and 👩‍💻", "Ünïcödé — “quotes”", "[bold]x[/] :warning:", ""]


@pytest.mark.parametrize(("raw", "seen"), ESCAPED)
def test_both_forms_show_a_control_character_visibly(raw: str, seen: str) -> None:
    assert printable(raw) == seen
    assert printable_block(raw) == seen


@pytest.mark.parametrize("text", UNCHANGED)
def test_ordinary_text_is_left_as_it_is(text: str) -> None:
    assert printable(text) == text == printable_block(text)


def test_one_line_form_escapes_line_breaks_and_tabs() -> None:
    assert printable("a\nb\tc\r\nd\re") == "a\\nb\\tc\\r\\nd\\re"


def test_block_form_keeps_newlines_and_tabs_and_folds_crlf() -> None:
    assert printable_block("a\nb\tc\r\nd\re\r") == "a\nb\tc\nd\\re\\r"
    assert printable_block("line\x1b[2Jpwned\n\tmore\u202e") == "line\\x1b[2Jpwned\n\tmore\\u202e"


def test_shown_escapes_markup_and_keeps_emoji_codes_as_text() -> None:
    text = "[bold red]APPROVED[/] :warning: \x1b[45mX\nnext"
    assert _printed(output.shown(text)) == "[bold red]APPROVED[/] :warning: \\x1b[45mX\\nnext\n"
    assert _printed(output.shown_block(text)) == "[bold red]APPROVED[/] :warning: \\x1b[45mX\nnext\n"


def test_a_diff_is_shown_sanitised_and_its_lines_kept() -> None:
    diff = "--- a/x.md\n+++ b/x.md\n@@ -1 +1,2 @@\n a\n+\x1b[2Jpwned \u202eRLO [bold]b[/] :warning:\n"
    out = _printed(output.diff_view(diff))
    assert "\x1b" not in out and "\u202e" not in out
    assert "+\\x1b[2Jpwned \\u202eRLO [bold]b[/] :warning:" in out.splitlines()


def _printed(renderable: object) -> str:
    console = output.stdout()
    with console.capture() as captured:
        console.print(renderable)
    return captured.get()


def test_every_console_is_built_by_output_without_emoji_codes() -> None:
    """rich turns `:warning:` into ⚠ unless the console says `emoji=False`: one place builds them."""
    built = {
        path.relative_to(REPO).as_posix()
        for path in (REPO / "memory_curator").rglob("*.py")
        if re.search(r"\bConsole\(", path.read_text(encoding="utf-8"))
    }
    assert built == {"memory_curator/cli/output.py"}
    for console in (output.stdout(), output.stderr(), output.make_console(stderr=True, highlight=False)):
        with console.capture() as captured:
            console.print(":warning: [bold]x[/]")
        assert captured.get() == ":warning: x\n"


# --- a hostile vault through the real CLI -----------------------------------------------------

NAME = "hostile \x1b[31mNAME [reverse]x :warning:.md"  # the file name an agent chose
HOSTILE = (
    "---\ntype: insight\n"
    'title: "review me \\e[45mMAGENTA [bold red]APPROVED[/] :warning: \\u202eRLO"\n'
    'slug: "review me \\e[45mMAGENTA [bold red]APPROVED[/] :warning: \\u202eRLO"\n'
    'summary: "\\e[33mSUMMARY \\u2066ISO [blink]value[/]"\n'
    'source_url: "https://example.dev/\\e[34mDIFF\\u202eRLO"\nconfidence: 2\n---\n'
    "Body \x1b[2Jpwned line\r\nsecond\ttab \x9b31mCSI \u2028sep [bold red]APPROVED[/] :warning: \x07bell\n\n"
    '[click](https://evil.example/ "x") \x08back\r\rover\n'
)  # needs_review: its slug names a folder, refused (the reason quotes it; a title is slugged)
PATCHING = (
    "---\ntype: fact\nentity: obsidian\npredicate: file-format\n"
    "value: Obsidian stores notes as plain Markdown files in a local folder.\n"
    'source_url: "https://obsidian.md/\\e[36mSOURCE\\u202eRLO"\nconfidence: 2\n---\nConfirmed.\n'
)  # patch: the reason and the diff carry its source
VALUE = (
    "---\ntype: fact\nentity: evilcorp\npredicate: motto\n"
    'value: "evilcorp motto \\e[32mVALUE \\u202eRLO [bold red]APPROVED[/] :warning:"\n'
    "source_url: https://evilcorp.dev/motto\nconfidence: 2\n---\nThe motto.\n"
)  # promote: `query` shows its value
BROKEN = "insights/broken \x1b[35mDOC :warning:.md"  # a synced note whose frontmatter does not parse: doctor names it

# What must never reach a terminal raw: each payload is unique, so rich's own codes do not count.
RAW = (
    "\x1b[45mMAGENTA",
    "\x1b[2Jpwned",
    "\x1b[31mNAME",
    "\x1b[33mSUMMARY",
    "\x1b[36mSOURCE",
    "\x1b[32mVALUE",
    "\x1b[35mDOC",
    "\x9b31mCSI",
    "\x07bell",
    "\x08back",
    "\u202e",
    "\u2066",
    "\u2028",
    "\u26a0",  # ⚠: what rich makes of `:warning:` (nothing the curator prints itself here has one)
)
SHOWN_NAME = "_inbox/evil/hostile \\x1b[31mNAME [reverse]x :warning:.md"
SHOWN_TITLE = "review me \\x1b[45mMAGENTA [bold red]APPROVED[/] :warning: \\u202eRLO"
SHOWN_SOURCE = "https://obsidian.md/\\x1b[36mSOURCE\\u202eRLO"


@pytest.fixture
def hostile(vault: Path, write_candidate: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The fixtures' own candidates gone, the hostile ones in `_inbox/evil/`, a broken note with
    a hostile name; a wide terminal, so that no table folds a payload across two lines."""
    monkeypatch.setenv("MEMORY_CURATOR_STATE", str(tmp_path / "state"))
    monkeypatch.setenv("COLUMNS", "500")
    for path in (vault / "_inbox/test-step-4").glob("*.md"):
        path.unlink()
    for name, text in ((NAME, HOSTILE), ("patching.md", PATCHING), ("value.md", VALUE)):
        write_candidate(vault, name, text, agent="evil")
    (vault / BROKEN).write_text("---\ntitle: [unclosed\n---\nbody\n", encoding="utf-8")
    return vault


def _clean(text: str) -> None:
    found = [raw for raw in RAW if raw in text]
    assert not found, f"raw payloads on the terminal: {found!r}\n{text}"


def _run(capsys: pytest.CaptureFixture[str], *args: str, code: int = 0) -> str:
    got, out, err = cli(capsys, *args)
    assert got == code, out + err
    _clean(out)
    _clean(err)
    return out + err


def test_a_dry_run_shows_names_reasons_and_the_diff_escaped(hostile: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _run(capsys, "run", "--dry-run", "--vault", str(hostile))
    assert SHOWN_NAME in out and SHOWN_TITLE in out
    assert f"adds source {SHOWN_SOURCE}" in out  # the reason
    assert '+  - "https://obsidian.md/\\e[36mSOURCE\\u202eRLO"' in out  # the diff (YAML escapes ESC itself)


@pytest.fixture
def swept(hostile: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """The hostile vault after one sweep: the insight waits for a person, the fact is a note."""
    code, out, _ = cli(capsys, "run", "--json", "--vault", str(hostile))
    assert code == 0 and json.loads(out)["needs_review"] == 1, out
    return hostile


ITEM = "{vault}/_inbox/evil/" + NAME
SHOWN_BY = {  # each command, and the escaped text it must show
    ("status",): [f"oldest {SHOWN_NAME}"],
    ("log",): [SHOWN_NAME, SHOWN_TITLE, f"adds source {SHOWN_SOURCE}"],
    ("check", ITEM, "--explain"): [SHOWN_TITLE],
    ("query", "--text", "evilcorp motto"): ["evilcorp motto \\x1b[32mVALUE \\u202eRLO [bold red]APPROVED[/] :warning:"],
    ("doctor",): ["insights/broken \\x1b[35mDOC :warning:.md"],
    ("resolve", ITEM, "--drop", "no"): [SHOWN_NAME],
}


@pytest.mark.parametrize(("args", "expected"), list(SHOWN_BY.items()), ids=[a[0] for a in SHOWN_BY])
def test_each_command_shows_them_escaped(
    swept: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], expected: list[str]
) -> None:
    out = _run(capsys, *(arg.format(vault=swept) for arg in args), "--vault", str(swept))
    for text in expected:
        assert text in out, text


def test_json_keeps_the_text_and_escapes_it(hostile: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """JSON is for machines: the text itself, with every control character JSON-escaped."""
    _, out, _ = cli(capsys, "run", "--dry-run", "--json", "--vault", str(hostile))
    _clean(out)
    reasons = [a["reason"] for agent in json.loads(out)["agents"] for a in agent["actions"]]
    assert any("\\x1b[45mMAGENTA" in r for r in reasons)


# --- review on a pseudo-terminal ---------------------------------------------------------------

SIDE = CONTRADICTION.replace(
    "value: Obsidian stores notes in a proprietary database.",
    'value: "a proprietary \\e[41mSIDE \\u202eRLO [bold red]APPROVED[/] database"',
)  # a contradiction: its value is shown beside the note's
MINE = "decisions/keep-notes-in-markdown.md"  # a person's note: a patch into it is shown as a diff first


def test_review_on_a_terminal_shows_every_payload_escaped(
    vault: Path,
    write_candidate: Callable[..., Path],
    invoke: Callable[..., Result],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The item's screen (header, values, body, file name), a contradiction's side table and the
    diff of a patch into a person's note, on a real pty: no payload raw, each one escaped."""
    from test_review_ui import Session  # here: that module skips itself without pexpect

    monkeypatch.setenv("MEMORY_CURATOR_STATE", str(tmp_path / "state"))
    for path in (vault / "_inbox/test-step-4").glob("*.md"):
        path.unlink()
    for name, text in ((NAME, HOSTILE), ("side.md", SIDE)):
        write_candidate(vault, name, text, agent="evil")
    swept = json.loads(invoke("run", "--vault", str(vault), "--json").output)
    assert swept["needs_review"] == 2, swept
    before = (vault / MINE).read_bytes()
    session = Session(vault)
    session.screen()  # the hostile item first (same age, its name sorts first)
    session.key("m")
    session.line(MINE, prompt=r"Patch into \(vault path\).*: ")
    session.expect("any other key = no")
    session.key("n")  # not written: the diff was only shown
    for _ in range(2):
        session.screen()
        session.key("s")
    code, seen = session.end()
    assert (vault / MINE).read_bytes() == before
    assert code == 0, seen
    # the one hyperlink is the curator's own: the review note's obsidian:// link (docs/review.md)
    targets = set(re.findall(r"\x1b\]8;[^;\x1b\x07]*;([^\x1b\x07]*)", seen))
    assert targets <= {"", "obsidian://open?vault=vault&file=_meta%2FInbox%20review"}, targets
    seen = re.sub(r"\x1b\]8;[^;\x1b\x07]*;[^\x1b\x07]*(?:\x1b\\|\x07)", "", seen)
    found = [raw for raw in (*RAW, "\x1b[41mSIDE", "\x1b[34mDIFF", "\x1b]8;") if raw in seen]  # ]8; a hyperlink
    assert not found, f"raw payloads on the terminal: {found!r}\n{seen}"
    for escaped in (
        "\\x1b[45mMAGENTA",  # the title, a value
        "\\x1b[33mSUMMARY \\u2066ISO [blink]value[/]",
        "Body \\x1b[2Jpwned line",  # the body, its lines kept
        "tab \\x9b31mCSI \\u2028sep [bold red]APPROVED[/] :warning: \\x07bell",
        '[click](https://evil.example/ "x") \\x08back\\r\\rover',  # a link stays text
        "hostile \\x1b[31mNAME [reverse]x :warning:.md",  # the file name
        "\\x1b[41mSIDE \\u202eRLO [bold red]APPROVED[/]",  # the item's value beside the note's
        f"+++ b/{MINE}",
        '+source_url: "https://example.dev/\\e[34mDIFF\\u202eRLO"',  # the diff a patch would make (YAML escapes ESC)
        "+Body \\x1b[2Jpwned line",
    ):
        assert escaped in seen.replace("\r\n", "\n"), escaped


MARKS = "\u200e\u200f\u061c\u202a\u202e\u2066\u2069\x7f\x85\x1b"


def test_json_escapes_bidi_marks_and_controls_byte_for_byte() -> None:
    """Seen: `--json` kept U+200E, U+200F, U+061C and DEL raw (the terminal showing it obeys them)."""
    from memory_curator.cli.output import json_text

    text = json_text({"reason": f"a{MARKS}b"})
    assert text == '{"reason": "a\\u200e\\u200f\\u061c\\u202a\\u202e\\u2066\\u2069\\u007f\\u0085\\u001bb"}'
    assert json.loads(text) == {"reason": f"a{MARKS}b"}  # valid JSON, the same text


def test_run_json_shows_a_file_name_with_bidi_marks_escaped(
    vault: Path, write_candidate: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    name = "pay\u200e\u200f\u061c\x7f.md"
    write_candidate(vault, name, "---\ntype: insight\ntitle: Pay\n---\nBody.\n", agent="spy")
    _, out, _ = cli(capsys, "run", "--dry-run", "--json", "--vault", str(vault))
    assert not set("\u200e\u200f\u061c\x7f") & set(out)
    assert "pay\\u200e\\u200f\\u061c\\u007f.md" in out
    paths = [a["inbox_path"] for agent in json.loads(out)["agents"] for a in agent["actions"]]
    assert f"_inbox/spy/{name}" in paths
