"""gym-llm-eval against an OpenAI-compatible server that refuses tools the way
vLLM does without ``--enable-auto-tool-choice --tool-call-parser hermes``
(issue 21, item 6): the error names the flags, a resumed run that succeeds
leaves no stale errors.jsonl, the report counts the server's tokens, and
httpx logs no line per request.

The server is a real HTTP server on localhost answering with vLLM's own
error text (vllm/renderers/online_renderer.py), so the test needs no model."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from gym_llm.runtime.policies.openai import TOOL_FLAGS

EVAL = [sys.executable, "-c", "from gym_llm.apps.evaluate import main; main()"]
VLLM_TOOLS_REFUSED = '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'
COMPLETION_TOKENS = 7


class _Server(ThreadingHTTPServer):
    accepts_tools = False


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, *args: object) -> None:  # keep pytest's output clean
        pass

    def _send(self, status: int, obj: dict) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._send(200, {"object": "list", "data": [{"id": "stub", "object": "model"}]})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if body.get("tools") and not self.server.accepts_tools:
            self._send(400, {"object": "error", "message": VLLM_TOOLS_REFUSED,
                             "type": "BadRequestError", "param": None, "code": 400})
            return
        self._send(200, {
            "id": "c", "object": "chat.completion", "model": "stub",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": "The answer is \\boxed{4}."}}],
            "usage": {"prompt_tokens": 20, "completion_tokens": COMPLETION_TOKENS, "total_tokens": 27},
        })


@pytest.fixture
def server() -> Iterator[_Server]:
    srv = _Server(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def _eval(server: _Server, out: Path) -> subprocess.CompletedProcess:
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    args = [*EVAL, "policy=openai", f"policy.base_url={url}", "policy.max_retries=0",
            "env_ids=[math/Arithmetic-v0,tool/FunctionCalling-v0]", "num_tasks=2", "k=1",
            "plots=false", f"hydra.run.dir={out}"]
    return subprocess.run(args, cwd=out.parent, capture_output=True, text=True, timeout=300)


def test_tool_refusal_names_the_flags_and_resume_clears_errors(server: _Server, tmp_path: Path) -> None:
    out = tmp_path / "out"
    refused = _eval(server, out)
    assert refused.returncode == 1, refused.stderr[-3000:]
    assert TOOL_FLAGS in refused.stderr  # the summary's warning, not only errors.jsonl
    assert TOOL_FLAGS in (out / "report.md").read_text()
    errors = [json.loads(line) for line in (out / "errors.jsonl").read_text().splitlines()]
    assert {e["env_id"] for e in errors} == {"tool/FunctionCalling-v0"} and len(errors) == 2
    assert TOOL_FLAGS in errors[0]["error"]

    server.accepts_tools = True  # the server restarted with the flags
    fixed = _eval(server, out)
    assert fixed.returncode == 0, fixed.stderr[-3000:]
    assert not (out / "errors.jsonl").exists()  # no stale failures of the earlier run
    report = (out / "report.md").read_text()
    assert "- resumed tasks: 2" in report
    # only the two tool tasks ran now; FunctionCalling may take several turns, each counted
    turns = [json.loads(line)["num_turns"] for line in (out / "samples.jsonl").read_text().splitlines()
             if json.loads(line)["env_id"] == "tool/FunctionCalling-v0"]
    assert f"({COMPLETION_TOKENS * sum(turns)} tokens generated)" in report
    results = json.loads((out / "results.json").read_text())
    assert results["math/Arithmetic-v0"]["mean_generated_tokens"] == COMPLETION_TOKENS
    assert "HTTP Request:" not in fixed.stderr + fixed.stdout  # httpx's per-request INFO line
    assert "resuming: 2 task(s)" in fixed.stdout  # our own INFO logging is untouched


def test_a_missing_dataset_fails_before_the_policy_is_built(server: _Server, tmp_path: Path) -> None:
    """gym-llm-eval's preflight (issue 21, item 3): every env is made and its
    data read before the policy is built (the server gets no request)."""
    out = tmp_path / "out"
    missing = tmp_path / "heldout.jsonl"
    requests: list[str] = []
    server.RequestHandlerClass = type("Counting", (_Handler,), {
        "do_GET": lambda self: (requests.append("GET"), _Handler.do_GET(self))})
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    proc = subprocess.run([*EVAL, "policy=openai", f"policy.base_url={url}", "envs=math",
                           f"+envs.envs.mine={{id: math/Dataset-v0, kwargs: {{path: '{missing}'}}}}",
                           f"hydra.run.dir={out}"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "the evaluation cannot start" in proc.stderr and "math/Dataset-v0 (heldout split)" in proc.stderr
    assert str(missing) in proc.stderr and "Traceback" not in proc.stderr
    assert requests == [] and not (out / "samples.jsonl").exists()
