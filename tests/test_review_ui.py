"""`review` as a person meets it: a real `memory-curator review` on a pseudo-terminal (pexpect),
driven one raw key at a time (no Enter), with the files on disk checked after every session.

Each choice has its session here: promote, promote as another surface, drop, merge into the
curator's note and into a person's note (nothing written without the confirm key), a
contradiction settled each way (the loser in `history:`, or both kept), a bulk choice over 21
items and `undo` restoring all of them, a long note that scrolls under a header that stays, and
the ways a session ends (q, end of input, Ctrl-C) with their exit codes and exact counts."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import pytest
from loop_kit import ADA, CONTRADICTION, INSIGHT, MEMO, THIN_FACT, flag

from memory_curator.core.notes import parse

from conftest import snapshot

pexpect = pytest.importorskip("pexpect")

KEYS_LINE_END = "quit"  # the keys line ends every screen
ROWS, COLS = 40, 120


def _ctrl_c_on() -> None:
    """A person's terminal delivers Ctrl-C. A suite started in the background (`.ci/run &`, nohup) has
    SIGINT ignored, which every child inherits: Python then installs no handler and `review` never
    sees the Ctrl-C (seen: SigIgn 0x6 in /proc/<pid>/status, a 60 s hang in the CI log)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Session:
    """One `review` on a pseudo-terminal; `screen()` waits for the keys line, `key()` sends one
    raw key, `line()` answers a text prompt (Enter included)."""

    def __init__(self, root: Path, *args: str, rows: int = ROWS) -> None:
        argv = ["-m", "memory_curator", "review", "--vault", str(root), "--by", "tester", *args]
        env = {**os.environ, "NO_COLOR": "1", "COLUMNS": str(COLS), "LINES": str(rows)}
        self.child = pexpect.spawn(
            sys.executable, argv, dimensions=(rows, COLS), encoding="utf-8", timeout=60, env=env, preexec_fn=_ctrl_c_on
        )
        # pexpect's pauses (50 ms before each send, 100 ms after a close) are for programs that
        # drop typed-ahead input; this one keeps it (test_keys_typed_ahead_of_the_screen_are_kept),
        # and `end` waits for the exit before it closes. They slept ~4 s a run (1.3 s of this file's wall).
        self.child.delaybeforesend, self.child.delayafterclose = None, 0.0
        self.seen = ""

    def screen(self) -> str:
        self.child.expect(KEYS_LINE_END)
        return self._took()

    def expect(self, pattern: str) -> str:
        self.child.expect(pattern)
        return self._took()

    def key(self, key: str) -> None:
        self.child.send(key)

    def line(self, text: str, prompt: str = r": ") -> str:
        before = self.expect(prompt)
        self.child.send(text + "\r")
        return before

    def end(self) -> tuple[int, str]:
        self.child.expect(pexpect.EOF)
        self._took()
        self.child.wait()
        self.child.close()
        code = self.child.exitstatus if self.child.exitstatus is not None else 128 + self.child.signalstatus
        return code, self.seen

    def _took(self) -> str:
        got = (self.child.before or "") + (self.child.after if isinstance(self.child.after, str) else "")
        self.seen += got
        return got


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "state"
    monkeypatch.setenv("MEMORY_CURATOR_STATE", str(folder))
    return folder


def changed(before: dict[str, bytes], after: dict[str, bytes]) -> set[str]:
    return {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}


def one_item(vault: Path, write_candidate, invoke, name: str, text: str, agent: str = "agent-a") -> Path:
    """The fixtures' own candidates out of the way, one item flagged: the queue holds just it."""
    for path in (vault / "_inbox/test-step-4").glob("*.md"):
        path.unlink()
    path = write_candidate(vault, name, text, agent=agent)
    out = json.loads(invoke("run", "--vault", str(vault), "--json").output)
    assert out["needs_review"] == 1, out
    return path


# --- each choice, one key ------------------------------------------------------------------------


def test_p_promotes_with_one_key_and_no_enter(vault: Path, invoke, write_candidate, state: Path) -> None:
    item = one_item(vault, write_candidate, invoke, "insight.md", INSIGHT)
    session = Session(vault)
    screen = session.screen()
    assert "1/1  _inbox/agent-a/insight.md" in screen and "curator uncertainty:" in screen
    session.key("p")
    code, out = session.end()
    assert code == 0, out
    note = vault / "insights/agents-should-batch-writes.md"
    assert note.is_file() and not item.exists()
    assert parse(note.read_text()).body == parse(INSIGHT).body
    assert "review: 1 decided (1 promoted, 0 patched, 0 dropped), 0 skipped, 0 left" in out


