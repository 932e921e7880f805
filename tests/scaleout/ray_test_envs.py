"""Environments of the Ray tests, registered on import (the Ray workers import
this module through ``imports=["ray_test_envs"]``; the cluster fixture puts
this directory on every node's ``PYTHONPATH``).

* ``test/RayTurns-v0``: three turns; each turn's reward is the share of
  vowels in the response, and the user answers "More vowels." until the last
  turn: the result depends on the whole action history, so a re-run episode
  is only exact if its earlier actions are replayed.
* A response containing ``SLEEP`` makes the verifier sleep 30 s (a hung step);
  one containing ``STUBBORN`` makes the turn wait 30 s twice, ignoring the first
  cancellation (an env that does not stop at its deadline).
* ``test/BudgetShell-v0``: ``tool/Shell-v0`` with its per-turn time budget
  (``ToolEnv.turn_time_budget_s``) as a make kwarg, ``None`` for no budget.
"""

from __future__ import annotations

import asyncio
import random
import time

from gym_llm_tools.shell import ShellEnv

import gym_llm
from gym_llm import Draft, ProceduralTasks, SingleTurnEnv

_WORDS = ["apple", "river", "stone", "cloud", "maple", "tiger", "lemon", "house", "piano", "ocean"]


def _reward(task, response: str) -> float:
    if "SLEEP" in response:
        time.sleep(30)
    letters = [c for c in response.lower() if c.isalpha()]
    return sum(c in "aeiou" for c in letters) / len(letters) if letters else 0.0


class TurnsEnv(SingleTurnEnv):
    async def arespond(self, message):
        if "STUBBORN" in (message.get("content") or ""):
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                await asyncio.sleep(30)
        return await super().arespond(message)


def make_turns(**kwargs) -> SingleTurnEnv:
    def draft(rng: random.Random, difficulty: float) -> Draft:
        return Draft(f"Write about {rng.choice(_WORDS)} ({rng.randrange(10**6)}).", None)

    return TurnsEnv(ProceduralTasks("test-ray-turns", draft), reward_fn=_reward, max_turns=3,
                    feedback="More vowels.", success_threshold=2.0, **kwargs)


def make_budget_shell(turn_time_budget_s: float | None, sandbox=None, **kwargs) -> ShellEnv:
    env = ShellEnv(sandbox=sandbox, **kwargs)  # takes ``sandbox``: its steps pass the node's sandbox gate
    env.turn_time_budget_s = turn_time_budget_s
    return env


if "test/RayTurns-v0" not in gym_llm.list_envs():
    gym_llm.register("test/RayTurns-v0", make_turns)
if "test/BudgetShell-v0" not in gym_llm.list_envs():
    gym_llm.register("test/BudgetShell-v0", make_budget_shell, difficulty=0.0, max_turns=3)
