"""Every adapter's one rule for a row naming a task the env does not have (a
``task_index`` out of range, ``env_kwargs`` the env rejects): the lowest
reward with a reason naming the task, never an exception in the peer's loop
(issue 38, item 6; on the old code verl, SkyRL and TRL raised)."""

from __future__ import annotations

import asyncio
import json
import re
import warnings

import pytest
import skyrl_gym

from gym_llm.apps.integrations import skyrl as gsk
from gym_llm.apps.integrations import trl as gtrl
from gym_llm.apps.integrations import verifiers as gvf
from gym_llm.apps.integrations import verl as gverl
from gym_llm.apps.integrations._tasks import LOWEST_REWARD, TaskRef, task_rows

ENV_ID = "math/Arithmetic-v0"
TOOL_ENV_ID = "math/PythonTool-v0"

#: (a bad change to a good row, what its reason must name)
BAD = [
    ({"task_index": 500}, r"task_index=500 .*IndexError"),
    ({"task_index": -1}, r"task_index=-1 .*IndexError"),
    ({"env_kwargs": '{"nope": 1}'}, r"\"nope\": 1.*unexpected keyword argument 'nope'"),
    ({"env_kwargs": '{"difficulty": "hard"}'}, r"\"difficulty\": \"hard\".*TypeError"),
]
IDS = ["index-500", "index-minus-1", "unknown-kwarg", "kwarg-of-wrong-type"]


def _row(env_id: str = ENV_ID, **change: object) -> dict:
    row = task_rows(env_id, "heldout", 1, seed=0)[0]
    return {**{k: row[k] for k in ("env_id", "split", "seed", "task_index", "env_kwargs")}, **change}


def _right_answer(row: dict) -> str:
    import gym_llm

    env = gym_llm.make(row["env_id"], split=row["split"])
    env.reset(seed=row["seed"], options={"task_index": row["task_index"]})
    answer = env.unwrapped.task.answer
    env.close()
    return f"\\boxed{{{answer}}}"


@pytest.mark.parametrize(("change", "reason"), BAD, ids=IDS)
def test_verl_compute_score(change, reason):
    out = gverl.compute_score(ENV_ID, "\\boxed{1}", None, _row(**change))
    assert out["score"] == LOWEST_REWARD and out["reason"] == out["reward_error"]
    assert out["reward_error"].startswith("no such task: math/Arithmetic-v0")
    assert re.search(reason, out["reward_error"])


@pytest.mark.parametrize(("change", "reason"), BAD, ids=IDS)
def test_trl_reward_function(change, reason):
    row = _row(**change)
    logged = {}
    out = gtrl.reward_function(ENV_ID)(["p"], ["\\boxed{1}"], **{k: [v] for k, v in row.items()},
                                       log_extra=lambda name, values: logged.update({name: values}))
    assert out == [None]  # TRL leaves the sample out
    assert re.search(reason, logged["gym_llm_reason"][0])


@pytest.mark.parametrize(("change", "reason"), BAD, ids=IDS)
def test_trl_environment_factory_reset(change, reason):
    instance = gtrl.environment_factory(TOOL_ENV_ID)()
    instance.reset(**_row(TOOL_ENV_ID, **change))
    assert re.search(reason, instance.score.reward_error)
    assert re.search(reason, instance.python(code="print(1)"))  # the tool answers the error
    assert instance.get_reward() == LOWEST_REWARD
    instance.reset(**_row(TOOL_ENV_ID))  # the next good row plays as usual
    assert "1" in instance.python(code="print(1)") and instance.score is None


@pytest.mark.parametrize(("change", "reason"), BAD, ids=IDS)
def test_skyrl_episode(change, reason):
    row = _row(**change)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env = skyrl_gym.make(gsk.skyrl_name(ENV_ID), env_config={}, extras=row)
        _, info = env.init([{"role": "user", "content": "?"}])
        out = env.step("\\boxed{1}")
    assert out["reward"] == LOWEST_REWARD and out["done"]
    assert re.search(reason, out["metadata"]["reward_error"]) and info["reward_error"]
    assert any("no such task" in str(w.message) for w in caught)
    env.close()


@pytest.mark.parametrize(("change", "reason"), BAD, ids=IDS)
def test_verifiers_play(change, reason):
    row = _row(**change)
    ref = TaskRef(row["env_id"], row["split"], row["seed"], row["task_index"], json.loads(row["env_kwargs"]))

    async def reply(new):
        return {"role": "assistant", "content": "\\boxed{1}"}

    outcome = asyncio.run(gvf.play(ref, reply))
    assert outcome["reward"] == LOWEST_REWARD and outcome["turns"] == 0
    assert re.search(reason, outcome["reward_error"])


def test_a_good_row_after_bad_ones_scores_as_env_step():
    for change, _ in BAD:
        gverl.compute_score(ENV_ID, "x", None, _row(**change))
    row = _row()
    out = gverl.compute_score(ENV_ID, _right_answer(row), None, row)
    assert out == {"score": 1.0, "reason": out["reason"], "reward_error": ""}
