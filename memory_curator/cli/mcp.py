"""`memory-curator mcp`: the curator as an MCP server over stdio, the agent's front door.

Agents hand in candidates, ask what a candidate would get, search and read the vault, and see
the curator's status. Every tool calls the same command as the CLI (`submit`, `check`,
`query`, `status`) in the same context; nothing here writes a durable note — the sweep stays
the only writer. The SDK (`mcp>=2,<3`, the `mcp` extra) is imported by this command only.
A tool's failure is one structured MCP error in the CLI's words, never a traceback.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Callable
from importlib import metadata, resources
from typing import Any, TypeVar

from mcp.server import MCPServer
from mcp.server.mcpserver.context import Context as CallContext
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import CallToolResult, InputRequiredResult
from pydantic import ValidationError
from typing_extensions import TypedDict  # pydantic builds schemas of nested TypedDicts from this one (Python < 3.12)

from memory_curator.commands import agent as agent_mod
from memory_curator.commands import check as checking
from memory_curator.commands import status as status_mod
from memory_curator.commands import submit as submit_mod
from memory_curator.commands.context import Context, KeptQuerier, kept
from memory_curator.core.errors import CuratorError
from memory_curator.core.text import one_line, too_large
from memory_curator.store.rules_file import DEFAULT_RULES, vault_rules_file

T = TypeVar("T")
ORIGIN = "<mcp>"
_ONE_CALL = threading.RLock()  # the SDK runs tools in threads; the server's one querier answers one call at a time

INSTRUCTIONS = """\
This server is the front door to an Obsidian vault kept by memory-curator. Hand in what you
learned as a candidate note (submit_candidate); the curator's sweep decides whether it becomes
a durable note (promote), is merged into one (patch), dropped, or waits for a person. Ask
check_candidate first to see the verdict and what is missing. Search and read the vault with
search_notes and read_note. The rules are the resource memory-curator://rules; how to write
a candidate is memory-curator://agent-guide."""

CANDIDATE_FORMAT = """\
A candidate is a markdown note with YAML frontmatter, or `fields` (the frontmatter as an
object) plus `body`. `type` names its surface: fact (entity, predicate, value), event (title,
date), decision (title), insight (title), research (title), person (name), project (name).
Give `source_url` (or `sources`) and `confidence` (1-3); `observed_at` for when it was true.
Example: ---\\ntype: fact\\nentity: acme\\npredicate: headquarters\\nvalue: Berlin\\n
source_url: https://acme.example/about\\nconfidence: 2\\n---\\nSeen on the company site."""


SUBMIT_HELP = (
    "Hand in one candidate: validated, then written atomically into _inbox/<agent>/ (never anywhere else); "
    "returns its inbox path and the verdict it would get now. " + " ".join(CANDIDATE_FORMAT.split())
)
CHECK_HELP = (
    "The verdict a candidate would get now, writing nothing: the criteria, the note with its key and the "
    "nearest notes it was compared with, and what to add to be promoted. " + " ".join(CANDIDATE_FORMAT.split())
)


class Verdict(TypedDict):
    verdict: str
    target_surface: str | None
    target_path: str | None
    reason: str
    criteria: dict[str, bool | None]
    rule: str | None
    contradiction: bool


class Submitted(TypedDict):
    inbox_path: str
    agent_id: str
    check: Verdict


class Checked(Verdict):
    compared_with: dict[str, Any]
    to_promote: list[str]


class CuratorServer(MCPServer):
    """The SDK's server, with a tool's failure said in the curator's words: an argument of the
    wrong type in one line (`limit: expected a whole number, got 'ten'`, never pydantic's text
    and link), and a tool's own error without the SDK's `Error executing tool <name>: `."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: CallContext[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError:
            raise  # a crash the tool did not catch: the SDK's generic line, its traceback in the log
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError):
                raise ToolError(argument_error(cause)) from cause  # the SDK logs its field names only
            if isinstance(cause, ToolError):
                raise ToolError(str(cause)) from cause
            raise


_EXPECTED = {
    "int": "a whole number",
    "float": "a number",
    "string": "text",
    "bool": "true or false",
    "dict": "an object",
    "list": "a list",
}


def argument_error(exc: ValidationError) -> str:
    """Every wrong argument of a call, on one line: `limit: expected a whole number, got 'ten'`,
    `path: required`; pydantic's own words (without its link) for a check it has no name for."""
    said = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(part) for part in error["loc"]) or "arguments"
        kind = error["type"].split("_")[0]
        if error["type"] == "missing":
            said.append(f"{where}: required")
        elif kind in _EXPECTED:
            said.append(f"{where}: expected {_EXPECTED[kind]}, got {_shown(error['input'])}")
        else:
            said.append(f"{where}: {error['msg'][:1].lower()}{error['msg'][1:]}")
    return one_line("; ".join(said))


