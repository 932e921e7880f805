"""gym-llm trainers: GRPO, PPO and an SFT warm start over gym-llm environment
mixtures, configured by Hydra (``gym-llm-train``).

The loop is :class:`.trainer.Trainer`; its parts are modules of their own:
:mod:`.collection` (plan over the mixture, collect, dynamic sampling, rollout
metrics), :mod:`.advantages` (GRPO and PPO advantages: pure functions),
:mod:`.update` (:class:`~.update.Learner`: the loss and the optimizer steps),
:mod:`.generation` (the rollout policy: HF, vLLM, async, LoRA) and
:mod:`.pipeline` (async rollouts). The building blocks are importable on
their own: :mod:`.losses` (policy, KL, value losses, advantage estimators),
:mod:`.batching` (token-budget micro-batches), :mod:`.curriculum`,
:mod:`.sft` (the warm start), :mod:`.checkpoint`, :mod:`.metrics`, and
:mod:`.config` (every knob, documented).

Importing the package sets ``OMP_WAIT_POLICY=PASSIVE`` unless the
environment sets it: torch's OpenMP runtime reads it once, when torch loads,
so this must run first (it does for ``gym-llm-train`` and ``python -m
gym_llm_trainers.train``). Idle intra-op threads then sleep instead of
spinning: on a CPU shared with other jobs, spinning threads burn the time
slices the thread with the work needs, and the warm start's many small
parallel ops ran several times slower than on one thread (benchmarks/RESULTS.md,
"warm_start_contention").
"""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from .config import (  # noqa: E402 - after the thread policy, before anything imports torch
    CurriculumConfig,
    LoggingConfig,
    MixtureConfig,
    ModelConfig,
    PolicyConfig,
    RunConfig,
    SFTConfig,
    TrainerConfig,
)

__version__ = "0.1.0"

__all__ = [
    "TrainerConfig", "SFTConfig", "CurriculumConfig", "ModelConfig", "PolicyConfig",
    "MixtureConfig", "LoggingConfig", "RunConfig", "__version__",
]
