import random

from gym_llm import Draft, ProceduralTasks, SingleTurnEnv


def _draft(rng: random.Random, difficulty: float, length: int) -> Draft:
    word = "".join(rng.choice("abcdefghij") for _ in range(length + int(4 * difficulty)))
    return Draft(f"Reverse the word {word!r}. Answer with the reversed word only.", word[::-1])


def make_reverse(length: int = 4, difficulty: float = 0.0, **kwargs) -> SingleTurnEnv:
    tasks = ProceduralTasks(
        f"example-reverse-{length}", lambda rng, d: _draft(rng, d, length), difficulty=difficulty
    )
    return SingleTurnEnv(
        tasks, reward_fn=lambda task, response: float(response.strip() == task.answer), **kwargs
    )
