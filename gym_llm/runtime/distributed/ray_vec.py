"""A vector env whose instances live in Ray actors, spread over a cluster.

``gym_llm.make_vec(mixture, num_envs=256, seed=0, backend="ray", num_workers=8)``
returns a :class:`RayVectorLLMEnv`: the driver keeps everything that decides
*what* runs (the mixture, each slot's seeded draws of entry and reset seed,
the stats: inherited from :class:`~gym_llm.runtime.vector.VectorLLMEnv` unchanged),
and ``num_workers`` :class:`EnvWorker` actors hold the instances and run
``reset``/``step``. Each actor hosts many episodes at once (an async actor);
actors are placed with Ray's ``SPREAD`` strategy, ``worker_options`` (Ray
actor options: ``num_cpus``, ``resources``, ``memory``, ``runtime_env``)
size them. An environment that runs code (it takes a ``sandbox`` kwarg) runs
its jails on the node of its actor; a :class:`SandboxGate` actor per node caps
how many such steps run at once on that node (``sandbox_concurrency_per_node``,
default: the node's CPUs), however many actors share it.

Step deadline. A turn may run ``step_timeout_s`` on its worker, counted from
when it starts there (after any wait for its node's sandbox gate). A turn past
it is stopped and comes back scored: reward 0, the episode terminated,
``info["reason"]`` saying so and ``info["past_step_deadline"]`` set
(:attr:`FaultStats.turns_past_deadline` counts them). It is never retried or
lost: a re-run would replay the same turn, and a lost episode is dropped by the
trainer, so a policy could abstain from episodes it is failing by making them
slow. Whether a turn near the deadline makes it depends on wall time: there
the same actions may not give the same reward (tool envs keep their turns well
inside it: ``ToolEnv.turn_time_budget_s``). The driver waits for a
step as long as its worker answers health checks; an env that does not stop
at its deadline is scored the same way by the driver.

Faults. A worker that died (its process killed, its node removed), stopped
answering, or a reset past the deadline is a fault; the episode is then
re-run on a live worker from its task identity
(:class:`~gym_llm.envs.taskref.TaskRef`, then the actions it was given so far:
environments are deterministic in those, so the
result is what the lost worker would have returned) and the step answered
from there. A dead worker is replaced by a fresh actor (placed wherever the
cluster has room). After ``max_retries`` faults of one call the episode is
given up as :class:`~gym_llm.runtime.vector.EnvLostError`, which the rollout records
as the trajectory's error; no other episode is affected. An exception the
environment itself raises is not a fault: it is re-raised as raised, as the
local backend does. Counters: :attr:`RayVectorLLMEnv.fault_stats`.
"""

from __future__ import annotations

import asyncio
import importlib
import itertools
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import ray
from ray.exceptions import GetTimeoutError, RayError, RayTaskError
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from gym_llm.envs.core import LLMEnv
from gym_llm.envs.registry import spec as env_spec
from gym_llm.envs.taskref import TaskRef
from gym_llm.runtime.pool import EnvPool
from gym_llm.runtime.vector import EnvLostError, Mixable, StepResult, VectorLLMEnv

__all__ = ["RayVectorLLMEnv", "EnvWorker", "SandboxGate", "FaultStats", "ensure_ray"]

log = logging.getLogger(__name__)

#: How long a worker that missed a deadline has to answer a trivial call to count as alive.
HEALTH_TIMEOUT_S = 5.0

#: ``info`` key of a turn scored because it ran past the step deadline.
PAST_STEP_DEADLINE = "past_step_deadline"


def past_deadline_result(turn: int, task_id: Any, deadline_s: float) -> StepResult:
    """The step result of a turn stopped at the step deadline: the lowest reward,
    the episode terminated, with the reason."""
    info = {"reason": f"the turn ran past the step deadline (step_timeout_s={deadline_s:g}) and was stopped",
            "reward_components": {}, "turn": turn, "task_id": task_id, PAST_STEP_DEADLINE: True}
    return [], 0.0, True, False, info

