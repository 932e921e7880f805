"""Vectorised LLM environments: ``num_envs`` slots over one id, a list of ids
or an ``{id: weight}`` mixture.

Each slot runs one episode at a time. When an episode starts, the slot draws
its environment id from the mixture and the reset seed with its own seeded
generator (slot ``i`` uses ``numpy.random.default_rng([seed, i])``), so which
domain and task each episode gets is deterministic given ``seed`` however
long steps take. Environment instances are pooled per id and reused across
slots and calls (an episode's task depends only on its reset seed), so a
long-lived vector env makes each instance once: keep one per training run.

Two APIs:

* per slot, for the rollout engine: :meth:`VectorLLMEnv.areset_at` and
  :meth:`VectorLLMEnv.astep_at` (async; environments at different turns step
  concurrently);
* Gymnasium-style batches: :meth:`~VectorLLMEnv.reset` / :meth:`~VectorLLMEnv.step`
  and their async twins, with same-step autoreset: when an episode ends the
  slot is reset at once; the returned observation is the new prompt and the
  slot's info holds the new episode's reset info plus ``final_obs`` and
  ``final_info``. Observations and infos are lists (one entry per slot);
  rewards and flags are numpy arrays; each step info also names the slot's
  ``env_id``. An action of ``None`` leaves its slot untouched in that call.

``vectorization_mode="sync"`` steps slots one after another with ``env.step``;
``"async"`` (default) steps them concurrently with ``env.astep`` on one event
loop.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from .core import LLMEnv
from .policies.base import run_sync
from .registry import make, spec

__all__ = ["VectorLLMEnv", "SyncVectorLLMEnv", "AsyncVectorLLMEnv", "EnvStats", "make_vec", "normalize_mixture"]


def normalize_mixture(ids_or_mixture: str | Sequence[str] | Mapping[str, float]) -> dict[str, float]:
    """``"id"``, ``["id", ...]`` (equal weights) or ``{id: weight}`` as a dict
    of weights summing to 1. Unknown ids raise :class:`gym_llm.UnknownEnvError`;
    negative, non-finite or all-zero weights raise ``ValueError``."""
    if isinstance(ids_or_mixture, str):
        weights = {ids_or_mixture: 1.0}
    elif isinstance(ids_or_mixture, Mapping):
        weights = {str(k): float(v) for k, v in ids_or_mixture.items()}
    else:
        weights = {}
        for env_id in ids_or_mixture:
            weights[str(env_id)] = weights.get(str(env_id), 0.0) + 1.0
    if not weights:
        raise ValueError("empty environment mixture")
    for env_id, w in weights.items():
        spec(env_id)  # fail early, naming close matches
        if not math.isfinite(w) or w < 0:
            raise ValueError(f"mixture weight of {env_id!r} must be finite and >= 0, got {w}")
    total = sum(weights.values())
    if total <= 0:
        raise ValueError("mixture weights sum to zero")
    return {k: v / total for k, v in weights.items() if v > 0}


@dataclass
class EnvStats:
    """Counters of one slot. ``step_time_s`` is wall time spent in env steps
    (kept here, never in step ``info``, which must be deterministic)."""

    episodes: int = 0
    steps: int = 0
    total_reward: float = 0.0
    reward_errors: int = 0
    failures: int = 0
    step_time_s: float = 0.0
    episodes_by_env: dict[str, int] = field(default_factory=dict)
    last_episode_reward: float | None = None

    @property
    def mean_episode_reward(self) -> float | None:
        return self.total_reward / self.episodes if self.episodes else None

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "mean_episode_reward": self.mean_episode_reward}


class VectorLLMEnv:
    """``num_envs`` environment slots over a mixture (see the module doc).

    ``env_kwargs`` are passed to every ``make`` call (``{id: kwargs}`` maps,
    keyed by env id, are also accepted when every key is a mixture id).
    """

    def __init__(
        self,
        ids_or_mixture: str | Sequence[str] | Mapping[str, float],
        num_envs: int,
        *,
        seed: int = 0,
        split: str = "train",
        env_kwargs: Mapping[str, Any] | None = None,
    ):
        if num_envs < 1:
            raise ValueError(f"num_envs must be >= 1, got {num_envs}")
        self.mixture = normalize_mixture(ids_or_mixture)
        self.env_ids = list(self.mixture)
        self._probs = np.array([self.mixture[i] for i in self.env_ids])
        self.num_envs = int(num_envs)
        self.seed = int(seed)
        self.split = split
        kwargs = dict(env_kwargs or {})
        if kwargs and all(k in self.mixture for k in kwargs) and all(isinstance(v, Mapping) for v in kwargs.values()):
            self._kwargs_by_id = {k: dict(v) for k, v in kwargs.items()}
            self._common_kwargs: dict[str, Any] = {}
        else:
            self._kwargs_by_id, self._common_kwargs = {}, kwargs
        self._rngs = [np.random.default_rng([self.seed, i]) for i in range(self.num_envs)]
        self._slot_env: list[LLMEnv | None] = [None] * self.num_envs
        self._current: list[str | None] = [None] * self.num_envs
        self._idle: dict[str, list[LLMEnv]] = {}
        self._episode_reward = [0.0] * self.num_envs
        self.stats = [EnvStats() for _ in range(self.num_envs)]
        self.instances_made = 0
        self.closed = False

    # ------------------------------------------------------------ slot API
    def draw_env_id(self, slot: int) -> str:
        """Draw the id of the slot's next episode from the mixture."""
        if len(self.env_ids) == 1:
            return self.env_ids[0]
        return self.env_ids[int(self._rngs[slot].choice(len(self.env_ids), p=self._probs))]

    def _draw_seed(self, slot: int) -> int:
        return int(self._rngs[slot].integers(2**31 - 1))

    def _make(self, env_id: str) -> LLMEnv:
        kwargs = {**self._common_kwargs, **self._kwargs_by_id.get(env_id, {})}
        self.instances_made += 1
        return make(env_id, split=self.split, seed=self.seed, **kwargs)

    def release(self, slot: int) -> None:
        """Return the slot's instance to the idle pool of its id (the rollout
        engine does this when an episode ends; a reset does it too)."""
        env, env_id = self._slot_env[slot], self._current[slot]
        if env is not None and env_id is not None:
            self._idle.setdefault(env_id, []).append(env)
        self._slot_env[slot] = None

    def _take(self, slot: int, env_id: str, env: LLMEnv | None = None) -> LLMEnv:
        self.release(slot)
        if env is None:
            env = self._idle[env_id].pop()
        self._slot_env[slot], self._current[slot] = env, env_id
        self._episode_reward[slot] = 0.0
        return env

    def env_at(self, slot: int) -> LLMEnv:
        """The environment running the slot's current episode."""
        env = self._slot_env[slot]
        if env is None:
            raise RuntimeError(f"slot {slot} has no episode; reset it first")
        return env

    def discard(self, slot: int) -> None:
        """Drop the slot's instance (after it failed) instead of reusing it."""
        env, self._slot_env[slot] = self._slot_env[slot], None
        if env is not None:
            try:
                env.close()
            except Exception:
                pass  # a broken env's close must not mask the failure being handled

    @property
    def envs(self) -> list[LLMEnv | None]:
        """Each slot's current environment (``None`` before its first reset)."""
        return list(self._slot_env)

    def current_env_id(self, slot: int) -> str | None:
        return self._current[slot]

    async def areset_at(
        self, slot: int, *, env_id: str | None = None, seed: int | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Start an episode in ``slot`` on ``env_id`` (drawn from the mixture if
        ``None``). ``seed`` (drawn from the slot's generator if ``None``) and
        ``options`` go to the env's ``reset``."""
        env_id = env_id or self.draw_env_id(slot)
        seed = self._draw_seed(slot) if seed is None else seed
        self.release(slot)
        made = None
        if not self._idle.get(env_id):  # making an env may load data: keep the loop free
            made = await asyncio.to_thread(self._make, env_id)
        env = self._take(slot, env_id, made)
        return await env.areset(seed=seed, options=options)

    async def astep_at(self, slot: int, action: Any) -> tuple[list[dict[str, Any]], float, bool, bool, dict[str, Any]]:
        """Step the slot's current episode with ``action`` (no autoreset)."""
        env = self.env_at(slot)
        t0 = time.perf_counter()
        try:
            result = await env.astep(action)
        except Exception:
            self.stats[slot].failures += 1
            raise
        finally:
            self.stats[slot].step_time_s += time.perf_counter() - t0
        self._record(slot, result)
        return result

    def step_at(self, slot: int, action: Any) -> tuple[list[dict[str, Any]], float, bool, bool, dict[str, Any]]:
        """Synchronous :meth:`astep_at` through the env's own ``step``."""
        env = self.env_at(slot)
        t0 = time.perf_counter()
        try:
            result = env.step(action)
        except Exception:
            self.stats[slot].failures += 1
            raise
        finally:
            self.stats[slot].step_time_s += time.perf_counter() - t0
        self._record(slot, result)
        return result

    def _record(self, slot: int, result: tuple) -> None:
        _, reward, terminated, truncated, info = result
        st = self.stats[slot]
        st.steps += 1
        self._episode_reward[slot] += float(reward)
        if info.get("reward_error"):
            st.reward_errors += 1
        if terminated or truncated:
            env_id = self._current[slot] or ""
            st.episodes += 1
            st.total_reward += self._episode_reward[slot]
            st.last_episode_reward = self._episode_reward[slot]
            st.episodes_by_env[env_id] = st.episodes_by_env.get(env_id, 0) + 1

    # ------------------------------------------------------- Gymnasium API
    async def areset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None,
    ) -> tuple[list[list[dict[str, Any]]], list[dict[str, Any]]]:
        """Reset every slot; ``seed`` (if given) seeds slot ``i`` with ``seed + i``."""
        results = await asyncio.gather(*(
            self.areset_at(i, seed=None if seed is None else seed + i, options=options)
            for i in range(self.num_envs)
        ))
        return [r[0] for r in results], [r[1] for r in results]

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Synchronous :meth:`areset`."""
        return run_sync(self.areset(seed=seed, options=options))

    async def _autoreset_step(self, slot: int, result: tuple) -> tuple:
        obs, reward, terminated, truncated, info = self._label(slot, result)
        if terminated or truncated:
            new_obs, reset_info = await self.areset_at(slot)
            info = {**reset_info, "final_obs": obs, "final_info": info}
            obs = new_obs
        return obs, reward, terminated, truncated, info

    def _label(self, slot: int, result: tuple) -> tuple:
        """A batch step's info names the slot's env id (mixtures mix domains)."""
        obs, reward, terminated, truncated, info = result
        return obs, reward, terminated, truncated, {"env_id": self._current[slot], **info}

    def _pack(self, results: list[tuple]) -> tuple:
        return (
            [r[0] for r in results],
            np.array([r[1] for r in results], dtype=np.float64),
            np.array([r[2] for r in results], dtype=bool),
            np.array([r[3] for r in results], dtype=bool),
            [r[4] for r in results],
        )

    def _check_actions(self, actions: Sequence[Any]) -> None:
        if len(actions) != self.num_envs:
            raise ValueError(f"expected {self.num_envs} actions, got {len(actions)}")
        for i, a in enumerate(actions):
            if a is not None and self._current[i] is None:
                raise RuntimeError(f"slot {i} was never reset")

    async def astep(self, actions: Sequence[Any]) -> tuple:
        """Step every slot whose action is not ``None`` concurrently, with
        same-step autoreset. Returns ``(obs, rewards, terminated, truncated, infos)``."""
        self._check_actions(actions)

        async def one(i: int, a: Any) -> tuple:
            if a is None:
                return [], 0.0, False, False, {"skipped": True}
            return await self._autoreset_step(i, await self.astep_at(i, a))

        return self._pack(list(await asyncio.gather(*(one(i, a) for i, a in enumerate(actions)))))

    def step(self, actions: Sequence[Any]) -> tuple:
        """Synchronous :meth:`astep`."""
        return run_sync(self.astep(actions))

    def episode_stats(self) -> list[dict[str, Any]]:
        """Per-slot counters as dicts."""
        return [s.to_dict() for s in self.stats]

    def close(self) -> None:
        for slot in range(self.num_envs):
            self.release(slot)
        for pool in self._idle.values():
            for env in pool:
                env.close()
        self._idle.clear()
        self.closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        mix = ", ".join(f"{k}: {v:.3g}" for k, v in self.mixture.items())
        return f"{type(self).__name__}({{{mix}}}, num_envs={self.num_envs}, seed={self.seed}, split={self.split!r})"


class AsyncVectorLLMEnv(VectorLLMEnv):
    """Slots step concurrently on one event loop (``env.astep``)."""


class SyncVectorLLMEnv(VectorLLMEnv):
    """Slots step one after another with ``env.step`` (simplest to debug)."""

    def step(self, actions: Sequence[Any]) -> tuple:
        self._check_actions(actions)
        results = []
        for i, a in enumerate(actions):
            if a is None:
                results.append(([], 0.0, False, False, {"skipped": True}))
                continue
            result = self._label(i, self.step_at(i, a))
            if result[2] or result[3]:
                obs, info = self.reset_at(i)
                result = (obs, result[1], result[2], result[3],
                          {**info, "final_obs": result[0], "final_info": result[4]})
            results.append(result)
        return self._pack(results)

    def reset_at(self, slot: int, *, env_id: str | None = None, seed: int | None = None,
                 options: dict[str, Any] | None = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Synchronous :meth:`areset_at` through the env's own ``reset``."""
        env_id = env_id or self.draw_env_id(slot)
        seed = self._draw_seed(slot) if seed is None else seed
        self.release(slot)
        made = None if self._idle.get(env_id) else self._make(env_id)
        return self._take(slot, env_id, made).reset(seed=seed, options=options)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        results = [self.reset_at(i, seed=None if seed is None else seed + i, options=options)
                   for i in range(self.num_envs)]
        return [r[0] for r in results], [r[1] for r in results]


def make_vec(
    ids_or_mixture: str | Sequence[str] | Mapping[str, float],
    num_envs: int = 1,
    *,
    seed: int = 0,
    split: str = "train",
    vectorization_mode: str = "async",
    env_kwargs: Mapping[str, Any] | None = None,
) -> VectorLLMEnv:
    """Vectorised environments over one id, a list of ids (equal weights) or
    an ``{id: weight}`` mixture; ``vectorization_mode`` is ``"async"`` (slots
    step concurrently with ``astep``) or ``"sync"``. ``env_kwargs`` go to
    every ``gym_llm.make`` (or ``{id: kwargs}`` per id). See the module doc
    for seeding and autoreset."""
    cls = {"async": AsyncVectorLLMEnv, "sync": SyncVectorLLMEnv}.get(vectorization_mode)
    if cls is None:
        raise ValueError(f"vectorization_mode must be 'async' or 'sync', got {vectorization_mode!r}")
    return cls(ids_or_mixture, num_envs, seed=seed, split=split, env_kwargs=env_kwargs)
