"""The single-turn math environments: procedural arithmetic, algebra and word
problems, and the dataset loader. Each episode is one problem; the answer is
the last ``\\boxed{}`` of the assistant's turn, scored by
:func:`gym_llm_math.verify`. With ``max_attempts > 1`` a wrong answer gets
feedback and another try, its reward discounted by ``attempt_discount`` per
earlier attempt.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from gym_llm import ProceduralTasks, RewardResult, SingleTurnEnv, Task, TaskSet
from gym_llm.envs.grading import assistant_messages
from gym_llm.envs.parsing import extract_boxed, last_boxed, message_text

from .dataset import SAMPLE, DatasetSource, DatasetTasks
from .generators import algebra, arithmetic, word_problems
from .signals import SIGNALS
from .verifier import is_expanded, response_text, verify

__all__ = [
    "MathEnv", "ProceduralMathEnv", "ArithmeticEnv", "AlgebraEnv", "WordProblemsEnv", "DatasetEnv",
    "SYSTEM_PROMPT", "score_answer", "resolve_attempts", "strict_score",
]

#: Short on purpose: tiny models must follow it. No digits, so it can never
#: contain an answer.
SYSTEM_PROMPT = "Solve the problem. Write your final answer inside \\boxed{}."
FEEDBACK = "Incorrect, try again."
FORMAT_FEEDBACK = "No final answer found. Write your final answer inside \\boxed{}, then try again."


def resolve_attempts(max_attempts: int | None, max_turns: int | None) -> int:
    """The number of attempts: ``max_attempts``, else ``max_turns`` (the
    contract's name for it), else 1. Both given and different is an error."""
    if max_attempts is not None and max_turns is not None and max_attempts != max_turns:
        raise ValueError(f"max_attempts={max_attempts} and max_turns={max_turns} disagree; give one")
    attempts = max_attempts if max_attempts is not None else max_turns if max_turns is not None else 1
    if attempts < 1:
        raise ValueError(f"max_attempts must be >= 1, got {attempts}")
    return int(attempts)


def score_answer(task: Task, response: Any, format_weight: float = 0.0, lenient_decimals: bool = False) -> RewardResult:
    """Score a response to ``task``: :func:`verify` against ``task.answer``,
    plus the task's required form (``metadata["form"] == "expanded"``: the
    answer as written must be a sum of monomials, decided on its parsed,
    unevaluated expression by :func:`~gym_llm_math.verifier.is_expanded`, so
    an equivalent product, quotient or negative power, such as the question's
    own expression, is wrong however it is spelled).
    ``score = format_weight * format + (1 - format_weight) * correct``."""
    result = verify(task.answer, response, lenient_decimals=lenient_decimals)
    if result.components["correct"] == 1.0 and task.metadata.get("form") == "expanded":
        expanded, why = is_expanded(last_boxed(response_text(response)) or "")
        if not expanded:
            result = RewardResult(
                0.0, {"format": 1.0, "correct": 0.0},
                {**result.info, "reason": f"answer not in the asked form (a fully expanded sum of terms): {why}"},
            )
    if format_weight:
        comps = result.components
        result.score = format_weight * comps["format"] + (1.0 - format_weight) * comps["correct"]
    return result


def answer_formula(format_weight: float) -> str:
    """:func:`score_answer`'s score as a reward formula
    (:meth:`~gym_llm.envs.core.LLMEnv.reward_formula`): ``correct`` is 1 when
    the last ``\\boxed{}`` equals the gold answer (in the asked form),
    ``format`` is 1 when a ``\\boxed{}`` is present."""
    return f"{1.0 - format_weight:g} * correct + {format_weight:g} * format"


async def strict_score(task: Task, text: str, discount: float = 1.0) -> RewardResult:
    """The math domain's strict grader (docs/monitoring.md): ``text`` must hold
    exactly one ``\\boxed{}`` (several, even agreeing ones, score 0), compared
    exactly (no ``lenient_decimals``, no format credit), in the task's asked
    form; the score is multiplied by ``discount`` (the attempt's, as training)."""
    boxes = extract_boxed(text)
    if len(boxes) != 1:
        return RewardResult(0.0, {"format": float(bool(boxes)), "correct": 0.0},
                            {"reason": f"strict: {len(boxes)} boxed answers where exactly one is asked"})
    # the verifier may wait on a math-verify worker: off the event loop
    result = await asyncio.to_thread(score_answer, task, text)
    result.score *= discount
    return result


class MathEnv(SingleTurnEnv):
    """Math problems answered in ``\\boxed{}``, scored by :func:`score_answer`.

    Args:
        tasks: The problems (a task set or a list of tasks whose ``answer`` is
            the gold answer string).
        max_attempts: Attempts per episode (default 1); ``max_turns`` is
            accepted as a synonym.
        feedback: The user message after a wrong attempt (never the answer).
        attempt_discount: Attempt k (0-based) earns ``score * attempt_discount**k``.
        format_weight: Share of the reward for a boxed answer being present
            (0: reward is correctness only).
        lenient_decimals: A decimal answer also matches a value that rounds
            to it (``0.333`` for ``\\frac{1}{3}``); off (the default), numbers
            must be equal.
        system_prompt: Prepended to every prompt.
    """

    #: The score is the last ``\\boxed{}``: a turn over the core's length cap
    #: keeps its end, where the final answer is.
    action_cut_keeps = "tail"

    hack_signals = SIGNALS

    def __init__(
        self,
        tasks: TaskSet | Sequence[Task],
        *,
        split: str = "train",
        seed: int | None = None,
        max_attempts: int | None = None,
        max_turns: int | None = None,
        feedback: str = FEEDBACK,
        attempt_discount: float = 0.5,
        format_weight: float = 0.0,
        lenient_decimals: bool = False,
        system_prompt: str | None = SYSTEM_PROMPT,
        render_mode: str | None = None,
    ):
        if not 0.0 <= format_weight < 1.0:
            raise ValueError(f"format_weight must be in [0, 1), got {format_weight}")
        if not 0.0 <= attempt_discount <= 1.0:
            raise ValueError(f"attempt_discount must be in [0, 1], got {attempt_discount}")
        self.format_weight = float(format_weight)
        self.lenient_decimals = bool(lenient_decimals)
        super().__init__(
            tasks, self._reward, split=split, seed=seed,
            max_turns=resolve_attempts(max_attempts, max_turns), system_prompt=system_prompt,
            feedback=feedback, attempt_discount=attempt_discount, render_mode=render_mode,
        )

    def _reward(self, task: Task, response: Any) -> RewardResult:
        return score_answer(task, response, self.format_weight, self.lenient_decimals)

    def score_formula(self) -> str:
        """:func:`score_answer`'s sum at this env's ``format_weight``."""
        return answer_formula(self.format_weight)

    async def astrict_score(self, messages: list[dict[str, Any]], reward: float) -> RewardResult:
        """The strict grader (:func:`strict_score`) of the final turn,
        discounted by the attempt it came in, as training is."""
        turns = assistant_messages(messages)
        return await strict_score(self.task, message_text(turns[-1]) if turns else "",
                                  self.attempt_discount ** (len(turns) - 1))

    def feedback(self, result: RewardResult) -> str:
        if result.components.get("format") == 0.0:
            return FORMAT_FEEDBACK
        return self.feedback_text


class ProceduralMathEnv(MathEnv):
    """A :class:`MathEnv` over generated problems (subclasses set ``generator``
    and ``name``, the task-id prefix).

    Args:
        difficulty: In [0, 1]; what it scales is the subclass's to say. The
            trainer's curriculum sets it through ``make`` kwargs.
        heldout_size: Tasks in the held-out split (train is unbounded).
        Other kwargs: :class:`MathEnv`.
    """

    generator: Any = None
    name = ""

    def __init__(self, *, difficulty: float = 0.0, heldout_size: int = 500, **kwargs: Any):
        tasks = ProceduralTasks(self.name, self.generator, difficulty=difficulty, sizes={"heldout": heldout_size})
        super().__init__(tasks, **kwargs)


class ArithmeticEnv(ProceduralMathEnv):
    """Procedural integer, fraction and decimal arithmetic: difficulty 0 is
    one-digit addition/subtraction; 0.05-0.15 a two-digit number plus a
    one-digit one without carrying; higher adds digits (up to 4), operators
    (×, ÷), nesting (up to 4 operators), fractions (from 0.6) and decimals
    (from 0.75)."""

    generator = staticmethod(arithmetic)
    name = "math-arithmetic"


class AlgebraEnv(ProceduralMathEnv):
    """Procedural algebra with symbolic answers: linear equations (one step at
    difficulty 0), expansion (from 0.25), quadratics (0.4), 2x2 systems
    (0.55) and rational simplification (0.7). Expansion and simplification
    answers must be fully expanded (echoing the question's expression, though
    equivalent, earns 0)."""

    generator = staticmethod(algebra)
    name = "math-algebra"


class WordProblemsEnv(ProceduralMathEnv):
    """Procedural multi-step word problems with units (money, distance, mass,
    length): one step at difficulty 0, up to four at 1, larger numbers and
    cents as difficulty grows."""

    generator = staticmethod(word_problems)
    name = "math-word-problems"


class DatasetEnv(MathEnv):
    """Problems from a dataset file or a Hugging Face dataset (see
    :class:`~gym_llm_math.dataset.DatasetTasks`).

    Args:
        path: a ``.jsonl``/``.json``/``.parquet`` file (``.jsonl.gz``/``.json.gz``
            too), Hugging Face dataset name or local dataset folder, or ``{"train": ..., "heldout": ...}``;
            ``None``: the bundled GSM8K-format sample.
        hf_config: Hugging Face dataset config (e.g. ``"main"`` for gsm8k).
        question_key, answer_key: Field names, if not ``question``/``problem``
            and ``answer``/``solution``.
        difficulty: ``None`` (all rows) or the highest row difficulty kept
            (from ``level``: MATH level 1 is 0, level 5 is 1; rows without a
            level are 0), so the trainer's curriculum works here too.
        Other kwargs: :class:`MathEnv`.
    """

    def __init__(
        self,
        *,
        path: DatasetSource | None = None,
        hf_config: str | None = None,
        question_key: str | None = None,
        answer_key: str | None = None,
        difficulty: float | None = None,
        **kwargs: Any,
    ):
        tasks = DatasetTasks(
            SAMPLE if path is None else path, hf_config=hf_config,
            question_key=question_key, answer_key=answer_key, max_difficulty=difficulty,
        )
        super().__init__(tasks, **kwargs)
