"""The one task identity (gym_llm.envs.taskref.TaskRef) and the one env pool
(gym_llm.runtime.pool.EnvPool): which task of which env, and an instance
reset onto it."""

from __future__ import annotations

import asyncio

import pytest

import gym_llm
from gym_llm.envs.taskref import TaskColumnError, TaskRef
from gym_llm.runtime.pool import EnvPool

ARITH = "math/Arithmetic-v0"


def direct_task_id(ref: TaskRef) -> str:
    env = gym_llm.make(ref.env_id, split=ref.split, **ref.kwargs)
    try:
        return env.reset(seed=ref.seed, options=ref.options)[1]["task_id"]
    finally:
        env.close()


def test_refs_of_one_env_share_an_instance_and_each_reset_gives_its_own_task():
    pool = EnvPool()
    refs = [TaskRef(ARITH, "heldout", 1, 3), TaskRef(ARITH, "heldout", 2, 5), TaskRef(ARITH, "heldout", 7)]
    seen = [pool.on_task(ref, lambda env, info: info["task_id"]) for ref in refs]
    assert seen == [direct_task_id(ref) for ref in refs]
    assert pool.made == 1
    pool.close()


def test_another_split_or_kwargs_is_another_env():
    base = TaskRef(ARITH, "train", 0, 0, {"difficulty": 0.2, "max_turns": 2})
    assert base.env_key == TaskRef(ARITH, "train", 9, 4, {"max_turns": 2, "difficulty": 0.2}).env_key
    assert base.env_key != TaskRef(ARITH, "heldout", 0, 0, base.kwargs).env_key
    assert base.env_key != TaskRef(ARITH, "train", 0, 0, {"difficulty": 0.9, "max_turns": 2}).env_key
    pool = EnvPool()
    asyncio.run(pool.aon_task(base, _task_id))
    asyncio.run(pool.aon_task(TaskRef(ARITH, "train", 0, 0, {"difficulty": 0.9}), _task_id))
    assert pool.made == 2
    pool.drop(base.env_key)  # its idle instance closed: the next one is made anew
    asyncio.run(pool.aon_task(base, _task_id))
    assert pool.made == 3
    pool.close()


async def _task_id(env, info) -> str:
    return info["task_id"]


def test_an_env_whose_act_raised_is_closed_not_handed_on():
    pool, ref = EnvPool(), TaskRef(ARITH, seed=0)
    held = []

    def boom(env, info):
        held.append(env)
        raise RuntimeError("scorer crashed")

    with pytest.raises(RuntimeError, match="scorer crashed"):
        pool.on_task(ref, boom)
    assert pool.on_task(ref, lambda env, info: env) is not held[0]
    assert pool.made == 2
    pool.close()


def test_the_row_form_round_trips_and_keys_the_same_env():
    ref = TaskRef(ARITH, "heldout", 12, 3, {"max_turns": 2, "difficulty": 0.5})
    row = ref.to_row()
    assert row == {"env_id": ARITH, "split": "heldout", "seed": 12, "task_index": 3,
                   "env_kwargs": '{"difficulty":0.5,"max_turns":2}'}
    back = TaskRef.from_row(row)
    assert back == ref and back.env_key == TaskRef(ARITH, "heldout", 0, 0, dict(ref.kwargs)).env_key
    # the adapter's kwargs are defaults the row's own override key by key
    merged = TaskRef.from_row({**row, "env_kwargs": '{"difficulty":0.1}'}, env_kwargs={"max_turns": 4, "x": 1})
    assert dict(merged.kwargs) == {"difficulty": 0.1, "max_turns": 4, "x": 1}
    with pytest.raises(TaskColumnError, match="task_index"):
        TaskRef.from_row({k: v for k, v in row.items() if k != "task_index"})
    with pytest.raises(TypeError, match="JSON"):
        TaskRef(ARITH, kwargs={"f": object()}).to_row()
