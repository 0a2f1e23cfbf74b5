"""The hostile-agent corpus for the review note (issue 36): whatever an agent writes into a body, a
value, a title, an agent folder's name or a file's name, the note shows it inert — rendered as
Obsidian would (every line break it honours made `\\n`), no agent byte becomes a task, an embed, a
link, a heading or HTML — a fake `^mc-` box ticked decides nothing, no private note's value and no
private item's title is quoted, and a file name that is not UTF-8 leaves the note UTF-8 and read.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
from pathlib import Path

import pytest
from loop_kit import INSIGHT

from memory_curator.cli.machine import build_context
from memory_curator.commands import review_note
from memory_curator.core.clock import FixedClock

from conftest import FIXTURES, REVIEW_NOTE, age, snapshot

T0 = dt.datetime(2026, 11, 20, 9, 0, tzinfo=dt.UTC)
T1 = T0 + dt.timedelta(hours=1)
FAKE = "- [ ] drop (spam) ^mc-000000000000-promote"
# every line break Obsidian (CodeMirror) or CommonMark may honour; CRLF is the note's own newline
BREAKS = {"CR": "\r", "NEL": "\x85", "LS": "\u2028", "PS": "\u2029", "VT": "\x0b", "FF": "\x0c"}
HONOURED = re.compile("\r\n|[\r\x85\u2028\u2029\x0b\x0c]")
PAYLOAD = [  # lines that would act if they ever left the quote
    "```",
    FAKE,
    "![[HR/salaries]]",
    "```dataviewjs",
    "dv.paragraph('ran')",
    "```",
    "<img src=x onerror=alert(1)>",
    "# heading",
    "[[HR/payroll]] [a](http://x) <http://x>",
    "%% mc:end 000000000000 %%",
    "| a | b |",
    "|---|---|",
]
FENCES = ["```", "~~~", "````", "~~~~~", "``````````", " ```", "   ~~~"]  # closers of every length and kind
TITLE = "x]] ![[HR/salaries]] <img src=x onerror=alert(1)> # h | %% [a](http://x) - [ ] t ^mc-000000000000-drop"
CEO = (
    "---\ntype: fact\nentity: acme\npredicate: ceo\nvalue: Ada King\n"
    "source_url: https://example.dev/acme\nconfidence: 3\n---\nWho runs Acme.\n"
)
SALARY = (  # a curator note with a privacy tag
    "---\ntype: fact\nentity: acme\npredicate: salary\nvalue: 123456 EUR\n"
    "source_url: https://intranet.acme.dev/hr/salaries\nconfidence: 3\ntags: [do-not-share]\n---\nFrom HR.\n"
)


def insight(title: str, body: str) -> str:
    """An agent's insight: it waits (undecided) and offers a promote."""
    head = f"type: insight\ntitle: {json.dumps(title)}\nsource_url: https://example.dev/i\nconfidence: 2"
    return f"---\n{head}\n---\n{body}\n"


def contradiction(entity: str, predicate: str, value: str) -> str:
    """A fact whose value (YAML-escaped: `"\\r"` is a CR) differs from the note's."""
    return (
        f"---\ntype: fact\nentity: {entity}\npredicate: {predicate}\nvalue: {json.dumps(value)}\n"
        "source_url: https://example.dev/c\nconfidence: 2\n---\nA different claim.\n"
    )


def broken_out(sep: str) -> str:
    """The trial's payload: text that closes a fence where `sep` is a line break, then acts."""
    return "x" + sep + sep.join(PAYLOAD) + sep


