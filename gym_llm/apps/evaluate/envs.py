"""Which environments an evaluation runs: env sets (``conf/envs/*.yaml``).

Contract: :func:`env_set` turns an env set config (``"all"``, a list of ids,
or a mapping of entries shaped like a training mixture's ``envs``) into
:class:`EvalEnv` s, each an id, the kwargs :func:`gym_llm.make` gets and a
unique results key. :func:`with_sandbox` gives every environment that takes
a ``sandbox`` kwarg (:meth:`gym_llm.EnvSpec.accepts`) the run's ``sandbox``
config, unless its entry sets ``sandbox`` itself. :func:`check_envs` makes
each environment on the evaluated split and reads a task (opening its
dataset) before a model loads, reporting every failure at once. Nothing here
runs an episode.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from gym_llm.apps.hydra_app import ConfigError
from gym_llm.envs.registry import list_envs, make
from gym_llm.envs.registry import with_sandbox as registry_with_sandbox

__all__ = ["EvalEnv", "env_set", "with_sandbox", "check_envs"]

_ENTRY_KEYS = {"id", "kwargs", "heldout_kwargs", "difficulties", "key", "weight"}


@dataclass(frozen=True)
class EvalEnv:
    """One environment to evaluate: ``id``, keyword arguments for
    :func:`gym_llm.make` and the results key (``key``, the id by default)."""

    id: str
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    key: str = ""

    def __post_init__(self) -> None:
        if not self.key:
            object.__setattr__(self, "key", self.id)


def env_set(entries: Mapping[str, Any] | Sequence[Any] | str | None) -> list[EvalEnv]:
    """The environments of an env set config.

    Accepts ``"all"`` (every registered id, default kwargs), a list of ids,
    or a mapping ``name -> {id, kwargs, difficulties, key}`` as in
    ``conf/envs/*.yaml`` (the same shape as a training mixture's ``envs``, so
    one can be pasted into the other; ``weight`` and ``heldout_kwargs`` are
    accepted, ``heldout_kwargs`` overriding ``kwargs`` as the trainer's eval
    does). ``difficulties: [a, b, ...]`` evaluates the env at each
    ``difficulty`` (one results entry, broken down by difficulty). Results
    keys must be unique: two entries of one id need distinct ``key``\\ s.
    """
    if entries is None or entries == "all":
        return [EvalEnv(i) for i in list_envs()]
    if isinstance(entries, str):
        entries = [entries]
    if not isinstance(entries, Mapping):
        return [EvalEnv(str(i)) for i in entries]
    out: list[EvalEnv] = []
    seen: dict[tuple[str, str], str] = {}
    keys: dict[str, str] = {}
    for name, entry in entries.items():
        entry = dict(entry or {})
        unknown = set(entry) - _ENTRY_KEYS
        if unknown:
            raise ValueError(f"env set entry {name!r}: unknown keys {sorted(unknown)}")
        env_id = str(entry.get("id") or name)
        kwargs = {**dict(entry.get("kwargs") or {}), **dict(entry.get("heldout_kwargs") or {})}
        key = str(entry.get("key") or env_id)
        if key in keys and keys[key] != name:
            raise ValueError(
                f"env set entries {keys[key]!r} and {name!r} both report as {key!r}: give one a "
                f"distinct `key` (or use `difficulties` to sweep one environment)")
        keys[key] = name
        for d in entry.get("difficulties") or [None]:
            kw = dict(kwargs) if d is None else {**kwargs, "difficulty": float(d)}
            ident = (key, json.dumps(kw, sort_keys=True, default=str))
            if ident in seen:
                raise ValueError(f"env set entry {name!r} repeats {ident}")
            seen[ident] = name
            out.append(EvalEnv(env_id, kw, key))
    return out


def with_sandbox(envs: Sequence[EvalEnv], sandbox: Mapping[str, Any] | None) -> list[EvalEnv]:
    """``envs`` with their kwargs under a run's ``sandbox`` config
    (:func:`gym_llm.envs.registry.with_sandbox`, the rule gym-llm-train applies too).
    Unknown ids raise (:class:`gym_llm.UnknownEnvError`)."""
    return [replace(env, kwargs=registry_with_sandbox(env.id, env.kwargs, sandbox)) for env in envs]


def check_envs(envs: Sequence[EvalEnv], split: str) -> None:
    """Make every environment of ``envs`` on ``split`` and read its first task
    (a dataset file is opened and parsed here, not after the model loaded);
    :class:`~gym_llm.apps.hydra_app.ConfigError` listing every one that failed."""
    problems = []
    for env in envs:
        try:
            made = make(env.id, split=split, **dict(env.kwargs)).unwrapped
            made.task_set.get(split, 0)
            made.close()
        except Exception as e:  # whatever a plugin raises on bad kwargs or data
            problems.append(f"{env.key} ({split} split): {type(e).__name__}: {e}")
    if problems:
        raise ConfigError("", "the evaluation cannot start:\n  " + "\n  ".join(problems))
