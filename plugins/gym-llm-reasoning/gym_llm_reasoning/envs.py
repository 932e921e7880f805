"""The reasoning environment: one reasoning-gym family, one question an
episode, the answer in ``<answer>...</answer>`` scored by
:func:`gym_llm_reasoning.scoring.score_entry`. With ``max_turns > 1`` a wrong
answer gets feedback and another try, its reward discounted by
``attempt_discount`` per earlier attempt (as the math envs)."""

from __future__ import annotations

import asyncio
import functools
import random
from collections import OrderedDict
from typing import Any

from gym_llm import Draft, ProceduralTasks, RewardResult, SingleTurnEnv, Task
from gym_llm.envs.grading import assistant_messages
from gym_llm.envs.parsing import message_text
from gym_llm.envs.tasks import check_split

from . import families
from .scoring import EXPRESSIONS, reference_answer, score_entry
from .signals import SIGNALS
from .verifier import verify

__all__ = ["ReasoningEnv", "ReasoningTasks", "SYSTEM_PROMPT", "score", "strict_score"]

#: reasoning-gym's answer convention, short so tiny models follow it.
SYSTEM_PROMPT = ("Think step by step, then give only your final answer inside <answer></answer> tags, "
                 "exactly once, in the form the question asks.")
FEEDBACK = "Incorrect, try again."
FORMAT_FEEDBACK = "No final answer found. Put your final answer inside <answer></answer> tags, then try again."

#: Seed blocks per family and difficulty: BLOCKS * BLOCK_SIZE distinct draws (8,000). Few, so
#: that the dataset objects stay cached: some families build 500 tasks or load data when made.
BLOCKS = 16

#: Draws a task may take when reasoning-gym's generator raises on a seed.
GENERATION_TRIES = 16


class ReasoningTasks(ProceduralTasks):
    """The tasks of one family at one difficulty: a task is reasoning-gym's
    entry at a (seed block, index) drawn from the task's seed; the split goes
    by the question's hash (:class:`~gym_llm.ProceduralTasks`), so no question
    is in both splits. The last ``memo_size`` tasks are kept: a GRPO group
    resets one task several times, an evaluation replays its tasks."""

    def __init__(self, family: str, *, difficulty: float = 0.0, heldout_size: int = 500, memo_size: int = 4096):
        self.family = family
        self.memo_size = memo_size
        self._memo: OrderedDict[tuple[str, int], Task] = OrderedDict()
        super().__init__(f"reasoning-{family}", self._generate, difficulty=difficulty, sizes={"heldout": heldout_size})

    def _generate(self, rng: random.Random, difficulty: float) -> Draft:
        # some generators give up on a seed (knight_swap: "no valid puzzle after 100
        # boards"): the next draw of the same rng, so the task is still a function of the seed
        for _ in range(GENERATION_TRIES - 1):
            block, index = rng.randrange(BLOCKS), rng.randrange(families.BLOCK_SIZE)
            try:
                entry = families.generate(self.family, difficulty, block, index)
                break
            except Exception:
                continue
        else:
            block, index = rng.randrange(BLOCKS), rng.randrange(families.BLOCK_SIZE)
            entry = families.generate(self.family, difficulty, block, index)
        return Draft(
            entry["question"], reference_answer(self.family, entry),
            {"source": self.family, "rg_block": block, "rg_index": index, "rg_entry": entry},
        )

    def size(self, split: str) -> int:
        """The declared size, without enumerating the split's first tasks (the
        core's probe costs 32 distinct tasks a split, about 100 generations, which
        take minutes for the search-based families); a family with fewer distinct
        questions still plays: index ``i`` names task ``i mod c`` (the core's rule)."""
        return self.sizes[check_split(split)]

    def get(self, split: str, index: int) -> Task:
        key = (split, index)
        task = self._memo.get(key)
        if task is None:
            task = self._memo[key] = super().get(split, index)
            if len(self._memo) > self.memo_size:
                self._memo.popitem(last=False)
        else:
            self._memo.move_to_end(key)
        return task


def score(task: Task, response: Any) -> RewardResult:
    """Score ``response`` (text) to a reasoning task (see :mod:`.scoring`)."""
    meta = task.metadata
    if meta["source"] in EXPRESSIONS:  # sympy: in the worker, with a deadline (.verifier)
        verifier = functools.partial(verify, meta["source"], task.difficulty)
    else:
        verifier = families.verifier(meta["source"], task.difficulty)
    return score_entry(meta["source"], meta["rg_entry"], verifier, message_text(response))


async def strict_score(task: Task, text: str, discount: float = 1.0) -> RewardResult:
    """The reasoning domain's strict grader (docs/monitoring.md): the training
    score, and the answer must be the end of the turn: one ``<answer>`` tag
    opened (an unclosed second one counts) and nothing but whitespace after
    ``</answer>`` (no answer followed by a retraction); times ``discount``."""
    lowered = text.lower()
    if lowered.count("<answer>") != 1 or not lowered.rstrip().endswith("</answer>"):
        return RewardResult(0.0, {"correct": 0.0},
                            {"reason": "strict: exactly one <answer> block, at the end of the turn, is asked"})
    result = await asyncio.to_thread(score, task, text)
    result.score *= discount
    return result


class ReasoningEnv(SingleTurnEnv):
    """One reasoning-gym family (``family``, its registry name).

    Args:
        family: reasoning-gym's dataset name (``"knights_knaves"``).
        difficulty: In [0, 1], mapped onto every attribute of the family's
            curriculum (:mod:`.families`); no effect on families without one.
        heldout_size: Tasks in the held-out split (train is unbounded).
        max_turns: Attempts per episode; a wrong one gets ``feedback``.
        attempt_discount: Attempt k (0-based) earns ``score * attempt_discount**k``.
        system_prompt: Prepended to every prompt (asks for ``<answer>`` tags).
    """

    hack_signals = SIGNALS

    def __init__(
        self,
        *,
        family: str,
        difficulty: float = 0.0,
        heldout_size: int = 500,
        split: str = "train",
        seed: int | None = None,
        max_turns: int = 1,
        feedback: str = FEEDBACK,
        attempt_discount: float = 0.5,
        system_prompt: str | None = SYSTEM_PROMPT,
        render_mode: str | None = None,
    ):
        if family not in families.catalogue():
            raise ValueError(f"unknown reasoning-gym family {family!r}")
        if not 0.0 <= attempt_discount <= 1.0:
            raise ValueError(f"attempt_discount must be in [0, 1], got {attempt_discount}")
        self.family = family
        super().__init__(
            ReasoningTasks(family, difficulty=difficulty, heldout_size=heldout_size), score,
            split=split, seed=seed, max_turns=max_turns, system_prompt=system_prompt, feedback=feedback,
            attempt_discount=attempt_discount, render_mode=render_mode,
        )

    def feedback(self, result: RewardResult) -> str:
        return FORMAT_FEEDBACK if result.components.get("format") == 0.0 else self.feedback_text

    def score_formula(self) -> str:
        """:func:`score`: the verifier's full verdict only (``format`` is reported, not paid)."""
        return "1 * correct + 0 * format"

    async def astrict_score(self, messages: list[dict[str, Any]], reward: float) -> RewardResult:
        """The strict grader (:func:`strict_score`) of the final turn,
        discounted by the attempt it came in, as training is."""
        turns = assistant_messages(messages)
        return await strict_score(self.task, message_text(turns[-1]) if turns else "",
                                  self.attempt_discount ** (len(turns) - 1))
