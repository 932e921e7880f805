"""The instruct environments: a request with verifiable constraints, answered in one turn or fixed over several.

* :class:`SingleEnv` (``instruct/Single-v0``): one constraint;
* :class:`MultiEnv` (``instruct/Multi-v0``): 2 to 5 constraints (``2 + round(3 d)``);
* :class:`MultiTurnEnv` (``instruct/MultiTurn-v0``): several constraints and
  ``max_turns=3``: after a turn that misses any, the user names what was
  violated and asks for the whole response again; every constraint is checked
  again on each turn, so fixing one by breaking another earns nothing;
* :class:`DatasetEnv` (``instruct/Dataset-v0``): IFEval-format rows.

Difficulty (generated envs) picks which kinds of constraint
(:mod:`gym_llm_instruct.generate`). Every env takes ``reward`` (``"strict"``:
all constraints, ``"partial"``: the fraction), ``loose`` (IFEval's loose
reading) and ``check_request`` (the hardening; on by default).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gym_llm import RewardResult, SingleTurnEnv, Task, TaskSet
from gym_llm.envs.grading import assistant_messages
from gym_llm.envs.parsing import message_text

from .constraints import component_keys, describe
from .dataset import SAMPLE, DatasetSource, IFEvalTasks
from .generate import GeneratedTasks
from .reward import check_reward_mode, score_response
from .signals import SIGNALS

__all__ = ["InstructEnv", "SingleEnv", "MultiEnv", "MultiTurnEnv", "DatasetEnv", "feedback_text"]


def feedback_text(task: Task, result: RewardResult) -> str:
    """The user's message after a turn that missed: each violated
    instruction by name and text, and the request check's failure."""
    keys = component_keys(task.metadata["constraints"])
    by_key = dict(zip(keys, task.metadata["constraints"], strict=True))
    lines = []
    if result.info.get("request_failed"):
        lines.append(f"- Do what the request asks ({result.info['request_failed']}).")
    lines += [f"- {key}: {describe(by_key[key])}" for key in result.info.get("violated", [])]
    if not lines:
        lines.append("- Answer the request.")
    return ("Your response did not follow these instructions:\n" + "\n".join(lines)
            + "\nWrite your whole response again, following every instruction of my first message.")


class InstructEnv(SingleTurnEnv):
    """Instruction following over a task set whose tasks carry
    ``metadata["constraints"]`` (and ``metadata["request"]``), scored by
    :func:`~gym_llm_instruct.reward.score_response`.

    Args:
        reward: ``"strict"`` (1.0 when every constraint holds) or
            ``"partial"`` (the fraction that hold).
        loose: Read constraints through IFEval's loose transforms.
        check_request: Score 0 when the response does not do what the base
            request asks (the hardening; docs/instruct.md).
        max_turns: Turns per episode; after a miss the user names what was
            violated (:func:`feedback_text`).
        attempt_discount: Turn k (0-based) earns ``score * attempt_discount**k``.
        system_prompt: Prepended to every prompt (none by default, as IFEval).
    """

    hack_signals = SIGNALS

    def __init__(self, tasks: TaskSet | Sequence[Task], *, split: str = "train", seed: int | None = None,
                 reward: str = "strict", loose: bool = False, check_request: bool = True, max_turns: int = 1,
                 attempt_discount: float = 0.7, system_prompt: str | None = None, render_mode: str | None = None):
        if not 0.0 <= attempt_discount <= 1.0:
            raise ValueError(f"attempt_discount must be in [0, 1], got {attempt_discount}")
        self.reward_mode = check_reward_mode(reward)
        self.loose = bool(loose)
        self.check_request = bool(check_request)
        super().__init__(tasks, self._reward, split=split, seed=seed, max_turns=max_turns,
                         system_prompt=system_prompt, attempt_discount=attempt_discount, render_mode=render_mode)

    def _reward(self, task: Task, response: Any) -> RewardResult:
        return score_response(task, response, reward=self.reward_mode, loose=self.loose,
                              check_request=self.check_request)

    def feedback(self, result: RewardResult) -> str:
        return feedback_text(self.task, result)

    def score_formula(self) -> str:
        """:func:`score_response` in this env's mode: the constraint verdicts
        (``reward_components``, one 0/1 per constraint) combined, times the request check."""
        combined = "min" if self.reward_mode == "strict" else "mean"
        reading = "loose" if self.loose else "strict"
        request = " * request" if self.check_request else ""
        return f"{combined}(constraint verdicts, read {reading}){request}"

    async def astrict_score(self, messages: list[dict[str, Any]], reward: float) -> RewardResult:
        """The strict grader: the final turn read strictly (no loose
        transforms) with the request check on, in the training reward's mode,
        discounted by the turn it came in."""
        turns = assistant_messages(messages)
        text = message_text(turns[-1]) if turns else ""
        result = score_response(self.task, text, reward=self.reward_mode, loose=False, check_request=True)
        result.score *= self.attempt_discount ** max(len(turns) - 1, 0)
        return result


class _GeneratedEnv(InstructEnv):
    """An :class:`InstructEnv` over generated requests; subclasses set
    ``name`` (the task-id prefix) and ``count`` (constraints per task for a
    difficulty)."""

    name = ""

    @staticmethod
    def count(difficulty: float) -> int:
        raise NotImplementedError

    def __init__(self, *, difficulty: float = 0.0, heldout_size: int = 500, **kwargs: Any):
        tasks = GeneratedTasks(self.name, self.count, difficulty=difficulty, heldout_size=heldout_size)
        super().__init__(tasks, **kwargs)


class SingleEnv(_GeneratedEnv):
    """One constraint on a generated request; difficulty picks the kinds."""

    name = "instruct-single"

    @staticmethod
    def count(difficulty: float) -> int:
        return 1


class MultiEnv(_GeneratedEnv):
    """``2 + round(3 * difficulty)`` compatible constraints on a generated request."""

    name = "instruct-multi"

    @staticmethod
    def count(difficulty: float) -> int:
        return 2 + round(3 * difficulty)


class MultiTurnEnv(MultiEnv):
    """:class:`MultiEnv` over ``max_turns`` turns (default 3): each miss is
    answered with what was violated; each turn is checked on every constraint."""

    name = "instruct-multiturn"

    def __init__(self, *, max_turns: int = 3, **kwargs: Any):
        super().__init__(max_turns=max_turns, **kwargs)


class DatasetEnv(InstructEnv):
    """IFEval-format rows (:class:`~gym_llm_instruct.dataset.IFEvalTasks`).

    Args:
        path: a file, Hugging Face name or folder, split by prompt hash; or
            ``{"train": ..., "heldout": ...}``; ``None``: the bundled sample.
        heldout_fraction: Share of a single source held out.
        skip_unsupported: Leave out rows with ids this library does not check
            (default: raise naming the row).
        Other kwargs: :class:`InstructEnv`.
    """

    def __init__(self, *, path: DatasetSource | None = None, heldout_fraction: float = 0.2,
                 skip_unsupported: bool = False, **kwargs: Any):
        tasks = IFEvalTasks(SAMPLE if path is None else path, heldout_fraction=heldout_fraction,
                            skip_unsupported=skip_unsupported)
        super().__init__(tasks, **kwargs)
