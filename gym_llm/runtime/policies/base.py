"""The policy protocol shared by every backend.

A policy answers one :class:`GenerationRequest` at a time through
``await policy.agenerate(request)``; batching is the policy's business. The
rollout engine submits a request the moment an environment needs a turn, so a
backend that batches whatever is pending (HF micro-batches, vLLM's continuous
batching, concurrent HTTP requests) serves environments at different turns
together without lock-step.

Token-level policies (``policy.tokenizer`` is not ``None``: HF, vLLM) read
``request.prompt_token_ids`` and return the exact sampled ids with their
log-probs. Message-level policies (``tokenizer is None``: a remote server)
read ``request.messages`` and ``request.tools`` and return an assistant
message.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import queue
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from gym_llm_sandbox.aio import run_sync

from gym_llm.runtime.chat import ChatFormat

__all__ = [
    "SamplingParams", "GenerationRequest", "Generation", "Policy", "BasePolicy", "stop_token_ids",
]


@dataclass(frozen=True)
class SamplingParams:
    """How to sample one turn.

    ``temperature`` 0 means greedy. ``top_k`` 0 and ``top_p`` 1 disable those
    filters. ``max_new_tokens`` caps the turn. ``stop_token_ids``: generation
    ends after any of these (``None``: the policy's end-of-turn ids, see
    :func:`stop_token_ids`); the stop token is part of the returned ids.
    ``seed`` makes a backend that supports per-request seeds (vLLM)
    reproducible; HF draws from the policy's own seeded generator.
    """

    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    max_new_tokens: int = 256
    stop_token_ids: tuple[int, ...] | None = None
    seed: int | None = None
    ignore_eos: bool = False

    def __post_init__(self) -> None:
        if self.temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")
        if self.top_k < 0:
            raise ValueError(f"top_k must be >= 0, got {self.top_k}")
        if self.max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be >= 1, got {self.max_new_tokens}")
        if self.stop_token_ids is not None:
            object.__setattr__(self, "stop_token_ids", tuple(int(t) for t in self.stop_token_ids))

    @property
    def greedy(self) -> bool:
        return self.temperature == 0

    def with_max_new_tokens(self, n: int) -> SamplingParams:
        return replace(self, max_new_tokens=n)


@dataclass
class GenerationRequest:
    """One turn to generate. Token-level policies use ``prompt_token_ids``
    (the whole context: prompt, earlier turns, environment tokens);
    message-level ones use ``messages`` and ``tools``."""

    prompt_token_ids: list[int] | None = None
    messages: list[dict[str, Any]] | None = None
    tools: list[dict[str, Any]] | None = None
    params: SamplingParams = field(default_factory=SamplingParams)


@dataclass
class Generation:
    """One generated turn.

    ``token_ids``: the sampled ids, stop token included (empty when a
    message-level server returns none); ``logprobs``: one per token of
    ``token_ids``, under the sampling distribution (temperature, top-k,
    top-p applied; under the raw model distribution for greedy), or ``None``;
    ``text``: the decoded turn; ``finish_reason``: ``"stop"`` (a stop token
    or the end of turn ended it) or ``"length"`` (``max_new_tokens`` hit);
    ``message``: the assistant message when the backend returns structured
    output (OpenAI ``tool_calls``), else ``None``.
    """

    token_ids: list[int]
    logprobs: list[float] | None
    text: str
    finish_reason: str
    message: dict[str, Any] | None = None
    info: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Policy(Protocol):
    """What the rollout engine drives. ``tokenizer`` is a ``transformers``
    tokenizer for token-level policies and ``None`` for message-level ones."""

    tokenizer: Any

    async def agenerate(self, request: GenerationRequest) -> Generation:
        """Generate one turn; many calls may be in flight at once."""
        ...

    def close(self) -> None:
        """Release the backend (engine, threads, connections)."""
        ...


def stop_token_ids(tokenizer: Any, generation_config: Any = None) -> tuple[int, ...]:
    """End-of-turn ids of a model: its generation config's ``eos_token_id``
    (an int or a list) and the tokenizer's EOS, deduplicated, in that order."""
    ids: list[int] = []
    for source in (getattr(generation_config, "eos_token_id", None), getattr(tokenizer, "eos_token_id", None)):
        if source is None:
            continue
        for t in [source] if isinstance(source, int) else list(source):
            if int(t) not in ids:
                ids.append(int(t))
    return tuple(ids)


class BasePolicy:
    """Shared plumbing: a synchronous batch :meth:`generate`, context-manager
    support, and per-event-loop state for backends that batch on a loop."""

    tokenizer: Any = None

    async def agenerate(self, request: GenerationRequest) -> Generation:
        raise NotImplementedError

    def generate(
        self,
        prompts: Sequence[list[int] | list[dict[str, Any]] | GenerationRequest],
        params: SamplingParams | None = None,
    ) -> list[Generation]:
        """Generate for a batch, synchronously. Each prompt is a list of token
        ids, a list of chat messages, or a ready :class:`GenerationRequest`."""
        params = params or SamplingParams()
        requests = [self._as_request(p, params) for p in prompts]

        async def run() -> list[Generation]:
            return list(await asyncio.gather(*(self.agenerate(r) for r in requests)))

        return run_sync(run())

    def _as_request(self, prompt: Any, params: SamplingParams) -> GenerationRequest:
        if isinstance(prompt, GenerationRequest):
            return prompt
        if prompt and isinstance(prompt[0], dict):
            ids = None
            if self.tokenizer is not None:
                ids = ChatFormat(self.tokenizer).prompt_ids(prompt)
            return GenerationRequest(prompt_token_ids=ids, messages=list(prompt), params=params)
        return GenerationRequest(prompt_token_ids=[int(t) for t in prompt], params=params)

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class EngineThreadPolicy(BasePolicy):
    """A token-level policy whose engine runs in one background thread fed by
    an inbox, so requests from any thread or event loop are batched together.

    A subclass's ``submit(prompt, params)`` builds its request, hands it to
    :meth:`_enqueue` (which starts the thread on demand) and returns a
    ``concurrent.futures.Future``; its ``_serve`` loop drains the inbox with
    :meth:`_take` and stops when it takes ``None``, the signal
    :meth:`_stop_thread` sends."""

    _thread_name = "policy-engine"

    def __init__(self) -> None:
        self._inbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._worker: threading.Thread | None = None
        self._start_lock = threading.Lock()

    async def agenerate(self, request: GenerationRequest) -> Generation:
        if request.prompt_token_ids is None:
            raise ValueError(f"{type(self).__name__} needs prompt_token_ids")
        future: concurrent.futures.Future = self.submit(request.prompt_token_ids, request.params)
        return await asyncio.wrap_future(future)

    def _enqueue(self, item: Any) -> None:
        with self._start_lock:
            if self._worker is None or not self._worker.is_alive():
                self._worker = threading.Thread(target=self._serve, name=self._thread_name, daemon=True)
                self._worker.start()
        self._inbox.put(item)

    def _take(self, *, block: bool, limit: int | None = None) -> list[Any]:
        """What waits in the inbox, at most ``limit`` items; ``block``: wait for
        the first (the engine is idle)."""
        items = [self._inbox.get()] if block else []
        while limit is None or len(items) < limit:
            try:
                items.append(self._inbox.get_nowait())
            except queue.Empty:
                break
        return items

    def _stop_thread(self) -> None:
        if self._worker is not None and self._worker.is_alive():
            self._inbox.put(None)
            self._worker.join(timeout=60)
        self._worker = None
