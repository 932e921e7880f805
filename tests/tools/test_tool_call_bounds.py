"""Bounds on the tool calls of a turn, in the real tool envs (issue 37, items 2 and 6).

The action limit used to cut message text only: OpenAI ``tool_calls`` with
megabytes of arguments, or thousands of calls, were kept whole and copied into the
env's conversation on every turn, and arguments nested just under the JSON parser's
limit made jsonschema's error message raise RecursionError outside the tool call's
guard (``reward_error``). Each attack here must earn ``info["action_problem"]`` or an
ordinary tool error, never ``reward_error``; keep the env's stored conversation small
(measured as its JSON); and take well under a second of the step's own work."""

from __future__ import annotations

import gc
import json
import time
from typing import Any

import pytest

import gym_llm
from gym_llm.envs.core import MAX_ACTION_CHARS, MAX_TOOL_CALL_CHARS, MAX_TOOL_CALLS

ENVS = ["tool/Orders-v0", "math/PythonTool-v0", "tool/Shell-v0", "longctx/DocNavigator-v0",
        "tool/FunctionCalling-v0"]

#: What one refused turn may add to the env's stored conversation beyond the text the
#: model wrote (itself bounded by the text cut): the calls' stand-ins and one short
#: tool message each.
SMALL = 100_000


def _first_tool(env: Any) -> tuple[str, str]:
    """The name of a tool offered this episode and its first parameter."""
    tools = env.unwrapped.tools or env.unwrapped.task.metadata["tools"]
    fn = tools[0]["function"]
    return fn["name"], next(iter(fn["parameters"]["properties"]))


def _dict_call(name: str, arguments: Any, call_id: str = "a") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _message(*calls: dict[str, Any], content: str | None = None) -> dict[str, Any]:
    return {"role": "assistant", "content": content, "tool_calls": list(calls)}


def _text(name: str, arguments_json: str) -> str:
    return f'<tool_call>{{"name": "{name}", "arguments": {arguments_json}}}</tool_call>'


def _stored(env: Any) -> int:
    return len(json.dumps(env.unwrapped.messages))


def _step(env: Any, action: Any) -> tuple[list, float, dict[str, Any], float, int]:
    """``(obs, reward, info, seconds, growth of the stored conversation)`` of one step
    from a fresh episode.

    The garbage collector is off while the step is timed: a full collection of the
    test process's heap (gigabytes late in the suite) took 1.4 s once inside a 0.3 ms
    step, and is not the step's work."""
    env.reset(seed=0)
    before = _stored(env)
    gc.disable()
    try:
        start = time.perf_counter()
        obs, reward, _, _, info = env.step(action)
        seconds = time.perf_counter() - start
    finally:
        gc.enable()
    return obs, reward, info, seconds, _stored(env) - before


def _tool_error(obs: list, info: dict[str, Any]) -> bool:
    """The turn earned an ordinary tool error: an error tool message, or (in a
    single-turn env, which sends none) the checker's reason."""
    return any(m["role"] == "tool" and m["content"].startswith("Error:") for m in obs) or (
        not obs and bool(info.get("reason")))


def _assert_refused(obs: list, reward: float, info: dict[str, Any], seconds: float) -> None:
    assert "reward_error" not in info, info["reward_error"]
    assert reward == 0.0
    assert info.get("action_problem") or _tool_error(obs, info), info
    assert seconds < 1.0


@pytest.fixture(params=ENVS)
def env(request):
    env = gym_llm.make(request.param)
    env.reset(seed=0)
    yield env
    env.close()


# (a) one argument of 8 MB ------------------------------------------------------

@pytest.mark.parametrize("as_string", [True, False], ids=["json-string", "object"])
def test_an_8mb_argument_is_refused_and_not_kept(env, as_string):
    name, param = _first_tool(env)
    arguments = {param: "y" * 8_000_000}
    action = _message(_dict_call(name, json.dumps(arguments) if as_string else arguments))
    obs, reward, info, seconds, growth = _step(env, action)
    _assert_refused(obs, reward, info, seconds)
    assert str(MAX_TOOL_CALL_CHARS) in info["action_problem"] and "refused" in info["action_problem"]
    assert growth < SMALL
    if obs:  # the refused call is answered, with why
        assert [m["content"] for m in obs] == [
            f"Error: tool call a ({name}): arguments refused: over the {MAX_TOOL_CALL_CHARS} characters "
            "a turn's tool calls may hold"]


def test_an_8mb_argument_in_text_is_cut_with_the_text(env):
    name, param = _first_tool(env)
    action = _text(name, json.dumps({param: "y" * 8_000_000}))
    obs, reward, info, seconds, growth = _step(env, action)
    _assert_refused(obs, reward, info, seconds)
    assert "cut" in info["action_problem"]
    assert growth < MAX_ACTION_CHARS + SMALL


