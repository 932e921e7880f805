"""Models: loading (tiny or any checkpoint, LoRA), the reference model in its
smallest form, the PPO critic, and the one forward pass every loss uses.

Reference model memory, from cheapest to dearest:

* LoRA on: no second model at all. The reference is the shared base weights
  with the adapters switched off (``peft``'s ``disable_adapter()``).
* LoRA off: a frozen copy in ``model.ref_dtype`` (bfloat16 by default: half
  the policy's float32 bytes; forward passes only, so precision loss is
  small next to the KL estimator's own noise), optionally kept on the CPU
  between uses (``model.ref_offload``) when the policy lives on an accelerator.
* ``kl_coef = 0``: nothing is loaded.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator
from typing import Any

import torch
from torch import nn

from .batching import MicroBatch
from .config import ModelConfig
from .losses import entropy_from_logits

__all__ = [
    "load_tokenizer", "load_policy_model", "RefModel", "Critic", "forward_logprobs", "causal_lm_parts",
    "merged_state_dict", "resolve_model_path", "unwrap",
]

_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def resolve_model_path(cfg: ModelConfig) -> str:
    """The directory (or hub id) of ``cfg.path`` as
    :func:`gym_llm.runtime.pretrained.resolve_model_path` resolves it: the tiny model
    (with ``cfg.tiny`` overrides) when null, a GGUF converted once into the
    cache, else unchanged."""
    from gym_llm.runtime.pretrained import resolve_model_path as resolve

    return resolve(cfg.path, cfg.tiny)


def load_tokenizer(cfg: ModelConfig) -> Any:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(resolve_model_path(cfg), trust_remote_code=cfg.trust_remote_code)
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    return tok


def load_policy_model(cfg: ModelConfig, device: torch.device | str = "cpu") -> nn.Module:
    """The trainable causal LM (with LoRA adapters when ``cfg.lora.enabled``)."""
    from transformers import AutoModelForCausalLM

    kwargs: dict[str, Any] = {"dtype": _DTYPES[cfg.dtype], "trust_remote_code": cfg.trust_remote_code}
    if cfg.attn_implementation:
        kwargs["attn_implementation"] = cfg.attn_implementation
    model = AutoModelForCausalLM.from_pretrained(resolve_model_path(cfg), **kwargs).to(device)
    if cfg.gradient_checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        model.config.use_cache = False
    if cfg.lora.enabled:
        from peft import LoraConfig, get_peft_model

        model = get_peft_model(model, LoraConfig(
            r=cfg.lora.r, lora_alpha=cfg.lora.alpha, lora_dropout=cfg.lora.dropout,
            target_modules=list(cfg.lora.target_modules), task_type="CAUSAL_LM",
        ))
    return model


def unwrap(model: nn.Module) -> nn.Module:
    """The module under a DistributedDataParallel wrapper, if any."""
    return model.module if isinstance(model, nn.parallel.DistributedDataParallel) else model


class RefModel:
    """The frozen reference policy of the KL term, in its smallest form (see
    the module docstring). ``logprobs(mb, temperature)`` is all it offers."""

    def __init__(self, policy: nn.Module, cfg: ModelConfig, device: torch.device):
        self.policy = policy
        self.device = device
        self.offload = cfg.ref_offload
        if cfg.lora.enabled:
            self.model = None  # the base under the adapters
        else:
            self.model = copy.deepcopy(unwrap(policy)).to(_DTYPES[cfg.ref_dtype]).eval()
            self.model.requires_grad_(False)
            if self.offload:
                self.model.to("cpu")

    @contextlib.contextmanager
    def _ready(self) -> Iterator[nn.Module]:
        if self.model is None:
            base = unwrap(self.policy)
            with base.disable_adapter():
                yield base
            return
        if self.offload:
            self.model.to(self.device)
        try:
            yield self.model
        finally:
            if self.offload:
                self.model.to("cpu")

    @torch.no_grad()
    def logprobs(self, mb: MicroBatch, temperature: float) -> torch.Tensor:
        with self._ready() as model:
            logp, _ = forward_logprobs(model, mb, temperature)
        return logp


def _two_pass(module: nn.Module, mb: MicroBatch, **first_kwargs: Any) -> tuple[Any, Any]:
    """Run the distinct prompts once with a KV cache, gather the cache out to
    every response of each prompt, then run the responses on top of it.
    Returns both outputs; position ``-1`` of the first and ``k`` of the
    second see the context before response tokens ``0`` and ``k + 1``."""
    first = module(input_ids=mb.prompt_ids, attention_mask=mb.prompt_attention,
                   position_ids=mb.prompt_positions, use_cache=True, **first_kwargs)
    cache = first.past_key_values
    cache.batch_select_indices(mb.prompt_index)
    second = module(
        input_ids=mb.response_ids,
        attention_mask=torch.cat([mb.prompt_attention[mb.prompt_index], mb.response_attention], dim=1),
        position_ids=mb.response_positions, past_key_values=cache, use_cache=True,
    )
    return first, second


class Critic(nn.Module):
    """PPO value model: the policy's transformer trunk (a separate copy,
    initialised from the same checkpoint) and a scalar head, one value per
    response position (the value of the state before that token)."""

    def __init__(self, policy: nn.Module):
        super().__init__()
        base = unwrap(policy)
        if hasattr(base, "get_base_model"):  # peft: the critic is a full model of its own
            base = base.get_base_model()
        self.trunk = copy.deepcopy(base.get_decoder()).float()
        self.trunk.requires_grad_(True)
        self.head = nn.Linear(base.config.hidden_size, 1)
        nn.init.zeros_(self.head.weight)
        nn.init.zeros_(self.head.bias)

    def forward(self, mb: MicroBatch) -> torch.Tensor:
        first, second = _two_pass(self.trunk, mb)
        hidden = torch.cat([first.last_hidden_state[mb.prompt_index, -1:], second.last_hidden_state[:, :-1]], 1)
        return self.head(hidden.float()).squeeze(-1)


def causal_lm_parts(model: nn.Module) -> tuple[nn.Module, nn.Module, float | None]:
    """``(decoder, lm_head, final_logit_softcapping)`` of a causal LM, under a
    DDP or peft wrapper (LoRA layers stay in place inside the decoder)."""
    base = unwrap(model)
    if hasattr(base, "get_base_model"):
        base = base.get_base_model()
    return base.get_decoder(), base.get_output_embeddings(), getattr(base.config, "final_logit_softcapping", None)


def forward_logprobs(
    model: nn.Module, mb: MicroBatch, temperature: float = 1.0, with_entropy: bool = False
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Log-probabilities ``[N, K]`` of the response tokens of ``mb`` under
    ``model`` at ``temperature`` (the sampling distribution), and optionally
    their entropies; 0 wherever ``mb.mask`` is 0.

    Each distinct prompt runs once (see :func:`_two_pass`), and the vocabulary
    projection, the most expensive part for a small model with a large
    vocabulary, runs only at the positions the loss uses (policy tokens):
    never at prompt, environment or padding positions."""
    decoder, head, softcap = causal_lm_parts(model)
    first, second = _two_pass(decoder, mb)
    hidden = torch.cat([first.last_hidden_state[mb.prompt_index, -1:], second.last_hidden_state[:, :-1]], dim=1)
    where = mb.mask > 0
    logits = head(hidden[where]).float()
    if softcap:
        logits = softcap * torch.tanh(logits / softcap)
    if temperature > 0 and temperature != 1.0:
        logits = logits / temperature
    picked = logits.gather(-1, mb.targets[where].unsqueeze(-1)).squeeze(-1) - torch.logsumexp(logits, -1)
    logp = torch.zeros(mb.mask.shape, dtype=picked.dtype, device=picked.device).masked_scatter(where, picked)
    entropy = None
    if with_entropy:
        ent = entropy_from_logits(logits)
        entropy = torch.zeros(mb.mask.shape, dtype=ent.dtype, device=ent.device).masked_scatter(where, ent)
    return logp, entropy


@torch.no_grad()
def merged_state_dict(model: nn.Module) -> dict[str, torch.Tensor]:
    """The policy's full weights under the base model's parameter names (LoRA
    adapters merged in), for pushing into an inference engine."""
    base = unwrap(model)
    if not hasattr(base, "merge_adapter"):
        return {k: v.detach() for k, v in base.state_dict().items()}
    base.merge_adapter()
    try:
        out = {}
        for k, v in base.get_base_model().state_dict().items():
            if "lora_" in k:
                continue
            out[k.replace(".base_layer.", ".")] = v.detach().clone()
        return out
    finally:
        base.unmerge_adapter()
