"""math/PythonTool-v0 with the real sandbox (nsjail)."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from gym_llm_sandbox import Sandbox, SandboxError

import gym_llm


def _isolation_ok() -> bool:
    try:
        Sandbox()  # runs one real jail to check
    except SandboxError:
        return False
    return True


pytestmark = pytest.mark.skipif(not _isolation_ok(), reason="nsjail cannot isolate on this machine")


def call(code: str) -> str:
    return "<tool_call>" + json.dumps({"name": "python", "arguments": {"code": code}}) + "</tool_call>"


def test_compute_with_the_tool_then_answer():
    env = gym_llm.make("math/PythonTool-v0", seed=0)
    obs, info = env.reset(seed=0)
    task = env.unwrapped.task
    assert [t["function"]["name"] for t in info["tools"]] == ["python"]
    assert "python" in obs[0]["content"] and "\\boxed{}" in obs[0]["content"]
    assert not re.search(r"\d", obs[0]["content"])  # no digit, so never an answer
    expression = task.prompt.removeprefix("Compute ").removesuffix(".").replace("×", "*").replace("÷", "/")
    obs, reward, term, trunc, step_info = env.step(call(f"from fractions import Fraction\nprint({expression})"))
    assert (reward, term, trunc) == (0.0, False, False)
    assert obs[0]["role"] == "tool" and obs[0]["name"] == "python"
    printed = obs[0]["content"].strip()
    assert printed.lstrip("-").replace(".", "", 1).isdigit(), printed
    _, reward, term, _, step_info = env.step(f"The result is \\boxed{{{printed}}}.")
    assert (reward, term) == (1.0, True), (task.answer, printed, step_info)


def test_sympy_is_importable_in_the_jail():
    env = gym_llm.make("math/PythonTool-v0", source="algebra", difficulty=0.5)
    env.reset(seed=0)
    obs, *_ = env.step(call("import sympy\nx = sympy.symbols('x')\nprint(sympy.factor(x**2 - 1))"))
    assert obs[0]["content"].strip() == "(x - 1)*(x + 1)"


def test_tool_failures_come_back_as_tool_messages():
    env = gym_llm.make("math/PythonTool-v0", sandbox={"wall_time_s": 1}, max_output_chars=300)
    env.reset(seed=0)
    obs, *_ = env.step(call("while True:\n    pass"))
    assert "time limit" in obs[0]["content"]
    obs, *_ = env.step(call("print('x' * 100000)"))
    assert len(obs[0]["content"]) < 400 and "characters cut" in obs[0]["content"]
    obs, *_ = env.step(call("1 / 0"))
    assert "ZeroDivisionError" in obs[0]["content"]
    obs, *_ = env.step('<tool_call>{"name": "python", "arguments": {}}</tool_call>')
    assert obs[0]["content"].startswith("Error: invalid arguments")


def test_the_jail_cannot_see_the_host():
    env = gym_llm.make("math/PythonTool-v0")
    env.reset(seed=0)
    obs, *_ = env.step(call("import os\nprint(os.path.exists('/work/main'), os.path.exists('/root'))"))
    assert obs[0]["content"].strip() == "False False"


def test_turns_running_out_while_calling_tools():
    env = gym_llm.make("math/PythonTool-v0", max_turns=2)
    env.reset(seed=0)
    env.step(call("print(1)"))
    _, reward, term, trunc, info = env.step(call("print(2)"))
    assert reward == 0.0 and trunc and not term and "no final answer" in info["reason"]


def test_attempts_within_the_turn_budget():
    env = gym_llm.make("math/PythonTool-v0", max_attempts=2)
    env.reset(seed=1)
    answer = env.unwrapped.task.answer
    obs, reward, term, _, _ = env.step("\\boxed{0.123}")
    assert (reward, term) == (0.0, False) and obs == [{"role": "user", "content": "Incorrect, try again."}]
    _, reward, term, _, info = env.step(f"\\boxed{{{answer}}}")
    assert (reward, term, info["attempts"]) == (0.5, True, 2)


def test_openai_tool_calls_and_async_steps():
    env = gym_llm.make("math/PythonTool-v0")

    async def episode():
        await env.unwrapped.areset(seed=0)
        message = {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "python", "arguments": json.dumps({"code": "print(6 * 7)"})}}]}
        return await env.unwrapped.astep(message)

    obs, *_ = asyncio.run(episode())
    assert obs == [{"role": "tool", "tool_call_id": "c1", "name": "python", "content": "42"}]


def test_a_sandbox_that_cannot_run_is_a_reward_error():
    env = gym_llm.make("math/PythonTool-v0", sandbox={"extra_ro_mounts": ["/nonexistent/gym-llm-math"]})
    env.reset(seed=0)
    _, reward, term, _, info = env.step(call("print(1)"))
    assert reward == 0.0 and term and "sandbox" in info["reward_error"]


def test_dataset_source():
    env = gym_llm.make("math/PythonTool-v0", source="dataset", split="heldout")
    env.reset(options={"task_index": 0})
    task = env.unwrapped.task
    assert task.split == "heldout" and env.step(f"\\boxed{{{task.answer}}}")[1] == 1.0
    with pytest.raises(ValueError, match="unknown source"):
        gym_llm.make("math/PythonTool-v0", source="geometry")