def test_a_refused_call_leaves_the_turns_other_calls_their_budget():
    """The bound is on the turn's calls together, refused call by call: a small
    call after an 8 MB one still runs."""
    env = gym_llm.make("tool/Orders-v0")
    env.reset(seed=0)
    email = env.unwrapped.task.answer[0]["arguments"]["email"]  # the gold first call: find_user
    action = _message(_dict_call("find_user", json.dumps({"email": "y" * 8_000_000}), "big"),
                      _dict_call("find_user", json.dumps({"email": email}), "small"))
    obs, _, _, _, info = env.step(action)
    assert "tool call 0:" in info["action_problem"]
    replies = {m["content"].startswith("Error: tool call big (find_user): arguments refused") for m in obs}
    assert len(obs) == 2 and replies == {True, False}, obs
    assert env.unwrapped.world.customer is not None  # the small call ran: the customer is identified


def test_sixteen_turns_of_8mb_keep_the_conversation_small():
    """Orders' 16 turns of 8 MB each made gigabytes per client over the server."""
    env = gym_llm.make("tool/Orders-v0")
    env.reset(seed=0)
    before = _stored(env)
    action = _message(_dict_call("find_user", json.dumps({"email": "y" * 8_000_000})))
    done, turns = False, 0
    while not done:
        _, _, term, trunc, info = env.step(action)
        done, turns = term or trunc, turns + 1
        assert "reward_error" not in info and info["action_problem"]
    assert turns == env.unwrapped.max_turns
    assert _stored(env) - before < turns * 2_000


# (b) 10,000 calls in one turn ----------------------------------------------------

def test_ten_thousand_calls_in_a_message_dict_are_cut(env):
    name, _ = _first_tool(env)
    action = _message(*[_dict_call(name, "{}", f"c{i}") for i in range(10_000)])
    obs, reward, info, seconds, growth = _step(env, action)
    _assert_refused(obs, reward, info, seconds)
    assert f"cut to the first {MAX_TOOL_CALLS}" in info["action_problem"]
    assert len(env.unwrapped.messages[-len(obs) - 1]["tool_calls"]) == MAX_TOOL_CALLS
    assert len(obs) <= MAX_TOOL_CALLS and growth < SMALL


def test_ten_thousand_calls_in_text_are_not_read(env):
    name, _ = _first_tool(env)
    action = "".join(_text(name, "{}") for _ in range(10_000))
    obs, reward, info, seconds, growth = _step(env, action)
    _assert_refused(obs, reward, info, seconds)
    assert len(obs) <= MAX_TOOL_CALLS + 1  # one error counts the unread calls
    assert growth - len(json.dumps(action)) < SMALL


# (c) arguments nested 900-990 deep -------------------------------------------------

def _nested(kind: str, depth: int) -> str:
    return '{"a": ' * depth + "1" + "}" * depth if kind == "object" else "[" * depth + "]" * depth


@pytest.mark.parametrize("kind", ["object", "array"])
@pytest.mark.parametrize("form", ["dict", "text"])
def test_arguments_nested_near_the_parsers_limit_are_an_ordinary_tool_error(env, form, kind):
    """Every depth from 900 to 990: which of them the JSON parser still reads depends
    on the stack under the step; jsonschema's message then needs a few levels more."""
    name, param = _first_tool(env)
    for depth in range(900, 991):
        arguments = f'{{"{param}": {_nested(kind, depth)}}}'
        action = _message(_dict_call(name, arguments)) if form == "dict" else _text(name, arguments)
        obs, reward, info, seconds, growth = _step(env, action)
        _assert_refused(obs, reward, info, seconds)
        assert growth < SMALL, depth


def test_arguments_given_as_a_deep_object_are_refused(env):
    """The OpenAI form may carry arguments as an object, built by the caller at any
    depth: refused before anything copies or validates it."""
    name, param = _first_tool(env)
    for depth in (70, 900, 5_000):
        deep: Any = 1
        for _ in range(depth):
            deep = {"a": deep}
        obs, reward, info, seconds, growth = _step(env, _message(_dict_call(name, {param: deep})))
        _assert_refused(obs, reward, info, seconds)
        assert "nested too deeply" in info["action_problem"] and growth < SMALL


def test_an_invalid_value_under_the_bound_is_not_quoted_whole(env):
    """jsonschema's message quotes the offending value whole: 900,000 characters of
    the wrong type, within the bound, became a tool message and the turn's reason."""
    name, param = _first_tool(env)
    action = _message(_dict_call(name, json.dumps({param: ["y" * 900_000]})))
    obs, reward, info, seconds, growth = _step(env, action)
    _assert_refused(obs, reward, info, seconds)
    assert "action_problem" not in info and len(info["reason"]) < 1_000
    assert growth - 900_000 < SMALL  # the call itself is kept (within the bound), no quote of it