# vault path (str, or bytes for a name that is not UTF-8) -> text
CORPUS: dict[str | bytes, str] = {
    **{f"_inbox/agent-a/body-{name}.md": insight(f"body {name}", broken_out(sep)) for name, sep in BREAKS.items()},
    **{
        f"_inbox/agent-a/fence-{n}.md": insight(f"fence {n}", f"{fence}\n" + "\n".join(PAYLOAD))
        for n, fence in enumerate(FENCES)
    },
    "_inbox/agent-a/title.md": insight(TITLE, "A title that would act."),
    "_inbox/agent-a/title-cr.md": insight("t\r```\r" + FAKE + "\r# h", "A title with line breaks."),
    **{
        f"_inbox/agent-a/value-{name}.md": contradiction("acme", "ceo", broken_out(sep).replace("promote", "new"))
        for name, sep in BREAKS.items()
    },
    "_inbox/agent-a/[[x]] ![[HR]] <img src=x onerror=1> %% # ^mc-000000000000-drop.md": insight("n1", "a name"),
    "_inbox/agent-a/x\r- [ ] drop ^mc-000000000000-promote.md": insight("n2", "a name with a CR"),
    "_inbox/agent-a/x\u2028# h\u2028![[HR]].md": insight("n3", "a name with LS"),
    **{f"_inbox/f{name}\r- [ ] x ^mc-000000000000-leave/in-{name}.md": insight("folder", "x") for name in BREAKS},
    b"_inbox/agent-a/\xff\xfe.md": insight("undecodable", "a name that is not UTF-8"),
}
# dropped by a rule (confidence 1, no source): the head offers to restore it, naming its folder
UNSOURCED = "---\ntype: fact\nentity: kite\npredicate: size\nvalue: big\nconfidence: 1\n---\nKites.\n"
DROPPED_IN = {f"_inbox/d{name}\r- [ ] restore ^mc-000000000000-restore/kite.md": UNSOURCED for name in BREAKS}


def write(root: Path, rel: str | bytes, text: str) -> Path:
    path = Path(os.fsdecode(os.fsencode(root) + b"/" + (rel if isinstance(rel, bytes) else rel.encode("utf-8"))))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, "utf-8", newline="")
    age(path)
    return path


def vault(root: Path, files: dict[str | bytes, str], notes: dict[str, str] | None = None) -> Path:
    """The fixtures, the curator's notes `notes` and the inbox `files`, all settled."""
    shutil.copytree(FIXTURES, root)
    shutil.rmtree(root / "_inbox/test-step-4")
    for rel, text in {"facts/acme/ceo.md": CEO, **(notes or {})}.items():
        write(root, rel, text)
    for rel, text in files.items():
        write(root, rel, text)
    return root


def sweep(invoke, root: Path, at: dt.datetime) -> dict:
    result = invoke("run", "--vault", str(root), "--json", "--no-judge", clock=FixedClock(at))
    assert result.exit_code == 0, result.output
    age(root / REVIEW_NOTE)
    return json.loads(result.output)


def note_text(root: Path) -> str:
    return (root / REVIEW_NOTE).read_bytes().decode("utf-8")  # strict: the note is UTF-8


def note_records(root: Path) -> list[dict]:
    journal = build_context(root).state / "journal.jsonl"
    records = map(json.loads, journal.read_text().splitlines())  # the actions, not the ticks' summary `run`
    return [r for r in records if r.get("by") == review_note.BY and r.get("event") != "run"]


def rendered(text: str) -> list:
    """The note's tokens as markdown-it renders it once every line break Obsidian honours is one."""
    from markdown_it import MarkdownIt
    from mdit_py_plugins.tasklists import tasklists_plugin

    return MarkdownIt("commonmark").use(tasklists_plugin).parse(HONOURED.sub("\n", text))


def walk(tokens: list) -> list:
    out = []
    for token in tokens:
        out.append(token)
        out += walk(token.children or [])
    return out


