"""The ``env_workers`` config group (``conf/env_workers/``, shared by ``gym-llm-train`` and ``gym-llm-eval``)
as :func:`gym_llm.make_vec` arguments.
Its keys are declared and documented once, by the trainer's
``EnvWorkersConfig`` (``gym_llm_trainers/config.py``, docs/training.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["vec_kwargs"]


def vec_kwargs(env_workers: Mapping[str, Any] | None, imports: Sequence[str] = ()) -> dict[str, Any]:
    """Keyword arguments of :func:`gym_llm.make_vec` for an ``env_workers``
    config node: none for ``backend: local`` (or no node), the Ray backend's
    for ``backend: ray``. ``imports`` (modules that register environments)
    are imported by every Ray worker too."""
    cfg = dict(env_workers or {})
    backend = cfg.get("backend", "local")
    if backend == "local":
        return {}
    if backend != "ray":
        raise ValueError(f"env_workers.backend must be local | ray, got {backend!r}")
    options: dict[str, Any] = {"num_cpus": float(cfg.get("num_cpus_per_worker", 1.0))}
    if cfg.get("resources_per_worker"):
        options["resources"] = dict(cfg["resources_per_worker"])
    return {
        "backend": "ray",
        "num_workers": int(cfg.get("num_workers", 2)),
        "address": cfg.get("address"),
        "worker_options": options,
        "sandbox_concurrency_per_node": cfg.get("sandbox_concurrency_per_node"),
        "step_timeout_s": cfg.get("step_timeout_s", 120.0),
        "max_retries": int(cfg.get("max_retries", 2)),
        "imports": list(imports),
    }