def key_and_line(vault: Path, key: str, typed: str, prompt: str) -> str:
    """One session: a key, the text it asks for typed on its line, then the end; what it printed."""
    session = Session(vault)
    session.screen()
    session.key(key)
    session.line(typed, prompt=prompt)
    code, out = session.end()
    assert code == 0, out
    return out


def promote_as_insight(vault: Path) -> str:
    return key_and_line(vault, "o", "insights", r"Surface \(.*\): ")


def test_o_promotes_as_another_surface_typed_on_a_line(vault: Path, invoke, write_candidate, state: Path) -> None:
    item = one_item(vault, write_candidate, invoke, "memo.md", MEMO)
    promote_as_insight(vault)
    kept = parse((vault / "insights/a-memo-worth-keeping.md").read_text())
    assert kept.frontmatter["type"] == "insight" and kept.body == parse(MEMO).body and not item.exists()


def test_promote_as_insights_takes_the_h1_when_there_is_no_title(
    vault: Path, invoke, write_candidate, state: Path
) -> None:
    text = "---\nsource_url: https://example.dev/teams\n---\n# Small teams ship faster\n\nFewer hand-offs.\n"
    item = one_item(vault, write_candidate, invoke, "bare.md", text)
    out = promote_as_insight(vault)
    note = vault / "insights/small-teams-ship-faster.md"
    assert note.is_file() and not item.exists(), out
    assert parse(note.read_text()).frontmatter["title"] == "Small teams ship faster"


def test_d_drops_with_the_reason_typed(vault: Path, invoke, write_candidate, state: Path) -> None:
    item = one_item(vault, write_candidate, invoke, "thin.md", THIN_FACT)
    original = item.read_bytes()
    key_and_line(vault, "d", "not worth keeping", r"Reason for the drop: ")
    [copy] = (vault / "_inbox/.dropped/agent-a").iterdir()
    assert copy.read_bytes().startswith(original) and "not worth keeping (by tester)" in copy.read_text()
    assert not item.exists()


def test_m_into_the_curators_note_offers_it_and_writes_at_once(
    vault: Path, invoke, write_candidate, state: Path
) -> None:
    item = one_item(vault, write_candidate, invoke, "ada.md", ADA)
    session = Session(vault)
    session.screen()
    session.key("m")
    prompt = session.line("", prompt=r"Patch into \(vault path\) \[persons/ada-lovelace\.md\]: ")
    assert "Patch into" in session.seen or prompt is not None
    code, out = session.end()
    assert code == 0, out
    assert not item.exists(), out
    assert "/ada-new" in (vault / "persons/ada-lovelace.md").read_text()


def test_no_byte_of_a_persons_note_changes_without_the_confirm_key(
    vault: Path, invoke, write_candidate, state: Path
) -> None:
    """A person's note (decisions/, no marker at all) is shown as a diff; any key but y leaves
    every byte of the vault as it was; y writes it, and the note stays the person's."""
    item = one_item(vault, write_candidate, invoke, "insight.md", INSIGHT)
    mine = vault / "decisions/keep-notes-in-markdown.md"
    before = snapshot(vault)
    session = Session(vault)
    screen = session.screen()
    assert "[decisions/" not in screen  # a person's note is never the default target
    session.key("m")
    session.line("decisions/keep-notes-in-markdown.md", prompt=r"Patch into \(vault path\).*: ")
    shown = session.expect("any other key = no")
    assert "is your note" in shown and "+++ b/decisions/keep-notes-in-markdown.md" in shown
    session.key("n")  # not the confirm key
    session.screen()
    assert snapshot(vault) == before  # not one byte
    session.key("m")
    session.line("decisions/keep-notes-in-markdown.md", prompt=r"Patch into \(vault path\).*: ")
    session.expect("any other key = no")
    session.key("y")
    code, out = session.end()
    assert code == 0, out
    text = mine.read_text()
    assert changed(before, snapshot(vault)) == {"decisions/keep-notes-in-markdown.md", "_inbox/agent-a/insight.md"}
    assert "/batching" in text and "curated_from" not in text and "updated_at" not in text
    assert not item.exists()


def test_the_rules_file_and_a_persons_note_are_never_offered_as_the_default(
    vault: Path, invoke, write_candidate, state: Path
) -> None:
    text = INSIGHT.replace("Agents should batch writes", "Agents need a curator")  # the person's insight's key
    one_item(vault, write_candidate, invoke, "near.md", text)
    session = Session(vault)
    session.screen()
    session.key("m")
    prompt = session.expect(r"Patch into \(vault path\)[^:]*: ")
    assert "insights/agents-need-a-curator" not in prompt and "_meta" not in prompt
    session.child.sendcontrol("d")  # end of input while typing: nothing written, exit 0
    code, out = session.end()
    assert code == 0, out