def assert_inert(text: str, sections: int) -> None:
    """Only the curator's own tasks, headings and links render; nothing of an agent's acts."""
    tokens = rendered(text)
    every = walk(tokens)
    ours = re.compile(r"^- \[ \] .* \^mc-([0-9a-f]{12})-([a-z]+)$")
    lines = HONOURED.sub("\n", text).split("\n")
    fenced = {n for t in tokens if t.type == "fence" and t.map for n in range(*t.map)}
    tasks = [n for n, t in enumerate(tokens) if t.type == "list_item_open" and "task-list-item" in str(t.attrs)]
    assert len(tasks) == len([n for n, line in enumerate(lines) if n not in fenced and ours.match(line)])
    sections_ids = {line.split()[2] for line in lines if line.startswith("%% mc:begin ")}
    for n in tasks:  # each task is one of the curator's lines: its box, its words, the block id it wrote
        mine = ours.match(lines[tokens[n].map[0]])
        assert mine and (mine.group(1) in sections_ids or mine.group(2) == "restore"), lines[tokens[n].map[0]]
    box = '<input class="task-list-item-checkbox"'  # the tasklists plugin's own rendering of a box
    acting = [t for t in every if t.type in ("html_block", "html_inline", "link_open", "image")]
    assert not [t for t in acting if not (t.type == "html_inline" and t.content.startswith(box))]
    headings = [lines[t.map[0]] for t in tokens if t.type == "heading_open"]
    ours_too = ("## Dropped in the last 7 days", "## Whole groups")
    assert headings[0] == "# Inbox review" and len(headings) == 1 + sections + sum(h in text for h in ours_too)
    assert all(h.startswith(ours_too) or re.search(r" · (`+) ?_inbox/.*\1$", h) for h in headings[1:])
    # the text Obsidian reads for embeds and wikilinks: not code spans, where they stay text
    inline = "\n".join(
        "".join(c.content if c.type == "text" else "\0" for c in t.children or []) for t in tokens if t.type == "inline"
    )
    assert "![[" not in inline and "<img" not in inline
    assert all(link.startswith(("_inbox/", "facts/", "persons/")) for link in re.findall(r"\[\[([^\]]*)", inline))
    links = re.findall(r"\[\[([^\]|]*)", inline)
    assert not [x for x in links if x.startswith(("x", "HR"))], links
    assert [t.info for t in tokens if t.type == "fence"] == ["text"] * sections  # one quote per item, none broken
    markers = [line for line in lines if line.startswith("%% mc:")]
    assert text.count("%%") == 2 * len(markers)  # no `%%` of an agent's, quoted or not
    bulk = len(re.findall(r"^\d+ items from .* wait for \*\*", text, re.M))  # a group's bulk line (one section)
    assert len(markers) == 2 * (sections + 1 + bulk)


def test_no_agent_byte_of_the_corpus_renders_as_a_task_embed_link_heading_or_html(tmp_path: Path, invoke) -> None:
    root = vault(tmp_path / "v", {**CORPUS, **DROPPED_IN})
    out = sweep(invoke, root, T0)
    assert out["dropped"] == len(DROPPED_IN), out
    text = note_text(root)
    assert_inert(text, out["needs_review"])
    assert "\\xff\\xfe" in text  # a name's bytes that are not UTF-8, shown escaped
    assert not HONOURED.search(text.replace("\n", "")), "a line break other than the note's own"
    age(root / REVIEW_NOTE)
    again = sweep(invoke, root, T1)  # read back: the same note, not left alone
    assert not [n for n in again.get("notes", []) if "review note" in n], again
    assert note_text(root) == text


def tick(text: str, line: str) -> str:
    """`text` with the box of `line` ticked (as Obsidian does, in place)."""
    assert line in text, line
    return text.replace(line, line.replace("- [ ]", "- [x]", 1), 1)


@pytest.mark.parametrize("sep", list(BREAKS.values()), ids=list(BREAKS))
def test_ticking_a_fake_box_in_an_items_body_decides_nothing(tmp_path: Path, invoke, sep: str) -> None:
    root = vault(tmp_path / "v", {"_inbox/agent-a/spam.md": insight("spam", broken_out(sep))})
    sweep(invoke, root, T0)
    note = root / REVIEW_NOTE
    note.write_bytes(tick(note_text(root), FAKE).encode("utf-8"))
    age(note)
    before = snapshot(root)
    out = sweep(invoke, root, T1)
    assert note_records(root) == [] and snapshot(root) == before, out
    assert (root / "_inbox/agent-a/spam.md").is_file() and not (root / "insights/spam.md").exists()


