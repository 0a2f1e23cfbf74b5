"""`memory-curator mcp`: every tool through the SDK's in-memory client (no subprocess), bad
input answered as one structured error in the CLI's words, and one real stdio round trip
(spawn, initialise, list tools, submit, then `run` promotes what was handed in)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult

from memory_curator.cli.machine import build_context
from memory_curator.cli.mcp import build_server
from memory_curator.commands.context import KEPT_SECONDS, Context, KeptQuerier, Seams
from memory_curator.core.clock import FixedClock
from memory_curator.index.overlay import Overlay
from memory_curator.store.writer import Files

from conftest import NOW, age, run_installed

FACT = """---
type: fact
entity: acme
predicate: headquarters
value: Acme is based in Berlin.
source_url: https://acme.example.dev/about
confidence: 2
---
Seen on the company site.
"""
UNSOURCED = FACT.replace("source_url: https://acme.example.dev/about\n", "")
TOOLS = {"submit_candidate", "check_candidate", "search_notes", "read_note", "curator_status"}


def session(ctx: Context, agent: str | None, calls: Callable[[Client], Awaitable[Any]]) -> Any:
    """Run `calls` against a fresh server for `ctx`, over the SDK's in-memory transport."""

    async def main() -> Any:
        async with Client(build_server(ctx, agent)) as client:
            return await calls(client)

    return anyio.run(main)


def call(ctx: Context, tool: str, server_agent: str | None = None, **arguments: Any) -> CallToolResult:
    return session(ctx, server_agent, lambda client: client.call_tool(tool, arguments))  # type: ignore[no-any-return]


def error_text(result: CallToolResult) -> str:
    assert result.is_error, result.structured_content
    [content] = result.content
    text = content.text  # type: ignore[union-attr]
    assert "Traceback" not in text and "\n" not in text, text
    return str(text)


@pytest.fixture
def ctx(vault: Path, tmp_path: Path) -> Context:
    from memory_curator.core.clock import FixedClock

    return build_context(vault, str(tmp_path / "state"), Seams(clock=FixedClock(NOW), env={}))


def test_the_tools_and_resources_are_listed_with_schemas(ctx: Context) -> None:
    async def ask(client: Client) -> tuple[Any, Any]:
        return await client.list_tools(), await client.list_resources()

    tools, listed = session(ctx, None, ask)
    assert {t.name for t in tools.tools} == TOOLS
    for tool in tools.tools:
        assert tool.description and tool.input_schema["type"] == "object"
    by_name = {t.name: t for t in tools.tools}
    assert "markdown" in by_name["submit_candidate"].input_schema["properties"]
    for name in ("submit_candidate", "check_candidate"):  # the description teaches the candidate format
        assert "type: fact" in (by_name[name].description or "") and "source_url" in (by_name[name].description or "")
    assert by_name["submit_candidate"].output_schema["required"] == ["inbox_path", "agent_id", "check"]
    assert {str(r.uri) for r in listed.resources} == {"memory-curator://rules", "memory-curator://agent-guide"}


def test_submit_candidate_stages_it_in_the_agents_folder_and_says_its_verdict(ctx: Context, vault: Path) -> None:
    result = call(ctx, "submit_candidate", markdown=FACT, agent="scout")
    out = result.structured_content
    assert not result.is_error and out is not None
    assert out["inbox_path"] == "_inbox/scout/acme-headquarters.md" and out["agent_id"] == "scout"
    assert out["check"]["verdict"] == "promote"
    assert (vault / out["inbox_path"]).read_text(encoding="utf-8") == FACT
    assert not (vault / "facts/acme").exists(), "only the sweep writes durable notes"


def test_fields_and_body_are_a_candidate_too(ctx: Context, vault: Path) -> None:
    fields = {"type": "fact", "entity": "acme", "predicate": "ceo", "value": "Jo Bloggs", "confidence": 2}
    out = call(ctx, "submit_candidate", fields=fields, body="From the annual report.").structured_content
    assert out is not None
    text = (vault / out["inbox_path"]).read_text(encoding="utf-8")
    assert "entity: acme" in text and text.endswith("From the annual report.")


