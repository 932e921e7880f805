"""The policy an evaluation config names: ``policy.backend`` x ``model`` x ``checkpoint``.

Contract: :func:`build_policy` returns the policy and its *identity* (what
``eval_config.json`` records and a resumed run must match: the backend, the
resolved model directory or served model name, the server's URL). Model
directories come from :func:`model_path` (a ``checkpoint`` read through
:func:`gym_llm.apps.runs.resolve_checkpoint`, else ``model.path``, else the tiny
model); a server's model from :func:`served_models` when ``policy.model`` is
unset. Backends load lazily: ``policy=openai`` needs neither torch nor the
trainers, so a bare ``pip install gym-llm`` evaluates a served model.
"""

from __future__ import annotations

import os
from typing import Any

from gym_llm.apps.runs import resolve_checkpoint
from gym_llm.runtime.policies.base import Policy

__all__ = ["build_policy", "model_path", "served_models"]


def model_path(cfg: Any) -> str:
    """The checkpoint directory (or hub id) a config evaluates:
    ``checkpoint`` (resolved by :func:`resolve_checkpoint`), else
    ``model.path`` (through :func:`gym_llm.runtime.pretrained.resolve_model_path`),
    else the locally built tiny model."""
    if cfg.get("checkpoint"):
        return str(resolve_checkpoint(cfg.checkpoint)[0])
    if cfg.model.get("path"):
        from gym_llm.runtime.pretrained import resolve_model_path

        return resolve_model_path(cfg.model.path)  # a GGUF spec converts once; hub ids pass through
    if cfg.model.get("tiny"):
        raise ValueError("model.tiny overrides name a custom tiny build: build it with "
                         "gym_llm.runtime.models.build_tiny_model(dir, ...) and pass model.path=dir")
    from gym_llm.runtime.models import tiny_model_path

    return tiny_model_path()


def served_models(base_url: str, api_key: str | None = None, timeout_s: float = 30.0) -> list[str]:
    """Model names an OpenAI-compatible server lists at ``{base_url}/models``
    (``RuntimeError`` when it lists none or cannot be reached)."""
    import httpx

    key = api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY"
    try:
        resp = httpx.get(f"{base_url.rstrip('/')}/models", timeout=timeout_s,
                         headers={"Authorization": f"Bearer {key}"})
        resp.raise_for_status()
        names = [m["id"] for m in resp.json().get("data", [])]
    except (httpx.HTTPError, ValueError, KeyError) as e:
        raise RuntimeError(f"could not list the models of {base_url}: {e}; pass policy.model") from e
    if not names:
        raise RuntimeError(f"{base_url} serves no model")
    return names


def build_policy(cfg: Any) -> tuple[Policy, dict[str, Any]]:
    """The policy of ``cfg.policy.backend`` (``hf``, ``vllm`` or ``openai``)
    and its identity (what a resumed evaluation must match)."""
    from gym_llm.runtime.policies import make_policy

    pc, mc = cfg.policy, cfg.model
    backend = pc.backend
    if backend == "openai":
        served = pc.get("model") or served_models(pc.base_url, pc.get("api_key"))[0]
        identity = {"backend": backend, "base_url": pc.base_url, "model": served}
        policy = make_policy("openai", model=served, base_url=pc.base_url, api_key=pc.get("api_key"),
                             max_concurrency=int(pc.max_concurrency), timeout_s=float(pc.timeout_s),
                             max_retries=int(pc.get("max_retries", 5)))
        return policy, identity
    path = model_path(cfg)
    identity = {"backend": backend, "model": path}
    if backend in ("hf", "transformers"):
        # batch-invariant decoding makes a sample's numbers its own (docs/eval.md, reproducibility)
        identity["batch_invariant"] = bool(cfg.get("batch_invariant", True))
        policy = make_policy(backend, path, dtype=_torch_dtype(mc.get("dtype")), seed=cfg.seed,
                             attn_implementation=mc.get("attn_implementation"),
                             trust_remote_code=bool(mc.get("trust_remote_code", False)),
                             max_batch_size=int(pc.get("max_batch_size", 64)),
                             batch_invariant=identity["batch_invariant"])
    elif backend == "vllm":
        policy = make_policy(backend, path, dtype=mc.get("dtype") or "auto", seed=cfg.seed,
                             gpu_memory_utilization=pc.gpu_memory_utilization,
                             **dict(pc.get("vllm_kwargs") or {}))
    else:
        raise ValueError(f"policy.backend={backend!r}: expected hf, vllm or openai")
    return policy, identity


def _torch_dtype(name: str | None) -> Any:
    if not name:
        return None
    import torch

    return getattr(torch, name)
