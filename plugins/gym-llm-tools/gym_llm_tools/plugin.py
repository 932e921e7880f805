"""gym-llm plugin hooks of the tool-use domain (entry point ``gym_llm: tools``).

Entry points are ``"module:attr"`` strings so that listing environments
imports nothing heavy.
"""

from __future__ import annotations

from typing import Any

import gym_llm


@gym_llm.hookimpl
def gym_llm_register(registry: Any) -> None:
    registry.register(
        "tool/FunctionCalling-v0",
        "gym_llm_tools.function_calling:FunctionCallingEnv",
        description="Single-turn function calling over 43 everyday tools: single, multiple-choice and parallel calls",
        difficulty=0.5,
        max_turns=1,
    )
    registry.register(
        "tool/Orders-v0",
        "gym_llm_tools.orders.env:OrdersEnv",
        description="Multi-turn customer service in a stateful order world: policy rules, scripted customer, "
        "database-state and required-facts reward",
        difficulty=0.5,
        max_turns=16,
    )
    registry.register(
        "tool/Shell-v0",
        "gym_llm_tools.shell:ShellEnv",
        description="Multi-turn file-system tasks through a bash tool in an nsjail sandbox session; "
        "reward = target work-dir state",
        difficulty=0.5,
        max_turns=10,
    )
