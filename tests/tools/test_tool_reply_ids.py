"""Every tool message carries the id of the call it answers, a malformed or refused
call's too (issue 37 review: they were answered as ``error_0``, ``error_1``, ... which
pair with no call: OpenAI rejects such a conversation and chat templates mismatch)."""

from __future__ import annotations

import json

import pytest

from gym_llm import Task, Tool, ToolEnv
from gym_llm.envs.core import MAX_TOOL_CALL_CHARS


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: First.
        b: Second.
    """
    return a + b


class AddEnv(ToolEnv):
    max_calls_per_turn = 2

    def episode_tools(self, task):
        return [Tool.from_function(add)]

    def score_episode(self, final_message):
        return 0.0


def _call(cid: str, name: str, arguments: str) -> dict:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": arguments}}


def _replies(calls: list[dict]) -> dict[str, str]:
    """The tool messages answering one turn of ``calls``, by tool_call_id."""
    env = AddEnv([Task(id="t", prompt="add", answer=None)], max_turns=3)
    env.reset(seed=0)
    env.step({"role": "assistant", "content": None, "tool_calls": calls})
    replies = [m for m in env.messages if m["role"] == "tool"]
    assert len(replies) == len(calls)
    return {m["tool_call_id"]: m["content"] for m in replies}


GOOD = _call("good", "add", '{"a": 1, "b": 2}')


@pytest.mark.parametrize("bad, error", [
    (_call("bad_json", "add", '{"a": 1,'), "not valid JSON"),
    (_call("not_object", "add", "[1, 2]"), "must be a JSON object"),
    (_call("unknown", "subtract", '{"a": 1}'), "unknown tool"),
    (_call("bad_args", "add", '{"a": "x"}'), "invalid arguments"),
    (_call("too_deep", "add", '{"a": 1, "b": ' + "[" * 70 + "]" * 70 + "}"), "nested too deeply"),
    (_call("huge", "add", json.dumps({"a": 1, "b": "x" * MAX_TOOL_CALL_CHARS})), "refused"),
    ({"id": "no_name", "type": "function", "function": {"arguments": "{}"}}, "has no 'name'"),
])
def test_a_bad_call_is_answered_under_its_own_id_beside_a_good_one(bad, error):
    replies = _replies([GOOD, bad])
    assert replies["good"] == "3"
    assert error in replies[bad["id"]], replies


def test_calls_past_the_turn_cap_and_unreadable_calls_keep_their_ids():
    replies = _replies([_call("x1", "add", '{"a": 1, "b": 1}'), _call("x2", "nope", "{}"),
                        _call("x3", "add", "{oops"), _call("x4", "add", '{"a": 2, "b": 2}')])
    assert replies["x1"] == "2" and "unknown tool" in replies["x2"]
    assert "not valid JSON" in replies["x3"] and "more than 2 tool calls" in replies["x4"]


def test_a_call_without_an_id_is_answered_by_its_position():
    replies = _replies([{"type": "function", "function": {"name": "add", "arguments": "{"}},
                        _call("", "add", '{"a": 1, "b": 1}')])
    assert "not valid JSON" in replies["call_0"] and replies["call_1"] == "2"


def test_text_form_malformed_calls_answer_their_positions():
    env = AddEnv([Task(id="t", prompt="add", answer=None)], max_turns=3)
    env.reset(seed=0)
    env.step('<tool_call>{"name": "add", "arguments": {"a": 1, "b": 1}}</tool_call>'
             "<tool_call>{broken</tool_call>")
    replies = {m["tool_call_id"]: m["content"] for m in env.messages if m["role"] == "tool"}
    assert replies["call_0"] == "2" and "invalid JSON" in replies["call_1"]
