"""The environment base: SingleTurnEnv, the multi-turn bookkeeping, ToolEnv."""

import asyncio
import time
from typing import Literal

import pytest
from gymnasium.error import ResetNeeded
from gymnasium.utils.env_checker import check_env

from gym_llm import LLMEnv, SingleTurnEnv, Task, Tool, ToolEnv, Turn, tool
from gym_llm.envs.parsing import message_text
from gym_llm.envs.tools import function_schema, validate_arguments

TASKS = [Task(f"t{i}", f"Say {i}", str(i), split="heldout" if i % 4 == 0 else "train") for i in range(20)]


def exact(task, response):
    return float(response.strip() == task.answer)


def test_single_turn_episode_and_info_contract():
    env = SingleTurnEnv(TASKS, reward_fn=exact, seed=3)
    obs, info = env.reset()
    assert obs == [{"role": "user", "content": f"Say {env.task.answer}"}]
    assert {"task_id", "env_id", "domain", "split", "difficulty", "max_turns", "tools"} <= set(info)
    obs, reward, term, trunc, info = env.step(env.task.answer)
    assert (obs, reward, term, trunc) == ([], 1.0, True, False)
    assert "reward_components" in info
    # stepping an ended episode does not raise and earns nothing
    obs, reward, term, _, info = env.step("x")
    assert reward == 0.0 and term and "reason" in info


def test_seed_and_task_index_pick_the_same_task():
    a, b = SingleTurnEnv(TASKS, reward_fn=exact, seed=11), SingleTurnEnv(TASKS, reward_fn=exact, seed=11)
    assert [a.reset()[1]["task_id"] for _ in range(5)] == [b.reset()[1]["task_id"] for _ in range(5)]
    _, info = a.reset(options={"task_index": 2})
    assert info["task_id"] == a.task_set.get("train", 2).id
    held = SingleTurnEnv(TASKS, reward_fn=exact, split="heldout")
    assert {held.reset(seed=s)[1]["task_id"] for s in range(30)} <= {t.id for t in TASKS if t.split == "heldout"}


def test_attempts_feedback_and_discount():
    env = SingleTurnEnv(TASKS, reward_fn=exact, max_turns=3, attempt_discount=0.5, feedback="nope")
    env.reset(seed=0)
    obs, reward, term, trunc, _ = env.step("wrong")
    assert obs == [{"role": "user", "content": "nope"}] and reward == 0.0 and not term and not trunc
    obs, reward, term, _, info = env.step(env.task.answer)
    assert reward == 0.5 and term and info["attempts"] == 2
    env.reset(seed=0)
    for _ in range(2):
        env.step("wrong")
    _, reward, term, trunc, _ = env.step("wrong")
    assert reward == 0.0 and term


def test_bad_actions_never_raise():
    env = SingleTurnEnv(TASKS, reward_fn=exact)
    for action in ["", "x" * 200_000, b"\xff\x00binary", None, 12, {"role": "user", "content": 5},
                   {"content": [{"type": "text", "text": "hi"}]}, {"tool_calls": "bad"}, "x" * 2_000_000]:
        env.reset(seed=0)
        _, reward, term, _, info = env.step(action)
        assert reward == 0.0 and term
    env.reset(seed=0)
    _, _, _, _, info = env.step(b"\xff")
    assert "bytes" in info["reason"]


def test_crashing_reward_fn_sets_reward_error():
    env = SingleTurnEnv(TASKS, reward_fn=lambda t, r: 1 / 0)
    env.reset(seed=0)
    _, reward, term, _, info = env.step("1")
    assert reward == 0.0 and term and "ZeroDivisionError" in info["reward_error"]
    env = SingleTurnEnv(TASKS, reward_fn=lambda t, r: float("nan"))
    env.reset(seed=0)
    _, reward, _, _, info = env.step("1")
    assert reward == 0.0 and "NaN" in info["reward_error"]


def test_step_before_reset_is_an_error():
    with pytest.raises(ResetNeeded):
        SingleTurnEnv(TASKS, reward_fn=exact).step("1")


def test_check_env_passes():
    check_env(SingleTurnEnv(TASKS, reward_fn=exact))
    check_env(CountEnv(TASKS, max_turns=3))


class CountEnv(LLMEnv):
    """Multi-turn: the model must say 'done'; each other turn gets a user nudge."""

    def respond(self, message):
        if message_text(message).strip() == "done":
            return Turn(reward=1.0, done=True)
        return Turn(messages=[{"role": "user", "content": f"turn {self.turn + 1} over"}], reward=0.1)


def test_multi_turn_new_messages_only_and_truncation():
    env = CountEnv(TASKS, max_turns=3, system_prompt="be brief")
    obs, _ = env.reset(seed=0)
    assert obs[0] == {"role": "system", "content": "be brief"}
    obs, r, term, trunc, _ = env.step("hm")
    assert obs == [{"role": "user", "content": "turn 1 over"}] and r == 0.1 and not (term or trunc)
    env.step("hm")
    obs, r, term, trunc, info = env.step("hm")
    assert obs == [] and trunc and not term and "max_turns=3" in info["truncated_reason"]
    assert [m["role"] for m in env.messages] == ["system", "user", "assistant", "user", "assistant", "user", "assistant"]


