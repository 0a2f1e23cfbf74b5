"""The judge-on labeled run's replay (`tests/judge_replay/replay_cli.py`): requests captured by the
SHA-256 of their canonical JSON, answered from files through the SDK's mock transport, and a
request with no stored answer failing the run loudly (issue 38)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from test_judge import answer, insight

sys.path.insert(0, str(Path(__file__).parent / "judge_replay"))
import replay_cli


def sweep(vault: Path, folder: Path, state: Path, *extra: str) -> int:
    run = ["run", "--vault", str(vault), "--json", "--settle", "0", "--state-dir", str(state)]
    return replay_cli.main(["--dir", str(folder), *extra, "--", *run])


def test_a_captured_request_is_answered_from_its_file_and_a_missing_answer_fails_loudly(
    vault: Path, write_candidate, tmp_path: Path, capsys
) -> None:
    folder = tmp_path / "replay"
    inbox = write_candidate(vault, "insight-01.md", insight(1))
    assert sweep(vault, folder, tmp_path / "s1", "--capture") == 0
    (request,) = folder.glob("*.request.json")
    body = json.loads(request.read_text(encoding="utf-8"))
    assert request.name == replay_cli.digest(body) + ".request.json"
    assert '<candidate id="c1"' in body["messages"][0]["content"] and inbox.is_file(), "unanswered: it waits"
    capsys.readouterr()

    write_candidate(vault, "insight-01.md", insight(1))  # as it was: the flagged file holds the curator's lines
    assert sweep(vault, folder, tmp_path / "s2") == replay_cli.MISSING_EXIT
    err = capsys.readouterr().err
    assert f"1 request(s) have no stored answer in {folder}: {request.name.split('.')[0]}" in err

    sha = request.name.removesuffix(".request.json")
    (folder / f"{sha}.answer.json").write_text(json.dumps({"verdicts": [answer("c1")]}), encoding="utf-8")
    write_candidate(vault, "insight-01.md", insight(1))
    assert sweep(vault, folder, tmp_path / "s3") == 0
    out = json.loads(capsys.readouterr().out)
    assert [a["verdict"] for agent in out["agents"] for a in agent["actions"]] == ["promote"]
    assert (vault / "insights/insight-01.md").is_file() and not inbox.exists()
