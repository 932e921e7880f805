"""gym-llm environments in SkyRL (tested with skyrl-gym 0.4.0).

:class:`GymLLMTextEnv` is a skyrl_gym ``BaseTextEnv`` over any registered
env id, text in and text out: ``init(prompt)`` resets the env on the task the
row's ``extras`` name and returns the env's own prompt; each
``step(action)`` is one ``env.step`` of the model's text, returning the
env's new messages (tool results, feedback) as ``observations``, the turn's
reward, ``done`` (terminated or truncated) and the step's ``info`` as
``metadata``. Tool envs read tool calls from the text (``<tool_call>`` JSON
blocks, the format their system prompt teaches), so SkyRL's generator needs
no tool wiring.

Importing this module registers every gym-llm id with skyrl_gym's registry
as ``"gym_llm/<env id>"`` (e.g. ``"gym_llm/math/Arithmetic-v0"``), and keeps
doing so for ids registered later (plugins loaded afterwards, user
``gym_llm.register`` calls), plus one generic ``"gym_llm"`` whose rows name
their env id in ``extras["env_id"]``. So a SkyRL dataset row
(:func:`dataset_rows`) is::

    {"prompt": [...], "env_class": "gym_llm/math/Arithmetic-v0",
     "env_id": ..., "split": ..., "seed": ..., "task_index": ..., "env_kwargs": "{...}"}

and SkyRL's generator does ``skyrl_gym.make(env_class, env_config=...,
extras=<the row's other columns>)``. ``env_config`` (SkyRL's
``environment.skyrl_gym.<env_class>`` config), when given, holds env kwargs
(the row's own ``env_kwargs`` win key by key) and may name the ``env_id`` of
rows that name none (the generic ``"gym_llm"`` over a one-env dataset).

A row that names no task (a missing or malformed column, an unknown id, a
task index or env kwargs the env does not have) does not crash SkyRL's
generator: its episode ends at the first step with the lowest reward,
``metadata["reward_error"]`` naming the column or value.
SkyRL's own ``extras["max_turns"]`` is ignored: the env's ``max_turns`` (an
env kwarg) decides when the episode ends, as in our own rollouts.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Mapping
from typing import Any

from skyrl_gym import register as _skyrl_register
from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput
from skyrl_gym.envs.registration import registry as _skyrl_registry

from gym_llm.apps.integrations._tasks import (
    POOL,
    Score,
    TaskColumnError,
    TaskRef,
    _as_score,
    bad_task_score,
    error_score,
    task_rows,
)
from gym_llm.envs.hookspecs import hookimpl
from gym_llm.envs.registry import EnvSpec, plugin_manager, spec

__all__ = ["GymLLMTextEnv", "NAME_PREFIX", "GENERIC_NAME", "skyrl_name", "dataset_rows"]

#: skyrl_gym names our ids under this prefix: ``"gym_llm/" + env_id``.
NAME_PREFIX = "gym_llm/"
#: The skyrl_gym name whose rows carry their env id in ``extras["env_id"]``.
GENERIC_NAME = "gym_llm"


def skyrl_name(env_id: str) -> str:
    """The skyrl_gym registry name of gym-llm's ``env_id``."""
    return NAME_PREFIX + env_id


def _plain(config: Any) -> dict[str, Any]:
    """``env_config`` as plain env kwargs (SkyRL passes an OmegaConf DictConfig)."""
    if not config:  # SkyRL's default for an env class without config: skip the conversion
        return {}
    from omegaconf import OmegaConf

    if OmegaConf.is_config(config):
        config = OmegaConf.to_container(config, resolve=True)
    if not isinstance(config, Mapping):
        raise TypeError(f"env_config must be a mapping of env kwargs, got {type(config).__name__}")
    return dict(config)


def _task_of(row: Mapping[str, Any], env_config: Any, env_id: str | None) -> TaskRef:
    """The task of a SkyRL row: ``env_config`` holds env kwargs and, optionally,
    ``env_id``, the id of rows that name none (one env per dataset is common in
    SkyRL configs; a row's own ``env_id`` wins, as its ``env_kwargs`` do). Under a
    name that binds ``env_id``, a config naming another id is an error."""
    kwargs = _plain(env_config)
    config_id = kwargs.pop("env_id", None)
    if config_id is not None:
        if not isinstance(config_id, str):
            raise TaskColumnError(f"env_config 'env_id' must be a string, got {config_id!r}")
        if env_id is not None and config_id != env_id:
            raise TaskColumnError(f"env_config 'env_id' is {config_id!r} but this env class is {env_id!r}")
        if row.get("env_id") is None:
            row = {**row, "env_id": config_id}
    return TaskRef.from_row(row, env_id=env_id, env_kwargs=kwargs)