def _shown(value: Any) -> str:
    """An argument as the agent sent it (JSON's words for what is not text), cut when long."""
    text = repr(value) if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:59] + "…"


def build_server(ctx: Context, agent: str | None = None) -> MCPServer:
    """The server for the vault in `ctx`. With `agent`, every candidate is written as that agent
    and a call naming another is refused (an agent cannot write as another). The server keeps
    one index querier for its life (`context.KeptQuerier`: refreshed at most every
    `KEPT_SECONDS`), and its tools answer one call at a time."""
    ctx = dataclasses.replace(ctx, querier=kept(ctx.querier))
    server = CuratorServer("memory-curator", instructions=INSTRUCTIONS, version=metadata.version("memory-curator"))
    who = _writer(agent)
    _candidate_tools(server, ctx, who)
    _vault_tools(server, ctx)
    if ctx.rules.settings.mcp_allow_sweep:
        _sweep_tool(server, ctx, who)
    _resources(server, ctx)
    return server


def _writer(agent: str | None) -> Callable[[str | None], str]:
    """Who a call writes as: the server's agent (a call naming another is refused), else the
    one the call names, else `mcp`."""
    fixed = submit_mod.agent_name(agent) if agent else None

    def who(asked: str | None) -> str:
        if fixed is not None and asked not in (None, fixed):
            raise CuratorError(f"agent {asked!r}: this server writes as agent {fixed!r} only")
        return fixed or submit_mod.agent_name(asked or "mcp")

    return who


def _candidate_tools(server: MCPServer, ctx: Context, who: Callable[[str | None], str]) -> None:
    """submit_candidate and check_candidate: a candidate handed in, or only judged."""

    @server.tool(description=SUBMIT_HELP)
    def submit_candidate(
        markdown: str | None = None, fields: dict[str, Any] | None = None, body: str = "", agent: str | None = None
    ) -> Submitted:
        """Hand in one candidate: validated, then written atomically into _inbox/<agent>/ (never
        anywhere else). Returns its inbox path and the verdict it would get now."""
        return _guard(lambda: _submit(ctx, _text(ctx, markdown, fields, body), who(agent)))

    @server.tool(description=CHECK_HELP)
    def check_candidate(
        markdown: str | None = None, fields: dict[str, Any] | None = None, body: str = "", agent: str | None = None
    ) -> Checked:
        """The verdict a candidate would get now, without writing anything: the criteria, the
        note with its key and the nearest notes it was compared with, and what to add to be
        promoted."""
        text = _text(ctx, markdown, fields, body)

        def verdict() -> Checked:
            found = checking.check_text(ctx, text, ORIGIN, agent=who(agent), with_context=True, for_agent=True)
            return found.to_json()  # type: ignore[return-value]  # the TypedDict is its JSON's schema

        return _guard(verdict)


def _vault_tools(server: MCPServer, ctx: Context) -> None:
    """search_notes, read_note and curator_status: the vault and the curator, read only."""

    @server.tool()
    def search_notes(
        text: str | None = None,
        entity: str | None = None,
        predicate: str | None = None,
        name: str | None = None,
        date: str | None = None,
        limit: int = 10,
    ) -> dict[str, Any]:
        """Ask the vault's index one thing: notes near `text` (with scores), the note for an
        `entity` and `predicate`, notes whose file name or alias is `name`, or events on `date`
        (YYYY-MM-DD). Paths are vault-relative; each result has a short snippet."""
        key = (entity, predicate) if entity is not None and predicate is not None else None
        if (entity is None) != (predicate is None):
            return _guard(_fail("give both entity and predicate"))
        return _guard(lambda: agent_mod.search(ctx, text=text, key=key, name=name, date=date, limit=limit).to_json())

    @server.tool()
    def read_note(path: str, include_dropped: bool = False) -> dict[str, Any]:
        """A durable note's frontmatter and body, by vault-relative path (e.g. facts/acme/ceo.md).
        The inbox and dot-folders are not readable; a dropped item only with include_dropped."""
        return _guard(lambda: agent_mod.read_note(ctx, path, include_dropped).to_json())

    @server.tool()
    def curator_status() -> dict[str, Any]:
        """The inbox backlog, the items waiting for a person, recent sweeps and drops, the index,
        and whether the judge is on."""
        return _guard(lambda: _status(ctx))


