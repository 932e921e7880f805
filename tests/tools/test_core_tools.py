"""Core tool machinery extended for the tools plugin: schema defaults and the
reason a failed tool call reports."""

from __future__ import annotations

from typing import Literal

from gym_llm import Task, Tool, ToolEnv
from gym_llm.tools import function_schema, validate_arguments


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
