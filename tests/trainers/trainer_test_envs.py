"""Small environments for the trainer tests, registered on import (the
trainer imports this module through ``imports=[trainer_test_envs]``, in
subprocesses too).

* ``test/Vowels-v0``: write anything; reward = share of the response's
  letters that are vowels. Dense and varied even for a random model, so a few
  GRPO steps visibly raise it.
* ``test/VowelsRetry-v0``: the same with ``max_turns=2``: below 0.5 the user
  says "More vowels." and the model answers again (multi-turn, environment
  tokens in the middle of the trajectory).
* ``test/Echo-v0``: repeat a word; exact match. Its reference answer is the
  word, so the SFT warm start has verified examples.
* ``test/Flaky-v0``: like Vowels, but every task whose index is odd makes the
  verifier fail (``reward_error``).
"""

from __future__ import annotations

import random

import gym_llm
from gym_llm import Draft, ProceduralTasks, RewardResult, SingleTurnEnv

_WORDS = ["apple", "river", "stone", "cloud", "maple", "tiger", "lemon", "house", "piano", "ocean"]


def vowel_share(text: str) -> float:
    letters = [c for c in text.lower() if c.isalpha()]
    return sum(c in "aeiou" for c in letters) / len(letters) if letters else 0.0


def _prompt(rng: random.Random, difficulty: float) -> Draft:
    return Draft(f"Write a few words about {rng.choice(_WORDS)} ({rng.randrange(10**6)}).", None)


class VowelsEnv(SingleTurnEnv):
    """test/Vowels-v0 (a class, so that a test's subclass can declare hack signals)."""

    def __init__(self, max_turns: int = 1, difficulty: float = 0.0, **kwargs):
        tasks = ProceduralTasks("test-vowels", _prompt, difficulty=difficulty)
        super().__init__(tasks, reward_fn=lambda task, response: vowel_share(response), max_turns=max_turns,
                         feedback="More vowels.", success_threshold=0.5, **kwargs)


def make_echo(difficulty: float = 0.0, **kwargs) -> SingleTurnEnv:
    def draft(rng: random.Random, d: float) -> Draft:
        word = rng.choice(_WORDS) + str(rng.randrange(100))
        return Draft(f"Repeat: {word}", word)

    tasks = ProceduralTasks("test-echo", draft, difficulty=difficulty)
    return SingleTurnEnv(tasks, reward_fn=lambda task, response: float(response.strip() == task.answer), **kwargs)


def make_flaky(**kwargs) -> SingleTurnEnv:
    def reward(task, response):
        if task.metadata["index"] % 2:
            raise RuntimeError("verifier crashed")
        return RewardResult(vowel_share(response))

    tasks = ProceduralTasks("test-flaky", _prompt)
    return SingleTurnEnv(tasks, reward_fn=reward, **kwargs)


gym_llm.register("test/Vowels-v0", VowelsEnv)
gym_llm.register("test/VowelsRetry-v0", VowelsEnv, max_turns=2)
gym_llm.register("test/Echo-v0", make_echo)
gym_llm.register("test/Flaky-v0", make_flaky)
