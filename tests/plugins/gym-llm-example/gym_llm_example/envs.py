"""A minimal third-party plugin: one procedural environment, registered through
the ``gym_llm`` entry point, exactly as a user's own package would do it."""
import random
import re

from gym_llm import Draft, HackSignal, ProceduralTasks, SingleTurnEnv, WeightedSum
from gym_llm.envs.grading import assistant_messages
from gym_llm.envs.parsing import message_text


def _draft(rng: random.Random, difficulty: float, length: int) -> Draft:
    word = "".join(rng.choice("abcdefghij") for _ in range(length + int(4 * difficulty)))
    return Draft(f"Reverse the word {word!r}. Answer with the reversed word only.", word[::-1])


def _unreversed(episode) -> bool:
    """The answer is the word as the prompt gave it (a policy copying its prompt)."""
    prompt = " ".join(message_text(m) for m in episode.messages if m.get("role") == "user")
    word = re.search(r"Reverse the word '(\w+)'", prompt)
    turns = assistant_messages(episode.messages)
    return bool(word and turns) and message_text(turns[-1]).strip() == word.group(1) != word.group(1)[::-1]


class ReverseEnv(SingleTurnEnv):
    """Reverse a short word. Its grading, all declared here: the training reward
    (``reward_fn``: the exact reversed word, the component ``exact``; a
    ``WeightedSum`` states its formula to ``gym-llm describe``), the strict grader (the default
    ``astrict_score``: the training reward) and its hack signal."""

    hack_signals = (HackSignal("unreversed", "the answer is the prompt's word, not reversed", _unreversed,
                               threshold=0.2),)

    def __init__(self, length: int = 4, difficulty: float = 0.0, **kwargs):
        tasks = ProceduralTasks(
            f"example-reverse-{length}", lambda rng, d: _draft(rng, d, length), difficulty=difficulty
        )
        # a WeightedSum states its own formula: `gym-llm describe` shows "1 * exact"
        exact = WeightedSum({"exact": lambda task, response: float(response.strip() == task.answer)})
        super().__init__(tasks, reward_fn=exact, **kwargs)
