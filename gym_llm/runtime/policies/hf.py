"""``HFPolicy``: a ``transformers`` causal LM as a token-level policy, with
continuous batching.

One worker thread owns the model. Between two decoding steps it admits every
waiting request (prefilled as a left-padded batch, its KV cache merged into
the running one) and drops the rows that finished, so a request that
arrives while others are mid-generation joins at the next token instead of
waiting for the batch to end, and a short answer returns as soon as it is
done. Each row stops at its own stop token or ``max_new_tokens``; rows with
different sampling settings share a batch. Requests come from any thread or
event loop.

Sampling is done here, not by ``model.generate``, so the returned log-probs
are exactly those of the distribution each token was drawn from: logits
divided by ``temperature``, then top-k, then top-p (nucleus) filtering,
renormalised. Greedy (``temperature=0``) takes the argmax and reports the
model's own log-prob (temperature 1, no filtering), as vLLM does.

Reproducibility. A request whose ``SamplingParams.seed`` is set draws its
tokens from its own generator seeded with it, so what it samples does not
depend on which other requests shared its batches or in what order they
came (the rollout engine derives one seed per episode and turn). The
logits themselves still depend on the batch: a matrix product's rounding
changes with the number of rows and attention sums with the left padding, so
batched rows can differ in the last bits (log-probs) and, rarely, in a
sampled token. ``batch_invariant=True`` runs every row in its own forward pass
(no padding, one row per product): a request's tokens and log-probs are then
a function of its prompt, sampling settings and seed alone, bit for bit, at
the cost of batching (each decoding step is one forward per row).
"""

from __future__ import annotations

import concurrent.futures
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from gym_llm.runtime.policies import base
from gym_llm.runtime.policies.base import EngineThreadPolicy, Generation, SamplingParams

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
class _Row:
    """One request being decoded."""

    prompt: list[int]
    params: SamplingParams
    future: concurrent.futures.Future
    stops: frozenset[int]
    generator: Any = None  # the request's own (``params.seed``), else the policy's shared one
    tokens: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    stopped: bool = False

    @property
    def done(self) -> bool:
        return self.stopped or len(self.tokens) >= self.params.max_new_tokens


class _Batch:
    """The running rows with their KV cache, attention mask (left padded),
    next positions and last logits."""

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        self.rows: list[_Row] = []
        self.cache: Any = None
        self.attention: Any = None
        self.positions: Any = None
        self.logits: Any = None


