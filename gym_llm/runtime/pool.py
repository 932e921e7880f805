"""The one pool of environment instances, and the one way to play on a task.

Making an env can be costly (task sets loaded, a sandbox or a verifier's
workers started); resetting one is cheap by contract. :class:`EnvPool` keeps
idle instances per :attr:`~gym_llm.envs.taskref.TaskRef.env_key` (id, split,
kwargs), so an instance made for one task serves every later task of the
same env. Vector envs (each slot holds an instance for an episode), Ray
workers, the strict grader and the adapters for other trainers all pool
through it.

:meth:`EnvPool.on_task` / :meth:`EnvPool.aon_task` are "reset an env onto a
task, then score it": they take an instance, reset it onto the task, call
``act(env, reset_info)`` (step a completion, play an episode, ask the strict
grader) and give the instance back, or close it if anything raised (its
state is unknown).

Thread-safe and async-safe: each taker holds its instance alone until it
gives it back.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from gym_llm.envs.core import LLMEnv
from gym_llm.envs.taskref import TaskRef

__all__ = ["EnvPool"]

T = TypeVar("T")
#: What an action on a task gets: the env reset onto it, and the reset's info.
Act = Callable[[LLMEnv, dict[str, Any]], T]


class EnvPool:
    """Idle env instances per ``TaskRef.env_key`` (see the module doc).
    :attr:`made` counts the instances it made."""

    def __init__(self) -> None:
        self._idle: dict[str, list[LLMEnv]] = {}
        self._lock = threading.Lock()
        self.made = 0

    def _pop(self, task: TaskRef) -> LLMEnv | None:
        with self._lock:
            idle = self._idle.get(task.env_key)
            return idle.pop() if idle else None

    def _make(self, task: TaskRef) -> LLMEnv:
        env = task.make()
        with self._lock:
            self.made += 1
        return env

    def take(self, task: TaskRef) -> LLMEnv:
        """An idle instance for ``task``'s env (made on a miss), not yet reset;
        hand it back with :meth:`give` or drop it with :meth:`discard`."""
        env = self._pop(task)
        return env if env is not None else self._make(task)

    async def atake(self, task: TaskRef) -> LLMEnv:
        """:meth:`take`, making on a miss in a worker thread (making may load
        data: the event loop stays free)."""
        env = self._pop(task)
        return env if env is not None else await asyncio.to_thread(self._make, task)

    def give(self, task: TaskRef, env: LLMEnv) -> None:
        """Return ``env`` (taken for ``task``) to the idle instances."""
        with self._lock:
            self._idle.setdefault(task.env_key, []).append(env)

    @staticmethod
    def discard(env: LLMEnv) -> None:
        """Close ``env`` instead of reusing it (it failed, or its state is unknown)."""
        try:
            env.close()
        except Exception:
            pass  # a broken env's close must not mask the failure being handled

    def drop(self, env_key: str) -> None:
        """Close the idle instances of ``env_key`` (their kwargs are out of date)."""
        with self._lock:
            idle = self._idle.pop(env_key, [])
        for env in idle:
            env.close()

    def close(self) -> None:
        """Close every idle instance."""
        with self._lock:
            idle, self._idle = self._idle, {}
        for envs in idle.values():
            for env in envs:
                env.close()

    def on_task(self, task: TaskRef, act: Act[T]) -> T:
        """``act(env, info)`` on an instance reset onto ``task`` (see the module doc)."""
        env = self.take(task)
        try:
            result = act(env, task.reset(env)[1])
        except BaseException:
            self.discard(env)
            raise
        self.give(task, env)
        return result

    async def aon_task(self, task: TaskRef, act: Act[Awaitable[T]]) -> T:
        """Async :meth:`on_task`: ``act`` is awaited, the reset is ``areset``."""
        env = await self.atake(task)
        try:
            result = await act(env, (await task.areset(env))[1])
        except BaseException:
            self.discard(env)
            raise
        self.give(task, env)
        return result