def test_check_candidate_writes_nothing_and_says_what_is_missing(ctx: Context, vault: Path) -> None:
    before = sorted(p for p in vault.rglob("*") if p.is_file())
    out = call(ctx, "check_candidate", markdown=UNSOURCED).structured_content
    assert out is not None and out["verdict"] == "needs_review"
    assert out["criteria"]["sourced"] is False
    assert any(hint.startswith("meet sourced") for hint in out["to_promote"]), out["to_promote"]
    assert set(out["compared_with"]) == {"existing", "neighbours"}
    assert sorted(p for p in vault.rglob("*") if p.is_file()) == before


def test_check_candidate_names_the_note_it_was_compared_with(ctx: Context) -> None:
    patching = FACT.replace("entity: acme\npredicate: headquarters", "entity: obsidian\npredicate: file-format")
    out = call(ctx, "check_candidate", markdown=patching).structured_content
    assert out is not None and out["compared_with"]["existing"] == "facts/obsidian/file-format.md"


def test_search_notes_by_text_key_name_and_date(ctx: Context) -> None:
    near = call(ctx, "search_notes", text="coding assistants data", limit=3).structured_content
    assert near is not None and near["kind"] == "text" and 1 <= len(near["results"]) <= 3
    first = near["results"][0]
    assert first["path"] == "research/ai-tools/coding-assistants.md" and 0 < first["score"] <= 1
    assert 0 < len(first["snippet"]) <= 300
    key = call(ctx, "search_notes", entity="obsidian", predicate="file-format").structured_content
    assert key is not None and [r["path"] for r in key["results"]] == ["facts/obsidian/file-format.md"]
    named = call(ctx, "search_notes", name="coding-assistants").structured_content
    assert named is not None and [r["path"] for r in named["results"]] == ["research/ai-tools/coding-assistants.md"]
    dated = call(ctx, "search_notes", date="1999-01-01").structured_content
    assert dated is not None and dated["results"] == []


def test_the_server_keeps_one_index_and_refreshes_it_at_most_every_few_seconds(
    ctx: Context, vault: Path, tmp_path: Path
) -> None:
    """The index is opened once per server, not per call: a note written meanwhile is found once
    `KEPT_SECONDS` have passed on the context's clock (or at once after `sweep_now`)."""
    clock = ctx.clock
    assert isinstance(clock, FixedClock)
    harbour = "---\ntitle: Zanzibar harbour\n---\nDhows in the old harbour.\n"

    def named(client: Client) -> Awaitable[CallToolResult]:
        return client.call_tool("search_notes", {"name": "zanzibar-harbour"})

    async def calls(client: Client) -> list[list[str]]:
        seen = []
        for step in ("before", "written", "later"):
            if step == "written":
                age(write_note(vault, "notes/zanzibar-harbour.md", harbour))
            if step == "later":
                clock.advance(KEPT_SECONDS)
            out = (await named(client)).structured_content
            assert out is not None
            seen.append([r["path"] for r in out["results"]])
        return seen

    assert session(ctx, None, calls) == [[], [], ["notes/zanzibar-harbour.md"]]


def test_each_call_gets_its_own_overlay_over_the_one_kept_querier(ctx: Context) -> None:
    """What one call (a sweep) stages is gone at the next: a new overlay each time, over the
    same index querier."""
    factory = KeptQuerier()
    first, second = factory(ctx, ctx.rules), factory(ctx, ctx.rules)
    assert isinstance(first, Overlay) and isinstance(second, Overlay) and first is not second
    assert first.base is second.base
    first.stage("notes/staged.md", "---\ntitle: Staged only\n---\nA note this call wrote.\n")
    assert first.match_name("staged-only") == ["notes/staged.md"]
    assert second.match_name("staged-only") == []
    changed = replace(ctx.rules, settings=replace(ctx.rules.settings, neighbours=ctx.rules.settings.neighbours + 1))
    assert factory(ctx, changed).base is not first.base  # other rules: another querier
    factory.close()


