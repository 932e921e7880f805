"""``OpenAIPolicy``: any OpenAI-compatible chat-completions server as a
message-level policy (evaluating served models: vLLM, SGLang, TGI, llama.cpp,
hosted APIs).

The server renders the chat template and tokenizes, so trajectories from a
server are message-level: ``messages``, rewards and turn counts are exact,
token fields stay empty (a later turn's prompt is re-rendered by the server
from text, which is not token-exact). When the server returns token ids
(vLLM with ``return_token_ids``) and log-probs, each turn's ``Generation``
carries them and the rollout engine keeps them in ``info``; they are not
stitched into ``response_token_ids``.

Robustness: at most ``max_concurrency`` requests in flight; each has a
``timeout_s``; connection errors, timeouts and HTTP 408/409/429/5xx are
retried up to ``max_retries`` times with exponential backoff and full jitter
(``Retry-After`` honoured); other 4xx fail at once with the server's message.
A vLLM server started without tool-call parsing refuses every request that
offers tools (HTTP 400); that error names the flags it needs
(:data:`TOOL_FLAGS`).

Each turn's ``Generation.info["completion_tokens"]`` is the server's
``usage.completion_tokens`` (else the number of returned token ids), so a
message-level rollout still counts the tokens it generated.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
from dataclasses import dataclass
from typing import Any

from gym_llm.runtime.policies.base import BasePolicy, Generation, GenerationRequest

__all__ = ["OpenAIPolicy", "ServerError", "TOOL_FLAGS"]

_RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}

#: The ``vllm serve`` flags that let it accept ``tools`` (Qwen/Hermes-style
#: tool calls, the format every gym-llm tool env uses).
TOOL_FLAGS = "--enable-auto-tool-choice --tool-call-parser hermes"


class ServerError(RuntimeError):
    """The server refused the request or kept failing after all retries."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


@dataclass
class _LoopState:
    client: Any
    semaphore: asyncio.Semaphore


