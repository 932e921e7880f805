"""The contamination guard: an evaluation must not score what was trained on.

Contract:

* :func:`guard_split` refuses ``split=train`` (:class:`ContaminationError`)
  unless the caller opts in with ``allow_train_split``; it runs before any
  model loads or sample is written.
* :func:`contamination_warnings` compares what is about to be evaluated with
  a training run directory, read through :mod:`gym_llm.apps.runs` (its mixture
  and its trajectory files): environments whose train split the run sampled
  (when evaluating ``train``), and evaluated task ids found among the run's
  training episodes (on any split: on ``heldout`` that is a leak between
  splits), and those among the tasks the run's SFT warm start took its
  examples from (the first ``sft_examples`` train tasks of each entry, which
  no trajectory file records: they are recomputed from the recorded config).
  It warns, never refuses; the caller reports the warnings.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path

from gym_llm.apps.evaluate.envs import EvalEnv
from gym_llm.apps.runs import run_config, training_mixture, trajectory_files
from gym_llm.envs.registry import make
from gym_llm.envs.tasks import check_split

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
    from gym_llm.runtime.rollout import read_jsonl

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


def _warm_start_tasks(run_dir: Path) -> set[tuple[str, str]]:
    """``(env_id, task_id)`` of the tasks a run's SFT warm start drew from:
    with ``trainer.sft.enabled``, the first ``sft_examples`` (else
    ``trainer.sft.examples_per_env``) train tasks of each entry the run
    sampled, as the trainer picks them (task index order)."""
    cfg = run_config(run_dir)
    sft = (cfg.get("trainer") or {}).get("sft") or {}
    if not sft.get("enabled"):
        return set()
    raw = (cfg.get("mixture") or {}).get("envs") or {}
    tasks: set[tuple[str, str]] = set()
    for name, entry in training_mixture(run_dir).items():
        n = (raw.get(name) or {}).get("sft_examples")
        n = int(sft.get("examples_per_env") or 0) if n is None else int(n)
        if n <= 0:
            continue
        try:
            env = make(entry["id"], split="train", **(entry.get("kwargs") or {})).unwrapped
        except Exception as e:  # an env of the run no longer loads: say so, check the rest
            log.warning("could not make %s for the contamination check: %s", entry["id"], e)
            continue
        tasks |= {(entry["id"], env.task_set.get("train", i).id) for i in range(min(n, env.num_tasks))}
        env.close()
    return tasks


def contamination_warnings(
    run_dir: str | os.PathLike, evaluated: Sequence[tuple[EvalEnv, Sequence[str]]], split: str,
) -> list[str]:
    """Warnings for evaluating ``evaluated`` (each env with the task ids to be
    evaluated) on ``split`` after training run ``run_dir``: environments whose
    train split the run sampled (when ``split`` is ``train``), and evaluated
    task ids that appear in the run's training trajectories (on any split: on
    ``heldout`` that is a leak between splits)."""
    trained_envs, trained_tasks = _training_footprint(Path(run_dir))
    warm_tasks = _warm_start_tasks(Path(run_dir))
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
        warm = sorted({i for i in ids if (env.id, i) in warm_tasks})
        if warm:
            out.append(f"{env.key}: {len(warm)} evaluated task(s) were SFT warm-start examples of "
                       f"{run_dir} (e.g. {warm[0]}): these tasks were trained on")
    return out
