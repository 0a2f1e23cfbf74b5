"""End to end through the installed CLI: ANTHROPIC_BASE_URL points at a tiny local HTTP server
on 127.0.0.1 and the key is fake. Nothing leaves the machine."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from conftest import run_installed

# each test starts the installed CLI (and the SDK) against a real socket and waits out real
# timeouts and deadlines, 2.5-5 s apiece: run by .ci/run, not by default
pytestmark = pytest.mark.slow

CANDIDATE = """---
type: insight
title: Sweeps before standups
source_url: https://example.dev/standups
source_skill: web-research
confidence: 2
---
Sweeping the inbox right before the standup means the team discusses curated notes.
"""


class FakeProvider(BaseHTTPRequestHandler):
    """POST /v1/messages: every candidate in the request is judged useful; `delay` stalls it."""

    seen: ClassVar[list[dict[str, Any]]] = []
    delay: ClassVar[float] = 0.0

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        type(self).seen.append({"path": self.path, "headers": dict(self.headers), "body": body})
        time.sleep(self.delay)
        ids = re.findall(r'<candidate id="(c\d+)"', body["messages"][0]["content"])
        criteria = dict.fromkeys(("novel", "sourced", "specific", "future_useful", "surprise_or_load_bearing"), "true")
        verdicts = [
            {
                "candidate": c,
                "criteria": criteria,
                "relation": "distinct",
                "target": None,
                "drop_rule": None,
                "confidence": 0.8,
                "reason": "a concrete, reusable practice",
            }
            for c in ids
        ]
        reply = {
            "id": "msg_local",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": [{"type": "text", "text": json.dumps({"verdicts": verdicts})}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 1234, "output_tokens": 56},
        }
        data = json.dumps(reply).encode()
        try:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (the timeout test)
            pass

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def provider() -> Iterator[str]:
    FakeProvider.seen, FakeProvider.delay = [], 0.0
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeProvider)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _env(url: str, state: Path) -> dict[str, str]:
    return {
        "ANTHROPIC_API_KEY": "fake-key-for-tests",
        "ANTHROPIC_BASE_URL": url,
        "NO_PROXY": "127.0.0.1",
        "MEMORY_CURATOR_STATE": str(state),
    }


def test_the_cli_judges_through_anthropic_base_url(vault: Path, write_candidate, provider: str, tmp_path: Path) -> None:
    write_candidate(vault, "standups.md", CANDIDATE)
    proc = run_installed("run", "_inbox/agent-a", "--json", cwd=vault, env=_env(provider, tmp_path / "state"))
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    [action] = out["actions"]
    assert action["verdict"] == "promote" and action["target_path"] == "insights/sweeps-before-standups.md"
    assert "(judge: a concrete, reusable practice)" in action["reason"]
    assert (vault / "insights/sweeps-before-standups.md").is_file()
    assert {k: out["judge"][k] for k in ("requests", "candidates", "input_tokens", "output_tokens", "failures")} == {
        "requests": 1,
        "candidates": 1,
        "input_tokens": 1234,
        "output_tokens": 56,
        "failures": 0,
    }
    [request] = FakeProvider.seen
    assert request["path"] == "/v1/messages"
    assert "fake-key-for-tests" in json.dumps(request["headers"])
    assert "Sweeps before standups" in request["body"]["messages"][0]["content"]
    assert proc.stderr == ""


def test_the_timeout_is_a_hard_cap(vault: Path, write_candidate, provider: str, tmp_path: Path) -> None:
    FakeProvider.delay = 5.0
    write_candidate(vault, "standups.md", CANDIDATE)
    started = time.monotonic()
    proc = run_installed(
        "run",
        "_inbox/agent-a",
        "--json",
        "--judge-set",
        "timeout_seconds=0.5",
        "--judge-set",
        "max_retries=0",
        cwd=vault,
        env=_env(provider, tmp_path / "state"),
    )
    assert time.monotonic() - started < 4.5
    assert proc.returncode == 0
    [action] = json.loads(proc.stdout)["actions"]
    assert action["verdict"] == "needs_review"
    assert action["reason"] == "load-bearing undecided; judge unavailable: timeout"
    assert proc.stderr.splitlines() == [
        "memory-curator: judge request 1/1 failed (1 candidate left undecided): timeout"
    ]
    assert (vault / "_inbox/agent-a/standups.md").is_file()


# --- the sweep's deadline: a silent or dripping API cannot hold a sweep (invariant 7) -------------

DEADLINE = 2.0
_STOP = threading.Event()  # set at teardown: every handler loop below ends on it (and is bounded anyway)


class HostileProvider(BaseHTTPRequestHandler):
    """`silent`: reads the request and never answers. `drip`: a valid header, then a (valid)
    body one byte every 2 s."""

    mode: ClassVar[str] = "silent"
    requests: ClassVar[int] = 0

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["content-length"]))
        type(self).requests += 1
        if self.mode == "silent":
            _STOP.wait(60)
            return
        text = json.dumps({"verdicts": []})
        reply = {
            "id": "msg_drip",
            "type": "message",
            "role": "assistant",
            "model": "m",
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
        data = json.dumps(reply).encode()
        try:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            for byte in data:  # bounded: at most len(data) bytes, and _STOP ends it
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                if _STOP.wait(2.0):
                    return
        except OSError:  # the client hung up: what the deadline is for
            pass

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def hostile() -> Iterator[type[HostileProvider]]:
    _STOP.clear()
    HostileProvider.mode, HostileProvider.requests = "silent", 0
    server = ThreadingHTTPServer(("127.0.0.1", 0), HostileProvider)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    HostileProvider.url = f"http://127.0.0.1:{server.server_address[1]}"  # type: ignore[attr-defined]
    try:
        yield HostileProvider
    finally:
        _STOP.set()
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.mark.parametrize("mode", ["silent", "drip"])
def test_a_hostile_api_cannot_hold_the_sweep_past_its_deadline(
    vault: Path, write_candidate, hostile: type[HostileProvider], tmp_path: Path, mode: str
) -> None:
    hostile.mode = mode
    path = write_candidate(vault, "standups.md", CANDIDATE)
    args = ["run", "_inbox/agent-a", "--json"]
    if mode == "silent":  # the deadline from the rules file (defaults everywhere else: timeout 60 s, 2 retries)
        rules = vault / "_meta/inbox-rules.md"
        text = rules.read_text()
        assert "    deadline_seconds: 60 " in text
        rules.write_text(text.replace("    deadline_seconds: 60 ", "    deadline_seconds: 2 "))
    else:  # from the command line; the per-read timeout is never reached by a drip
        args += ["--judge-set", f"deadline_seconds={DEADLINE:g}", "--judge-set", "timeout_seconds=4"]
    started = time.monotonic()
    proc = run_installed(*args, cwd=vault, env=_env(hostile.url, tmp_path / "state"))  # type: ignore[attr-defined]
    elapsed = time.monotonic() - started
    print(f"\n{mode}: the sweep took {elapsed:.2f} s with deadline_seconds={DEADLINE:g}")
    assert proc.returncode == 0, proc.stderr
    assert elapsed < DEADLINE + 5
    assert hostile.requests >= 1, "the request did reach the hostile server"
    out = json.loads(proc.stdout)
    [action] = out["actions"]
    assert action["verdict"] == "needs_review"
    assert action["reason"] == "load-bearing undecided; judge unavailable: deadline"
    assert out["dropped"] == 0 and out["judge"]["failures"] == 1
    assert proc.stderr.splitlines() == [
        "memory-curator: judge request 1/1 failed (1 candidate left undecided): deadline"
    ]
    text = path.read_text(encoding="utf-8")
    assert "> ⚠ curator uncertainty: load-bearing undecided; judge unavailable: deadline (" in text
    assert "needs-review" in text
    assert not (vault / "_inbox/.dropped").exists()
