"""Helpers of the tool-use tests: the same calls in both wire formats."""

from __future__ import annotations

import json
from typing import Any

import pytest
from gym_llm_sandbox import Sandbox, SandboxError
from gym_llm_tools.shell import SHELL_POLICY


def _hermes(calls: list[dict[str, Any]], text: str = "") -> str:
    """Calls as Hermes/Qwen ``<tool_call>`` text."""
    return text + "".join(f"<tool_call>{json.dumps(c)}</tool_call>" for c in calls)


def _openai(calls: list[dict[str, Any]], text: str | None = None) -> dict[str, Any]:
    """Calls as an OpenAI assistant message (arguments as a JSON string)."""
    return {
        "role": "assistant",
        "content": text,
        "tool_calls": [
            {"id": f"call_{i}", "type": "function",
             "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])}}
            for i, c in enumerate(calls)
        ],
    }


FORMATS = {"hermes": _hermes, "openai": _openai}


@pytest.fixture
def formats():
    """``{"hermes": calls -> text, "openai": calls -> message dict}``."""
    return dict(FORMATS)


@pytest.fixture(params=list(FORMATS))
def fmt(request):
    """The call encoder; each test using it runs once per call format."""
    return FORMATS[request.param]


def _replay(env, calls: list[dict[str, Any]], fmt, final: str) -> tuple[float, dict[str, Any]]:
    """Step each gold call in its own turn, then ``final``; returns (total reward, last info)."""
    total = 0.0
    for call in calls:
        _, r, term, trunc, info = env.step(fmt([call]))
        total += r
        assert not (term or trunc), f"episode ended on {call}: {info}"
    _, r, term, trunc, info = env.step(final)
    assert term, info
    return total + r, info


@pytest.fixture
def replay():
    """``replay(env, calls, fmt, final)``: each call in its own turn, then ``final``."""
    return _replay

#: Shell's jail policy must run here (a machine without working nsjail lacks the resource)
try:
    Sandbox.from_policy(SHELL_POLICY)
    NO_JAIL = None
except SandboxError as e:  # a machine without working nsjail: the resource is missing
    NO_JAIL = str(e)
needs_jail = pytest.mark.skipif(NO_JAIL is not None, reason=f"nsjail cannot isolate here: {NO_JAIL}")
