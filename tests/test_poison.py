"""One bad file never stops a sweep (design §6, invariant 6; docs/safety.md#isolation).

A test per poison item of the issue, named after it; a corpus of all of them in one inbox,
swept by the real entry point and by `watch`; and the boundaries themselves, shown by
planting a bug in one candidate's (or one note's) path through the code.
"""

from __future__ import annotations

import io
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from loop_kit import fail
from safety_kit import FaultyOS, words
from test_watch import wait_for, watching

from memory_curator.cli.app import main
from memory_curator.cli.machine import build_context
from memory_curator.commands import status, submit, sweep
from memory_curator.commands.context import Context, QuerierFactory, Seams, fixed_judge, index_querier
from memory_curator.commands.watch import Notice, Swept
from memory_curator.core import candidate as cand_mod
from memory_curator.core import compose
from memory_curator.core.candidate import Candidate
from memory_curator.core.clock import FixedClock
from memory_curator.core.decide import JudgeVerdict
from memory_curator.core.rules import Rules
from memory_curator.index import rows as indexing
from memory_curator.index.overlay import Overlay
from memory_curator.index.querier import IndexQuerier
from memory_curator.store import journal as journal_mod
from memory_curator.store.writer import Files

from conftest import NOW, OLD, FailingClock, run_installed, snapshot, state_of

AGENT = "_inbox/agent-a"


def fact(entity: str, extra: str = "", confidence: str = "2") -> str:
    """A promotable fact whose words no other candidate shares (no near-duplicate pairing)."""
    return (
        f"---\ntype: fact\nentity: {entity}\npredicate: headquarters\nvalue: {words(entity, 3)}\n"
        f"source_url: https://example.dev/{entity}\nsource_skill: web-research\nconfidence: {confidence}\n{extra}"
        f"---\nSeen on the site: {words(entity + ' body')}.\n"
    )


def nested(depth: int) -> str:
    return fact(f"nested{depth}").replace(
        "confidence: 2\n", "confidence: 2\nshape: " + "[" * depth + "]" * depth + "\n"
    )


def fs(path: bytes) -> str:
    """A vault-relative path given as bytes (a name that may not be UTF-8), as Python names it."""
    return os.fsdecode(path)


ESC_NAME = "esc\x1b[31mred\x1b[0m\nline.md"
LONG_NAME = "\U0001f600" * 62 + ".md"  # 62 four-byte characters: 251 bytes

# every poison file of the issue: vault-relative path -> bytes
POISON: dict[str, bytes] = {
    f"{AGENT}/impossible-date.md": (
        "---\ntype: event\ndate: 2026-02-30\ntitle: Kickoff of the thing\nsource_url: https://example.dev/k\n"
        f"confidence: 2\n---\n{words('kickoff')}\n"
    ).encode(),
    f"{AGENT}/month-13.md": fact("month13", "observed_at: 2026-13-01T00:00:00Z\n").encode(),
    f"{AGENT}/duplicate-key.md": fact("dupkey", "entity: again\n").encode(),
    f"{AGENT}/tab-after-colon.md": fact("tabbed").replace("type: fact", "type:\tfact").encode(),
    f"{AGENT}/nested-300.md": nested(300).encode(),
    f"{AGENT}/nested-999.md": nested(999).encode(),
    f"{AGENT}/long-confidence.md": fact("longconf", confidence="9" * 400).encode(),
    f"{AGENT}/huge-integer.md": fact("hugeint", "rank: " + "7" * 5000 + "\n").encode(),
    fs(b"_inbox/agent-a/caf\xe9-\xff.md"): fact("latin").encode(),
    fs(b"_inbox/agent-\xff/from-a-strange-folder.md"): fact("strangefolder").encode(),
    f"{AGENT}/{ESC_NAME}": fact("escaped").replace("source_url", "seen_at").encode(),
    f"{AGENT}/{LONG_NAME}": b"---\ntype: insight\ntitle: Long names\n---\nNo source at all.\n",
    f"{AGENT}/back\\slash.md": fact("backslash").encode(),
}
# vault notes a sweep, the index and doctor read
POISON_NOTES: dict[str, bytes] = {
    "persons/born-on-february-30.md": b"---\nname: Feb Thirty\nborn: 1990-02-30\n---\nA person.\n",
    "notes/duplicate-key-note.md": b"---\ntitle: Twice\ntitle: Again\n---\nA note with a repeated key.\n",
}


