"""The hostile-agent corpus, fence tricks (issue 36): a privacy tag is a tag wherever CommonMark
reads prose, so no trick with backticks, tildes or indentation hides it from the sweep, MCP or
the judge; and a `#private` that CommonMark reads as code is no tag (`core/markdown.prose`).

Every trick below hid `#private` from the regular expression that read code before (its
secret was promoted, served and judged); each must now wait for a person.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from loop_kit import cli
from test_judge import FakeModel, all_promote, answering, wire_fake_api
from test_mcp import call, error_text

from memory_curator.cli.machine import build_context
from memory_curator.commands.context import Seams
from memory_curator.core.clock import SystemClock
from memory_curator.core.markdown import prose
from memory_curator.core.notes import inline_tags, wikilinks

TRICKS = {
    "mid-line ```": "Wrap commands in ``` when pasting.\nVPN root password: {secret} #private\n",
    "mid-line ~~~": "Roughly ~~~ three units of work.\nVPN root password: {secret} #private\n",
    "a code span of two backticks": "Quote one as `` ` `` then: {secret} #private, and `done`.\n",
    "``` in 4-space indented code": "    ```\n\nVPN root password: {secret} #private\n",
    "``` indented 4 in a paragraph": "Paste it like this:\n    ```\nVPN root password: {secret} #private\n",
    "an indented fence": "   ````\n   ```\n   ````\nVPN root password: {secret} #private\n",
    "a fence in a list item": "- step one:\n  ```\n  ssh vpn\n\nVPN root password: {secret} #private\n",
    "a fence closed by a longer one": "```\nssh vpn\n``````\nVPN root password: {secret} #private\n",
    "~~~ not closed by ```, in a quote": "> ~~~\n> ssh vpn\n> ```\n\nVPN root password: {secret} #private\n",
    "a fence holding a mid-line ```": "```\necho ```\n```\nVPN root password: {secret} #private\n",
}
IN_CODE = {  # `#private` where CommonMark reads code: no tag, the note is public
    "#private in a code span": "Mark a note with `#private` to keep it: {secret}.\n",
    "#private in an unclosed fence": "Shared: {secret}.\n\n```\n#private\n",
    "#private in indented code": "Shared: {secret}.\n\n    #private\n",
}
NAMES = list(TRICKS)


def secret(name: str) -> str:
    """A word of its own per trick, for search and for spotting it in a judge request."""
    return "hunter" + "abcdefghijklmnopqrstuvwxyz"[[*TRICKS, *IN_CODE].index(name)] * 3


def fact(name: str, body: str) -> str:
    return (
        "---\ntype: fact\nentity: vpn\npredicate: root-password\nvalue: See the body.\n"
        "source_url: https://wiki.acme.dev/vpn\nconfidence: 3\n---\n" + body.format(secret=secret(name))
    )


def note(name: str, body: str) -> str:
    return f"---\ntitle: VPN access {name}\n---\n" + body.format(secret=secret(name))


@pytest.mark.parametrize("name", NAMES)
def test_prose_keeps_the_tag_each_trick_hid(name: str) -> None:
    body = TRICKS[name].format(secret=secret(name))
    assert "private" in inline_tags(body)
    assert secret(name) in prose(body)


@pytest.mark.parametrize("name", list(IN_CODE))
def test_a_tag_commonmark_reads_as_code_is_no_tag(name: str) -> None:
    body = IN_CODE[name].format(secret=secret(name))
    assert inline_tags(body) == []
    assert "#private" not in prose(body)


def test_prose_blanks_exactly_the_code() -> None:
    body = 'a `b` c\n```py\n#x [[y]]\n```\n> ~~~\n> #z\n\n#t [[u]] <span title="`"> #v `w`\r\n'
    assert prose(body) == 'a   c\n\n\n\n#t [[u]] <span title="`"> #v  \n'
    assert inline_tags(body) == ["t", "v"] and wikilinks(body) == ["u"]


@pytest.mark.parametrize("name", NAMES)
def test_a_private_candidate_waits_whatever_the_fence_trick(
    vault: Path, write_candidate: Callable[..., Path], capsys: Any, name: str
) -> None:
    path = write_candidate(vault, "vpn.md", fact(name, TRICKS[name]), agent="spy")
    code, out, _ = cli(capsys, "run", "--vault", str(vault), "--settle", "0", "--json", "--no-judge")
    assert code == 0
    [action] = [a for agent in json.loads(out)["agents"] if agent["agent_id"] == "spy" for a in agent["actions"]]
    assert (action["verdict"], action["reason_code"]) == ("needs_review", "private")
    assert not (vault / "facts/vpn").exists()
    assert secret(name) in path.read_text()


@pytest.mark.parametrize("name", list(IN_CODE))
def test_a_tag_in_code_does_not_hold_a_candidate(
    vault: Path, write_candidate: Callable[..., Path], capsys: Any, name: str
) -> None:
    write_candidate(vault, "vpn.md", fact(name, IN_CODE[name]), agent="spy")
    code, out, _ = cli(capsys, "run", "--vault", str(vault), "--settle", "0", "--json", "--no-judge")
    assert code == 0
    [action] = [a for agent in json.loads(out)["agents"] if agent["agent_id"] == "spy" for a in agent["actions"]]
    assert action["verdict"] == "promote"


def test_mcp_serves_no_note_a_trick_made_private(vault: Path, tmp_path: Path) -> None:
    folder = vault / "insights/vpn"
    folder.mkdir(parents=True)
    for number, name in enumerate(NAMES):
        (folder / f"trick-{number}.md").write_text(note(name, TRICKS[name]))
    for number, name in enumerate(IN_CODE):
        (folder / f"code-{number}.md").write_text(note(name, IN_CODE[name]))
    ctx = build_context(vault, str(tmp_path / "state"), Seams(clock=SystemClock(), env={}))
    for number, name in enumerate(NAMES):
        rel = f"insights/vpn/trick-{number}.md"
        assert "private content (#private): not served to agents" in error_text(call(ctx, "read_note", path=rel)), name
        found = call(ctx, "search_notes", text=secret(name)).structured_content
        assert found is not None and found["results"] == [], name
    for number, name in enumerate(IN_CODE):  # the same search finds a public note: the test can fail
        rel = f"insights/vpn/code-{number}.md"
        read = call(ctx, "read_note", path=rel).structured_content
        assert read is not None and secret(name) in read["body"], name
        found = call(ctx, "search_notes", text=secret(name)).structured_content
        assert found is not None and [r["path"] for r in found["results"]] == [rel], name


def test_the_judge_is_sent_no_trick_candidate_nor_note(
    vault: Path, write_candidate: Callable[..., Path], invoke: Callable[..., Any]
) -> None:
    folder = vault / "insights/vpn"
    folder.mkdir(parents=True)
    shown = []
    for number, name in enumerate(NAMES):
        (folder / f"trick-{number}.md").write_text(note(name, TRICKS[name]))
        shown.append(f"insights/vpn/trick-{number}.md")
        insight = fact(name, TRICKS[name]).replace("type: fact", f"type: insight\ntitle: VPN trick {number}")
        write_candidate(vault, f"trick-{number}.md", insight, agent="spy")
    public = "---\ntype: insight\ntitle: VPN hosts rotate weekly\nsource_url: https://wiki.acme.dev/vpn\n---\nSeen.\n"
    write_candidate(vault, "public.md", public, agent="bot")
    model = FakeModel(answering(all_promote))
    done = invoke(
        "run", "--vault", str(vault), "--settle", "0", "--json", seams=wire_fake_api(model, {"public.md": shown})
    )
    assert done.exit_code == 0, done.output
    sent = json.dumps(model.requests)
    assert "VPN hosts rotate weekly" in sent  # the public insight was judged
    assert [name for name in NAMES if secret(name) in sent] == []
