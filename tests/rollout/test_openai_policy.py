"""OpenAIPolicy against a real ``vllm serve`` of the tiny model on localhost
(started and stopped here), and against a small local HTTP server that fails
on purpose (retries, backoff, Retry-After, concurrency limit, timeouts)."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import torch

from gym_llm.runtime.policies import HFPolicy, OpenAIPolicy, SamplingParams
from gym_llm.runtime.policies.base import GenerationRequest
from gym_llm.runtime.policies.openai import ServerError
from gym_llm.runtime.rollout import ChatFormat, collect

from .conftest import free_port

TOOLS = [{"type": "function", "function": {
    "name": "add", "description": "Add two integers.",
    "parameters": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                   "required": ["a", "b"]}}}]
FORCE_ADD = {"structured_outputs": {
    "regex": r'<tool_call>\n\{"name": "add", "arguments": \{"a": 2, "b": 2\}\}\n</tool_call>'}}


@pytest.fixture(scope="module")
def vllm_server(vllm_server_launch):
    """Base URL of the session's ``vllm serve`` (launched at collection time by
    conftest so its start overlaps the other tests), once it answers; stopped
    after this module."""
    yield vllm_server_launch.wait()
    vllm_server_launch.stop()


@pytest.mark.vllm
@pytest.mark.slow
def test_server_renders_like_chatformat_and_decodes_like_hf(vllm_server, base_model, tiny_tokenizer):
    policy = OpenAIPolicy("tiny", base_url=vllm_server)
    messages = [
        {"role": "user", "content": "What is 2 + 2?"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c0", "type": "function", "function": {"name": "add", "arguments": {"a": 2, "b": 2}}}]},
        {"role": "tool", "tool_call_id": "c0", "name": "add", "content": "4"},
    ]
    params = SamplingParams(temperature=0, max_new_tokens=16)
    gen = policy.generate([GenerationRequest(messages=messages, tools=TOOLS, params=params)])[0]
    # The server's tokens of the prompt are ours: same template, same tokenizer.
    ours = ChatFormat(tiny_tokenizer).prompt_ids(messages, TOOLS)
    assert gen.info["prompt_token_ids"] == ours
    hf = HFPolicy(base_model, tiny_tokenizer).generate([ours], params)[0]
    assert gen.token_ids == hf.token_ids
    assert torch.allclose(torch.tensor(gen.logprobs), torch.tensor(hf.logprobs), atol=1e-3)
    assert gen.text == hf.text.removesuffix("<|im_end|>")
    assert gen.message["role"] == "assistant"


@pytest.mark.vllm
@pytest.mark.slow
def test_tool_calls_round_trip_through_a_rollout(vllm_server):
    policy = OpenAIPolicy("tiny", base_url=vllm_server, extra_body=FORCE_ADD, max_concurrency=4)
    gen = policy.generate([GenerationRequest(messages=[{"role": "user", "content": "2+2?"}], tools=TOOLS,
                                             params=SamplingParams(temperature=0, max_new_tokens=80))])[0]
    (call,) = gen.message["tool_calls"]
    assert call["function"]["name"] == "add" and json.loads(call["function"]["arguments"]) == {"a": 2, "b": 2}
    trajs = collect(policy, "rollouttest/AddTool-v0", num_groups=2, group_size=2, seed=0,
                    env_kwargs={"max_turns": 2}, sampling=SamplingParams(max_new_tokens=80))
    for t in trajs:
        assert t.ok and t.num_turns == 2 and t.truncated
        roles = [m["role"] for m in t.messages]
        assert roles[-4:] == ["user", "assistant", "tool", "assistant"]
        assert t.messages[-2]["content"] == "4"  # the env ran the call the server parsed
        assert t.tools and t.tools[0]["function"]["name"] == "add"
        # message-level: no stitched token fields, per-turn server ids kept in info
        assert t.prompt_token_ids == [] and t.response_token_ids == [] and t.logprobs == []
        assert all(turn["token_ids"] for turn in t.info["policy_turns"])


@pytest.mark.vllm
@pytest.mark.slow
def test_client_errors_are_not_retried(vllm_server):
    policy = OpenAIPolicy("no-such-model", base_url=vllm_server, backoff_s=0.01)
    with pytest.raises(ServerError) as err:
        policy.generate([[{"role": "user", "content": "hi"}]], SamplingParams(max_new_tokens=4))
    assert err.value.status == 404 and policy.retries == 0


class Flaky(BaseHTTPRequestHandler):
    """Chat-completions stand-in: the first ``fail_first`` requests get 503
    (with Retry-After), each answer takes ``delay`` seconds; concurrency seen
    is recorded."""

    lock = threading.Lock()
    state: dict = {}

    def do_POST(self):  # noqa: N802 (http.server's naming)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with self.lock:
            st = self.state
            st["requests"] += 1
            st["active"] += 1
            st["max_active"] = max(st["max_active"], st["active"])
            failing = st["requests"] <= st["fail_first"]
        try:
            if failing:
                self.send_response(503)
                self.send_header("Retry-After", "0.05")
                self.end_headers()
                return
            time.sleep(st["delay"])
            reply = {"choices": [{"message": {"role": "assistant", "content": body["messages"][-1]["content"]},
                                  "finish_reason": "stop"}]}
            data = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        finally:
            with self.lock:
                st["active"] -= 1

    def log_message(self, *args):
        pass


@pytest.fixture
def flaky():
    Flaky.state = {"requests": 0, "active": 0, "max_active": 0, "fail_first": 0, "delay": 0.0}
    server = ThreadingHTTPServer(("127.0.0.1", 0), Flaky)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", Flaky.state
    server.shutdown()
    server.server_close()


def test_retries_honour_retry_after_then_succeed(flaky):
    url, state = flaky
    state["fail_first"] = 3
    policy = OpenAIPolicy("m", base_url=url, max_retries=5, backoff_s=10)  # Retry-After wins over backoff
    t0 = time.perf_counter()
    (gen,) = policy.generate([[{"role": "user", "content": "echo me"}]])
    assert gen.text == "echo me" and gen.token_ids == [] and gen.logprobs is None
    assert policy.retries == 3 and state["requests"] == 4
    assert time.perf_counter() - t0 < 5


def test_gives_up_after_max_retries(flaky):
    url, state = flaky
    state["fail_first"] = 100
    policy = OpenAIPolicy("m", base_url=url, max_retries=2)
    with pytest.raises(ServerError, match="gave up after 3 attempts: HTTP 503"):
        policy.generate([[{"role": "user", "content": "x"}]])
    assert state["requests"] == 3


def test_concurrency_limit(flaky):
    url, state = flaky
    state["delay"] = 0.2
    policy = OpenAIPolicy("m", base_url=url, max_concurrency=3)
    gens = policy.generate([[{"role": "user", "content": str(i)}] for i in range(9)])
    assert [g.text for g in gens] == [str(i) for i in range(9)]
    assert state["max_active"] == 3


def test_timeouts_and_dead_servers_fail_cleanly(flaky):
    url, state = flaky
    state["delay"] = 2.0
    policy = OpenAIPolicy("m", base_url=url, timeout_s=0.3, max_retries=1, backoff_s=0.01)
    with pytest.raises(ServerError, match="Timeout"):
        policy.generate([[{"role": "user", "content": "x"}]])
    dead = OpenAIPolicy("m", base_url=f"http://127.0.0.1:{free_port()}/v1", max_retries=2, backoff_s=0.01)
    with pytest.raises(ServerError, match="ConnectError"):
        dead.generate([[{"role": "user", "content": "x"}]])
    assert dead.retries == 2
