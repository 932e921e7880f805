"""gym-llm trainers: GRPO, PPO and an SFT warm start over gym-llm environment
mixtures, configured by Hydra (``gym-llm-train``).

The building blocks are importable on their own: :mod:`.losses` (policy, KL,
value losses, advantages), :mod:`.batching` (token-budget micro-batches),
:mod:`.sampling` (mixture, dynamic sampling, curriculum), :mod:`.checkpoint`,
:mod:`.metrics`, and :mod:`.config` (every knob, documented).
"""

from .config import (
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