#: Ray actor options of a worker unless ``worker_options`` says otherwise.
DEFAULT_WORKER_OPTIONS: dict[str, Any] = {"num_cpus": 1}


def ensure_ray(address: str | None = None) -> None:
    """Connect this process to Ray: ``address`` (``"auto"``: the cluster this
    machine belongs to, ``ray start --head`` or ``$RAY_ADDRESS``; or
    ``"host:port"``), or a new local Ray when ``None``. A process already
    connected stays as it is."""
    if ray.is_initialized():
        return
    if address:
        ray.init(address=address)
    else:
        ray.init(include_dashboard=False)


class SandboxGate:
    """A node's cap on concurrent sandboxed steps (a Ray actor pinned to the
    node). Slots are held per holder (a worker actor's id), so the driver can
    free a dead worker's slots (:meth:`forget`)."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self._sem = asyncio.Semaphore(capacity)
        self._held: dict[str, int] = {}
        self.active = 0
        self.peak = 0

    async def acquire(self, holder: str) -> None:
        await self._sem.acquire()
        self._held[holder] = self._held.get(holder, 0) + 1
        self.active += 1
        self.peak = max(self.peak, self.active)

    def release(self, holder: str) -> None:
        if self._held.get(holder, 0) > 0:
            self._held[holder] -= 1
            self.active -= 1
            self._sem.release()

    def forget(self, holder: str) -> None:
        for _ in range(self._held.pop(holder, 0)):
            self.active -= 1
            self._sem.release()

    def stats(self) -> dict[str, int]:
        return {"capacity": self.capacity, "active": self.active, "peak": self.peak}


class EnvWorker:
    """Hosts environment instances for a :class:`RayVectorLLMEnv` (a Ray
    async actor). Episodes are keyed by the driver; instances are pooled
    (:class:`~gym_llm.runtime.pool.EnvPool`) and reused across episodes, as locally.
    ``imports``: modules to import first (ones that register environments)."""

    def __init__(self, imports: Sequence[str] = ()):
        for module in imports:
            importlib.import_module(module)
        self._live: dict[str, tuple[TaskRef, LLMEnv, bool]] = {}  # episode key -> (task, env, sandboxed)
        self._turn_started: dict[str, float] = {}  # episode key -> monotonic time its running turn started
        self._pool = EnvPool()
        self._gate: Any = None
        self._holder = ray.get_runtime_context().get_actor_id()

    def node_id(self) -> str:
        return ray.get_runtime_context().get_node_id()

    def set_gate(self, gate: Any) -> None:
        self._gate = gate

    async def reset(self, key: str, task: TaskRef, sandboxed: bool) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        self.release(key)
        env = await self._pool.atake(task)
        self._live[key] = (task, env, sandboxed)
        return await task.areset(env)

    async def step(self, key: str, action: Any, deadline_s: float | None = None) -> StepResult:
        """``env.astep(action)`` of the episode; a turn that runs past
        ``deadline_s`` (the wait for the node's sandbox gate not counted) is
        stopped and comes back as :func:`past_deadline_result`."""
        if key not in self._live:
            raise RuntimeError(f"episode {key} is not running on this worker")
        _, env, sandboxed = self._live[key]
        if not (sandboxed and self._gate is not None):
            return await self._turn(key, env, action, deadline_s)
        acquired = self._gate.acquire.remote(self._holder)
        try:
            await acquired
        except asyncio.CancelledError:  # past the deadline while queued: free the slot once granted
            asyncio.ensure_future(self._release_when(acquired))
            raise
        try:
            return await self._turn(key, env, action, deadline_s)
        finally:
            self._gate.release.remote(self._holder)

    async def _turn(self, key: str, env: LLMEnv, action: Any, deadline_s: float | None) -> StepResult:
        if deadline_s is None:
            return await env.astep(action)
        self._turn_started[key] = time.monotonic()
        deadline = asyncio.timeout(deadline_s)
        try:
            async with deadline:
                return await env.astep(action)
        except TimeoutError:
            if not deadline.expired():
                raise
            turn, task_id = env.turn + 1, env.task.id if env.task else None
            self.discard(key)  # stopped mid-turn: its state is no episode's
            return past_deadline_result(turn, task_id, deadline_s)
        finally:
            self._turn_started.pop(key, None)

    def turn_running_s(self, key: str) -> float | None:
        """How long the episode's turn has been running here (``None``: none is,
        e.g. it waits for the sandbox gate); the driver's health check."""
        started = self._turn_started.get(key)
        return None if started is None else time.monotonic() - started

    async def _release_when(self, acquired: Any) -> None:
        await acquired
        self._gate.release.remote(self._holder)

    def release(self, key: str) -> None:
        """Return the episode's instance to its pool."""
        item = self._live.pop(key, None)
        if item is not None:
            self._pool.give(item[0], item[1])

    def discard(self, key: str) -> None:
        """Close the episode's instance (it failed or was abandoned)."""
        item = self._live.pop(key, None)
        if item is not None:
            self._pool.discard(item[1])

    def drop_pool(self, env_key: str) -> None:
        """Close the idle instances of ``env_key`` (their kwargs are out of date)."""
        self._pool.drop(env_key)

    def close(self) -> None:
        for key in list(self._live):
            self.discard(key)
        self._pool.close()


