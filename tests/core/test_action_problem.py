"""The core's reason about a bad action survives beside the env's own reason,
and an over-long action keeps the end its env scores (issue 21, item 5); a turn's
OpenAI tool calls are bounded like its text (issue 37, item 2)."""

from __future__ import annotations

import json
import time

import pytest

import gym_llm
from gym_llm import SingleTurnEnv, Task
from gym_llm.envs.core import (
    MAX_ACTION_CHARS,
    MAX_TOOL_CALL_CHARS,
    MAX_TOOL_CALL_DEPTH,
    MAX_TOOL_CALLS,
    as_assistant_message,
)
from gym_llm.envs.parsing import parse_tool_calls


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


# ---------------------------------------------- bounds on a turn's tool calls (issue 37, item 2)
def _call(arguments: object, call_id: str = "a", name: str = "f") -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _nest(depth: int) -> object:
    value: object = 1
    for _ in range(depth):
        value = [value]
    return value


def test_tool_calls_are_copied_not_shared_with_the_caller() -> None:
    arguments = {"items": [1, 2], "where": {"city": "Oslo"}}
    msg, problem = as_assistant_message({"role": "assistant", "tool_calls": [_call(arguments)]})
    arguments["items"].append(3)
    arguments["where"]["city"] = "Rome"
    assert problem is None
    assert msg["tool_calls"] == [_call({"items": [1, 2], "where": {"city": "Oslo"}})]


def test_calls_past_the_count_are_cut_and_reported() -> None:
    calls = [_call("{}", f"c{i}") for i in range(MAX_TOOL_CALLS + 1)]
    msg, problem = as_assistant_message({"role": "assistant", "tool_calls": calls})
    assert msg["tool_calls"] == calls[:MAX_TOOL_CALLS]
    assert problem == f"{MAX_TOOL_CALLS + 1} tool calls cut to the first {MAX_TOOL_CALLS}"
    assert as_assistant_message({"role": "assistant", "tool_calls": calls[:MAX_TOOL_CALLS]})[1] is None


@pytest.mark.parametrize("big", [
    "x" * (MAX_TOOL_CALL_CHARS + 1),                     # one string argument
    json.dumps({"a": "x" * MAX_TOOL_CALL_CHARS}),        # the OpenAI JSON string
    {"a": [0] * (MAX_TOOL_CALL_CHARS + 1)},              # an object of many small values
    {f"k{i}": "v" * 1000 for i in range(1001)},          # many keys
], ids=["string", "json", "many-values", "many-keys"])
def test_a_call_past_the_size_bound_is_refused_in_its_place(big: object) -> None:
    start = time.perf_counter()
    msg, problem = as_assistant_message({"role": "assistant", "tool_calls": [_call(big, "big"), _call("{}", "ok")]})
    assert time.perf_counter() - start < 1.0
    assert problem == f"tool call 0: over the {MAX_TOOL_CALL_CHARS} characters a turn's tool calls may hold; refused"
    assert msg["tool_calls"][1] == _call("{}", "ok") and len(json.dumps(msg)) < 1000
    parsed = parse_tool_calls(msg)
    assert [c.id for c in parsed.calls] == ["ok"]
    assert parsed.errors == [f"tool call big (f): arguments refused: over the {MAX_TOOL_CALL_CHARS} "
                             "characters a turn's tool calls may hold"]


def test_the_size_bound_is_on_the_turns_calls_together() -> None:
    half = "x" * (MAX_TOOL_CALL_CHARS // 2)
    msg, problem = as_assistant_message(
        {"role": "assistant", "tool_calls": [_call(half, "a"), _call(half, "b"), _call("{}", "c")]})
    assert [c["id"] for c in msg["tool_calls"]] == ["a", "b", "c"]
    assert problem is not None and problem.startswith("tool call 1: over") and msg["tool_calls"][0]["function"]["arguments"] is half


@pytest.mark.parametrize("depth", [MAX_TOOL_CALL_DEPTH + 1, 990, 5000])
def test_arguments_nested_past_the_depth_bound_are_refused(depth: int) -> None:
    msg, problem = as_assistant_message({"role": "assistant", "tool_calls": [_call({"a": _nest(depth - 1)})]})
    assert problem == f"tool call 0: arguments nested too deeply (over {MAX_TOOL_CALL_DEPTH} levels); refused"
    assert "nested too deeply" in parse_tool_calls(msg).errors[0]


def test_arguments_at_the_depth_bound_are_kept() -> None:
    msg, problem = as_assistant_message({"role": "assistant",
                                         "tool_calls": [_call({"a": _nest(MAX_TOOL_CALL_DEPTH - 1)})]})
    assert problem is None and parse_tool_calls(msg).calls[0].arguments == {"a": _nest(MAX_TOOL_CALL_DEPTH - 1)}


def test_tool_calls_that_are_not_a_list_and_over_a_bound_are_dropped() -> None:
    msg, problem = as_assistant_message({"role": "assistant", "content": "hi", "tool_calls": "x" * (MAX_TOOL_CALL_CHARS + 1)})
    assert "tool_calls" not in msg and problem is not None and problem.endswith("; dropped")


def test_a_tool_call_problem_and_a_text_cut_are_both_reported() -> None:
    msg, problem = as_assistant_message({"role": "assistant", "content": "x" * (MAX_ACTION_CHARS + 1),
                                         "tool_calls": [_call("{}", f"c{i}") for i in range(MAX_TOOL_CALLS + 1)]})
    assert problem is not None and "cut to its first" in problem and "tool calls cut to the first" in problem
