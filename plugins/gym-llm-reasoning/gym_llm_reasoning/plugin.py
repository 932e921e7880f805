"""gym-llm plugin hooks of the reasoning domain (entry point ``gym_llm: reasoning``).

One id per family of the installed reasoning-gym (:func:`.families.catalogue`,
read from reasoning-gym's own registry, cached per version), named by
:func:`.families.env_id`; every id makes :class:`.envs.ReasoningEnv` with its
``family``.
"""

from __future__ import annotations

from typing import Any

import gym_llm

from .families import catalogue, env_id


@gym_llm.hookimpl
def gym_llm_register(registry: Any) -> None:
    registry.register_all({
        env_id(name): ("gym_llm_reasoning.envs:ReasoningEnv",
                       f"reasoning-gym {info['category']}/{name}: {info['description']}",
                       {"family": name, "difficulty": 0.0})
        for name, info in catalogue().items()
    })


@gym_llm.hookimpl
def gym_llm_doctor() -> list[dict[str, Any]]:
    """One task of one family generated and its reference answer scored 1.0."""
    env = gym_llm.make(env_id("basic_arithmetic"), seed=0)
    env.reset()
    reward = env.step(f"<answer>{env.unwrapped.task.answer}</answer>")[1]
    ok = reward == 1.0
    return [{
        "name": "reasoning: reasoning-gym generator and verifier",
        "ok": ok,
        "detail": "a basic_arithmetic task generated and its reference scored 1.0" if ok else f"reward {reward}",
        "fix": "" if ok else "pip install reasoning-gym==0.1.25",
    }]
