"""Held-out evaluation: environments reused as benchmarks (``gym-llm-eval``).

    gym-llm-eval                                         # tiny model, four domains, held-out split
    gym-llm-eval checkpoint=runs/2026-01-01/12-00-00     # a trained run (its latest checkpoint)
    gym-llm-eval policy=vllm model=qwen2.5-0.5b-instruct num_tasks=200 k=8
    gym-llm-eval policy=openai policy.base_url=http://localhost:8000/v1 policy.model=my-model
    gym-llm-eval -m model.path=/ckpt/a,/ckpt/b envs=math,tool   # sweep models x env sets

For every environment of the env set (``conf/envs/``), the first
``num_tasks`` tasks of the split (``task_index`` 0..n-1, the same tasks for
every model) are each sampled ``k`` times through the rollout engine
(:func:`gym_llm.runtime.rollout.acollect`, one GRPO-style group per task). A sample
is *correct* when its reward reaches ``success_threshold``; per environment
we report the mean reward, pass@1, pass@k (the unbiased estimator of Chen et
al. 2021, :func:`pass_at_k`), the mean of each reward component and a
breakdown by task difficulty.

The output directory holds ``samples.jsonl`` (one trajectory per line, the
rollout JSONL format plus ``eval_key``, ``task_index`` and ``correct``),
``results.json`` (``{env_key: {"n", "mean_reward", "reward_ci95", "strict_mean", "gap",
"pass@1", "pass@1_ci95", "pass@k", "k", "reproducible", ...}}``; every sample is also scored by its env's
strict grader, ``strict_reward`` in the sample), ``report.md``,
``report.html``, ``reward_by_env.png``, ``reward_by_difficulty.png`` and
``eval_config.json``. Each sample draws with its own seed, so the same
settings give the same files (docs/eval.md, reproducibility). A task's ``k``
samples are appended together as soon as they finish (the file is put in plan
order at the end), so a rerun into the same directory skips every task
already in ``samples.jsonl`` and evaluates only the rest; a rerun whose
model, sampling, ``k``, split or seed differ from the recorded ones is
refused rather than mixed.

The ``sandbox`` group (``conf/sandbox/``, shared with gym-llm-train) is
passed as the ``sandbox`` kwarg to every environment that takes one
(``sandbox=strict``), unless an env set entry sets it.

Contamination guard: evaluating ``split=train`` needs
``allow_train_split=true``; when a training run directory is known
(``train_run=...``, or implied by ``checkpoint=<run dir>``) a warning names
every environment whose training split that run sampled when asked to
evaluate that split, and any evaluated task id that appears in the run's
``trajectories/``.

Modules (each states its contract):

* :mod:`~gym_llm.apps.evaluate.metrics`: pass@k and :func:`aggregate` (results from samples);
* :mod:`~gym_llm.apps.evaluate.envs`: env sets (:class:`EvalEnv`, :func:`env_set`) and the ``sandbox`` group;
* :mod:`~gym_llm.apps.evaluate.store`: the eval directory, the resumable :class:`SampleStore`;
* :mod:`~gym_llm.apps.evaluate.runner`: :func:`evaluate` itself;
* :mod:`~gym_llm.apps.evaluate.contamination`: the contamination guard;
* :mod:`~gym_llm.apps.evaluate.report`: ``report.md`` and the plots (``report.html`` is
  :mod:`gym_llm.apps.report`'s, written at the end of every run);
* :mod:`~gym_llm.apps.evaluate.compare`: two eval directories side by side, the
  tasks that flipped (``gym-llm compare A B``);
* :mod:`~gym_llm.apps.evaluate.policy`: the policy a config names (:func:`build_policy`);
* :mod:`~gym_llm.apps.evaluate.app`: the Hydra application, :func:`main`.

A training run's directory (checkpoints, config, mixture) is read through
:mod:`gym_llm.apps.runs`, which the trainers write with; its names are
re-exported here (:func:`resolve_checkpoint`, :func:`run_config`,
:func:`training_mixture`).
"""

from __future__ import annotations

from gym_llm.apps.evaluate.app import main, slug
from gym_llm.apps.evaluate.compare import compare, format_comparison
from gym_llm.apps.evaluate.contamination import (
    ContaminationError,
    contamination_warnings,
    guard_split,
)
from gym_llm.apps.evaluate.envs import EvalEnv, env_set, with_sandbox
from gym_llm.apps.evaluate.metrics import aggregate, difficulty_labels, pass_at_k
from gym_llm.apps.evaluate.policy import build_policy, model_path, served_models
from gym_llm.apps.evaluate.report import plot_results, write_report
from gym_llm.apps.evaluate.runner import EvalOutcome, evaluate
from gym_llm.apps.evaluate.store import SampleStore
from gym_llm.apps.runs import resolve_checkpoint, run_config, training_mixture

__all__ = [
    "pass_at_k", "EvalEnv", "env_set", "resolve_checkpoint", "SampleStore", "aggregate",
    "contamination_warnings", "evaluate", "write_report", "plot_results", "main", "slug",
    "difficulty_labels", "training_mixture", "run_config",
    "ContaminationError", "guard_split",
    "EvalOutcome", "with_sandbox", "build_policy", "model_path", "served_models", "compare", "format_comparison",
]