class SlowEnv(LLMEnv):
    async def arespond(self, message):
        await asyncio.sleep(0.2)
        return Turn(reward=1.0, done=True)


def test_async_step_does_not_block_the_loop():
    async def main():
        envs = [SlowEnv(TASKS) for _ in range(10)]
        for e in envs:
            await e.areset(seed=0)
        t = time.perf_counter()
        results = await asyncio.gather(*(e.astep("x") for e in envs))
        return time.perf_counter() - t, results

    elapsed, results = asyncio.run(main())
    assert all(r[1] == 1.0 for r in results)
    assert elapsed < 1.0  # ten 0.2 s steps ran concurrently


def test_default_arespond_runs_sync_respond_off_the_loop():
    async def main():
        env = SingleTurnEnv(TASKS, reward_fn=lambda t, r: time.sleep(0.2) or 1.0)
        await env.areset(seed=0)
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        tick = asyncio.create_task(ticker())
        result = await env.astep("x")
        tick.cancel()
        return ticks, result

    ticks, result = asyncio.run(main())
    assert result[1] == 1.0 and ticks >= 5


# ------------------------------------------------------------------ tools
@tool
def add(a: int, b: int, note: str | None = None) -> int:
    """Add two integers.

    Args:
        a: First addend.
        b: Second addend,
            possibly large.
        note: Ignored.
    """
    return a + b


def unit_convert(value: float, unit: Literal["km", "mi"] = "km") -> str:
    """Convert a distance."""
    return f"{value} {unit}"


def test_function_schema_from_typed_function():
    assert add.schema["function"]["description"] == "Add two integers."
    params = add.parameters
    assert params["required"] == ["a", "b"]
    assert params["properties"]["b"] == {"type": "integer", "description": "Second addend, possibly large."}
    assert params["properties"]["note"]["type"] == "string"
    enum = function_schema(unit_convert)["function"]["parameters"]["properties"]["unit"]
    assert enum == {"enum": ["km", "mi"], "type": "string"}
    assert validate_arguments(params, {"a": 1, "b": 2}) == []
    assert validate_arguments(params, {"a": "1", "b": 2})[0].startswith("a:")
    assert "required" in validate_arguments(params, {"a": 1})[0]
    assert validate_arguments(params, {"a": 1, "b": 2, "c": 3})
    assert validate_arguments(params, {"a": True, "b": 2})  # a bool is not an integer here


class AdderEnv(ToolEnv):
    def episode_tools(self, task):
        return [add, Tool.from_function(unit_convert)]

    def score_episode(self, final_message):
        if final_message is None:
            return 0.0
        return float(message_text(final_message).strip() == "3")


def test_tool_env_calls_errors_and_final_answer():
    env = AdderEnv(TASKS, max_turns=4)
    _, info = env.reset(seed=0)
    assert [t["function"]["name"] for t in info["tools"]] == ["add", "unit_convert"]
    obs, r, term, trunc, _ = env.step('<tool_call>{"name": "add", "arguments": {"a": 1, "b": 2}}</tool_call>'
                                      '<tool_call>{"name": "nope", "arguments": {}}</tool_call>')
    assert obs[0] == {"role": "tool", "tool_call_id": "call_0", "name": "add", "content": "3"}
    assert "unknown tool" in obs[1]["content"] and not term
    obs, *_ = env.step({"role": "assistant", "content": None, "tool_calls": [
        {"id": "x1", "type": "function", "function": {"name": "add", "arguments": '{"a": "1", "b": 2}'}}]})
    assert obs[0]["tool_call_id"] == "x1" and "invalid arguments" in obs[0]["content"]
    obs, *_ = env.step("<tool_call>{broken</tool_call>")
    assert "invalid JSON" in obs[0]["content"]
    obs, r, term, trunc, _ = env.step("3")
    assert r == 1.0 and term and obs == []


def test_tool_env_truncation_is_scored():
    env = AdderEnv(TASKS, max_turns=1)
    env.reset(seed=0)
    obs, r, term, trunc, info = env.step('<tool_call>{"name": "add", "arguments": {"a": 1, "b": 2}}</tool_call>')
    assert trunc and not term and r == 0.0 and obs == [] and info["tool_calls"] == 1


def test_tool_env_sync_step_inside_running_loop():
    async def main():
        env = AdderEnv(TASKS, max_turns=2)
        env.reset(seed=0)
        return env.step("3")

    assert asyncio.run(main())[1] == 1.0


def test_sync_step_runs_an_async_only_env():
    env = SlowEnv(TASKS)
    env.reset(seed=0)
    _, reward, term, _, info = env.step("x")
    assert reward == 1.0 and term and "reward_error" not in info
    env.close()

    class Nothing(LLMEnv):
        pass

    env = Nothing(TASKS)
    env.reset(seed=0)
    _, reward, _, _, info = env.step("x")
    assert reward == 0.0 and "implements neither" in info["reward_error"]