@dataclass
class FaultStats:
    """What went wrong under a :class:`RayVectorLLMEnv`, and what it cost."""

    worker_deaths: int = 0
    step_timeouts: int = 0
    episodes_rerun: int = 0
    episodes_lost: int = 0
    turns_past_deadline: int = 0  # scored 0, not faults: never rerun or lost


class _Fault(Exception):
    """A worker call failed for a reason that is not the environment's own."""


@dataclass
class _SlotEpisode:
    """The driver's record of a slot's episode: enough to re-run it."""

    key: str
    task: TaskRef
    sandboxed: bool
    task_id: Any
    worker: int
    actions: list[Any]
    handle: Any = None  # the actor it runs on (a replaced worker's index gets a new one)


class RayVectorLLMEnv(VectorLLMEnv):
    """:class:`~gym_llm.runtime.vector.VectorLLMEnv` whose instances run in Ray
    actors (see the module doc). The slot and batch APIs are the local ones;
    :meth:`env_at` is not available (the instance is remote).

    ``num_workers`` actors with ``worker_options``; ``address`` as
    :func:`ensure_ray`; ``sandbox_concurrency_per_node`` (``None``: the node's
    CPUs); ``step_timeout_s``, the deadline of a turn on its worker (past it:
    scored 0, see the module doc) and of every other worker call (``None``:
    none, a hung step then hangs); ``max_retries``, faults survived per call;
    ``imports``, modules each worker imports first."""

    def __init__(
        self,
        ids_or_mixture: Mixable,
        num_envs: int,
        *,
        seed: int = 0,
        split: str = "train",
        env_kwargs: Mapping[str, Any] | None = None,
        vectorization_mode: str | None = None,
        num_workers: int = 1,
        address: str | None = None,
        worker_options: Mapping[str, Any] | None = None,
        sandbox_concurrency_per_node: int | None = None,
        step_timeout_s: float | None = 120.0,
        max_retries: int = 2,
        imports: Sequence[str] = (),
    ):
        if num_workers < 1:
            raise ValueError(f"num_workers must be >= 1, got {num_workers}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        if step_timeout_s is not None and step_timeout_s <= 0:
            raise ValueError(f"step_timeout_s must be > 0 or None, got {step_timeout_s}")
        if sandbox_concurrency_per_node is not None and sandbox_concurrency_per_node < 1:
            raise ValueError(f"sandbox_concurrency_per_node must be >= 1, got {sandbox_concurrency_per_node}")
        super().__init__(ids_or_mixture, num_envs, seed=seed, split=split, env_kwargs=env_kwargs,
                         vectorization_mode=vectorization_mode)
        ensure_ray(address)
        self.num_workers = num_workers
        self.step_timeout_s = step_timeout_s
        self.max_retries = max_retries
        self.sandbox_concurrency_per_node = sandbox_concurrency_per_node
        self._imports = list(imports)
        self._worker_options = {**DEFAULT_WORKER_OPTIONS, **dict(worker_options or {})}
        self._actor_cls = ray.remote(EnvWorker)
        self._gate_cls = ray.remote(SandboxGate)
        self._gates: dict[str, Any] = {}  # node id -> its gate actor
        self._workers: list[Any] = [self._spawn() for _ in range(num_workers)]
        self._worker_node: list[str | None] = [None] * num_workers
        self._load = [0] * num_workers
        self._episodes: list[_SlotEpisode | None] = [None] * self.num_envs
        self._keys = itertools.count()
        self._sandboxed: dict[str, bool] = {}
        self.fault_stats = FaultStats()

    # ------------------------------------------------------------- workers
    def _spawn(self) -> Any:
        return self._actor_cls.options(scheduling_strategy="SPREAD", max_restarts=0,
                                       **self._worker_options).remote(self._imports)

    @staticmethod
    async def _result(ref: Any) -> Any:
        """A worker call's result, or :class:`_Fault`; the environment's own
        exceptions come back as raised."""
        try:
            return await ref
        except RayTaskError as e:
            raise e.as_instanceof_cause() from None
        except (RayError, GetTimeoutError) as e:
            raise _Fault(f"{type(e).__name__}: {e}") from None

    async def _await(self, ref: Any) -> Any:
        """:meth:`_result` within ``step_timeout_s`` (past it: a fault)."""
        if self.step_timeout_s is None:
            return await self._result(ref)
        try:
            return await asyncio.wait_for(self._result(ref), self.step_timeout_s)
        except TimeoutError:
            ray.cancel(ref)
            self.fault_stats.step_timeouts += 1
            raise _Fault(f"no answer within step_timeout_s={self.step_timeout_s}") from None

    async def _step(self, ep: _SlotEpisode, action: Any) -> StepResult:
        """One step of ``ep`` on its worker, which stops a turn at the deadline
        itself (:meth:`EnvWorker.step`). Waited for while the worker answers
        health checks (a step may first queue for its node's sandbox gate); a
        worker that does not is a fault; a turn that ran on past its deadline
        (an env that ignores cancellation) is scored here as the worker would."""
        limit = self.step_timeout_s
        ref = ep.handle.step.remote(ep.key, action, limit)
        if limit is None:
            return await self._result(ref)
        call = asyncio.ensure_future(self._result(ref))
        try:
            while not (await asyncio.wait({call}, timeout=limit + HEALTH_TIMEOUT_S))[0]:
                try:
                    running = await asyncio.wait_for(ep.handle.turn_running_s.remote(ep.key), HEALTH_TIMEOUT_S)
                except (TimeoutError, RayError):
                    self.fault_stats.step_timeouts += 1
                    raise _Fault(f"no answer within step_timeout_s={limit}, nor to a health check") from None
                if running is not None and running > limit + HEALTH_TIMEOUT_S:
                    ep.handle.discard.remote(ep.key)
                    return past_deadline_result(len(ep.actions) + 1, ep.task_id, limit)
            return call.result()
        finally:
            if not call.done():
                call.cancel()
                ray.cancel(ref)

    async def _ready(self, w: int) -> None:
        """Learn worker ``w``'s node (once) and give it its node's gate."""
        if self._worker_node[w] is not None:
            return
        node = await self._await(self._workers[w].node_id.remote())
        gate = self._gates.get(node)
        if gate is None:
            gate = self._gates[node] = self._gate_cls.options(
                num_cpus=0, max_concurrency=100_000,
                scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False),
            ).remote(self.sandbox_concurrency_per_node or self._node_cpus(node))
        await self._await(self._workers[w].set_gate.remote(gate))
        self._worker_node[w] = node

    @staticmethod
    def _node_cpus(node: str) -> int:
        for n in ray.nodes():
            if n["NodeID"] == node:
                return max(1, int(n["Resources"].get("CPU", 1)))
        return 1

    async def _healthy(self, w: int) -> bool:
        """Whether worker ``w`` answers a trivial call within a few seconds
        (after a timeout: a busy worker is kept, a dead one replaced)."""
        try:
            await asyncio.wait_for(self._workers[w].node_id.remote(), HEALTH_TIMEOUT_S)
            return True
        except (TimeoutError, RayError):
            return False

    def _replace(self, w: int) -> None:
        """Worker ``w`` is gone: free its gate slots, start a fresh actor."""
        self.fault_stats.worker_deaths += 1
        old, node = self._workers[w], self._worker_node[w]
        log.warning("env worker %d (node %s) lost; starting a replacement", w, node)
        if node in self._gates:
            self._gates[node].forget.remote(old._actor_id.hex())
        try:
            ray.kill(old)
        except Exception:
            pass  # already dead: nothing to stop
        self._workers[w], self._worker_node[w] = self._spawn(), None

    def _pick(self, avoid: int | None = None) -> int:
        """The least loaded worker, not ``avoid`` when there is another; one
        known to be running before a replacement still waiting for room."""
        order = sorted(range(self.num_workers),
                       key=lambda w: (w == avoid, self._worker_node[w] is None and any(self._worker_node),
                                      self._load[w], w))
        return order[0]

    @property
    def workers(self) -> list[Any]:
        """The worker actors' handles, in worker order (replacements included)."""
        return list(self._workers)

    def worker_nodes(self) -> list[str | None]:
        """The node id of each worker (``None`` until its first episode)."""
        return list(self._worker_node)

    def gate_stats(self) -> dict[str, dict[str, int]]:
        """Node id -> its sandbox gate's capacity, active and peak counts."""
        return {node: ray.get(g.stats.remote(), timeout=30) for node, g in self._gates.items()}

    # ------------------------------------------------------------ episodes
    def _is_sandboxed(self, env_id: str) -> bool:
        if env_id not in self._sandboxed:
            self._sandboxed[env_id] = env_spec(env_id).accepts("sandbox")
        return self._sandboxed[env_id]

    async def _start(self, ep: _SlotEpisode, w: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        self._load[w] += 1
        ep.worker, ep.handle = w, self._workers[w]
        await self._ready(w)
        return await self._await(self._workers[w].reset.remote(ep.key, ep.task, ep.sandboxed))

    async def _on_fault(self, ep: _SlotEpisode, fault: _Fault, attempt: int) -> int:
        """Handle a fault of ``ep``'s worker (returned, to avoid it next);
        raise :class:`EnvLostError` past the retry budget."""
        w, ep.worker = ep.worker, -1
        self._load[w] -= 1
        if self._workers[w] is ep.handle:  # not replaced yet (by another of its episodes' faults)
            if await self._healthy(w):
                ep.handle.discard.remote(ep.key)  # alive but too slow: abandon the episode there
            elif self._workers[w] is ep.handle:
                self._replace(w)
        if attempt > self.max_retries:
            self.fault_stats.episodes_lost += 1
            raise EnvLostError(f"episode {ep.task.env_id} seed={ep.task.seed} lost after {attempt} faults "
                               f"(max_retries={self.max_retries}); last: {fault}")
        self.fault_stats.episodes_rerun += 1
        return w

    async def _rerun(self, ep: _SlotEpisode, avoid: int) -> None:
        """Start ``ep`` again on another worker and replay its actions."""
        _, info = await self._start(ep, self._pick(avoid=avoid))
        if info.get("task_id") != ep.task_id:
            raise EnvLostError(f"re-run of {ep.task.env_id} seed={ep.task.seed} drew task {info.get('task_id')!r}, "
                               f"not {ep.task_id!r}: the environment is not deterministic in its seed")
        for turn, action in enumerate(ep.actions, 1):
            if PAST_STEP_DEADLINE in (await self._step(ep, action))[4]:  # it made the deadline the first time
                raise _Fault(f"replayed turn {turn} ran past step_timeout_s={self.step_timeout_s}")

    async def areset_at(
        self, slot: int, *, env_id: str | None = None, seed: int | None = None,
        options: dict[str, Any] | None = None, entry: str | None = None, task: TaskRef | None = None,
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        task = self._slot_task_of(slot, task, entry or env_id, seed, options)
        self.release(slot)
        ep = _SlotEpisode(key=f"e{next(self._keys)}", task=task, sandboxed=self._is_sandboxed(task.env_id),
                          task_id=None, worker=-1, actions=[])
        self._episodes[slot], self._slot_task[slot] = ep, task
        self._episode_reward[slot] = 0.0
        avoid = None
        for attempt in itertools.count(1):
            try:
                obs, info = await self._start(ep, self._pick(avoid=avoid))
                break
            except _Fault as fault:
                avoid = await self._on_fault(ep, fault, attempt)
        ep.task_id = info.get("task_id")
        return obs, info

    async def astep_at(self, slot: int, action: Any) -> StepResult:
        ep = self._episodes[slot]
        if ep is None:
            raise RuntimeError(f"slot {slot} has no episode; reset it first")
        t0 = asyncio.get_running_loop().time()
        try:
            avoid = None
            for attempt in itertools.count(1):
                try:
                    if avoid is not None:
                        await self._rerun(ep, avoid=avoid)
                    result = await self._step(ep, action)
                    break
                except _Fault as fault:
                    avoid = await self._on_fault(ep, fault, attempt)
        except Exception:
            self.stats[slot].failures += 1
            raise
        finally:
            self.stats[slot].step_time_s += asyncio.get_running_loop().time() - t0
        ep.actions.append(action)
        if PAST_STEP_DEADLINE in result[4]:
            self.fault_stats.turns_past_deadline += 1
        self._record(slot, result)
        return result

    def release(self, slot: int) -> None:
        ep, self._episodes[slot] = self._episodes[slot], None
        if ep is not None and ep.worker >= 0:
            self._load[ep.worker] -= 1
            ep.handle.release.remote(ep.key)

    def discard(self, slot: int) -> None:
        ep, self._episodes[slot] = self._episodes[slot], None
        if ep is not None and ep.worker >= 0:
            self._load[ep.worker] -= 1
            ep.handle.discard.remote(ep.key)

    def env_at(self, slot: int) -> LLMEnv:
        raise NotImplementedError("a Ray vector env's instances live in its workers; use astep_at / areset_at")

    @property
    def envs(self) -> list[LLMEnv | None]:
        raise NotImplementedError("a Ray vector env's instances live in its workers")

    def _drop_instances(self, env_key: str) -> None:
        for worker in self._workers:
            worker.drop_pool.remote(env_key)

    def close(self) -> None:
        if self.closed:
            return
        refs = [w.close.remote() for w in self._workers]
        try:
            ray.wait(refs, num_returns=len(refs), timeout=30)
        finally:
            for actor in [*self._workers, *self._gates.values()]:
                try:
                    ray.kill(actor)
                except Exception:
                    pass  # already gone
            self.closed = True

    def __repr__(self) -> str:
        return f"{super().__repr__()[:-1]}, backend='ray', num_workers={self.num_workers})"