def write_note(vault: Path, rel: str, text: str) -> Path:
    path = vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_a_private_note_left_out_of_a_search_makes_room_for_the_next(ctx: Context, vault: Path) -> None:
    """The search asks for `limit` notes, and again with spares only when a private one had to be
    left out: the answer is still `limit` notes, none private."""
    write_note(
        vault, "notes/dhows-private.md", "---\ntitle: Dhows\ntags: [private]\n---\nZanzibar dhows dhows harbour.\n"
    )
    write_note(vault, "notes/dhows-public.md", "---\ntitle: Boats\n---\nZanzibar dhows in a harbour, and more.\n")
    for path in ("notes/dhows-private.md", "notes/dhows-public.md"):
        age(vault / path)
    both = call(ctx, "search_notes", text="zanzibar dhows harbour", limit=2).structured_content
    assert both is not None and [r["path"] for r in both["results"]] == ["notes/dhows-public.md"]
    one = call(ctx, "search_notes", text="zanzibar dhows harbour", limit=1).structured_content
    assert one is not None and [r["path"] for r in one["results"]] == ["notes/dhows-public.md"]


def test_search_notes_refuses_an_unclear_question(ctx: Context) -> None:
    assert "ask one thing" in error_text(call(ctx, "search_notes"))
    assert "ask one thing" in error_text(call(ctx, "search_notes", text="x", name="y"))
    assert "both entity and predicate" in error_text(call(ctx, "search_notes", entity="acme"))
    assert "between 1 and 50" in error_text(call(ctx, "search_notes", text="x", limit=500))


def test_read_note_returns_frontmatter_and_body(ctx: Context) -> None:
    out = call(ctx, "read_note", path="facts/obsidian/file-format.md").structured_content
    assert out is not None and out["path"] == "facts/obsidian/file-format.md"
    assert out["frontmatter"]["entity"] == "obsidian" and out["frontmatter"]["confidence"] == 3
    assert out["frontmatter"]["observed_at"] == "2026-03-01" and out["body"].strip()


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("../outside.md", "not a vault-relative path"),
        ("/etc/passwd.md", "not a vault-relative path"),
        (".obsidian/app.md", "not a durable note"),
        ("_inbox/test-step-4/promotable-fact.md", "not a durable note"),
        ("facts/nope.md", "no such note"),
        ("facts/obsidian/file-format", "not a note"),
    ],
)
def test_read_note_refuses_what_is_not_a_durable_note_of_the_vault(ctx: Context, path: str, says: str) -> None:
    assert says in error_text(call(ctx, "read_note", path=path))


def test_read_note_reads_a_dropped_item_only_when_asked_and_never_through_a_symlink(
    ctx: Context, vault: Path, tmp_path: Path
) -> None:
    dropped = vault / "_inbox/.dropped/a/2026-01-01T00-00-00-x.md"
    dropped.parent.mkdir(parents=True)
    dropped.write_text("---\ntype: fact\n---\ndropped\n", encoding="utf-8")
    rel = dropped.relative_to(vault).as_posix()
    assert "include_dropped" in error_text(call(ctx, "read_note", path=rel))
    assert call(ctx, "read_note", path=rel, include_dropped=True).structured_content is not None
    (tmp_path / "secret.md").write_text("secret", encoding="utf-8")
    (vault / "facts/leak.md").symlink_to(tmp_path / "secret.md")
    assert "no such note" in error_text(call(ctx, "read_note", path="facts/leak.md"))
    (vault / "facts/out").symlink_to(tmp_path, target_is_directory=True)
    assert "leaves the vault" in error_text(call(ctx, "read_note", path="facts/out/secret.md"))


def test_oversize_is_refused_before_any_work(ctx: Context, vault: Path) -> None:
    big = FACT + "x" * (300 * 1024)
    assert "too large: 300.2 KiB > 256 KiB" in error_text(call(ctx, "submit_candidate", markdown=big))
    assert "too large: 300.2 KiB > 256 KiB" in error_text(call(ctx, "check_candidate", markdown=big))
    (vault / "facts/huge.md").write_text("---\ntype: fact\n---\n" + "y" * (300 * 1024), encoding="utf-8")
    assert "over the 256 KiB" in error_text(call(ctx, "read_note", path="facts/huge.md"))
    assert not (vault / "_inbox/mcp").exists()