def plant(root: Path, files: dict[str, bytes]) -> dict[str, Path]:
    out = {}
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        os.utime(path, (OLD, OLD))
        out[rel] = path
    return out


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / "state"


def sweep_json(
    invoke: Callable[..., Result], vault: Path, state: Path, clock: FixedClock, seams: Seams | None = None
) -> dict[str, Any]:
    args = ("run", "--vault", str(vault), "--state-dir", str(state), "--no-judge", "--json")
    result = invoke(*args, clock=clock, seams=seams)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def by_path(out: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """inbox path (as printed) -> its action, or {"error": …} for a failure."""
    found: dict[str, dict[str, Any]] = {}
    for agent in out["agents"]:
        found.update({a["inbox_path"]: a for a in agent["actions"]})
        found.update({e["inbox_path"]: e for e in agent["errors"]})
    return found


def poisoned(
    invoke: Callable[..., Result], vault: Path, state: Path, clock: FixedClock, rel: str, data: bytes
) -> dict[str, Any]:
    """Sweep one poison file beside a good candidate: `check` answers on it first, the sweep
    exits 0 and promotes the good one, `status` answers after. Returns the poison's action."""
    files = plant(vault, {f"{AGENT}/good.md": fact("goodco").encode(), rel: data})
    checked = invoke("check", str(files[rel]), "--vault", str(vault), "--json", clock=clock)
    assert checked.exit_code == 0, checked.output
    out = sweep_json(invoke, vault, state, clock)
    assert (vault / "facts/goodco/headquarters.md").exists() and not files[f"{AGENT}/good.md"].exists()
    assert not out.get("errors") and all(not a["errors"] for a in out["agents"]), out
    shown = invoke("status", "--vault", str(vault), "--state-dir", str(state), "--json", clock=clock)
    assert shown.exit_code == 0, shown.output
    return by_path(out)[rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")]


@pytest.fixture
def submitted(vault: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Callable[..., Any]:
    """`submit -` through the real entry point (its one error boundary): (exit code, stderr)."""

    def run(data: bytes | str) -> tuple[int, str]:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        monkeypatch.setattr(sys, "stdin", io.StringIO(text))
        return fail(capsys, "submit", "-", "--vault", str(vault), "--agent", "submitted")

    return run


# --- High: one bad file blocks every sweep ---------------------------------------------------


def test_a_candidate_dated_2026_02_30_is_flagged_and_the_sweep_goes_on(vault, state, invoke, clock, submitted) -> None:
    rel = f"{AGENT}/impossible-date.md"
    action = poisoned(invoke, vault, state, clock, rel, POISON[rel])
    assert action["verdict"] == "needs_review" and "'2026-02-30' is not YYYY-MM-DD" in action["reason"]
    text = (vault / rel).read_text(encoding="utf-8")
    assert "date: 2026-02-30\n" in text and "  - needs-review\n" in text  # tagged: ruamel kept the date as text
    code, err = submitted(POISON[rel])
    assert code == 1 and "date '2026-02-30' is not YYYY-MM-DD" in err


def test_an_observed_at_in_month_13_stays_text_and_the_sweep_goes_on(vault, state, invoke, clock) -> None:
    rel = f"{AGENT}/month-13.md"
    action = poisoned(invoke, vault, state, clock, rel, POISON[rel])
    assert action["verdict"] == "promote"
    assert "observed_at: 2026-13-01T00:00:00Z\n" in (vault / "facts/month13/headquarters.md").read_text()


def test_a_duplicated_key_is_bad_yaml_and_the_sweep_goes_on(vault, state, invoke, clock, submitted) -> None:
    rel = f"{AGENT}/duplicate-key.md"
    action = poisoned(invoke, vault, state, clock, rel, POISON[rel])
    assert action["verdict"] == "needs_review" and "duplicate key 'entity'" in action["reason"]
    assert (vault / rel).read_bytes().startswith(POISON[rel])  # only the uncertainty line is appended
    code, err = submitted(POISON[rel])
    assert code == 1 and "duplicate key 'entity'" in err


def test_a_tab_after_a_colon_is_read_and_the_sweep_goes_on(vault, state, invoke, clock) -> None:
    """PyYAML reads `type:<TAB>fact`; ruamel cannot round-trip it: promoting renders the note anew."""
    rel = f"{AGENT}/tab-after-colon.md"
    action = poisoned(invoke, vault, state, clock, rel, POISON[rel])
    assert action["verdict"] == "promote"
    assert "type: fact\n" in (vault / "facts/tabbed/headquarters.md").read_text(encoding="utf-8")


def test_a_tab_after_a_colon_in_a_flagged_candidate_gets_only_the_uncertainty_line(vault, state, invoke, clock) -> None:
    rel = f"{AGENT}/tab-flagged.md"
    data = POISON[f"{AGENT}/tab-after-colon.md"].replace(b"source_url", b"seen_at")
    action = poisoned(invoke, vault, state, clock, rel, data)
    assert action["verdict"] == "needs_review"
    assert (vault / rel).read_bytes().startswith(data)


@pytest.mark.parametrize("depth", [300, 999])
def test_nesting_300_to_999_deep_is_bad_yaml_and_the_sweep_goes_on(
    vault, state, invoke, clock, submitted, depth
) -> None:
    rel = f"{AGENT}/nested-{depth}.md"
    action = poisoned(invoke, vault, state, clock, rel, POISON[rel])
    assert action["verdict"] == "needs_review" and "nested more than 32 levels" in action["reason"]
    code, err = submitted(POISON[rel])
    assert code == 1 and "nested more than 32 levels" in err


def test_a_400_digit_confidence_is_bad_yaml_and_submit_refuses_it(vault, state, invoke, clock, submitted) -> None:
    rel = f"{AGENT}/long-confidence.md"
    action = poisoned(invoke, vault, state, clock, rel, POISON[rel])
    assert action["verdict"] == "needs_review" and "integer too large" in action["reason"]
    code, err = submitted(POISON[rel])
    assert code == 1 and "integer too large" in err and len(err.strip().splitlines()) == 1
    assert not (vault / "_inbox/submitted").exists()


def test_a_5000_digit_integer_in_any_field_is_bad_yaml(vault, state, invoke, clock, submitted) -> None:
    rel = f"{AGENT}/huge-integer.md"
    action = poisoned(invoke, vault, state, clock, rel, POISON[rel])
    assert action["verdict"] == "needs_review" and "integer too large" in action["reason"]
    payload = '{"frontmatter": {"type": "fact", "entity": "x", "predicate": "y", "value": "z", "rank": %s}}'
    code, err = submitted(POISON[rel])
    assert code == 1 and "integer too large" in err
    code, err = submitted(payload % ("7" * 5000))
    assert code == 1 and "not valid JSON" in err


def test_a_file_name_that_is_not_utf8_is_swept_journalled_losslessly_and_undone(vault, state, invoke, clock) -> None:
    rel = fs(b"_inbox/agent-a/caf\xe9-\xff.md")
    action = poisoned(invoke, vault, state, clock, rel, POISON[rel])
    assert action["inbox_path"] == "_inbox/agent-a/caf\\xe9-\\xff.md"  # escaped text, no lone surrogate
    assert action["verdict"] == "promote" and not (vault / rel).exists()
    note = (vault / "facts/latin/headquarters.md").read_text(encoding="utf-8")
    assert "inbox: _inbox/agent-a/caf\\xe9-\\xff.md\n" in note  # provenance YAML stays readable
    begins = [r for r in journal_mod.Journal(state / "journal.jsonl").records() if r.get("event") == "begin"]
    assert rel in [r["inbox"] for r in begins]  # the JSON escape reads back as the very same name
    undone = invoke("undo", "--last", "--vault", str(vault), "--state-dir", str(state), "--json", clock=clock)
    assert undone.exit_code == 0, undone.output
    assert (vault / rel).read_bytes() == POISON[rel]


def test_recovery_finishes_a_half_done_promote_of_a_file_name_that_is_not_utf8(
    vault, state, invoke, clock, monkeypatch
) -> None:
    """The journal names the file losslessly, so the next sweep finds it to finish the move."""
    rel = fs(b"_inbox/agent-a/caf\xe9-\xff.md")
    path = plant(vault, {rel: POISON[rel]})[rel]
    eio = lambda: OSError(5, "Input/output error")  # noqa: E731
    failing = Files(FaultyOS("unlink", 1, eio, when=lambda target: Path(target) == path))
    first = sweep_json(invoke, vault, state, clock, Seams(clock=clock, files=failing))
    assert [e["inbox_path"] for a in first["agents"] for e in a["errors"]] == ["_inbox/agent-a/caf\\xe9-\\xff.md"]
    assert path.exists() and (vault / "facts/latin/headquarters.md").exists()  # in two places, for now
    sweep_json(invoke, vault, state, clock)
    assert not path.exists()
    assert [r for r in journal_mod.Journal(state / "journal.jsonl").records() if r.get("recovered")]


def test_an_agent_folder_whose_name_is_not_utf8_is_swept(vault, state, invoke, clock) -> None:
    rel = fs(b"_inbox/agent-\xff/from-a-strange-folder.md")
    action = poisoned(invoke, vault, state, clock, rel, POISON[rel])
    assert action["verdict"] == "promote" and (vault / "facts/strangefolder/headquarters.md").exists()
    shown = invoke("log", "--vault", str(vault), "--state-dir", str(state), clock=clock)
    assert shown.exit_code == 0 and "_inbox/agent-\\xff/from-a-strange-folder.md" in shown.output


def test_a_durable_note_born_1990_02_30_leaves_run_index_rebuild_and_query_working(vault, state, invoke, clock) -> None:
    """Under YAML 1.2 the date is text: the note is indexed with its frontmatter, no problem."""
    plant(vault, {"persons/born-on-february-30.md": POISON_NOTES["persons/born-on-february-30.md"]})
    plant(vault, {f"{AGENT}/good.md": fact("goodco").encode()})
    assert sweep_json(invoke, vault, state, clock)["promoted"] >= 1
    args = ("--vault", str(vault), "--state-dir", str(state), "--json")
    assert invoke("index", "rebuild", *args, clock=clock).exit_code == 0
    found = invoke("query", "--slug", "feb-thirty", *args, clock=clock)
    assert found.exit_code == 0 and "persons/born-on-february-30.md" in found.output
    stats = json.loads(invoke("index", "stats", *args, clock=clock).output)["data"]
    assert stats["problems"] == []


def test_doctor_names_a_vault_note_the_index_reads_by_its_body_only(vault, state, invoke, clock) -> None:
    plant(vault, {"notes/duplicate-key-note.md": POISON_NOTES["notes/duplicate-key-note.md"]})
    args = ("--vault", str(vault), "--state-dir", str(state))
    assert invoke("index", "rebuild", *args, clock=clock).exit_code == 0
    stats = json.loads(invoke("index", "stats", *args, "--json", clock=clock).output)["data"]
    assert [p["path"] for p in stats["problems"]] == ["notes/duplicate-key-note.md"]
    assert json.loads(invoke("status", *args, "--json", clock=clock).output)["data"]["index"]["problems"] == 1
    found = invoke("query", "--text", "a note with a repeated key", *args, "--json", clock=clock)
    assert found.exit_code == 0 and "notes/duplicate-key-note.md" in found.output  # indexed by its body
    doctor = invoke("doctor", *args, clock=clock)
    assert doctor.exit_code in (0, 1) and "notes/duplicate-key-note.md: the frontmatter does not parse" in doctor.output


# --- Medium and low: file names, crash.log ----------------------------------------------------


def test_escape_sequences_and_newlines_in_file_names_never_reach_the_terminal(vault, state, invoke, clock) -> None:
    rel = f"{AGENT}/{ESC_NAME}"
    plant(vault, {rel: POISON[rel]})
    args = ("--vault", str(vault), "--state-dir", str(state))
    swept = invoke("run", *args, "--no-judge", clock=clock)
    assert swept.exit_code == 0 and "\x1b" not in swept.output
    logged = invoke("log", *args, clock=clock)  # one line per action, never folded
    assert "\x1b" not in logged.output and "esc\\x1b[31mred\\x1b[0m\\nline.md" in logged.output
    line = next(line for line in logged.output.splitlines() if "esc\\x1b" in line)
    assert "not sourced" in line  # the name's newline did not split its line
    as_json = invoke("log", *args, "--json", clock=clock)
    assert "\x1b" not in as_json.output
    entries = json.loads(as_json.output)["data"]["entries"]
    assert rel in [e["inbox_path"] for e in entries]  # JSON's own escapes: lossless
    assert "\x1b" not in invoke("status", *args, clock=clock).output
    assert "\x1b" not in invoke("check", str(vault / rel), "--vault", str(vault), clock=clock).output


@pytest.mark.parametrize("count", [60, 61, 62])  # 243, 247 and 251 bytes
def test_a_multibyte_file_name_of_243_to_251_bytes_is_flagged_in_place(vault, state, invoke, clock, count) -> None:
    name = "\U0001f600" * count + ".md"
    rel = f"{AGENT}/{name}"
    data = POISON[f"{AGENT}/{LONG_NAME}"]
    action = poisoned(invoke, vault, state, clock, rel, data)
    assert action["verdict"] == "needs_review"
    assert "curator uncertainty" in (vault / rel).read_text(encoding="utf-8")
    assert not [p for p in (vault / AGENT).iterdir() if p.name.endswith(".tmp")]


def test_a_backslash_in_a_file_name_is_swept_like_any_other(vault, state, invoke, clock) -> None:
    rel = f"{AGENT}/back\\slash.md"
    action = poisoned(invoke, vault, state, clock, rel, POISON[rel])
    assert action["verdict"] == "promote" and not (vault / rel).exists()
    undone = invoke("undo", "--last", "--vault", str(vault), "--state-dir", str(state), clock=clock)
    assert undone.exit_code == 0 and (vault / rel).read_bytes() == POISON[rel]


@pytest.mark.parametrize("how", ["--state-dir", "--state-dir=", "MEMORY_CURATOR_STATE"])
def test_crash_log_goes_to_the_state_dir(vault, tmp_path, monkeypatch, capsys, how) -> None:
    bug = Seams(clock=FailingClock(RuntimeError("planted bug\x1b[31m")))  # the sweep's first look at the time
    chosen = tmp_path / "chosen-state"
    args = ["run", "--vault", str(vault), "--no-judge"]
    if how == "MEMORY_CURATOR_STATE":
        monkeypatch.setenv("MEMORY_CURATOR_STATE", str(chosen))
    elif how == "--state-dir":
        args += ["--state-dir", str(chosen)]
    else:
        args += [f"--state-dir={chosen}"]
    with pytest.raises(SystemExit) as stopped:
        main(args, bug)
    assert stopped.value.code == 3
    err = capsys.readouterr().err
    assert f"details: {chosen / 'crash.log'}" in err and "\x1b" not in err
    assert "planted bug" in (chosen / "crash.log").read_text(encoding="utf-8")


def test_crash_log_without_a_state_dir_goes_to_the_vaults_own_state_folder(vault, capsys) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--vault", str(vault)], Seams(clock=FailingClock(ZeroDivisionError("division by zero"))))
    assert "ZeroDivisionError" in (state_of(vault) / "crash.log").read_text(encoding="utf-8")


# --- the boundaries themselves: a bug planted in one item's path ----------------------------


def explode_on(marker: str, real: Callable[..., Any], where: Callable[..., str]) -> Callable[..., Any]:
    """`real`, except that it raises for the item whose text (`where(*args)`) holds `marker`."""

    def planted(*args: Any, **kwargs: Any) -> Any:
        if marker in where(*args, **kwargs):
            raise ValueError(f"planted bug for {marker}")
        return real(*args, **kwargs)

    return planted


class PlantedQuerier(Overlay):
    """The context's querier, with a bug planted: asked whether a candidate holding VICTIM is a
    duplicate (a question of every decision), it raises."""

    def duplicate_of(self, candidate: Candidate) -> str | None:
        if "VICTIM" in candidate.note.text:
            raise ValueError("planted bug for VICTIM")
        return super().duplicate_of(candidate)


def planted(ctx: Context, rules: Rules) -> PlantedQuerier:
    """A querier factory (`Seams.querier`) giving the index's querier with the bug planted."""
    return PlantedQuerier(IndexQuerier(ctx.root, rules, ctx.state, clock=ctx.clock, files=ctx.files, env=ctx.env))


def two_candidates(vault: Path) -> dict[str, Path]:
    return plant(
        vault,
        {
            f"{AGENT}/good.md": fact("goodco").encode(),
            f"{AGENT}/victim.md": fact("victim", "tags: [VICTIM]\n").encode(),
        },
    )


def test_a_bug_while_deciding_one_candidate_flags_it_and_the_sweep_goes_on(vault, state, invoke, clock) -> None:
    files = two_candidates(vault)
    out = by_path(sweep_json(invoke, vault, state, clock, Seams(clock=clock, querier=planted)))
    victim = out[f"{AGENT}/victim.md"]
    assert victim["verdict"] == "needs_review"
    assert victim["reason"] == "internal error while deciding: ValueError: planted bug for VICTIM"
    assert out[f"{AGENT}/good.md"]["verdict"] == "promote"
    assert "internal error while deciding" in files[f"{AGENT}/victim.md"].read_text(encoding="utf-8")


def test_a_bug_while_reading_one_candidate_flags_it_and_the_sweep_goes_on(
    vault, state, invoke, clock, monkeypatch
) -> None:
    two_candidates(vault)
    real = cand_mod.build
    monkeypatch.setattr(cand_mod, "build", explode_on("VICTIM", real, lambda raw, *a, **k: str(raw)))
    out = by_path(sweep_json(invoke, vault, state, clock))
    assert out[f"{AGENT}/victim.md"]["reason"] == "internal error while reading: ValueError: planted bug for VICTIM"
    assert out[f"{AGENT}/good.md"]["verdict"] == "promote"
    again = sweep_json(invoke, vault, state, clock)  # flagged and unchanged: passed by, not flagged twice
    assert again["processed"] == 0


def test_when_even_flagging_fails_the_error_is_in_the_result_and_the_journal(
    vault, state, invoke, clock, monkeypatch
) -> None:
    files = two_candidates(vault)
    real = compose.review_bytes
    monkeypatch.setattr(compose, "review_bytes", explode_on("VICTIM", real, lambda raw, *a: str(raw)))
    out = sweep_json(invoke, vault, state, clock, Seams(clock=clock, querier=planted))
    errors = [e for a in out["agents"] for e in a["errors"]]
    assert [e["inbox_path"] for e in errors] == [f"{AGENT}/victim.md"]
    assert errors[0]["error"].startswith("internal error while deciding: ValueError: planted bug for VICTIM;")
    assert "flagging it failed too" in errors[0]["error"] and errors[0]["error"].endswith("left in the inbox")
    assert by_path(out)[f"{AGENT}/good.md"]["verdict"] == "promote"
    assert files[f"{AGENT}/victim.md"].read_bytes() == fact("victim", "tags: [VICTIM]\n").encode()
    records = [r for r in journal_mod.Journal(state / "journal.jsonl").records() if r.get("event") == "error"]
    assert [r["inbox"] for r in records] == [f"{AGENT}/victim.md"]


def judged(vault: Path, state: Path, judge: sweep.Judge, querier: QuerierFactory = index_querier) -> sweep.SweepResult:
    seams = Seams(clock=FixedClock(NOW), judge=fixed_judge(judge), querier=querier)
    return sweep.run(build_context(vault, str(state), seams), None, sweep.Options())


def insight(slug: str) -> bytes:
    """Undecided by the rules alone (load-bearing): the judge is asked about it."""
    return (
        f"---\ntype: insight\ntitle: {words(slug, 2)}\nsource_url: https://example.dev/{slug}\nconfidence: 2\n"
        f"---\n{words(slug + ' body')}\n"
    ).encode()


def test_a_bug_while_gathering_one_candidate_for_the_judge_leaves_the_others_to_it(vault, state) -> None:
    plant(vault, {f"{AGENT}/asked.md": insight("asked"), f"{AGENT}/victim.md": insight("victim") + b"VICTIM\n"})
    asked: list[str] = []

    def judge(candidates: list[Any], rules: Any, querier: Any) -> tuple[dict[str, JudgeVerdict], None]:
        asked.extend(c.inbox_path for c in candidates)
        return {c.inbox_path: JudgeVerdict(failure="no opinion") for c in candidates}, None

    result = judged(vault, state, judge, planted)
    assert asked == [f"{AGENT}/asked.md"]
    reasons = {a.inbox_path: a.reason for r in result.agents for a in r.actions}
    assert reasons[f"{AGENT}/victim.md"].startswith("internal error while deciding: ValueError: planted bug")
    assert not result.errors


def test_a_judge_that_raises_is_fail_open(vault, state) -> None:
    plant(vault, {f"{AGENT}/asked.md": insight("asked")})

    def judge(candidates: list[Any], rules: Any, querier: Any) -> Any:
        raise KeyError("a bug in the judge")

    result = judged(vault, state, judge)
    verdicts = {a.inbox_path: a.verdict for r in result.agents for a in r.actions}
    assert verdicts[f"{AGENT}/asked.md"] == "needs_review"
    assert result.judge is not None and "internal error: KeyError" in result.judge["problems"][0]


def test_a_bug_while_reading_one_vault_note_indexes_it_by_its_body(vault, state, invoke, clock, monkeypatch) -> None:
    plant(vault, {"notes/victim.md": b"---\ntitle: Victim\n---\nVICTIM lorem ipsum dolor\n"})
    monkeypatch.setattr(indexing, "parse", explode_on("VICTIM", indexing.parse, lambda text, *a: str(text)))
    args = ("--vault", str(vault), "--state-dir", str(state))
    assert invoke("index", "rebuild", *args, clock=clock).exit_code == 0
    problems = json.loads(invoke("index", "stats", *args, "--json", clock=clock).output)["data"]["problems"]
    assert problems == [
        {"path": "notes/victim.md", "problem": "internal error while reading: ValueError: planted bug for VICTIM"}
    ]
    found = invoke("query", "--text", "victim lorem ipsum dolor", *args, "--json", clock=clock)
    assert "notes/victim.md" in found.output
    plant(vault, {f"{AGENT}/good.md": fact("goodco").encode()})
    assert sweep_json(invoke, vault, state, clock)["promoted"] >= 1
    assert "notes/victim.md: internal error while reading" in invoke("doctor", *args, clock=clock).output


def test_check_status_and_submit_answer_despite_a_bug_on_one_candidate(
    vault, state, invoke, clock, submitted, monkeypatch
) -> None:
    files = two_candidates(vault)
    victim = files[f"{AGENT}/victim.md"]
    checked = invoke("check", str(victim), "--vault", str(vault), "--json", seams=Seams(clock=clock, querier=planted))
    assert checked.exit_code == 0, checked.output
    reason = json.loads(checked.output)["data"]["reason"]
    assert reason == "internal error while deciding: ValueError: planted bug for VICTIM"
    monkeypatch.setattr(status, "parse", explode_on("VICTIM", status.parse, lambda raw, *a: str(raw)))
    shown = invoke("status", "--vault", str(vault), "--state-dir", str(state), "--json", clock=clock)
    assert shown.exit_code == 0 and json.loads(shown.output)["data"]["inbox"]["candidates"] >= 2
    real = submit.cand.build
    monkeypatch.setattr(submit.cand, "build", explode_on("VICTIM", real, lambda text, *a, **k: str(text)))
    code, err = submitted(victim.read_bytes())
    assert code == 1 and "cannot be read as a candidate (ValueError: planted bug" in err


# --- the poison corpus: the real entry point, then the watcher -------------------------------


def test_the_poison_corpus_sweeps_with_exit_0_promotes_the_good_one_and_keeps_every_byte(
    vault: Path, tmp_path: Path
) -> None:
    good = plant(vault, {f"{AGENT}/good.md": fact("goodco").encode()})[f"{AGENT}/good.md"]
    plant(vault, {**POISON, **POISON_NOTES})
    before = snapshot(vault)
    state = str(tmp_path / "state")
    args = ("--vault", str(vault), "--state-dir", state)
    swept = run_installed("run", *args, "--no-judge", "--json", cwd=tmp_path)  # strict UTF-8 decoding
    assert swept.returncode == 0, swept.stderr
    actions = by_path(json.loads(swept.stdout))
    assert actions[f"{AGENT}/good.md"]["verdict"] == "promote" and not good.exists()
    assert all("verdict" in a for a in actions.values()), [a for a in actions.values() if "error" in a]
    assert len(actions) == len(POISON) + 1 + 2  # the fixture's own two candidates too
    for command in (("index", "rebuild"), ("status",), ("doctor",)):
        done = run_installed(*command, *args, cwd=tmp_path)
        assert done.returncode in (0, 1), (command, done.stderr)  # doctor: 1 = a finding, never 3
    undone = run_installed("undo", "--last", *args, cwd=tmp_path)
    assert undone.returncode == 0, undone.stderr
    after = snapshot(vault)
    assert {k: v for k, v in after.items() if not k.startswith("_inbox/.dropped/")} == before  # every byte back


def test_watch_keeps_running_through_the_poison_corpus(empty_vault: Path) -> None:
    rules = empty_vault / "_meta" / "inbox-rules.md"
    text = rules.read_text(encoding="utf-8")
    assert "  settle_seconds: 3\n" in text
    rules.write_text(text.replace("  settle_seconds: 3\n", "  settle_seconds: 0.3\n", 1), encoding="utf-8")
    files = plant(empty_vault, {f"{AGENT}/good.md": fact("goodco").encode(), **POISON})  # the backlog
    swept = {rel for rel in POISON}

    def done(rel: str) -> bool:
        path = files[rel]
        return not path.exists() or "curator uncertainty" in path.read_text(encoding="utf-8", errors="replace")

    with watching(empty_vault) as (_, items):
        wait_for(lambda: not files[f"{AGENT}/good.md"].exists() and all(done(rel) for rel in swept), timeout=20)
        late = empty_vault / AGENT / "late.md"
        late.write_text(fact("lateco"), encoding="utf-8")  # it keeps watching
        wait_for(lambda: not late.exists(), timeout=20)
    assert (empty_vault / "facts/goodco/headquarters.md").exists()
    assert (empty_vault / "facts/lateco/headquarters.md").exists()
    assert not [i for i in items if isinstance(i, Notice) and "failed" in i.text]
    assert not [e for b in items if isinstance(b, Swept) for e in b.result.errors]
