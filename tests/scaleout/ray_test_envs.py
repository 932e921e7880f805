"""Environments of the Ray tests, registered on import (the Ray workers import
this module through ``imports=["ray_test_envs"]``; the cluster fixture puts
this directory on every node's ``PYTHONPATH``).

* ``test/RayTurns-v0``: three turns; each turn's reward is the share of
  vowels in the response, and the user answers "More vowels." until the last
  turn: the result depends on the whole action history, so a re-run episode
  is only exact if its earlier actions are replayed.
* A response containing ``SLEEP`` makes the verifier sleep 30 s (a hung step).
"""

from __future__ import annotations

import random
import time

import gym_llm
from gym_llm import Draft, ProceduralTasks, SingleTurnEnv

_WORDS = ["apple", "river", "stone", "cloud", "maple", "tiger", "lemon", "house", "piano", "ocean"]


def _reward(task, response: str) -> float:
    if "SLEEP" in response:
        time.sleep(30)
    letters = [c for c in response.lower() if c.isalpha()]
    return sum(c in "aeiou" for c in letters) / len(letters) if letters else 0.0


def make_turns(**kwargs) -> SingleTurnEnv:
    def draft(rng: random.Random, difficulty: float) -> Draft:
        return Draft(f"Write about {rng.choice(_WORDS)} ({rng.randrange(10**6)}).", None)

    return SingleTurnEnv(ProceduralTasks("test-ray-turns", draft), reward_fn=_reward, max_turns=3,
                         feedback="More vowels.", success_threshold=2.0, **kwargs)


if "test/RayTurns-v0" not in gym_llm.list_envs():
    gym_llm.register("test/RayTurns-v0", make_turns)
