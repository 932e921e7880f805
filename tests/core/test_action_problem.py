"""The core's reason about a bad action survives beside the env's own reason,
and an over-long action keeps the end its env scores (issue 21, item 5)."""

from __future__ import annotations

import pytest

import gym_llm
from gym_llm import SingleTurnEnv, Task
from gym_llm.envs.core import MAX_ACTION_CHARS


def _env() -> SingleTurnEnv:
    tasks = [Task(id="t", prompt="Say hi", answer="hi")]

    def reward(task: Task, response: str) -> gym_llm.RewardResult:
        # an env that always explains its zero: the case whose reason used to win
        ok = task.answer in response
        return gym_llm.RewardResult(float(ok), {"correct": float(ok)}, {} if ok else {"reason": "no greeting"})

    return SingleTurnEnv(tasks, reward_fn=reward)


@pytest.mark.parametrize(("action", "problem"), [
    (None, "action was None"),
    ({"role": "user", "content": "hello"}, "action has role 'user'"),
    (b"\xffbytes", "action was bytes"),
])
def test_core_reason_leads_env_reason(action: object, problem: str) -> None:
    env = _env()
    env.reset(seed=0)
    _, reward, *_, info = env.step(action)
    assert reward == 0.0
    assert info["action_problem"].startswith(problem)
    assert info["reason"].startswith(problem) and info["reason"].endswith("no greeting")


def test_math_cut_keeps_the_final_box() -> None:
    env = gym_llm.make("math/Arithmetic-v0", seed=0)
    env.reset(seed=0)
    answer = env.unwrapped.task.answer
    action = "x" * (MAX_ACTION_CHARS + 10) + f" so \\boxed{{{answer}}}"
    _, reward, *_, info = env.step(action)
    assert reward == 1.0, info
    assert "cut to its last" in info["action_problem"] and "cut" in info["reason"]


def test_default_cut_keeps_the_head() -> None:
    env = _env()
    env.reset(seed=0)
    _, reward, *_, info = env.step("hi" + "x" * MAX_ACTION_CHARS)
    assert reward == 1.0 and "cut to its first" in info["action_problem"]
    assert len(env.unwrapped.messages[-1]["content"]) == MAX_ACTION_CHARS
