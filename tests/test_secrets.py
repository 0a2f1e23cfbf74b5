"""A credential an agent pastes never becomes a note and never leaves the machine (issue 39).

The corpus (`secrets_corpus.py`): each credential placed inline in the body, in a YAML value,
in fenced code and in a link waits with reason code `secret`, is shown masked in the review
note, and is refused by MCP's `read_note` and left out of `search_notes`; each look-alike
passes the scan and is promoted as any candidate."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from loop_kit import cli
from secrets_corpus import CREDENTIALS, LOOK_ALIKES

from memory_curator.cli.app import cli as app
from memory_curator.cli.machine import build_context
from memory_curator.commands import agent
from memory_curator.commands.check import check_text
from memory_curator.commands.context import Context, Seams
from memory_curator.core.clock import FixedClock, SystemClock
from memory_curator.core.errors import CuratorError
from memory_curator.core.secrets import hashed, mask, masked_text, scan

from conftest import NOW, SHARED, fixture_vault, isolate, put_candidate, require_shared

PLACES = ("inline", "yaml", "fenced", "link")


def placed(credential: str, place: str) -> tuple[str, str]:
    """(frontmatter lines, body) holding `credential` in one place; a multi-line credential (a
    key block) is never in a link, so there it is written as a fenced block again."""
    if place == "yaml":
        indented = "\n".join("  " + line for line in credential.split("\n"))
        return f"env: |\n{indented}\n", "Seen in the agent's environment."
    if place == "fenced" or (place == "link" and "\n" in credential):
        return "", f"The shell showed:\n\n```sh\n{credential}\n```\n"
    if place == "link":
        return "", f"Open [the console](https://console.internal/login?k={credential}) to check."
    return "", f"The agent pasted {credential} while debugging."


def fact(entity: str, predicate: str, frontmatter: str = "", body: str = "") -> str:
    return (
        f"---\ntype: fact\nentity: {entity}\npredicate: {predicate}\nvalue: {entity} {predicate} holds.\n"
        f"source_url: https://docs.example.dev/{entity}/{predicate}\nconfidence: 2\n{frontmatter}---\n{body}\n"
    )


def candidates() -> dict[str, tuple[str, str]]:
    """file name -> (its text, the credential it holds), for each credential in each place."""
    out = {}
    for name, _kind, credential in CREDENTIALS:
        for place in PLACES:
            frontmatter, body = placed(credential, place)
            out[f"{name}-{place}.md"] = (fact(f"svc{name.replace('-', '')}", place, frontmatter, body), credential)
    return out


def secret_values(credential: str) -> list[str]:
    """The secrets in a corpus credential as the scan finds them (what must never be shown)."""
    return [f.secret for f in scan(credential)] or [credential]


@pytest.fixture(scope="module")
def corpus_swept(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, dict[str, Any]]]:
    """The fixture vault with every credential in every place and every look-alike, swept once
    for the tests below (~1 s a sweep), which only read its actions and the files it left."""
    with pytest.MonkeyPatch.context() as patch:
        isolate(patch, tmp_path_factory.mktemp("home"))
        vault = fixture_vault(tmp_path_factory.mktemp("secrets") / "vault")
        shutil.rmtree(vault / "_inbox/test-step-4", ignore_errors=True)
        for file, (text, _) in candidates().items():
            put_candidate(vault, file, text)
        for number, (name, text) in enumerate(LOOK_ALIKES):
            body = fact(f"lookalike{number}", f"shape{number}", body=text)
            put_candidate(vault, f"look-{name}.md", body, agent="agent-b")
        args = ["run", "--vault", str(vault), "--json"]
        result = CliRunner().invoke(app, args, obj=Seams(clock=SystemClock()), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    return vault, {a["inbox_path"].rpartition("/")[2]: a for agent_ in out["agents"] for a in agent_["actions"]}


@pytest.fixture
def swept(corpus_swept: tuple[Path, dict[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    return corpus_swept[1]


@pytest.fixture
def swept_vault(corpus_swept: tuple[Path, dict[str, dict[str, Any]]]) -> Path:
    return corpus_swept[0]


def test_every_credential_in_every_place_waits_with_reason_secret(
    swept: dict[str, dict[str, Any]], swept_vault: Path
) -> None:
    for file, (_text, credential) in candidates().items():
        action = swept[file]
        assert action["verdict"] == "needs_review", (file, action)
        assert action["reason_code"] == "secret", (file, action)
        for secret in secret_values(credential):
            assert secret not in action["reason"], (file, action["reason"])
        assert (swept_vault / "_inbox/agent-a" / file).exists(), file  # still waiting, in the inbox
        assert action["target_path"] is None or not (swept_vault / action["target_path"]).exists(), file


def test_every_look_alike_passes_the_scan_and_is_promoted(swept: dict[str, dict[str, Any]], swept_vault: Path) -> None:
    for name, _text in LOOK_ALIKES:
        action = swept[f"look-{name}.md"]
        assert action["verdict"] == "promote", (name, action)
        assert (swept_vault / action["target_path"]).is_file()


def test_the_review_note_shows_each_credential_masked_and_offers_no_promote(
    swept: dict[str, dict[str, Any]], swept_vault: Path
) -> None:
    note = (swept_vault / "_meta/Inbox review.md").read_text(encoding="utf-8")
    for file, (_text, credential) in candidates().items():
        for finding in scan(credential):
            assert finding.secret not in note, (file, finding.kind)
            assert finding.masked in note, (file, finding.masked)
    section = note.split("`_inbox/agent-a/anthropic-inline.md`", 1)[1].split("%% mc:end", 1)[0]
    tasks = [line for line in section.split("\n") if line.startswith("- [ ]")]
    assert [t.split()[3] for t in tasks] == ["drop", "leave"]  # no promote, no patch: those are terminal acts
    assert "The agent pasted sk-ant-…a1b2 while debugging." in section


@pytest.fixture
def ctx(vault: Path, tmp_path: Path) -> Context:
    return build_context(vault, str(tmp_path / "state"), Seams(clock=FixedClock(NOW), env={}))


@pytest.mark.parametrize(("name", "kind", "credential"), CREDENTIALS, ids=[c[0] for c in CREDENTIALS])
def test_check_candidate_says_secret_without_the_secret(ctx: Context, name: str, kind: str, credential: str) -> None:
    for place in PLACES:
        frontmatter, body = placed(credential, place)
        verdict = check_text(
            ctx, fact(f"svc{name.replace('-', '')}", place, frontmatter, body), "<mcp>", with_context=True
        )
        said = json.dumps(verdict.to_json())
        assert verdict.verdict == "needs_review" and verdict.reason.startswith("secret ("), (place, verdict.reason)
        assert kind in verdict.reason
        for secret in secret_values(credential):
            assert secret not in said, (place, said)


@pytest.mark.parametrize(("name", "kind", "credential"), CREDENTIALS, ids=[c[0] for c in CREDENTIALS])
def test_a_note_holding_a_credential_is_not_served(
    ctx: Context, vault: Path, name: str, kind: str, credential: str
) -> None:
    frontmatter, body = placed(credential, "inline")
    note = vault / f"notes/leaky-{name}.md"
    note.parent.mkdir(exist_ok=True)
    note.write_text(f"---\ntitle: Leaky zanzibar {name}\n{frontmatter}---\nZanzibar dhows harbour. {body}\n")
    with pytest.raises(CuratorError) as refused:
        agent.read_note(ctx, f"notes/leaky-{name}.md")
    said = str(refused.value)
    assert kind in said and "\n" not in said
    for secret in secret_values(credential):
        assert secret not in said
    found = agent.search(ctx, text="zanzibar dhows harbour")
    assert f"notes/leaky-{name}.md" not in [r.path for r in found.results]
    assert all(s not in json.dumps(found.to_json()) for s in secret_values(credential))


def test_look_alikes_are_served(ctx: Context, vault: Path) -> None:
    (vault / "notes").mkdir(exist_ok=True)
    for number, (name, text) in enumerate(LOOK_ALIKES):
        (vault / f"notes/plain-{number}.md").write_text(f"---\ntitle: Plain {name}\n---\n{text}\n")
        assert agent.read_note(ctx, f"notes/plain-{number}.md").body.strip() == text


def test_masking_shows_a_few_leading_characters_and_the_last_four_never_half() -> None:
    assert mask("sk-ant-api03-Qx7Lm2Vr9Kp4Wt8Zn3Hs6Jd1Fb5Gc0Xy_Rq2Nt7Mv4Lk9-a1b2") == "sk-ant-…a1b2"
    assert mask("Hunter2Longer9") == "Hun…"
    assert mask("pw12") == "p…"
    for secret in ("x" * n for n in range(1, 80)):
        assert len(mask(secret)) - 1 <= len(secret) // 2


def test_a_private_key_block_is_masked_whole_and_the_lines_after_it_stay() -> None:
    from secrets_corpus import PEM

    text = f"before\n{PEM}\nafter"
    [finding] = scan(text)
    assert (finding.kind, finding.line) == ("Private Key", 2)
    shown = masked_text(text, [finding])
    assert shown == "before\n-----BEGIN RSA PRIVATE KEY----- … (4 lines)\nafter"


def test_the_allow_list_lets_a_known_value_pass_by_its_sha1(
    vault: Path, write_candidate: Callable[..., Path], invoke: Callable[..., Any]
) -> None:
    rules = vault / "_meta/inbox-rules.md"
    allowed = hashed("AKIAIOSFODNN7EXAMPLE")
    text = rules.read_text()
    assert "    allow: []" in text
    rules.write_text(text.replace("    allow: []", f"    allow: [{allowed}]", 1))
    write_candidate(vault, "doc-example.md", fact("awsdocs", "example-key", body="The docs use AKIAIOSFODNN7EXAMPLE."))
    result = invoke("run", "--vault", str(vault), "--json")
    actions = {a["inbox_path"]: a for ag in json.loads(result.output)["agents"] for a in ag["actions"]}
    assert actions["_inbox/agent-a/doc-example.md"]["verdict"] == "promote"


def test_rules_check_names_the_line_of_a_bad_allow_entry(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules = vault / "_meta/inbox-rules.md"
    lines = rules.read_text().split("\n")
    at = next(n for n, line in enumerate(lines) if line.startswith("    allow: []"))
    lines[at] = "    allow: [not-a-hash]"
    rules.write_text("\n".join(lines))
    code, out, err = cli(capsys, "rules", "check", "--vault", str(vault))
    assert code == 1
    assert "'allow'" in out + err and "SHA-1" in out + err
    assert f"inbox-rules.md:{at + 1}:" in out + err


@pytest.mark.parametrize("place", PLACES)
def test_the_terminal_review_shows_the_item_with_each_credential_masked(place: str) -> None:
    from rich.console import Console

    from memory_curator.cli.review_screen import _candidate_panel
    from memory_curator.core import candidate as cand
    from memory_curator.store.rules_file import DEFAULT_RULES, load

    for name, _kind, credential in CREDENTIALS:
        frontmatter, body = placed(credential, place)
        item = cand.build(fact("svc", place, frontmatter, body), f"_inbox/a/{name}.md", "a", load(DEFAULT_RULES))
        console = Console(width=400, record=True)
        console.print(_candidate_panel(item))
        screen = console.export_text()
        assert any(f.masked in screen for f in item.secrets), (name, place)  # overlapping finds: the longer shown
        for finding in item.secrets:
            key = [part.strip() for part in finding.secret.split("\n") if "-----" not in part]  # not the header
            assert not any(part in screen for part in key), (name, place)


@pytest.mark.parametrize("name", ["obsidian-help-en", "agent-learnings-es"])
def test_no_note_of_the_real_vaults_is_flagged(name: str) -> None:
    """Issue 39's Must show: the scan on two real vaults flags no note (none holds a credential;
    docs/safety.md lists the 11 lines the raw plugins flagged before the filters, none real)."""
    root = SHARED / "real-vaults" / name
    require_shared(root)
    notes = [p for p in root.rglob("*.md") if ".obsidian" not in p.parts]
    assert len(notes) > 100
    flagged = {str(p.relative_to(root)): scan(p.read_bytes().decode("utf-8", "replace")) for p in notes}
    assert {rel: found for rel, found in flagged.items() if found} == {}
