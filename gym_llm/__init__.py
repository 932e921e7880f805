"""gym-llm: Gymnasium multi-turn environments with verifiable rewards for RL
post-training of language models.

    import gym_llm
    env = gym_llm.make("math/Arithmetic-v0", split="train", seed=0)
    obs, info = env.reset()
    obs, reward, terminated, truncated, info = env.step("\\\\boxed{42}")

The package has three layers, each importing only those below it, on top of
the sandbox (the distribution ``gym-llm-sandbox``, package ``gym_llm_sandbox``):

* :mod:`gym_llm.envs`: the environment contract a plugin writes against;
* :mod:`gym_llm.runtime`: running environments: mixtures, vector envs, rollout,
  policies, Ray workers, monitoring;
* :mod:`gym_llm.apps`: what users run: ``gym-llm``, ``gym-llm-eval``, the env
  server, the report, the adapters for other trainers and the Hydra configs.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from types import ModuleType
from typing import Any

from gym_llm.envs.core import LLMEnv, SingleTurnEnv, Turn
from gym_llm.envs.grading import HackSignal
from gym_llm.envs.hookspecs import hookimpl, hookspec
from gym_llm.envs.registry import (
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
from gym_llm.envs.rewards import Gate, RewardResult, WeightedSum
from gym_llm.envs.tasks import Draft, ProceduralTasks, Task, TaskList, TaskSet
from gym_llm.envs.tools import Tool, ToolEnv, tool

__version__ = "0.1.0"

__all__ = [
    "LLMEnv", "SingleTurnEnv", "ToolEnv", "Turn", "Task", "TaskSet", "TaskList", "ProceduralTasks",
    "Draft", "RewardResult", "WeightedSum", "Gate", "HackSignal", "Tool", "tool", "EnvSpec", "Registry",
    "UnknownEnvError", "hookimpl", "hookspec", "make", "spec", "list_envs", "register",
    "registry", "load_plugins", "make_vec", "__version__",
]

#: The module paths shared/DESIGN.md names, as aliases of the modules' homes in
#: the layers (a submodule of an alias is found too: ``gym_llm.integrations.trl``).
#: Importing one imports its home and nothing else.
PUBLIC_MODULES = {
    "gym_llm.rewards": "gym_llm.envs.rewards",
    "gym_llm.hookspecs": "gym_llm.envs.hookspecs",
    "gym_llm.rollout": "gym_llm.runtime.rollout",
    "gym_llm.policies": "gym_llm.runtime.policies",
    "gym_llm.integrations": "gym_llm.apps.integrations",
    "gym_llm.sandbox": "gym_llm_sandbox",
}


class _PublicModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Resolves a :data:`PUBLIC_MODULES` path to the module at its home: the
    same module object under both names, its own ``__spec__`` kept."""

    def __init__(self) -> None:
        self._own_specs: dict[str, Any] = {}

    @staticmethod
    def _home(name: str) -> str | None:
        for public, home in PUBLIC_MODULES.items():
            if name == public or name.startswith(public + "."):
                return home + name[len(public):]
        return None

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        home = self._home(fullname)
        if home is None or importlib.util.find_spec(home) is None:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: Any) -> ModuleType:
        module = importlib.import_module(self._home(spec.name))
        self._own_specs[module.__name__] = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # the import system set the alias's spec on the shared module: put its own back
        module.__spec__ = self._own_specs.pop(module.__name__)


if not any(isinstance(f, _PublicModuleFinder) for f in sys.meta_path):
    sys.meta_path.insert(0, _PublicModuleFinder())


def make_vec(*args, **kwargs):
    """Vectorised environments over one id, a list of ids or an ``{id: weight}``
    mixture; see :func:`gym_llm.runtime.vector.make_vec`."""
    from gym_llm.runtime.vector import make_vec as _make_vec

    return _make_vec(*args, **kwargs)


load_plugins()