def to_openai_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages as the chat-completions API wants them: tool-call
    ``arguments`` as JSON strings, every tool call with an ``id`` and
    ``type``; unknown keys dropped."""
    out = []
    for i, m in enumerate(messages):
        msg: dict[str, Any] = {"role": m.get("role", "user"), "content": m.get("content")}
        if m.get("tool_calls"):
            calls = []
            for j, call in enumerate(m["tool_calls"]):
                fn = call.get("function", call)
                args = fn.get("arguments", {})
                calls.append({
                    "id": call.get("id") or f"call_{i}_{j}",
                    "type": "function",
                    "function": {"name": fn.get("name", ""),
                                 "arguments": args if isinstance(args, str) else json.dumps(args)},
                })
            msg["tool_calls"] = calls
        for key in ("tool_call_id", "name"):
            if m.get(key) is not None and msg["role"] == "tool":
                msg[key] = m[key]
        if msg["content"] is None and msg["role"] != "assistant":
            msg["content"] = ""
        out.append(msg)
    return out


class OpenAIPolicy(BasePolicy):
    """A chat-completions endpoint at ``base_url`` (ending in ``/v1``) serving
    ``model``. ``api_key`` defaults to ``$OPENAI_API_KEY`` (or ``"EMPTY"``
    for local servers). ``extra_body`` is merged into every request (e.g.
    ``{"chat_template_kwargs": {...}}``). ``request_token_ids`` asks a vLLM
    server for token ids (other servers ignore unknown fields or reject them:
    turn it off for those that reject)."""

    tokenizer = None

    def __init__(
        self,
        model: str,
        base_url: str = "http://localhost:8000/v1",
        api_key: str | None = None,
        *,
        max_concurrency: int = 32,
        timeout_s: float = 120.0,
        max_retries: int = 5,
        backoff_s: float = 0.5,
        max_backoff_s: float = 30.0,
        request_logprobs: bool = True,
        request_token_ids: bool = True,
        extra_body: dict[str, Any] | None = None,
    ):
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be >= 1")
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY"
        self.max_concurrency = int(max_concurrency)
        self.timeout_s = float(timeout_s)
        self.max_retries = int(max_retries)
        self.backoff_s, self.max_backoff_s = float(backoff_s), float(max_backoff_s)
        self.request_logprobs = request_logprobs
        self.request_token_ids = request_token_ids
        self.extra_body = dict(extra_body or {})
        self._loops: dict[int, _LoopState] = {}
        self.retries = 0  # total retries so far, for monitoring

    def _state(self) -> _LoopState:
        import httpx

        loop = asyncio.get_running_loop()
        state = self._loops.get(id(loop))
        if state is None:
            # Clients and semaphores are bound to the loop they were made on.
            client = httpx.AsyncClient(
                base_url=self.base_url, timeout=self.timeout_s,
                headers={"Authorization": f"Bearer {self.api_key}"},
                limits=httpx.Limits(max_connections=self.max_concurrency),
            )
            state = self._loops[id(loop)] = _LoopState(client, asyncio.Semaphore(self.max_concurrency))
        return state

    def request_body(self, request: GenerationRequest) -> dict[str, Any]:
        """The JSON body sent for ``request``."""
        p = request.params
        body: dict[str, Any] = {
            "model": self.model,
            "messages": to_openai_messages(request.messages or []),
            "max_tokens": p.max_new_tokens,
            "temperature": p.temperature,
            "top_p": p.top_p,
            "n": 1,
        }
        if request.tools:
            body["tools"] = request.tools
        if p.top_k:
            body["top_k"] = p.top_k
        if p.seed is not None:
            body["seed"] = p.seed
        if p.ignore_eos:
            body["ignore_eos"] = True
        if p.stop_token_ids:
            body["stop_token_ids"] = list(p.stop_token_ids)
        if self.request_logprobs:
            body["logprobs"] = True
        if self.request_token_ids:
            body["return_token_ids"] = True
        body.update(self.extra_body)
        return body

    async def agenerate(self, request: GenerationRequest) -> Generation:
        if request.messages is None:
            raise ValueError("OpenAIPolicy needs messages")
        state = self._state()
        body = self.request_body(request)
        async with state.semaphore:
            data = await self._post(state.client, "/chat/completions", body)
        return parse_completion(data)

    async def _post(self, client: Any, path: str, body: dict[str, Any]) -> dict[str, Any]:
        import httpx

        attempt = 0
        while True:
            retry_after: float | None = None
            try:
                response = await client.post(path, json=body)
            except (httpx.TransportError, httpx.TimeoutException) as e:
                problem, status = f"{type(e).__name__}: {e}", None
            else:
                if response.status_code == 200:
                    return response.json()
                status = response.status_code
                problem = f"HTTP {status}: {response.text[:500]}"
                if status not in _RETRY_STATUS:
                    if status == 400 and body.get("tools") and "tool-call-parser" in response.text:
                        problem += (f" -- the server cannot take tool calls: start vLLM with {TOOL_FLAGS}"
                                    " (other servers: enable their tool-call parsing)")
                    raise ServerError(problem, status)
                try:
                    retry_after = float(response.headers.get("retry-after", ""))
                except ValueError:
                    retry_after = None
            if attempt >= self.max_retries:
                raise ServerError(f"gave up after {attempt + 1} attempts: {problem}", status)
            delay = retry_after if retry_after is not None else random.uniform(
                0, min(self.max_backoff_s, self.backoff_s * 2**attempt))
            attempt += 1
            self.retries += 1
            await asyncio.sleep(delay)

    async def aclose(self) -> None:
        states, self._loops = list(self._loops.values()), {}
        for state in states:
            await state.client.aclose()

    def close(self) -> None:
        # Clients of finished loops hold no live connections worth awaiting.
        self._loops.clear()


def parse_completion(data: dict[str, Any]) -> Generation:
    """A chat-completions response as a :class:`Generation`."""
    try:
        choice = data["choices"][0]
    except (KeyError, IndexError, TypeError):
        raise ServerError(f"malformed response: {json.dumps(data)[:500]}") from None
    msg = choice.get("message") or {}
    content = msg.get("content") or ""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if msg.get("tool_calls"):
        message["tool_calls"] = [
            {"id": c.get("id"), "type": "function",
             "function": {"name": c["function"]["name"], "arguments": c["function"].get("arguments", "{}")}}
            for c in msg["tool_calls"]
        ]
    logprobs = None
    entries = ((choice.get("logprobs") or {}).get("content")) or None
    if entries:
        logprobs = [float(e["logprob"]) for e in entries]
    token_ids = [int(t) for t in choice.get("token_ids") or []]
    usage = data.get("usage") or {}
    completion_tokens = usage.get("completion_tokens") if isinstance(usage, dict) else None
    reason = choice.get("finish_reason")
    return Generation(
        token_ids=token_ids, logprobs=logprobs, text=content,
        finish_reason="length" if reason == "length" else "stop", message=message,
        info={"finish_reason": reason, "prompt_token_ids": data.get("prompt_token_ids"),
              "usage": data.get("usage"),
              "completion_tokens": int(completion_tokens) if completion_tokens is not None else len(token_ids)},
    )