@pytest.mark.parametrize("sep", list(BREAKS.values()), ids=list(BREAKS))
def test_ticking_a_fake_box_in_a_contradictions_value_writes_no_note(tmp_path: Path, invoke, sep: str) -> None:
    fake = FAKE.replace("promote", "new")
    root = vault(tmp_path / "v", {"_inbox/agent-a/ceo.md": contradiction("acme", "ceo", f"x{sep}```{sep}{fake}{sep}")})
    assert sweep(invoke, root, T0)["needs_review"] == 1
    note = root / REVIEW_NOTE
    assert "^mc-" in note_text(root) and "-new" in note_text(root)  # the contradiction's own boxes
    note.write_bytes(tick(note_text(root), fake).encode("utf-8"))
    age(note)
    before = snapshot(root)
    sweep(invoke, root, T1)
    assert note_records(root) == [] and snapshot(root) == before
    assert (root / "facts/acme/ceo.md").read_text() == CEO


def test_a_fake_box_toggled_in_source_mode_inside_the_quote_is_no_tick(tmp_path: Path, invoke) -> None:
    root = vault(tmp_path / "v", {"_inbox/agent-a/spam.md": insight("spam", "Quoted, fence intact:\n" + FAKE)})
    sweep(invoke, root, T0)
    text = note_text(root)
    fence = re.search(r"^(`{3,})text$", text, re.M)
    assert fence and text.index(FAKE) > fence.end()  # inside the curator's quote
    note = root / REVIEW_NOTE
    note.write_bytes(tick(text, FAKE).encode("utf-8"))
    age(note)
    before = snapshot(root)
    sweep(invoke, root, T1)
    assert note_records(root) == [] and snapshot(root) == before
    assert (root / "_inbox/agent-a/spam.md").is_file()


def test_a_folder_name_with_a_lone_cr_cannot_add_a_box_to_the_head(tmp_path: Path, invoke) -> None:
    root = vault(tmp_path / "v", DROPPED_IN)
    assert sweep(invoke, root, T0)["dropped"] == len(DROPPED_IN)
    text = note_text(root)
    tokens = rendered(text)
    tasks = [t for t in tokens if t.type == "list_item_open" and "task-list-item" in str(t.attrs)]
    assert len(tasks) == len(DROPPED_IN)  # one restore box per drop, none of the folder names'
    assert_inert(text, 0)


def test_a_private_notes_value_and_url_are_never_quoted(tmp_path: Path, invoke) -> None:
    notes = {"facts/acme/salary.md": SALARY}
    root = vault(tmp_path / "v", {"_inbox/agent-a/pay.md": contradiction("acme", "salary", "99 EUR")}, notes)
    assert sweep(invoke, root, T0)["needs_review"] == 1
    text = note_text(root)
    assert "99 EUR" in text  # the item's own value is quoted
    assert "123456" not in text and "intranet.acme.dev" not in text
    assert "a private note" in text


def test_a_private_items_title_is_never_shown(tmp_path: Path, invoke) -> None:
    secret = INSIGHT.replace("title: Agents should batch writes", "title: CEO salary is 123456 EUR")
    secret = secret.replace("confidence: 2", "confidence: 2\ntags: [private]")
    root = vault(tmp_path / "v", {"_inbox/agent-a/pay.md": secret})
    assert sweep(invoke, root, T0)["needs_review"] == 1
    text = note_text(root)
    assert "123456" not in text and "CEO salary" not in text
    assert "## a private item from agent-a · `_inbox/agent-a/pay.md`" in text


def test_a_file_name_that_is_not_utf8_leaves_the_note_utf8_and_its_tick_applied(tmp_path: Path, invoke) -> None:
    name = b"_inbox/agent-a/\xff\xfe.md"
    root = vault(tmp_path / "v", {name: insight("undecodable", "a name that is not UTF-8")})
    assert sweep(invoke, root, T0)["needs_review"] == 1
    text = note_text(root)  # strict UTF-8
    assert "\\xff\\xfe" in text
    drop = re.search(r"^- \[ \] drop \^mc-[0-9a-f]{12}-drop$", text, re.M)
    assert drop
    note = root / REVIEW_NOTE
    note.write_bytes(tick(text, drop.group()).encode("utf-8"))
    age(note)
    out = sweep(invoke, root, T1)
    assert [r["verdict"] for r in note_records(root) if r.get("event") == "begin"] == ["drop"], out
    assert not os.path.exists(os.fsencode(root) + b"/" + name)