def test_bad_candidates_get_the_clis_words_and_nothing_is_written(ctx: Context, vault: Path) -> None:
    assert "markdown, or as fields and body" in error_text(call(ctx, "submit_candidate"))
    bad_yaml = "---\ntype: fact\nvalue: [unclosed\n---\nbody\n"
    said = error_text(call(ctx, "submit_candidate", markdown=bad_yaml))
    assert "<mcp>:" in said and "nothing written" in said
    assert "agent id" in error_text(call(ctx, "submit_candidate", markdown=FACT, agent="../x"))
    assert not (vault / "_inbox/mcp").exists()


def test_an_agent_fixed_by_the_server_cannot_write_as_another(ctx: Context, vault: Path) -> None:
    said = error_text(call(ctx, "submit_candidate", server_agent="claude", markdown=FACT, agent="other"))
    assert "writes as agent 'claude' only" in said
    out = call(ctx, "submit_candidate", server_agent="claude", markdown=FACT).structured_content
    assert out is not None and out["inbox_path"].startswith("_inbox/claude/")
    assert not (vault / "_inbox/other").exists()


def test_a_bug_is_one_line_never_a_traceback(vault: Path, tmp_path: Path) -> None:
    @dataclass(frozen=True)
    class Broken(Files):
        def create_unique(self, path: Path, data: bytes) -> Path:
            raise RuntimeError("a bug in the writer")

    ctx = build_context(vault, str(tmp_path / "state"), Seams(files=Broken(), env={}))
    said = error_text(call(ctx, "submit_candidate", markdown=FACT))
    assert said.endswith("internal error: RuntimeError: a bug in the writer")


def test_curator_status_and_the_resources(ctx: Context, vault: Path) -> None:
    out = call(ctx, "curator_status").structured_content
    assert out is not None and out["judge"] == "off" and "needs_review" in out and "inbox" in out

    async def read(client: Client) -> tuple[str, str]:
        rules = await client.read_resource("memory-curator://rules")
        guide = await client.read_resource("memory-curator://agent-guide")
        return rules.contents[0].text, guide.contents[0].text  # type: ignore[union-attr]

    rules, guide = session(ctx, None, read)
    assert rules == (vault / "_meta/inbox-rules.md").read_text(encoding="utf-8")
    assert guide == (Path(__file__).parent.parent / "docs/agents.md").read_text(encoding="utf-8")


def test_a_candidate_over_mcp_and_one_written_as_a_file_get_the_same_verdict(
    tmp_path: Path, vault: Path, write_candidate, invoke
) -> None:
    import shutil

    other = tmp_path / "other"
    shutil.copytree(vault, other)
    ctx = build_context(vault, str(tmp_path / "s1"), Seams(env={}))
    out = call(ctx, "submit_candidate", agent="scout", markdown=UNSOURCED.replace("Berlin", "Paris")).structured_content
    assert out is not None
    age(vault / out["inbox_path"])
    write_candidate(other, Path(out["inbox_path"]).name, UNSOURCED.replace("Berlin", "Paris"), agent="scout")
    verdicts = []
    for root, state in ((vault, tmp_path / "s1"), (other, tmp_path / "s2")):
        args = ["run", str(root / "_inbox/scout"), "--vault", str(root), "--state-dir", str(state), "--json"]
        result = json.loads(invoke(*args, "--no-judge").output)
        [action] = result["actions"]
        verdicts.append({k: action[k] for k in ("verdict", "reason", "criteria")})
    assert verdicts[0] == verdicts[1] == {**verdicts[0], "verdict": out["check"]["verdict"]}


