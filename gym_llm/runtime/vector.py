"""Vectorised LLM environments: ``num_envs`` slots over one id, a list of ids,
an ``{id: weight}`` mixture or a :class:`~gym_llm.runtime.mixture.Mixture`.

Each slot runs one episode at a time. When an episode starts, the slot draws
its mixture entry and the reset seed with its own seeded generator (slot
``i`` uses ``numpy.random.default_rng([seed, i])``), so which domain and task
each episode gets is deterministic given ``seed`` however long steps take.
Environment instances are pooled (:class:`~gym_llm.runtime.pool.EnvPool`, per
env id, split and kwargs) and reused across slots and calls (an episode's
task depends only on its reset), so a long-lived vector env makes each
instance once: keep one per training run.

Two APIs, written once as coroutines; every synchronous method runs its
async twin through :func:`gym_llm_sandbox.aio.run_sync`:

* per slot, for the rollout engine: :meth:`VectorLLMEnv.areset_at` and
  :meth:`VectorLLMEnv.astep_at` (environments at different turns step
  concurrently);
* Gymnasium-style batches: :meth:`~VectorLLMEnv.reset` / :meth:`~VectorLLMEnv.step`
  and their async twins, with same-step autoreset: when an episode ends the
  slot is reset at once; the returned observation is the new prompt and the
  slot's info holds the new episode's reset info plus ``final_obs`` and
  ``final_info``. Observations and infos are lists (one entry per slot);
  rewards and flags are numpy arrays; each step info also names the slot's
  ``env_id``. An action of ``None`` leaves its slot untouched in that call.

``vectorization_mode="async"`` (default) steps the slots of a batch
concurrently; ``"sync"`` steps them one after another, each slot's step done
before the next one starts (simplest to debug; the same results).

What an episode is depends only on its task identity, a
:class:`~gym_llm.envs.taskref.TaskRef` (env id, split, make kwargs, reset seed,
task index): a slot's drawn episode gets its entry's (:meth:`VectorLLMEnv.task_ref`),
a planned one brings its own. Both backends build instances from it, so
``make_vec(..., backend="ray")`` (:mod:`gym_llm.runtime.distributed.ray_vec`: the
instances live in Ray actors) gives the same tasks and rewards for the same
seeds, and can re-run an episode lost with its worker. An episode it could
not finish comes back as :class:`EnvLostError`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np
from gym_llm_sandbox.aio import run_sync

from gym_llm.envs.core import LLMEnv
from gym_llm.envs.registry import load_attr
from gym_llm.envs.taskref import TaskRef
from gym_llm.runtime.mixture import SEED_BOUND, Mixture
from gym_llm.runtime.pool import EnvPool

__all__ = ["VectorLLMEnv", "SyncVectorLLMEnv", "AsyncVectorLLMEnv", "EnvStats", "EnvLostError",
           "is_env_lost", "make_vec", "normalize_mixture", "BACKENDS"]

Mixable = str | Sequence[str] | Mapping[str, float] | Mixture
StepResult = tuple[list[dict[str, Any]], float, bool, bool, dict[str, Any]]
VECTORIZATION_MODES = ("async", "sync")
#: ``make_vec`` backends besides ``"local"``: the class, as ``"module:attr"``, imported
#: when asked for (a backend subclasses :class:`VectorLLMEnv`, so it imports this
#: module, and it may import what the core does not need: Ray).
REMOTE_BACKENDS = {"ray": "gym_llm.runtime.distributed.ray_vec:RayVectorLLMEnv"}
BACKENDS = ("local", *REMOTE_BACKENDS)


class EnvLostError(RuntimeError):
    """An episode the vector env could not finish: its worker died, stopped
    answering or missed a reset's deadline on every attempt of the retry budget
    (a turn past the step deadline is not lost: it comes back scored 0). The rollout
    records it as the trajectory's ``error`` (:func:`is_env_lost` tells it
    from an environment's own failure); the trainer drops and counts it
    (``trajectories/env_lost``)."""


def is_env_lost(error: str | None) -> bool:
    """Whether a trajectory's ``error`` text is an :class:`EnvLostError`
    (the rollout engine writes ``"<type name>: <message>"``)."""
    return error is not None and error.startswith(f"{EnvLostError.__name__}:")


def normalize_mixture(ids_or_mixture: Mixable) -> dict[str, float]:
    """``"id"``, ``["id", ...]`` (equal weights) or ``{id: weight}`` as a dict
    of weights summing to 1 (:meth:`Mixture.of`, by env id). Unknown ids
    raise :class:`gym_llm.UnknownEnvError`; negative, non-finite or all-zero
    weights raise ``ValueError``."""
    return Mixture.of(ids_or_mixture).by_env_id()


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

    ``env_kwargs`` are passed to every ``make`` call, or, when every key is a
    mixture entry (an env id for plain mixtures) and every value a mapping,
    per entry. ``vectorization_mode``: ``"async"`` or ``"sync"`` (default:
    the class's).
    """

    vectorization_mode: str = "async"

    def __init__(
        self,
        ids_or_mixture: Mixable,
        num_envs: int,
        *,
        seed: int = 0,
        split: str = "train",
        env_kwargs: Mapping[str, Any] | None = None,
        vectorization_mode: str | None = None,
    ):
        if num_envs < 1:
            raise ValueError(f"num_envs must be >= 1, got {num_envs}")
        mode = vectorization_mode or type(self).vectorization_mode
        if mode not in VECTORIZATION_MODES:
            raise ValueError(f"vectorization_mode must be 'async' or 'sync', got {mode!r}")
        self.vectorization_mode = mode
        self.mixture = Mixture.of(ids_or_mixture)
        self.num_envs = int(num_envs)
        self.seed = int(seed)
        self.split = split
        kwargs = dict(env_kwargs or {})
        entries = self.mixture.entries
        if kwargs and all(k in entries for k in kwargs) and all(isinstance(v, Mapping) for v in kwargs.values()):
            self._kwargs_by_entry = {k: dict(v) for k, v in kwargs.items()}
            self._common_kwargs: dict[str, Any] = {}
        else:
            self._kwargs_by_entry, self._common_kwargs = {}, kwargs
        self._rngs = [np.random.default_rng([self.seed, i]) for i in range(self.num_envs)]
        self._slot_env: list[LLMEnv | None] = [None] * self.num_envs
        self._slot_task: list[TaskRef | None] = [None] * self.num_envs
        self._pool = EnvPool()
        self._episode_reward = [0.0] * self.num_envs
        self.stats = [EnvStats() for _ in range(self.num_envs)]
        self.closed = False

    @property
    def env_ids(self) -> list[str]:
        """The distinct environment ids of the mixture."""
        return self.mixture.env_ids

    # ------------------------------------------------------------ slot API
    def draw_env_id(self, slot: int) -> str:
        """Draw the env id of the slot's next episode from the mixture."""
        return self.mixture.env_id(self._draw_entry(slot))

    def _draw_entry(self, slot: int) -> str:
        return self.mixture.draw(self._rngs[slot])

    def _draw_seed(self, slot: int) -> int:
        return int(self._rngs[slot].integers(SEED_BOUND))

    def entry_kwargs(self, entry: str) -> dict[str, Any]:
        """The ``make`` kwargs of a mixture entry's instances."""
        return {**self._common_kwargs, **self._kwargs_by_entry.get(entry, {})}

    def set_entry_kwargs(self, entry: str, kwargs: Mapping[str, Any]) -> None:
        """Make the entry's future instances with ``kwargs`` (a curriculum's
        new difficulty); its pooled instances are closed, running episodes
        finish on the instance they started on."""
        old = self.task_ref(entry).env_key
        self._kwargs_by_entry[entry] = {**self._common_kwargs, **dict(kwargs)}
        self._drop_instances(old)

    def _drop_instances(self, env_key: str) -> None:
        """Close the idle instances of ``env_key`` (the Ray backend: on every worker)."""
        self._pool.drop(env_key)

    def task_ref(self, entry: str, seed: int | None = None, task_index: int | None = None) -> TaskRef:
        """The task of an episode of mixture ``entry`` (an env id of a plain
        mixture) reset with ``seed`` and ``task_index``: this vector env's
        split and the entry's current kwargs."""
        return TaskRef(self.mixture.env_id(entry), self.split, seed, task_index, self.entry_kwargs(entry))

    @property
    def instances_made(self) -> int:
        """How many environment instances this vector env has made."""
        return self._pool.made

    def release(self, slot: int) -> None:
        """Return the slot's instance to the pool (the rollout engine does
        this when an episode ends; a reset does it too)."""
        env, task = self._slot_env[slot], self._slot_task[slot]
        if env is not None and task is not None:
            self._pool.give(task, env)
        self._slot_env[slot] = None

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
            self._pool.discard(env)

    @property
    def envs(self) -> list[LLMEnv | None]:
        """Each slot's current environment (``None`` before its first reset)."""
        return list(self._slot_env)

    def current_env_id(self, slot: int) -> str | None:
        task = self._slot_task[slot]
        return None if task is None else task.env_id

    def _slot_task_of(self, slot: int, task: TaskRef | None, entry: str | None, seed: int | None,
                      options: Mapping[str, Any] | None) -> TaskRef:
        """The task of the slot's next episode: ``task`` (its seed drawn if
        ``None``), or one of mixture ``entry`` (drawn if ``None``)."""
        if task is None:
            entry = entry or self._draw_entry(slot)
            seed = self._draw_seed(slot) if seed is None else seed
            return self.task_ref(entry, seed, (options or {}).get("task_index"))
        return task if task.seed is not None else replace(task, seed=self._draw_seed(slot))

    async def areset_at(
        self, slot: int, *, env_id: str | None = None, seed: int | None = None,
        options: dict[str, Any] | None = None, entry: str | None = None, task: TaskRef | None = None,
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Start an episode in ``slot`` on ``task`` (a planned episode's), or on
        mixture ``entry`` (or the entry of ``env_id``; drawn from the mixture if
        both are ``None``) reset with ``seed`` (drawn from the slot's generator
        if ``None``) and ``options`` (``{"task_index": i}``)."""
        task = self._slot_task_of(slot, task, entry or env_id, seed, options)
        self.release(slot)
        env = await self._pool.atake(task)
        self._slot_env[slot], self._slot_task[slot] = env, task
        self._episode_reward[slot] = 0.0
        return await task.areset(env)

    async def astep_at(self, slot: int, action: Any) -> StepResult:
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

    def _record(self, slot: int, result: StepResult) -> None:
        _, reward, terminated, truncated, info = result
        st = self.stats[slot]
        st.steps += 1
        self._episode_reward[slot] += float(reward)
        if info.get("reward_error"):
            st.reward_errors += 1
        if terminated or truncated:
            env_id = self.current_env_id(slot) or ""
            st.episodes += 1
            st.total_reward += self._episode_reward[slot]
            st.last_episode_reward = self._episode_reward[slot]
            st.episodes_by_env[env_id] = st.episodes_by_env.get(env_id, 0) + 1

    # ------------------------------------------------------- Gymnasium API
    async def _each(self, per_slot: Callable[[int], Awaitable[Any]]) -> list[Any]:
        """``per_slot(i)`` for every slot: together (async) or one by one (sync)."""
        if self.vectorization_mode == "async":
            return list(await asyncio.gather(*(per_slot(i) for i in range(self.num_envs))))
        return [await per_slot(i) for i in range(self.num_envs)]

    async def areset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None,
    ) -> tuple[list[list[dict[str, Any]]], list[dict[str, Any]]]:
        """Reset every slot; ``seed`` (if given) seeds slot ``i`` with ``seed + i``."""
        results = await self._each(
            lambda i: self.areset_at(i, seed=None if seed is None else seed + i, options=options))
        return [r[0] for r in results], [r[1] for r in results]

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Synchronous :meth:`areset`."""
        return run_sync(self.areset(seed=seed, options=options))

    async def _step_and_autoreset(self, slot: int, action: Any) -> StepResult:
        if action is None:
            return [], 0.0, False, False, {"skipped": True}
        obs, reward, terminated, truncated, info = await self.astep_at(slot, action)
        info = {"env_id": self.current_env_id(slot), **info}  # mixtures mix domains
        if terminated or truncated:
            new_obs, reset_info = await self.areset_at(slot)
            info = {**reset_info, "final_obs": obs, "final_info": info}
            obs = new_obs
        return obs, reward, terminated, truncated, info

    async def astep(self, actions: Sequence[Any]) -> tuple:
        """Step every slot whose action is not ``None``, with same-step
        autoreset. Returns ``(obs, rewards, terminated, truncated, infos)``."""
        if len(actions) != self.num_envs:
            raise ValueError(f"expected {self.num_envs} actions, got {len(actions)}")
        for i, a in enumerate(actions):
            if a is not None and self._slot_task[i] is None:
                raise RuntimeError(f"slot {i} was never reset")
        results = await self._each(lambda i: self._step_and_autoreset(i, actions[i]))
        return (
            [r[0] for r in results],
            np.array([r[1] for r in results], dtype=np.float64),
            np.array([r[2] for r in results], dtype=bool),
            np.array([r[3] for r in results], dtype=bool),
            [r[4] for r in results],
        )

    def step(self, actions: Sequence[Any]) -> tuple:
        """Synchronous :meth:`astep`."""
        return run_sync(self.astep(actions))

    def episode_stats(self) -> list[dict[str, Any]]:
        """Per-slot counters as dicts."""
        return [s.to_dict() for s in self.stats]

    def close(self) -> None:
        for slot in range(self.num_envs):
            self.release(slot)
        self._pool.close()
        self.closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        mix = ", ".join(f"{k}: {v:.3g}" for k, v in self.mixture.probabilities.items())
        return (f"{type(self).__name__}({{{mix}}}, num_envs={self.num_envs}, seed={self.seed}, "
                f"split={self.split!r}, vectorization_mode={self.vectorization_mode!r})")


class AsyncVectorLLMEnv(VectorLLMEnv):
    """:class:`VectorLLMEnv` whose slots step concurrently."""

    vectorization_mode = "async"


class SyncVectorLLMEnv(VectorLLMEnv):
    """:class:`VectorLLMEnv` whose slots step one after another."""

    vectorization_mode = "sync"


def make_vec(
    ids_or_mixture: Mixable,
    num_envs: int = 1,
    *,
    seed: int = 0,
    split: str = "train",
    vectorization_mode: str = "async",
    env_kwargs: Mapping[str, Any] | None = None,
    backend: str = "local",
    num_workers: int | None = None,
    **ray_options: Any,
) -> VectorLLMEnv:
    """Vectorised environments over one id, a list of ids (equal weights),
    an ``{id: weight}`` mixture or a :class:`~gym_llm.runtime.mixture.Mixture`;
    ``vectorization_mode`` is ``"async"`` (slots step concurrently) or
    ``"sync"`` (one after another). ``env_kwargs`` go to every ``gym_llm.make``
    (or ``{entry: kwargs}`` per mixture entry). See the module doc for
    seeding and autoreset.

    ``backend="local"`` (default) makes the instances in this process;
    ``backend="ray"`` in ``num_workers`` Ray actors
    (:class:`gym_llm.runtime.distributed.ray_vec.RayVectorLLMEnv`, which takes the
    ``ray_options``: ``address``, ``worker_options``, ``sandbox_concurrency_per_node``,
    ``step_timeout_s``, ``max_retries``, ``imports``)."""
    cls = {"async": AsyncVectorLLMEnv, "sync": SyncVectorLLMEnv}.get(vectorization_mode)
    if cls is None:
        raise ValueError(f"vectorization_mode must be 'async' or 'sync', got {vectorization_mode!r}")
    if backend in REMOTE_BACKENDS:
        remote_cls = load_attr(REMOTE_BACKENDS[backend])
        return remote_cls(ids_or_mixture, num_envs, seed=seed, split=split, env_kwargs=env_kwargs,
                          vectorization_mode=vectorization_mode, num_workers=num_workers or 1, **ray_options)
    if backend != "local":
        raise ValueError(f"backend must be one of {' | '.join(BACKENDS)}, got {backend!r}")
    if num_workers is not None or ray_options:
        raise ValueError(f"num_workers and {sorted(ray_options) or 'Ray options'} need backend='ray'")
    return cls(ids_or_mixture, num_envs, seed=seed, split=split, env_kwargs=env_kwargs)
