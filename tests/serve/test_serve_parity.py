"""OpenEnv's own client (``openenv.core.GenericEnvClient``) against ``gym-llm
serve``: the same seed and task index give the same prompt, the same env
messages and the same rewards as a local ``env.step``, on math, code
(sandboxed tests) and multi-turn tool envs (a stateful world, a sandboxed
shell), also where the model's output puts text that is not valid UTF-8 in the
info (an error message holding lone surrogates, a file name that is not UTF-8):
that text arrives with U+FFFD in their place, never as a protocol error."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest
from conftest import code_server, math_server  # noqa: F401  (fixtures)
from openenv.core import GenericEnvClient

import gym_llm

#: Info fields that are measurements, not outcomes: they differ run to run.
TIMINGS = ("timings", "wall_time_s", "verify_s")


def _outcome(info: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in info.items() if k not in TIMINGS}


def _through_the_wire(value: Any) -> Any:
    """A local value as the server's client reads it: through JSON, each
    surrogate (text that was bytes, not UTF-8) as U+FFFD."""
    return json.loads(re.sub("[\ud800-\udfff]", "\ufffd", json.dumps(value, ensure_ascii=False)))


def _openai_calls(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"id": f"call_{i}", "type": "function",
         "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])}}
        for i, c in enumerate(calls)
    ]


def _play_local(env_id: str, seed: int, task_index: int, turns: list[dict[str, Any]], **kwargs):
    env = gym_llm.make(env_id, **kwargs)
    try:
        prompt, info = env.reset(seed=seed, options={"task_index": task_index})
        steps = []
        for turn in turns:
            action = {"role": "assistant", "content": turn.get("message"), **(
                {"tool_calls": turn["tool_calls"]} if turn.get("tool_calls") else {})}
            messages, reward, term, trunc, step_info = env.step(action)
            steps.append((messages, reward, term or trunc, _outcome(step_info)))
            if term or trunc:
                break
        return prompt, info, steps
    finally:
        env.close()


async def _play_remote(url: str, seed: int, task_index: int, turns: list[dict[str, Any]]):
    async with GenericEnvClient(base_url=url) as client:
        reset = await client.reset(seed=seed, task_index=task_index)
        steps = []
        for turn in turns:
            result = await client.step(turn)
            obs = result.observation
            steps.append((obs["messages"], result.reward, result.done, _outcome(obs["info"])))
            if result.done:
                break
        return reset.observation["messages"], reset.observation["info"], steps


def _assert_same(env_id, url, seed, task_index, turns, **kwargs):
    local = _play_local(env_id, seed, task_index, turns, **kwargs)
    remote = asyncio.run(_play_remote(url, seed, task_index, turns))
    assert remote[0] == local[0]  # the prompt
    assert remote[1] == _through_the_wire(local[1])  # reset info
    assert len(remote[2]) == len(local[2])
    for (r_msgs, r_reward, r_done, r_info), (l_msgs, l_reward, l_done, l_info) in zip(remote[2], local[2], strict=True):
        assert r_msgs == l_msgs
        assert r_reward == l_reward and r_done == l_done
        assert r_info == _through_the_wire(l_info)
    return [step[1] for step in local[2]]


def _surrogates(value: Any) -> bool:
    return re.search("[\ud800-\udfff]", json.dumps(value, ensure_ascii=False)) is not None


@pytest.mark.parametrize("task_index", [0, 3, 11])
def test_math_rewards_equal_local(math_server, task_index):  # noqa: F811
    answer = gym_llm.make("math/Arithmetic-v0").unwrapped.task_set.get("train", task_index).answer
    right = _assert_same("math/Arithmetic-v0", math_server.url, 7, task_index,
                         [{"message": f"So it is \\boxed{{{answer}}}."}])
    wrong = _assert_same("math/Arithmetic-v0", math_server.url, 7, task_index, [{"message": "\\boxed{x}"}])
    assert right == [1.0] and wrong == [0.0]


@pytest.mark.parametrize("task_index", [1, 4])
def test_code_rewards_equal_local(code_server, task_index):  # noqa: F811
    task = gym_llm.make("code/PythonFunctions-v0").unwrapped.task_set.get("train", task_index)
    right = _assert_same("code/PythonFunctions-v0", code_server.url, 0, task_index,
                         [{"message": f"```python\n{task.answer}\n```"}])
    broken = f"```python\ndef {task.metadata['entry_point']}(*args):\n    return None\n```"
    wrong = _assert_same("code/PythonFunctions-v0", code_server.url, 0, task_index, [{"message": broken}])
    assert right == [1.0] and wrong[0] < 1.0


def test_multi_turn_tool_world_equals_local(serve):
    server = serve("tool/Orders-v0", "difficulty=1.0")
    env = gym_llm.make("tool/Orders-v0", difficulty=1.0).unwrapped
    for task_index in (0, 5):
        task = env.task_set.get("train", task_index)
        final = "All done: " + ", ".join(task.metadata["required_outputs"]) + "."
        turns = [{"tool_calls": _openai_calls([call])} for call in task.answer] + [{"message": final}]
        rewards = _assert_same("tool/Orders-v0", server.url, 3, task_index, turns, difficulty=1.0)
        assert len(rewards) == len(task.answer) + 1 and sum(rewards) == 1.0
        # a bad call is an error message from the world, the same both ways
        bad = [{"tool_calls": _openai_calls([{"name": "no_such_tool", "arguments": {}}])}, {"message": "Bye."}]
        assert sum(_assert_same("tool/Orders-v0", server.url, 3, task_index, bad, difficulty=1.0)) == 0.0


def test_multi_turn_sandboxed_shell_equals_local(serve):
    server = serve("tool/Shell-v0", "difficulty=0.5")
    env = gym_llm.make("tool/Shell-v0", difficulty=0.5).unwrapped
    task = env.task_set.get("train", 2)
    turns = [{"tool_calls": _openai_calls([call])} for call in task.answer]
    turns += [{"tool_calls": _openai_calls([{"name": "bash", "arguments": {"command": "ls -la ."}}])},
              {"message": "Done."}]
    rewards = _assert_same("tool/Shell-v0", server.url, 1, 2, turns, difficulty=0.5)
    assert sum(rewards) == 1.0
    assert server.wait_sessions(0) == 0
    assert server.session_dirs() == []  # the episode's work dir died with its session


def test_openenv_sync_client_and_its_view_of_errors(serve):
    server = serve("math/Arithmetic-v0", "--max-sessions", "1")
    answer = gym_llm.make("math/Arithmetic-v0").unwrapped.task_set.get("train", 2).answer
    with GenericEnvClient(base_url=server.url).sync() as client:
        reset = client.reset(seed=0, task_index=2)
        assert reset.observation["info"]["task_index"] == 2 and reset.done is False
        with pytest.raises(RuntimeError, match="VALIDATION_ERROR"):
            client.step({"message": ["not", "text"]})
        assert client.step({"message": f"\\boxed{{{answer}}}"}).reward == 1.0
        assert client.state()["step_count"] == 1
        # the one session is taken: OpenEnv's client sees the refusal as an error
        with GenericEnvClient(base_url=server.url).sync() as second, \
                pytest.raises(RuntimeError, match="CAPACITY_REACHED"):
            second.reset()
    assert server.wait_sessions(0) == 0


#: Code answers whose error text holds lone surrogates, which UTF-8 cannot encode.
SURROGATE_ERRORS = {
    "low surrogate": "raise ValueError('\\udcff')",
    "high surrogate": "raise ValueError('\\ud800')",
    "bytes kept by surrogateescape": "raise Exception(b'\\xff\\xfe'.decode('utf-8', 'surrogateescape'))",
    "many, beside text": "raise RuntimeError('\\ud83d' + '\\udcff' * 500 + 'x' * 5000)",
}


@pytest.mark.parametrize("body", SURROGATE_ERRORS.values(), ids=SURROGATE_ERRORS.keys())
def test_a_code_error_holding_lone_surrogates_is_scored_as_locally(code_server, body):  # noqa: F811
    name = gym_llm.make("code/PythonFunctions-v0").unwrapped.task_set.get("train", 1).metadata["entry_point"]
    turns = [{"message": f"```python\ndef {name}(*args):\n    {body}\n```"}]
    local = _play_local("code/PythonFunctions-v0", 0, 1, turns)
    assert _surrogates(local[2][0][3]), "the attack no longer puts surrogates in the info"
    assert _assert_same("code/PythonFunctions-v0", code_server.url, 0, 1, turns) == [0.0]


def test_a_shell_file_named_not_utf8_is_scored_as_locally(serve):
    server = serve("tool/Shell-v0")
    bash = [{"name": "bash", "arguments": {"command": command}}
            for command in ("touch $'\\xff' $'caf\\xe9.txt'", "ls", "mkdir $'\\xfe' && ls -R")]
    turns = [{"tool_calls": _openai_calls([call])} for call in bash] + [{"message": "Done."}]
    local = _play_local("tool/Shell-v0", 0, 2, turns)
    assert _surrogates(local[2][-1][3]), "the attack no longer puts surrogates in the info"
    _assert_same("tool/Shell-v0", server.url, 0, 2, turns)
    assert server.wait_sessions(0) == 0
