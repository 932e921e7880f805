"""Core tool machinery extended for the tools plugin: schema defaults and the
reason a failed tool call reports."""

from __future__ import annotations

from typing import Literal

from gym_llm import Task, Tool, ToolEnv
from gym_llm.envs.tools import function_schema, validate_arguments


def set_timer(minutes: int, label: str = "timer", sound: Literal["bell", "chime"] | None = None,
              tags: tuple[str, ...] = ()) -> str:
    """Start a countdown timer.

    Args:
        minutes: Length of the timer in minutes.
        label: Name shown when it rings.
        sound: Ring tone.
        tags: Free-form tags.
    """
    return f"{label}: {minutes} min"


def test_defaults_are_opt_in_and_json_only():
    plain = function_schema(set_timer)["function"]["parameters"]["properties"]
    assert all("default" not in p for p in plain.values())
    props = function_schema(set_timer, defaults=True)["function"]["parameters"]["properties"]
    assert props["label"] == {"type": "string", "description": "Name shown when it rings.", "default": "timer"}
    assert "default" not in props["sound"]  # None means "absent", not a value
    assert props["tags"]["default"] == []
    params = function_schema(set_timer, defaults=True)["function"]["parameters"]
    assert params["required"] == ["minutes"]
    assert validate_arguments(params, {"minutes": 5}) == []
    assert validate_arguments(params, {"minutes": 5, "sound": "horn"})


class TimerEnv(ToolEnv):
    def episode_tools(self, task):
        return [Tool.from_function(set_timer)]

    def score_episode(self, final_message):
        return 0.0


def test_failed_tool_call_reports_a_reason():
    env = TimerEnv([Task(id="t", prompt="set a timer", answer=None)], max_turns=3)
    env.reset(seed=0)
    _, r, _, _, info = env.step('<tool_call>{"name": "set_timer", "arguments": {"minutes": 2}}</tool_call>')
    assert "reason" not in info and r == 0.0
    _, r, _, _, info = env.step('<tool_call>{"name": "set_timer", "arguments": {"minutes": "2"}}</tool_call>')
    assert r == 0.0 and info["reason"].startswith("Error: invalid arguments")
    _, r, _, _, info = env.step("<tool_call>{not json</tool_call>")
    assert "invalid JSON" in info["reason"]


def test_a_turn_runs_at_most_max_calls_per_turn_tool_calls():
    """One long turn held ~14,000 calls (each a sandboxed command in Shell-v0): the
    calls past the cap are answered with an error, unrun."""
    ran = []

    class CountingEnv(TimerEnv):
        def episode_tools(self, task):
            def set_timer(minutes: int) -> str:
                ran.append(minutes)
                return "ok"
            return [Tool.from_function(set_timer)]

    env = CountingEnv([Task(id="t", prompt="set timers", answer=None)], max_turns=3)
    env.reset(seed=0)
    cap = env.max_calls_per_turn
    calls = "".join(f'<tool_call>{{"name": "set_timer", "arguments": {{"minutes": {i}}}}}</tool_call>'
                    for i in range(cap + 5))
    obs, r, term, _, info = env.step(calls)
    assert ran == list(range(cap)) and not term
    assert len(obs) == cap + 5 and all("not run" in m["content"] for m in obs[cap:])
    assert info["tool_errors"] == 5 and "not run" in info["reason"]


def test_tool_calls_nested_too_deeply_to_copy_are_a_problem_not_an_exception():
    env = TimerEnv([Task(id="t", prompt="set a timer", answer=None)], max_turns=3)
    env.reset(seed=0)
    deep: dict = {}
    for _ in range(5000):
        deep = {"x": deep}
    action = {"role": "assistant", "content": "",
              "tool_calls": [{"id": "a", "type": "function", "function": {"name": "set_timer", "arguments": deep}}]}
    _, r, term, _, info = env.step(action)
    assert r == 0.0 and "nested too deeply" in info["reason"]


def test_an_integral_float_reaches_an_integer_parameter_as_an_int():
    """JSON Schema counts 1.0 as an integer: it validated, and a tool declared
    ``page: int`` indexed a list with a float (DocNavigator's read)."""
    got = []

    class PageEnv(TimerEnv):
        def episode_tools(self, task):
            def read(page: int) -> str:
                got.append(page)
                return ["a", "b"][page - 1]
            return [Tool.from_function(read)]

    env = PageEnv([Task(id="t", prompt="read", answer=None)], max_turns=3)
    env.reset(seed=0)
    obs, _, _, _, info = env.step('<tool_call>{"name": "read", "arguments": {"page": 2.0}}</tool_call>')
    assert got == [2] and type(got[0]) is int and obs[0]["content"] == "b", (obs, info)