def test_e_edits_in_the_editor_and_shows_the_item_again(
    vault: Path, invoke, write_candidate, state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    item = one_item(vault, write_candidate, invoke, "thin.md", THIN_FACT)
    editor = tmp_path / "editor.py"
    editor.write_text(
        "import pathlib, sys\np = pathlib.Path(sys.argv[1])\n"
        "p.write_text(p.read_text().replace('confidence: 1', 'confidence: 3'))\n"
    )
    monkeypatch.setenv("EDITOR", f"{sys.executable} {editor}")
    session = Session(vault)
    assert "future_useful            │ no" in session.screen()
    session.key("e")
    assert "future_useful            │ yes" in session.screen()  # re-evaluated after the edit
    session.key("s")
    code, out = session.end()
    assert code == 0 and "confidence: 3" in item.read_text()
    assert "review: 0 decided (0 promoted, 0 patched, 0 dropped), 1 skipped, 0 left" in out


# --- a contradiction, settled each way ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "current", "in_history"),
    [
        ("n", "Obsidian stores notes in a proprietary database.", "Obsidian stores notes as plain Markdown files"),
        ("k", "Obsidian stores notes as plain Markdown files", "Obsidian stores notes in a proprietary database."),
    ],
)
def test_a_contradiction_settled_both_ways_keeps_the_loser_in_history(
    vault: Path, invoke, write_candidate, state: Path, key: str, current: str, in_history: str
) -> None:
    item = one_item(vault, write_candidate, invoke, "contra.md", CONTRADICTION)
    note = vault / "facts/obsidian/file-format.md"
    before = note.read_bytes()
    session = Session(vault)
    screen = session.screen()
    assert "beside this item: the values differ" in screen
    assert "/other" in screen and "2026-03-01" in screen  # sources and times, side by side
    session.key(key)
    diff = session.expect("any other key = no")
    assert "+++ b/facts/obsidian/file-format.md" in diff and note.read_bytes() == before  # shown, not written
    session.key("y")
    code, out = session.end()
    assert code == 0, out
    fm = parse(note.read_text()).frontmatter
    assert str(fm["value"]).startswith(current)
    assert str(fm["history"][0]["value"]).startswith(in_history)
    assert not item.exists()


def test_a_contradiction_kept_both_ways_flags_the_note(vault: Path, invoke, write_candidate, state: Path) -> None:
    item = one_item(vault, write_candidate, invoke, "contra.md", CONTRADICTION)
    note = vault / "facts/obsidian/file-format.md"
    session = Session(vault)
    session.screen()
    session.key("b")
    session.expect("any other key = no")
    session.key("y")
    code, out = session.end()
    assert code == 0, out
    fm = parse(note.read_text()).frontmatter
    assert str(fm["value"]).startswith("Obsidian stores notes as plain Markdown files")
    assert fm["contradictions"][0]["value"] == "Obsidian stores notes in a proprietary database."
    assert "contradiction" in fm["tags"] and not item.exists()


# --- bulk ---------------------------------------------------------------------------------------------


def test_a_bulk_choice_over_21_items_is_one_run_and_undo_restores_all(
    vault: Path, invoke, write_candidate, state: Path
) -> None:
    for path in (vault / "_inbox/test-step-4").glob("*.md"):
        path.unlink()
    for n in range(21):
        write_candidate(vault, f"t{n:02}.md", THIN_FACT.replace("entity: rust", f"entity: lang-{n}"), agent="bulk")
    write_candidate(vault, "other.md", THIN_FACT, agent="agent-a")  # another agent: not like them
    swept = json.loads(invoke("run", "--vault", str(vault), "--json").output)
    assert swept["needs_review"] == 22
    codes = {a["reason_code"] for agent in swept["agents"] for a in agent["actions"]}
    assert codes == {"criteria-failed"}
    before = snapshot(vault)

    session = Session(vault, "--agent", "bulk", "--reason", "criteria-failed")
    screen = session.screen()
    assert "1/21" in screen and "apply to this and the 20 like it" in screen
    session.key("a")
    session.expect("any other key: back")
    session.key("d")
    session.line("one agent's noise", prompt=r"Reason for the drop: ")
    session.expect("drop 21 items\\? y = yes")
    session.key("y")
    code, out = session.end()
    assert code == 0, out
    assert "review: 21 decided (0 promoted, 0 patched, 21 dropped), 0 skipped, 0 left" in out
    assert "applying" in out  # the bar, on the terminal's stderr
    assert list((vault / "_inbox/bulk").iterdir()) == []
    assert len(list((vault / "_inbox/.dropped/bulk").iterdir())) == 21
    assert (vault / "_inbox/agent-a/other.md").exists()

    records = [json.loads(line) for line in (state / "journal.jsonl").read_text().splitlines()]
    drops = [r for r in records if r.get("event") == "begin" and r.get("verdict") == "drop"]
    assert len(drops) == 21 and len({r["run"] for r in drops}) == 1 and len({r["seq"] for r in drops}) == 21
    run = drops[0]["run"]
    undone = invoke("undo", run, "--vault", str(vault))
    assert undone.exit_code == 0, undone.output
    after = snapshot(vault)
    assert {k: v for k, v in after.items() if k.startswith("_inbox/bulk/")} == {
        k: v for k, v in before.items() if k.startswith("_inbox/bulk/")
    }
    assert not (vault / "_inbox/.dropped/bulk").exists() or not list((vault / "_inbox/.dropped/bulk").iterdir())


