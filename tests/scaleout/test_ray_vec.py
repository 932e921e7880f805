"""``make_vec(..., backend="ray")`` on a real local multi-node Ray cluster:
the same results as the local backend, actors on more than one node, and the
faults (an actor killed, a node removed) survived exactly or reported as lost,
never hung; a turn past the step deadline scored, never lost."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
import ray

import gym_llm
from gym_llm.runtime.distributed.ray_vec import FaultStats
from gym_llm.runtime.policies.base import Generation, GenerationRequest
from gym_llm.runtime.rollout import collect
from gym_llm.runtime.vector import VectorLLMEnv, is_env_lost

pytestmark = pytest.mark.slow

MIXTURE = {"math/Arithmetic-v0": 1.0, "code/PythonFunctions-v0": 1.0, "test/RayTurns-v0": 1.0}
IMPORTS = ["ray_test_envs"]


def action(step: int, slot: int) -> dict[str, str]:
    """A different, deterministic answer per step and slot (code, a boxed number, words)."""
    text = (f"```python\ndef solve(*args):\n    return {step + slot}\n```\n"
            f"The answer is \\boxed{{{step * 3 + slot}}} {'aeiou'[: 1 + (step + slot) % 5]} xyz")
    return {"role": "assistant", "content": text}


def play(vec: VectorLLMEnv, steps: int) -> list[Any]:
    """Reset, then ``steps`` batch steps (with autoreset): everything observed."""
    obs, infos = vec.reset(seed=100)
    seen: list[Any] = [obs, infos]
    for step in range(steps):
        seen.append(vec.step([action(step, i) for i in range(vec.num_envs)]))
    return [_plain(x) for x in seen]


def _plain(x: Any) -> Any:
    if isinstance(x, tuple | list):
        return [_plain(v) for v in x]
    if hasattr(x, "tolist"):
        return x.tolist()
    return x


def ray_vec(mixture: Any, num_envs: int, **kwargs: Any) -> VectorLLMEnv:
    kwargs.setdefault("num_workers", 2)
    return gym_llm.make_vec(mixture, num_envs=num_envs, seed=5, backend="ray", imports=IMPORTS, **kwargs)


def test_same_results_as_local_with_actors_on_two_nodes(ray_cluster):
    with gym_llm.make_vec(MIXTURE, num_envs=6, seed=5) as local:
        expected = play(local, 4)
    with ray_vec(MIXTURE, 6) as vec:
        got = play(vec, 4)
        nodes = vec.worker_nodes()
        gates = vec.gate_stats()
        faults = vec.fault_stats
    assert got == expected
    assert len(set(nodes)) == 2 and None not in nodes  # SPREAD: one worker per one-CPU node
    assert set(gates) == set(nodes)  # a sandbox gate on each node that runs envs
    assert all(g["capacity"] == 1 and g["active"] == 0 for g in gates.values())
    assert sum(g["peak"] for g in gates.values()) >= 1  # the code env's steps went through the gates
    assert faults.worker_deaths == faults.episodes_rerun == 0


async def _turns(vec: VectorLLMEnv, slots: range, fault: Any = None) -> list[Any]:
    """Three-turn episodes in ``slots``; ``fault()`` runs after the first turn."""
    out = [await asyncio.gather(*(vec.areset_at(i, entry="test/RayTurns-v0", seed=40 + i) for i in slots))]
    for turn in range(3):
        if turn == 1 and fault is not None:
            fault()
        out.append(await asyncio.gather(*(vec.astep_at(i, action(turn, i)) for i in slots)))
    return _plain(out)


def _local_turns(n: int) -> list[Any]:
    with gym_llm.make_vec("test/RayTurns-v0", num_envs=n, seed=5) as local:
        return asyncio.run(_turns(local, range(n)))


def test_a_killed_worker_s_episodes_are_rerun_exactly(ray_cluster):
    expected = _local_turns(4)
    with ray_vec("test/RayTurns-v0", 4) as vec:
        victim = vec.workers[0]
        got = asyncio.run(_turns(vec, range(4), fault=lambda: ray.kill(victim)))
        faults = vec.fault_stats
        assert vec.workers[0] is not victim  # replaced
    assert got == expected
    assert faults.worker_deaths == 1 and faults.episodes_rerun >= 1 and faults.episodes_lost == 0


def test_a_removed_node_s_episodes_are_rerun_exactly(ray_cluster):
    doomed = ray_cluster.add_node(num_cpus=1, resources={"env_slot": 1})
    ray_cluster.wait_for_nodes()
    expected = _local_turns(6)
    # three workers, room for two on the head: at least one lands on the doomed node
    with ray_vec("test/RayTurns-v0", 6, num_workers=3, step_timeout_s=20,
                 worker_options={"num_cpus": 0, "resources": {"env_slot": 1}}) as vec:
        t0 = time.monotonic()
        got = asyncio.run(_turns(vec, range(6), fault=lambda: ray_cluster.remove_node(doomed)))
        elapsed = time.monotonic() - t0
        faults = vec.fault_stats
    assert got == expected
    assert faults.worker_deaths >= 1 and faults.episodes_rerun >= 1 and faults.episodes_lost == 0
    assert elapsed < 60


def test_a_turn_past_its_deadline_is_scored_not_lost_and_nothing_else(ray_cluster):
    """A turn that outlives ``step_timeout_s`` comes back scored 0 with the reason,
    once, not retried (a replay would run it again) and not lost (the trainer drops
    lost episodes: a policy could abstain from episodes it is failing)."""
    async def run(vec: VectorLLMEnv) -> list[Any]:
        await asyncio.gather(*(vec.areset_at(i, entry="test/RayTurns-v0", seed=40 + i) for i in range(3)))
        # the steps' own faults: a worker slow to start on a loaded machine may miss a reset's 2 s deadline
        vec.fault_stats = FaultStats()
        hung = {"role": "assistant", "content": "SLEEP"}
        return await asyncio.gather(*(vec.astep_at(i, hung if i == 0 else action(0, i)) for i in range(3)),
                                    return_exceptions=True)

    with gym_llm.make_vec("test/RayTurns-v0", num_envs=3, seed=5) as local:
        async def first_turns() -> list[Any]:
            await asyncio.gather(*(local.areset_at(i, entry="test/RayTurns-v0", seed=40 + i) for i in range(3)))
            return [await local.astep_at(i, action(0, i)) for i in (1, 2)]
        expected = _plain(asyncio.run(first_turns()))
    with ray_vec("test/RayTurns-v0", 3, step_timeout_s=2, max_retries=1) as vec:
        t0 = time.monotonic()
        results = asyncio.run(run(vec))
        elapsed = time.monotonic() - t0
        faults = vec.fault_stats
        stats = vec.stats[0]
    obs, reward, terminated, truncated, info = results[0]
    assert (obs, reward, terminated, truncated) == ([], 0.0, True, False)
    assert "step deadline (step_timeout_s=2)" in info["reason"] and info["past_step_deadline"] is True
    assert info["turn"] == 1 and info["task_id"]
    assert _plain(results[1:]) == expected
    assert faults.turns_past_deadline == 1 and stats.episodes == 1 and stats.failures == 0
    assert faults.step_timeouts == faults.episodes_rerun == faults.episodes_lost == faults.worker_deaths == 0
    assert elapsed < 10  # the worker stopped the turn at 2 s, not after the 30 s sleep


def test_a_turn_that_ignores_its_deadline_is_scored_by_the_driver(ray_cluster):
    """An env that swallows the cancellation at the deadline keeps its worker busy
    but answering health checks: the driver scores the turn itself, no retry."""
    async def run(vec: VectorLLMEnv) -> Any:
        await vec.areset_at(0, entry="test/RayTurns-v0", seed=40)
        vec.fault_stats = FaultStats()  # the step's own faults
        return await vec.astep_at(0, {"role": "assistant", "content": "STUBBORN"})

    with ray_vec("test/RayTurns-v0", 1, num_workers=1, step_timeout_s=1) as vec:
        t0 = time.monotonic()
        obs, reward, terminated, truncated, info = asyncio.run(run(vec))
        elapsed = time.monotonic() - t0
        faults = vec.fault_stats
    assert (obs, reward, terminated, truncated) == ([], 0.0, True, False) and info["past_step_deadline"]
    assert info["turn"] == 1 and "step_timeout_s=1" in info["reason"]
    assert faults.turns_past_deadline == 1 and faults.episodes_rerun == faults.episodes_lost == 0
    assert elapsed < 25  # two rounds of deadline + health grace, not the env's 60 s


class Scripted:
    """A message-level policy answering every turn with ``text``."""

    tokenizer = None

    def __init__(self, text: str):
        self.text = text

    async def agenerate(self, request: GenerationRequest) -> Generation:
        return Generation([], None, self.text, "stop")

    def close(self) -> None:
        pass


def test_a_shell_turn_stays_in_its_budget_and_one_past_the_deadline_is_kept_by_the_rollout(ray_cluster):
    """tool/Shell-v0 on Ray workers, sandboxed on their nodes: sixteen ``sleep``
    commands in one turn end at the env's time budget (under the deadline: the env
    scores the episode as usual); without a budget the worker stops the turn at the
    deadline and the rollout gets a scored trajectory, not an env-lost one."""
    sleeps = "".join(f'<tool_call>{json.dumps({"name": "bash", "arguments": {"command": "sleep 1"}})}</tool_call>'
                     for _ in range(16))
    with ray_vec("test/BudgetShell-v0", 1, num_workers=1, step_timeout_s=4,
                 env_kwargs={"turn_time_budget_s": 1.5}) as vec:
        t0 = time.monotonic()
        trajs = collect(Scripted(sleeps), vec, num_groups=1)
        elapsed = time.monotonic() - t0
        faults = vec.fault_stats
    (budgeted,) = trajs
    assert budgeted.ok and budgeted.num_turns == 3 and budgeted.truncated  # max_turns=3 of 16 sleeps each
    spent = [m["content"] for m in budgeted.messages if m["role"] == "tool"]
    assert sum(c.startswith("Error: turn time budget spent") for c in spent) >= 2 * 12
    assert faults.turns_past_deadline == faults.episodes_lost == 0
    assert elapsed < 20  # three turns of 1.5 s, not three of 16 s
    with ray_vec("test/BudgetShell-v0", 1, num_workers=1, step_timeout_s=2,
                 env_kwargs={"turn_time_budget_s": None}) as vec:
        t0 = time.monotonic()
        (unbudgeted,) = collect(Scripted(sleeps), vec, num_groups=1)
        elapsed = time.monotonic() - t0
        faults = vec.fault_stats
    assert unbudgeted.ok and not is_env_lost(unbudgeted.error)  # what the trainer drops
    assert unbudgeted.num_turns == 1 and unbudgeted.terminated and unbudgeted.reward == 0.0
    assert faults.turns_past_deadline == 1 and faults.episodes_lost == 0  # once: not replayed
    assert elapsed < 15


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match="backend"):
        gym_llm.make_vec("test/RayTurns-v0", backend="slurm")
    with pytest.raises(ValueError, match="backend='ray'"):
        gym_llm.make_vec("test/RayTurns-v0", num_workers=4)
