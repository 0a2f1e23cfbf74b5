"""Run the curator CLI with its judge answered from files: a judge-on labeled run anyone can repeat.

    python tests/judge_replay/replay_cli.py --dir tests/judge_replay/novelty [--capture] -- <memory-curator args>

The real judge (`memory_curator.judge.client`, the anthropic SDK) talks to httpx2's MockTransport
instead of the network: each request body the SDK sends is made canonical JSON (sorted keys, no
spaces, UTF-8) and named by its SHA-256; the reply is `<dir>/<sha>.answer.json`, whose text is
sent back verbatim as the model's text block (the JSON document the answer schema describes,
`ANSWERING.md`), as the Messages API returns it.

- replay (the default): a request with no stored answer is answered with an error (the sweep fails
  open), and the process then exits 9 naming every such request: a changed request is noticed and
  must be answered again, never silently judged by nobody.
- `--capture`: every request body is also written to `<dir>/<sha>.request.json` (and a missing
  answer is not an error): what a reader answers.

Given to the scorer: `score.py --judge --sets main --cli "python tests/judge_replay/replay_cli.py --dir ... --"`.
Nothing in the product knows about it: it passes the CLI its seams (`Seams.judge`, `Seams.env`), as tests do.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import httpx2

from memory_curator.cli.app import main as cli_main
from memory_curator.commands.context import Context, Seams
from memory_curator.core.settings import JudgeSettings
from memory_curator.judge import client as judge_client

MISSING_EXIT = 9  # not one of the CLI's own codes (0, 1, 2, 3, 75, 130)


def canonical(body: Any) -> str:
    """The request as the file name is made of: sorted keys, no spaces, UTF-8 as is."""
    return json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def digest(body: Any) -> str:
    return hashlib.sha256(canonical(body).encode("utf-8")).hexdigest()


def reply(text: str, model: str) -> httpx2.Response:
    """A Messages API answer holding `text` as its one text block."""
    return httpx2.Response(
        200,
        json={
            "id": "msg_replay",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 0, "output_tokens": 0},
        },
    )


class Replayer:
    """The provider: answers each request from `<dir>/<sha>.answer.json`, writing it first when capturing."""

    def __init__(self, folder: Path, capture: bool) -> None:
        self.folder, self.capture = folder, capture
        self.seen: list[str] = []
        self.missing: list[str] = []

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        sha = digest(body)
        self.seen.append(sha)
        if self.capture:
            self.folder.mkdir(parents=True, exist_ok=True)
            text = json.dumps(body, sort_keys=True, ensure_ascii=False, indent=2) + "\n"
            (self.folder / f"{sha}.request.json").write_text(text, encoding="utf-8")
        answer = self.folder / f"{sha}.answer.json"
        if answer.is_file():
            return reply(answer.read_text(encoding="utf-8").strip(), str(body.get("model", "")))
        self.missing.append(sha)
        error = {"type": "invalid_request_error", "message": f"replay: no stored answer for request {sha}"}
        return httpx2.Response(400, json={"type": "error", "error": error})

    def judge(self, ctx: Context, settings: JudgeSettings) -> judge_client.AnthropicJudge | None:
        made = judge_client.from_environment(settings, ctx.state, ctx.clock, ctx.env, ctx.files)
        if made is not None:
            made.http_client = httpx2.Client(transport=httpx2.MockTransport(self.handle))
            made.cache = None  # every request reaches the provider: none is answered from an earlier run
        return made


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, required=True, help="where requests and answers are kept")
    parser.add_argument("--capture", action="store_true", help="write every request body to the folder")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="-- then the memory-curator arguments")
    ours = parser.parse_args(argv)
    args = ours.args[1:] if ours.args[:1] == ["--"] else ours.args
    replayer = Replayer(ours.dir.resolve(), ours.capture)
    env = {**os.environ, "ANTHROPIC_API_KEY": "replay"}  # the judge is on: the key is never sent anywhere
    code = 0
    try:
        cli_main(args, Seams(env=env, judge=replayer.judge))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    if replayer.missing and not ours.capture:
        names = ", ".join(replayer.missing)
        print(f"replay_cli: {len(replayer.missing)} request(s) have no stored answer in {ours.dir}: {names}; "
              "capture them (--capture) and have them answered", file=sys.stderr)  # fmt: skip
        return MISSING_EXIT
    if ours.capture and replayer.seen:
        print(f"replay_cli: {len(replayer.seen)} request(s) captured in {ours.dir}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
