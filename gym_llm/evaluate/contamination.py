"""The contamination guard: an evaluation must not score what was trained on.

Contract:

* :func:`guard_split` refuses ``split=train`` (:class:`ContaminationError`)
  unless the caller opts in with ``allow_train_split``; it runs before any
  model loads or sample is written.
* :func:`contamination_warnings` compares what is about to be evaluated with
  a training run directory, read through :mod:`gym_llm.runs` (its mixture
  and its trajectory files): environments whose train split the run sampled
  (when evaluating ``train``), and evaluated task ids found among the run's
  training episodes (on any split: on ``heldout`` that is a leak between
  splits). It warns, never refuses; the caller reports the warnings.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path

from ..runs import training_mixture, trajectory_files
from ..tasks import check_split
from .envs import EvalEnv

__all__ = ["ContaminationError", "guard_split", "contamination_warnings"]

log = logging.getLogger(__name__)


class ContaminationError(RuntimeError):
    """Evaluating the training split without ``allow_train_split``."""


def guard_split(split: str, allow_train_split: bool) -> str:
    """The canonical split name; :class:`ContaminationError` for ``train``
    unless ``allow_train_split``."""
    split = check_split(split)
    if split == "train" and not allow_train_split:
        raise ContaminationError(
            "refusing to evaluate split=train: training tasks measure memorisation, not "
            "generalisation. Pass allow_train_split=true if that is what you want.")
    return split


def _training_footprint(run_dir: Path) -> tuple[set[str], set[tuple[str, str]]]:
    """What a training run trained on: the env ids of its mixture and of its
    train-split trajectories, and the ``(env_id, task_id)`` pairs of those
    trajectories (its held-out eval trajectories, which gym-llm-train also
    keeps in ``trajectories/``, are not training data)."""
    from ..rollout import read_jsonl

    envs = {e["id"] for e in training_mixture(run_dir).values()}
    seen: set[tuple[str, str]] = set()
    for path in trajectory_files(run_dir):
        try:
            for t in read_jsonl(path):
                if t.split == "train":
                    envs.add(t.env_id)
                    seen.add((t.env_id, t.task_id))
        except (OSError, ValueError) as e:
            log.warning("could not read %s for the contamination check: %s", path, e)
    return envs, seen


def contamination_warnings(
    run_dir: str | os.PathLike, evaluated: Sequence[tuple[EvalEnv, Sequence[str]]], split: str,
) -> list[str]:
    """Warnings for evaluating ``evaluated`` (each env with the task ids to be
    evaluated) on ``split`` after training run ``run_dir``: environments whose
    train split the run sampled (when ``split`` is ``train``), and evaluated
    task ids that appear in the run's training trajectories (on any split: on
    ``heldout`` that is a leak between splits)."""
    trained_envs, trained_tasks = _training_footprint(Path(run_dir))
    out = []
    if split == "train":
        for env_id in sorted({e.id for e, _ in evaluated} & trained_envs):
            out.append(f"{env_id}: training run {run_dir} trained on its train split; "
                       f"these scores measure memorisation, not generalisation")
    for env, ids in evaluated:
        leaked = sorted({i for i in ids if (env.id, i) in trained_tasks})
        if leaked:
            out.append(f"{env.key}: {len(leaked)} evaluated task(s) appear in the training "
                       f"trajectories of {run_dir} (e.g. {leaked[0]}): these tasks were trained on")
    return out
