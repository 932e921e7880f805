"""Helpers shared by the instruct tests: a task with chosen constraints on a
known request, an env playing one response, and the episode record of it."""

from __future__ import annotations

from gym_llm_instruct.constraints import describe, validate
from gym_llm_instruct.envs import InstructEnv

from gym_llm import Task
from gym_llm.runtime.rollout import Trajectory

REQUEST = "Write a short paragraph about honeybees."
BEES = {"kind": "write", "topic": "honeybees", "topic_words": ["bee", "bees", "honeybee"]}
#: An honest answer to REQUEST: on topic, in sentences, 24 words, no comma.
HONEST = ("Honeybees live together in a hive and make honey from the nectar of flowers. The queen lays the eggs "
          "while the workers gather pollen.")


def make_task(constraints: list[dict], request: str = REQUEST, meta: dict | None = None, task_id: str = "t") -> Task:
    cs = [validate(c) for c in constraints]
    prompt = request + "\n\n" + " ".join(describe(c) for c in cs)
    return Task(task_id, prompt, cs, {"constraints": cs, "request": BEES if meta is None else meta})


def play(constraints: list[dict], response: str, request: str = REQUEST, meta: dict | None = None,
         **kwargs) -> tuple[float, dict, InstructEnv]:
    """One turn of ``response`` on a task with ``constraints``: ``(reward, info, env)``."""
    env = InstructEnv([make_task(constraints, request, meta)], **kwargs)
    env.reset(seed=0)
    _, reward, _, _, info = env.step(response)
    return reward, info, env


def episode(env: InstructEnv, info: dict, env_id: str = "instruct/Multi-v0") -> Trajectory:
    """The finished episode of ``env`` as the rollout records it."""
    return Trajectory(env_id, env.task.id, "g", messages=list(env.messages),
                      reward_components=dict(info["reward_components"]), info=dict(info))
