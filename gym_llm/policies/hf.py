"""``HFPolicy``: a ``transformers`` causal LM as a token-level policy.

Requests that arrive while the model is busy wait in a queue; whenever the
model is free it takes every pending request (up to ``max_batch_size``, those
sharing sampling settings) as one left-padded batch and decodes it with a KV
cache, in a worker thread so environments keep stepping meanwhile. Each row
stops at its own stop token or ``max_new_tokens``; the batch ends when every
row has.

Sampling is done here, not by ``model.generate``, so the returned log-probs
are exactly those of the distribution each token was drawn from: logits
divided by ``temperature``, then top-k, then top-p (nucleus) filtering,
renormalised. Greedy (``temperature=0``) takes the argmax and reports the
model's own log-prob (temperature 1, no filtering), as vLLM does.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .base import BasePolicy, Generation, GenerationRequest, SamplingParams, stop_token_ids

__all__ = ["HFPolicy", "pick_attn_implementation", "sample_logits"]


def pick_attn_implementation(device: Any) -> str:
    """``flash_attention_2`` on a CUDA device when ``flash_attn`` is
    installed, else ``sdpa``."""
    if str(device).startswith("cuda"):
        try:
            import flash_attn  # noqa: F401

            return "flash_attention_2"
        except ImportError:
            pass
    return "sdpa"


def sample_logits(logits: Any, params: SamplingParams, generator: Any) -> tuple[Any, Any]:
    """Draw one token per row of ``logits`` ``[batch, vocab]`` (float32);
    returns ``(token_ids, logprobs)`` where each log-prob is under the
    distribution actually sampled from (see the module doc)."""
    import torch

    if params.greedy:
        logp = torch.log_softmax(logits, dim=-1)
        tokens = logits.argmax(dim=-1)
        return tokens, logp.gather(-1, tokens[:, None])[:, 0]
    scores = logits / params.temperature
    if params.top_k and params.top_k < scores.shape[-1]:
        kth = torch.topk(scores, params.top_k, dim=-1).values[:, -1:]
        scores = scores.masked_fill(scores < kth, float("-inf"))
    if params.top_p < 1.0:
        sorted_scores, order = torch.sort(scores, dim=-1, descending=True)
        probs = torch.softmax(sorted_scores, dim=-1)
        # Drop a token when the tokens strictly more likely already reach top_p.
        drop_sorted = (probs.cumsum(dim=-1) - probs) >= params.top_p
        drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)
        scores = scores.masked_fill(drop, float("-inf"))
    logp = torch.log_softmax(scores, dim=-1)
    tokens = torch.multinomial(logp.exp(), 1, generator=generator)[:, 0]
    return tokens, logp.gather(-1, tokens[:, None])[:, 0]


@dataclass
class _LoopState:
    pending: list[tuple[GenerationRequest, asyncio.Future]] = field(default_factory=list)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    worker: asyncio.Task | None = None


class HFPolicy(BasePolicy):
    """A Hugging Face causal LM (a path/hub id, or a loaded model object that
    the trainer keeps training: the policy then always samples from its
    current weights).

    ``tokenizer``: a tokenizer or path (default: the model's path).
    ``device``/``dtype``: where and how a model loaded from a path lives
    (default: CUDA if available, the checkpoint's dtype).
    ``attn_implementation``: default :func:`pick_attn_implementation`.
    ``max_batch_size``: most rows decoded together. ``batch_wait_s``: how long
    the first request of a batch waits for others to join (environments that
    finish a step at about the same time then share a batch). ``seed``: the
    sampling generator's seed. ``stop_token_ids``: end-of-turn ids (default:
    the generation config's EOS ids and the tokenizer's EOS).
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any = None,
        *,
        device: str | None = None,
        dtype: Any = None,
        attn_implementation: str | None = None,
        max_batch_size: int = 64,
        batch_wait_s: float = 0.002,
        seed: int = 0,
        stop_token_ids: Sequence[int] | None = None,
        trust_remote_code: bool = False,
    ):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if isinstance(model, str | os.PathLike):
            device = device or ("cuda" if torch.cuda.is_available() else "cpu")
            model = AutoModelForCausalLM.from_pretrained(
                str(model), dtype=dtype or "auto", trust_remote_code=trust_remote_code,
                attn_implementation=attn_implementation or pick_attn_implementation(device),
            ).to(device)
            model.eval()
        self.model = model
        if tokenizer is None or isinstance(tokenizer, str | os.PathLike):
            tokenizer = AutoTokenizer.from_pretrained(
                str(tokenizer or model.name_or_path), trust_remote_code=trust_remote_code)
        self.tokenizer = tokenizer
        self.stop_token_ids = tuple(stop_token_ids) if stop_token_ids else stop_token_ids_of(model, tokenizer)
        if not self.stop_token_ids:
            raise ValueError("no stop token: pass stop_token_ids or use a tokenizer with an EOS token")
        self.pad_token_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else self.stop_token_ids[0]
        self.max_batch_size = int(max_batch_size)
        self.batch_wait_s = float(batch_wait_s)
        self.generator = torch.Generator(device=self.device).manual_seed(seed)
        self._loops: dict[int, _LoopState] = {}
        self._lock = threading.Lock()  # one decode at a time, whichever loop or thread asks

    @property
    def device(self) -> Any:
        return next(self.model.parameters()).device

    # --------------------------------------------------------------- async
    async def agenerate(self, request: GenerationRequest) -> Generation:
        if request.prompt_token_ids is None:
            raise ValueError("HFPolicy needs prompt_token_ids")
        state = self._state()
        fut = asyncio.get_running_loop().create_future()
        state.pending.append((request, fut))
        state.wake.set()
        return await fut

    def _state(self) -> _LoopState:
        loop = asyncio.get_running_loop()
        state = self._loops.get(id(loop))
        if state is None or state.worker is None or state.worker.done():
            # Loop-bound objects cannot outlive their loop (each asyncio.run is new).
            self._loops = {k: v for k, v in self._loops.items() if v.worker and not v.worker.done()}
            state = self._loops[id(loop)] = _LoopState()
            state.worker = loop.create_task(self._serve(state), name="HFPolicy-batcher")
        return state

    async def _serve(self, state: _LoopState) -> None:
        while True:
            await state.wake.wait()
            if self.batch_wait_s > 0:
                await asyncio.sleep(self.batch_wait_s)
            state.wake.clear()
            while state.pending:
                batch = self._take_batch(state)
                try:
                    results = await asyncio.to_thread(
                        self.generate_ids, [r.prompt_token_ids for r, _ in batch],
                        batch[0][0].params, [r.params.max_new_tokens for r, _ in batch])
                except Exception as e:
                    for _, fut in batch:
                        if not fut.done():
                            fut.set_exception(e)
                    continue
                for (_, fut), gen in zip(batch, results, strict=True):
                    if not fut.done():
                        fut.set_result(gen)

    def _take_batch(self, state: _LoopState) -> list[tuple[GenerationRequest, asyncio.Future]]:
        """The oldest pending request and every other one sampled the same way
        (the rest stay queued), at most ``max_batch_size``."""
        key = _params_key(state.pending[0][0].params)
        batch, rest = [], []
        for item in state.pending:
            if len(batch) < self.max_batch_size and _params_key(item[0].params) == key:
                batch.append(item)
            else:
                rest.append(item)
        state.pending[:] = rest
        return batch

    # ---------------------------------------------------------------- sync
    def generate_ids(
        self, prompts: Sequence[Sequence[int]], params: SamplingParams,
        max_new_tokens: Sequence[int] | None = None,
    ) -> list[Generation]:
        """Decode one batch synchronously; ``max_new_tokens`` per row
        (default ``params.max_new_tokens``)."""
        n = len(prompts)
        if n == 0:
            return []
        limits = list(max_new_tokens or [params.max_new_tokens] * n)
        stops = [] if params.ignore_eos else list(self.stop_token_ids)
        stops += [t for t in params.stop_token_ids or () if t not in stops]
        with self._lock:
            return self._decode(prompts, params, limits, stops)

    def _decode(self, prompts: Sequence[Sequence[int]], params: SamplingParams, limits: list[int],
                stops: Sequence[int]) -> list[Generation]:
        import torch

        n = len(prompts)
        device = self.device
        width = max(len(p) for p in prompts)
        input_ids = torch.full((n, width), self.pad_token_id, dtype=torch.long)
        attention = torch.zeros((n, width), dtype=torch.long)
        for i, p in enumerate(prompts):
            if len(p) == 0:
                raise ValueError("empty prompt")
            input_ids[i, width - len(p):] = torch.tensor(list(p), dtype=torch.long)
            attention[i, width - len(p):] = 1
        input_ids, attention = input_ids.to(device), attention.to(device)
        stop_t = torch.tensor(list(stops), dtype=torch.long, device=device)
        limit_t = torch.tensor(limits, device=device)
        out_tokens = torch.zeros((n, max(limits)), dtype=torch.long, device=device)
        out_logp = torch.zeros((n, max(limits)), dtype=torch.float32, device=device)
        lengths = torch.zeros(n, dtype=torch.long, device=device)
        done = torch.zeros(n, dtype=torch.bool, device=device)
        stopped = torch.zeros(n, dtype=torch.bool, device=device)
        was_training = self.model.training
        self.model.eval()
        try:
            with torch.inference_mode():
                positions = (attention.cumsum(-1) - 1).clamp(min=0)
                out = self.model(input_ids=input_ids, attention_mask=attention, position_ids=positions,
                                 use_cache=True)
                cache, logits = out.past_key_values, out.logits[:, -1, :]
                next_pos = positions[:, -1:] + 1
                for step in range(max(limits)):
                    tokens, logp = sample_logits(logits.float(), params, self.generator)
                    tokens = torch.where(done, torch.full_like(tokens, self.pad_token_id), tokens)
                    live = ~done
                    out_tokens[:, step] = tokens
                    out_logp[:, step] = logp
                    lengths += live.long()
                    hit_stop = live & torch.isin(tokens, stop_t)
                    stopped |= hit_stop
                    done |= hit_stop | (lengths >= limit_t)
                    if bool(done.all()):
                        break
                    attention = torch.cat([attention, live.long()[:, None]], dim=1)
                    out = self.model(input_ids=tokens[:, None], attention_mask=attention,
                                     position_ids=next_pos, past_key_values=cache, use_cache=True)
                    cache, logits = out.past_key_values, out.logits[:, -1, :]
                    next_pos = next_pos + 1
        finally:
            if was_training:
                self.model.train()
        tok_list, logp_list = out_tokens.tolist(), out_logp.tolist()
        results = []
        for i in range(n):
            k = int(lengths[i])
            ids = tok_list[i][:k]
            results.append(Generation(
                token_ids=ids, logprobs=logp_list[i][:k],
                text=self.tokenizer.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False),
                finish_reason="stop" if bool(stopped[i]) else "length",
            ))
        return results

    def close(self) -> None:
        for state in self._loops.values():
            if state.worker is not None and not state.worker.done():
                state.worker.cancel()
        self._loops.clear()


def _params_key(p: SamplingParams) -> tuple:
    return (p.temperature, p.top_p, p.top_k, p.stop_token_ids, p.ignore_eos)


def stop_token_ids_of(model: Any, tokenizer: Any) -> tuple[int, ...]:
    return stop_token_ids(tokenizer, getattr(model, "generation_config", None))