def test_a_folder_that_is_not_a_vault_is_refused(tmp_path: Path) -> None:
    done = run_installed("mcp", "--vault", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip() == (
        f"memory-curator: not a vault: {tmp_path} has no _inbox/ and no _meta/inbox-rules.md "
        f"(run `memory-curator init {tmp_path}`)"
    )


def test_a_real_stdio_round_trip_then_run_promotes_what_was_handed_in(vault: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    command = [sys.executable, "-m", "memory_curator", "mcp", "--vault", str(vault), "--state-dir", str(state)]
    server = StdioServerParameters(command=command[0], args=[*command[1:], "--agent", "scout"], env=dict(os.environ))

    async def talk() -> tuple[set[str], dict[str, Any]]:
        async with Client(server) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            done = await client.call_tool("submit_candidate", {"markdown": FACT})
            assert not done.is_error and done.structured_content is not None
            return tools, done.structured_content

    tools, out = anyio.run(talk)
    assert tools == TOOLS and out["inbox_path"] == "_inbox/scout/acme-headquarters.md"
    age(vault / out["inbox_path"])
    swept = run_installed("run", "--vault", str(vault), "--state-dir", str(state), "--no-judge", "--json", cwd=vault)
    assert swept.returncode == 0, swept.stderr
    agents = json.loads(swept.stdout)["agents"]  # several agents' folders were swept: one entry each
    promoted = [a for agent in agents for a in agent["actions"] if a["inbox_path"] == out["inbox_path"]]
    assert [a["verdict"] for a in promoted] == ["promote"]
    assert (vault / "facts/acme/headquarters.md").exists() and not (vault / out["inbox_path"]).exists()


def test_sweep_now_is_offered_only_when_the_rules_allow_it(vault: Path, tmp_path: Path) -> None:
    off = build_context(vault, str(tmp_path / "state"), Seams(env={}))
    tools = session(off, None, lambda client: client.list_tools())
    assert "sweep_now" not in {t.name for t in tools.tools}

    rules = vault / "_meta/inbox-rules.md"
    text = rules.read_text(encoding="utf-8").replace(
        "  settle_seconds: 3\n", "  settle_seconds: 0\n  mcp_allow_sweep: true\n"
    )
    rules.write_text(text, encoding="utf-8")
    on = build_context(vault, str(tmp_path / "state"), Seams(env={}))

    async def hand_in_and_sweep(client: Client) -> tuple[set[str], Any, Any]:
        names = {t.name for t in (await client.list_tools()).tools}
        handed = await client.call_tool("submit_candidate", {"markdown": FACT})
        swept = await client.call_tool("sweep_now", {})
        return names, handed, swept

    names, handed, swept = session(on, "scout", hand_in_and_sweep)
    assert names == TOOLS | {"sweep_now"}
    assert not swept.is_error, swept.content
    assert [(a["inbox_path"], a["verdict"]) for a in swept.structured_content["actions"]] == [
        (handed.structured_content["inbox_path"], "promote")
    ]
    assert (vault / "facts/acme/headquarters.md").exists()
    assert "no such agent folder" in error_text(call(on, "sweep_now", server_agent="nobody"))


@pytest.mark.parametrize(
    ("tool", "arguments", "says"),
    [
        ("search_notes", {"limit": "ten"}, "limit: expected a whole number, got 'ten'"),
        ("search_notes", {"text": "x", "limit": 2.5}, "limit: expected a whole number, got 2.5"),
        ("read_note", {"path": 5}, "path: expected text, got 5"),
        ("read_note", {}, "path: required"),
        (
            "read_note",
            {"path": "x.md", "include_dropped": "maybe"},
            "include_dropped: expected true or false, got 'maybe'",
        ),
        ("submit_candidate", {"fields": "x"}, "fields: expected an object, got 'x'"),
    ],
)
def test_a_wrong_argument_is_one_line_in_the_clis_words(
    ctx: Context, tool: str, arguments: dict[str, Any], says: str
) -> None:
    said = error_text(call(ctx, tool, **arguments))
    assert said == says and "http" not in said


def test_a_tools_own_error_is_the_clis_line_without_the_sdks_prefix(ctx: Context) -> None:
    assert error_text(call(ctx, "read_note", path="facts/nope.md")) == "facts/nope.md: no such note"


def test_a_bad_date_is_refused_in_the_words_of_query_date(ctx: Context, invoke, vault: Path) -> None:
    said = error_text(call(ctx, "search_notes", date="not-a-date"))
    cli = invoke("query", "--date", "not-a-date", "--vault", str(vault))
    assert cli.exit_code == 2 and "'not-a-date': use a date like 2026-11-01" in cli.output
    assert said == "date 'not-a-date': use a date like 2026-11-01"
    spaced = call(ctx, "search_notes", date=" 2026-03-01 ").structured_content  # normalised as the CLI does
    assert spaced is not None and spaced["query"] == "2026-03-01"


def test_the_server_reports_the_packages_version(ctx: Context) -> None:
    from importlib.metadata import version

    async def info(client: Client) -> Any:
        return client.server_info

    served = session(ctx, None, info)
    assert served.name == "memory-curator" and served.version == version("memory-curator") != ""