# --- a long note, and the ways a session ends -----------------------------------------------------


def test_a_long_note_scrolls_under_a_header_that_stays(vault: Path, invoke, write_candidate, state: Path) -> None:
    long = THIN_FACT.replace("From the Rust book.", "\n\n".join(f"Paragraph {n} of the evidence." for n in range(60)))
    one_item(vault, write_candidate, invoke, "long.md", long)
    session = Session(vault, rows=24)
    first = session.screen()
    assert "1/1  _inbox/agent-a/long.md" in first and "Paragraph 0 " in first and "Paragraph 50" not in first
    session.key(" ")  # a page down
    second = session.screen()
    assert "1/1  _inbox/agent-a/long.md" in second and "Paragraph 0 " not in second
    assert "lines " in second and " scroll" in second
    session.key("q")
    code, _ = session.end()
    assert code == 0


def test_an_unknown_key_is_said_once_on_the_screen_and_off_it(
    vault: Path, invoke, write_candidate, state: Path
) -> None:
    one_item(vault, write_candidate, invoke, "insight.md", INSIGHT)
    said = "no choice on 'x'"
    session = Session(vault)
    session.screen()
    session.key("x")
    redrawn = session.screen()  # everything written after the key, up to the next keys line
    assert redrawn.count(said) == 1, redrawn
    session.key("q")
    code, _ = session.end()
    assert code == 0
    piped = invoke("review", "--vault", str(vault), "--by", "tester", input="x\nq\n")  # not a terminal
    assert piped.exit_code == 0 and piped.output.count(said) == 1, piped.output


def test_quit_and_end_of_input_exit_0_with_nothing_written_and_exact_counts(
    vault: Path, invoke, write_candidate, state: Path
) -> None:
    flag(vault, write_candidate, invoke)
    before = snapshot(vault)
    session = Session(vault)
    session.screen()
    session.key("s")
    session.screen()
    session.key("q")
    code, out = session.end()
    assert code == 0 and snapshot(vault) == before
    assert "review: 0 decided (0 promoted, 0 patched, 0 dropped), 1 skipped, 3 left" in out

    session = Session(vault)
    session.screen()
    session.child.sendcontrol("d")  # end of input at a key
    code, out = session.end()
    assert code == 0 and snapshot(vault) == before
    assert "review: 0 decided (0 promoted, 0 patched, 0 dropped), 0 skipped, 4 left" in out

    session = Session(vault)
    session.screen()
    session.key("d")
    session.expect("Reason for the drop: ")
    session.child.sendcontrol("d")  # end of input while typing the reason
    code, out = session.end()
    assert code == 0 and snapshot(vault) == before, out


def test_ctrl_c_exits_130_keeping_what_was_decided(vault: Path, invoke, write_candidate, state: Path) -> None:
    ada, insight, memo, thin = flag(vault, write_candidate, invoke)
    session = Session(vault)
    session.screen()
    session.key("d")
    session.line("duplicate", prompt=r"Reason for the drop: ")
    session.screen()  # the next item
    after_one = snapshot(vault)
    session.key("d")
    session.expect("Reason for the drop: ")
    session.child.sendintr()  # Ctrl-C while typing: nothing more written
    code, out = session.end()
    assert code == 130, out
    assert "review: 1 decided (0 promoted, 0 patched, 1 dropped), 0 skipped, 3 left (interrupted)" in out
    assert snapshot(vault) == after_one and not ada.exists() and insight.exists() and memo.exists() and thin.exists()


def test_keys_typed_ahead_of_the_screen_are_kept(vault: Path, invoke, write_candidate, state: Path) -> None:
    """The terminal is switched to single keys without flushing what was typed (TCSANOW, not
    TCSAFLUSH): a key pressed before the screen is drawn is read, never lost (it hung before)."""
    flag(vault, write_candidate, invoke)
    session = Session(vault)
    session.key("s")
    session.key("q")
    code, out = session.end()
    assert code == 0
    assert "1 skipped, 3 left" in out
