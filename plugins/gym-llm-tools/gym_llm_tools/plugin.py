"""gym-llm plugin hooks of the tool-use domain (entry point ``gym_llm: tools``).

Entry points are ``"module:attr"`` strings so that listing environments
imports nothing heavy.
"""

from __future__ import annotations

from typing import Any

import gym_llm

#: id -> (entry point, description, default kwargs)
ENVIRONMENTS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "tool/FunctionCalling-v0": (
        "gym_llm_tools.function_calling:FunctionCallingEnv",
        "Single-turn function calling over 43 everyday tools: single, multiple-choice and parallel calls",
        {"difficulty": 0.5, "max_turns": 1},
    ),
    "tool/Orders-v0": (
        "gym_llm_tools.orders.env:OrdersEnv",
        "Multi-turn customer service in a stateful order world: policy rules, scripted customer, "
        "database-state and required-facts reward",
        {"difficulty": 0.5, "max_turns": 16},
    ),
    "tool/Shell-v0": (
        "gym_llm_tools.shell:ShellEnv",
        "Multi-turn file-system tasks through a bash tool in an nsjail sandbox session; "
        "reward = target work-dir state",
        {"difficulty": 0.5, "max_turns": 10},
    ),
}


@gym_llm.hookimpl
def gym_llm_register(registry: Any) -> None:
    registry.register_all(ENVIRONMENTS)


@gym_llm.hookimpl
def gym_llm_doctor() -> list[dict[str, Any]]:
    """One real tool/Shell-v0 episode step: a bash command (with awk) in a sandbox session."""
    env = gym_llm.make("tool/Shell-v0", difficulty=0.0)
    try:
        env.reset(seed=0)
        call = '<tool_call>{"name": "bash", "arguments": {"command": "echo 1 1 | awk \'{print $1 + $2}\'"}}</tool_call>'
        obs, *_ = env.step(call)
        output = obs[0]["content"] if obs else ""
    finally:
        env.close()
    ok = output == "exit code: 0\nstdout:\n2\n"
    return [{
        "name": "tools: bash sandbox (tool/Shell-v0)",
        "ok": ok,
        "detail": "bash and awk run in a sandbox session" if ok else output[:300],
        "fix": "" if ok else "see the sandbox rows above and docs/sandbox.md",
    }]