class GymLLMTextEnv(BaseTextEnv):
    """One episode of a gym-llm env inside SkyRL.

    ``extras`` are the dataset row's columns other than ``prompt`` and
    ``env_class``: the task columns ``env_id`` (optional when ``env_id`` is
    bound by the registered name or ``env_config`` names it), ``seed``,
    ``task_index``, ``split`` and ``env_kwargs``. :attr:`task_error` is set (and the episode scores the
    lowest reward) when they name no task.
    """

    def __init__(self, env_config: Any = None, extras: Mapping[str, Any] | None = None, *,
                 env_id: str | None = None):
        super().__init__()
        self.env: Any = None
        self.ref: TaskRef | None = None
        self.task_error: str | None = None
        self.last_info: dict[str, Any] = {}
        try:
            self.ref = _task_of(extras if extras is not None else {}, env_config, env_id)
            spec(self.ref.env_id)
        except (TaskColumnError, LookupError) as e:
            self.task_error = f"task column 'env_id': {e}" if isinstance(e, LookupError) else str(e)
            warnings.warn(f"gym_llm SkyRL env: {self.task_error}; the episode scores the lowest reward",
                          RuntimeWarning, stacklevel=2)
            return
        # a pooled env: its task set and sandbox are built once, not per trajectory
        # (take/give, not POOL.on_task: the episode spans init, step and close)
        try:
            self.env = POOL.take(self.ref)
        except Exception as e:  # kwargs the env rejects: the one rule, bad_task_score
            self._bad_task(e)
            return
        self.max_turns = self.env.unwrapped.max_turns

    def _bad_task(self, error: Exception) -> None:
        self.task_error = bad_task_score(self.ref, error).reward_error
        warnings.warn(f"gym_llm SkyRL env: {self.task_error}; the episode scores the lowest reward",
                      RuntimeWarning, stacklevel=3)

    def init(self, prompt: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Reset the env on the row's task and return its prompt messages and
        reset info. The env's prompt is returned, not ``prompt``: the env owns
        its task's prompt (they are equal for rows made by :func:`dataset_rows`)."""
        self.turns = 0
        if self.env is None:
            return list(prompt), {"reward_error": self.task_error}
        try:
            return self.ref.reset(self.env)
        except Exception as e:  # a task index the env does not have
            POOL.discard(self.env)
            self.env = None
            self._bad_task(e)
            return list(prompt), {"reward_error": self.task_error}

    def step(self, action: str) -> BaseTextEnvStepOutput:
        """One ``env.step(action)``; ``observations`` are the env's new messages."""
        self.turns += 1
        if self.env is None:
            return self._output(error_score(self.task_error or "no task"), done=True)
        score = _as_score(self.env.step(action))
        return self._output(score, done=score.terminated or score.truncated)

    def _output(self, score: Score, done: bool) -> BaseTextEnvStepOutput:
        self.last_info = score.info
        # score.messages is already a fresh list (_as_score copies the step's)
        return BaseTextEnvStepOutput(observations=score.messages, reward=score.reward, done=bool(done),
                                     metadata=score.info, postprocessed_action=None)

    def get_metrics(self) -> dict[str, Any]:
        """The last step's reward components (``gym_llm/<name>``), the turn
        count and whether the environment failed to score."""
        metrics: dict[str, Any] = {f"gym_llm/{k}": v for k, v in
                                   (self.last_info.get("reward_components") or {}).items()}
        metrics["turns"] = self.turns
        metrics["reward_error"] = float(bool(self.last_info.get("reward_error")))
        return metrics

    def close(self) -> None:
        """Hand the env back to the pool (once; closing again does nothing)."""
        if self.env is not None:
            POOL.give(self.ref, self.env)
        self.env = None


def _make_named(env_id: str | None):
    def make(env_config: Any = None, extras: Mapping[str, Any] | None = None) -> GymLLMTextEnv:
        return GymLLMTextEnv(env_config, extras, env_id=env_id)

    make.__name__ = f"make_{env_id or 'gym_llm'}"
    return make


@hookimpl
def gym_llm_env_registered(spec: EnvSpec) -> None:
    """Register ``spec``'s id with skyrl_gym (replacing an earlier one:
    gym-llm's re-registration replaces too)."""
    name = skyrl_name(spec.id)
    _skyrl_registry.pop(name, None)
    _skyrl_register(id=name, entry_point=_make_named(spec.id))


def dataset_rows(env_id: str, split: str = "train", n: int = 256, seed: int = 0,
                 **env_kwargs: Any) -> list[dict[str, Any]]:
    """``n`` SkyRL dataset rows of ``env_id`` (write them with
    ``datasets.Dataset.from_list(rows).to_parquet(path)``): ``prompt``,
    ``env_class`` (:func:`skyrl_name`), ``task_id`` and the task columns.
    Row ``i`` is the task ``env.reset(seed=seed + i)`` gives."""
    rows = task_rows(env_id, split, n, seed, **env_kwargs)
    for row in rows:
        row.pop("tools")  # the prompt teaches the tools; a ragged schema column would not fit Parquet
        row["env_class"] = skyrl_name(env_id)
    return rows


if GENERIC_NAME not in _skyrl_registry:
    _skyrl_register(id=GENERIC_NAME, entry_point=_make_named(None))
# a historic hook: registering this module mirrors every id registered so far, then each later one
plugin_manager().register(sys.modules[__name__])
