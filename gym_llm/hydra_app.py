"""What gym-llm's Hydra applications (``gym-llm-train``, ``gym-llm-eval``)
share."""

from __future__ import annotations

import os

__all__ = ["threads_for_sweep"]


def threads_for_sweep() -> None:
    """Parallel sweep jobs (the joblib launcher with ``n_jobs > 1``) share the
    machine: give each ``cores / n_jobs`` torch threads rather than
    oversubscribing. Does nothing outside a Hydra multirun."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode
    from omegaconf import OmegaConf

    if not HydraConfig.initialized():
        return
    hc = HydraConfig.get()
    n_jobs = OmegaConf.select(hc, "launcher.n_jobs")
    if hc.mode == RunMode.MULTIRUN and n_jobs and int(n_jobs) > 1:
        import torch

        torch.set_num_threads(max(1, (os.cpu_count() or 1) // int(n_jobs)))