def _sweep_tool(server: MCPServer, ctx: Context, who: Callable[[str | None], str]) -> None:
    @server.tool()
    def sweep_now(agent: str | None = None) -> dict[str, Any]:
        """Sweep this agent's inbox folder now (offered only when the rules file's settings say
        `mcp_allow_sweep: true`); returns what `run --json` prints. Busy: try again later."""
        return _guard(lambda: _sweep(ctx, who(agent)))


def _resources(server: MCPServer, ctx: Context) -> None:
    @server.resource("memory-curator://rules", mime_type="text/markdown")
    def rules() -> str:
        """The vault's rules file (_meta/inbox-rules.md): surfaces, drop rules, criteria."""
        return (vault_rules_file(ctx.root) or DEFAULT_RULES).read_text(encoding="utf-8")

    @server.resource("memory-curator://agent-guide", mime_type="text/markdown")
    def agent_guide() -> str:
        """How an agent writes candidates the curator accepts."""
        return resources.files("memory_curator").joinpath("data/agents.md").read_text(encoding="utf-8")


def _text(ctx: Context, markdown: str | None, fields: dict[str, Any] | None, body: str) -> str:
    """The candidate as note text (markdown as given, or fields + body as a JSON payload),
    refused before any work when it is too big: the lower of the transport's cap and the
    rules' `max_candidate_bytes` wins (docs/mcp.md)."""
    if (markdown is None) == (fields is None):
        raise ToolError(f"give the candidate as markdown, or as fields and body. {' '.join(CANDIDATE_FORMAT.split())}")
    text = markdown if markdown is not None else json.dumps({"frontmatter": fields, "body": body})
    limit = min(agent_mod.NOTE_MAX_BYTES, ctx.rules.settings.max_candidate_bytes)
    big = too_large(len(text.encode("utf-8", "surrogatepass")), limit)
    if big:
        raise ToolError(f"{ORIGIN}: {big}; nothing written")
    return text


def _submit(ctx: Context, text: str, agent: str) -> Submitted:
    done = submit_mod.submit(ctx, text, ORIGIN, agent, with_check=True)
    assert done.check is not None  # asked for: with_check
    return {"inbox_path": done.inbox_path, "agent_id": done.agent_id, "check": done.check.to_json()}  # type: ignore[typeddict-item]


def _sweep(ctx: Context, agent: str) -> dict[str, Any]:
    """One sweep of the agent's folder, under the lock for this call only (never waiting for it)."""
    from memory_curator.commands import sweep
    from memory_curator.core.names import INBOX

    fresh = dataclasses.replace(ctx)  # the rules as they are now
    if not fresh.rules.settings.mcp_allow_sweep:
        raise CuratorError("sweep_now is off: the rules file's settings no longer say mcp_allow_sweep: true")
    folder = fresh.root / INBOX / agent
    if not folder.is_dir():
        raise CuratorError(f"{INBOX}/{agent}/: no such agent folder (nothing handed in yet)")
    try:
        return sweep.run(fresh, folder, sweep.Options()).to_json()
    finally:
        if isinstance(ctx.querier, KeptQuerier):
            ctx.querier.expire()  # the next call sees what the sweep wrote


def _status(ctx: Context) -> dict[str, Any]:
    from memory_curator.judge.settings import KEY_ENV, resolve_settings  # not the client: no SDK, no pydantic models

    status = status_mod.gather(ctx, for_agent=True)
    try:
        settings = resolve_settings(ctx.rules.settings.judge, (), ctx.env)
        judge = "on" if settings.enabled and ctx.env.get(KEY_ENV, "").strip() else "off"
    except CuratorError as exc:
        judge = f"off ({exc})"
    return dataclasses.replace(status, judge=judge).to_json()


def _fail(message: str) -> Callable[[], Any]:
    def raise_it() -> Any:
        raise CuratorError(message)

    return raise_it


def _guard(call: Callable[[], T]) -> T:
    """The CLI's words for a user error; one line for a bug; never a traceback to the agent.
    One call at a time (`_ONE_CALL`)."""
    try:
        with _ONE_CALL:
            return call()
    except ToolError:
        raise
    except CuratorError as exc:
        raise ToolError(str(exc)) from None
    except Exception as exc:
        raise ToolError(f"internal error: {type(exc).__name__}: {exc}") from None


def serve(ctx: Context, agent: str | None = None) -> None:
    """Run over stdio until the client hangs up."""
    build_server(ctx, agent).run("stdio")