class HFPolicy(EngineThreadPolicy):
    """A Hugging Face causal LM (a path/hub id/GGUF spec, as
    :func:`gym_llm.runtime.pretrained.resolve_model_path` takes it, or a loaded model object that
    the trainer keeps training: the policy then always samples from its
    current weights; don't step the optimizer while a rollout is running).

    ``tokenizer``: a tokenizer or path (default: the model's path).
    ``device``/``dtype``: where and how a model loaded from a path lives
    (default: CUDA if available, the checkpoint's dtype).
    ``attn_implementation``: default :func:`pick_attn_implementation`.
    ``max_batch_size``: most rows decoded together. ``seed``: the seed of the
    generator shared by requests without a ``SamplingParams.seed`` (their draws
    depend on how requests interleave, so they repeat only for the same arrival
    order); a request with one draws from its own. ``batch_invariant``: each
    row in its own forward pass, so results do not depend on batching (the
    module doc). ``stop_token_ids``:
    end-of-turn ids (default: the generation config's EOS ids and the
    tokenizer's EOS).
    """

    _thread_name = "HFPolicy-decoder"

    def __init__(
        self,
        model: Any,
        tokenizer: Any = None,
        *,
        device: str | None = None,
        dtype: Any = None,
        attn_implementation: str | None = None,
        max_batch_size: int = 64,
        seed: int = 0,
        stop_token_ids: Sequence[int] | None = None,
        trust_remote_code: bool = False,
        batch_invariant: bool = False,
    ):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        super().__init__()

        if isinstance(model, str | os.PathLike):
            from gym_llm.runtime.pretrained import resolve_model_path

            model = resolve_model_path(model)  # a GGUF spec converts once; hub ids pass through
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
        self.stop_token_ids = tuple(stop_token_ids) if stop_token_ids else \
            base.stop_token_ids(tokenizer, getattr(model, "generation_config", None))
        if not self.stop_token_ids:
            raise ValueError("no stop token: pass stop_token_ids or use a tokenizer with an EOS token")
        self.pad_token_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else self.stop_token_ids[0]
        self.max_batch_size = int(max_batch_size)
        self.batch_invariant = bool(batch_invariant)
        self.generator = torch.Generator(device=self.device).manual_seed(seed)
        self.steps = 0  # decoding steps run, for monitoring

    @property
    def device(self) -> Any:
        return next(self.model.parameters()).device

    # ------------------------------------------------------------- requests
    def submit(self, prompt: Sequence[int], params: SamplingParams) -> concurrent.futures.Future:
        """Queue one prompt; the future resolves to its :class:`Generation`."""
        if len(prompt) == 0:
            raise ValueError("empty prompt")
        stops = set() if params.ignore_eos else set(self.stop_token_ids)
        stops |= set(params.stop_token_ids or ())
        generator = self.generator
        if params.seed is not None and not params.greedy:
            import torch

            generator = torch.Generator(device=self.device).manual_seed(params.seed)
        row = _Row([int(t) for t in prompt], params, concurrent.futures.Future(), frozenset(stops), generator)
        self._enqueue(row)
        return row.future

    def close(self) -> None:
        self._stop_thread()

    # --------------------------------------------------------------- worker
    def _serve(self) -> None:
        import torch

        batches: list[_Batch] = []  # one, or one per row when batch_invariant
        while True:
            running = [r for b in batches for r in b.rows]
            waiting = self._take(block=not running, limit=self.max_batch_size - len(running))
            if any(r is None for r in waiting):  # close(): fail what is left
                for r in running + [r for r in waiting if r is not None]:
                    if not r.future.done():  # a caller stopped by a signal cancelled its own
                        r.future.set_exception(RuntimeError("HFPolicy closed"))
                return
            try:
                with torch.inference_mode():
                    was_training = self.model.training
                    self.model.eval()
                    try:
                        if waiting and self.batch_invariant:
                            for row in waiting:
                                batches.append(_Batch())
                                self._admit(batches[-1], [row])
                        elif waiting:
                            if not batches:
                                batches.append(_Batch())
                            self._admit(batches[0], waiting)
                        finished = [f for b in batches for f in self._step(b)]
                        batches = [b for b in batches if b.rows]
                    finally:
                        if was_training:
                            self.model.train()
            except Exception as e:  # a failed forward fails its requests, not the worker
                for r in running + waiting:
                    if not r.future.done():
                        r.future.set_exception(e)
                batches = []
                continue
            # Answered only now, so a caller never sees the model in the wrong mode.
            for row, generation in finished:
                row.future.set_result(generation)

    def _admit(self, batch: _Batch, rows: list[_Row]) -> None:
        """Prefill ``rows`` and merge them into the running batch."""
        import torch
        from transformers.cache_utils import DynamicCache

        device = self.device
        width = max(len(r.prompt) for r in rows)
        ids = torch.full((len(rows), width), self.pad_token_id, dtype=torch.long)
        attention = torch.zeros((len(rows), width), dtype=torch.long)
        for i, r in enumerate(rows):
            ids[i, width - len(r.prompt):] = torch.tensor(r.prompt)
            attention[i, width - len(r.prompt):] = 1
        ids, attention = ids.to(device), attention.to(device)
        positions = (attention.cumsum(-1) - 1).clamp(min=0)
        out = self.model(input_ids=ids, attention_mask=attention, position_ids=positions, use_cache=True)
        logits = out.logits[:, -1, :].float()
        next_pos = positions[:, -1:] + 1
        if not batch.rows:
            batch.rows, batch.cache, batch.attention = list(rows), out.past_key_values, attention
            batch.positions, batch.logits = next_pos, logits
            return
        old_w, new_w = batch.attention.shape[1], width
        full = max(old_w, new_w)

        def pad(t: Any, w: int, dim: int) -> Any:  # left-pad along ``dim`` to length ``full``
            if w == full:
                return t
            shape = list(t.shape)
            shape[dim] = full - w
            return torch.cat([t.new_zeros(shape), t], dim=dim)

        layers = [
            (torch.cat([pad(a.keys, old_w, 2), pad(b.keys, new_w, 2)]),
             torch.cat([pad(a.values, old_w, 2), pad(b.values, new_w, 2)]))
            for a, b in zip(batch.cache.layers, out.past_key_values.layers, strict=True)
        ]
        batch.cache = DynamicCache(ddp_cache_data=layers, config=self.model.config)
        batch.attention = torch.cat([pad(batch.attention, old_w, 1), pad(attention, new_w, 1)])
        batch.positions = torch.cat([batch.positions, next_pos])
        batch.logits = torch.cat([batch.logits, logits])
        batch.rows += rows

    def _step(self, batch: _Batch) -> list[tuple[_Row, Generation]]:
        """Sample one token per row, retire finished rows (returned with their
        generations), run the next forward."""
        import torch
        from transformers.cache_utils import DynamicCache

        n = len(batch.rows)
        tokens = torch.empty(n, dtype=torch.long, device=batch.logits.device)
        logps = torch.empty(n, dtype=torch.float32, device=batch.logits.device)
        groups: dict[tuple, list[int]] = {}
        for i, r in enumerate(batch.rows):
            # rows with their own generator draw alone: their draws must not depend on their neighbours
            shared = r.generator is self.generator or r.params.greedy
            groups.setdefault(_params_key(r.params) if shared else (i,), []).append(i)
        for members in groups.values():
            idx = torch.tensor(members, device=batch.logits.device)
            first = batch.rows[members[0]]
            t, lp = sample_logits(batch.logits[idx], first.params, first.generator)
            tokens[idx], logps[idx] = t, lp
        self.steps += 1
        keep, finished = [], []
        for i, (r, t, lp) in enumerate(zip(batch.rows, tokens.tolist(), logps.tolist(), strict=True)):
            r.tokens.append(t)
            r.logprobs.append(lp)
            r.stopped = t in r.stops
            if r.done:
                finished.append((r, Generation(
                    token_ids=r.tokens, logprobs=r.logprobs,
                    text=self.tokenizer.decode(r.tokens, skip_special_tokens=False,
                                               clean_up_tokenization_spaces=False),
                    finish_reason="stop" if r.stopped else "length",
                )))
            else:
                keep.append(i)
        if not keep:
            batch.clear()
            return finished
        if len(keep) < n:
            idx = torch.tensor(keep, device=tokens.device)
            attention = batch.attention[idx]
            # Drop columns that are padding for every remaining row.
            first = int((attention.sum(0) > 0).nonzero()[0])
            batch.cache = DynamicCache(
                ddp_cache_data=[(layer.keys[idx, :, first:], layer.values[idx, :, first:])
                                for layer in batch.cache.layers], config=self.model.config)
            batch.attention = attention[:, first:]
            batch.positions, tokens = batch.positions[idx], tokens[idx]
            batch.rows = [batch.rows[i] for i in keep]
        batch.attention = torch.cat([batch.attention, batch.attention.new_ones((len(keep), 1))], dim=1)
        out = self.model(input_ids=tokens[:, None], attention_mask=batch.attention,
                         position_ids=batch.positions, past_key_values=batch.cache, use_cache=True)
        batch.cache, batch.logits = out.past_key_values, out.logits[:, -1, :].float()
        batch.positions = batch.positions + 1
        return finished


def _params_key(p: SamplingParams) -> tuple:
    return (p.temperature, p.top_p, p.top_k)

