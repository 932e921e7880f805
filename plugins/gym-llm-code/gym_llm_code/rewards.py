"""The code verifiers outside environments: a TRL-style reward function over
the bundled problems.

    from gym_llm_code.rewards import CodeReward, dataset_rows
    rows = dataset_rows("functions", "train")          # [{"prompt": [...], "problem": "add"}, ...]
    reward = CodeReward("functions")
    reward(prompts, completions, problem=["add", ...])  # -> [1.0, 0.0, ...]

``trl.GRPOTrainer(reward_funcs=[CodeReward()], train_dataset=Dataset.from_list(rows))``
passes the ``problem`` column to the reward function, as TRL does with every
dataset column.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Sequence
from typing import Any, Literal

from gym_llm.parsing import message_text
from gym_llm.sandbox import Sandbox

from .envs import function_task, stdio_task
from .problems import function_problems, stdio_problems
from .verify import GradingPolicy, averify, function_steps, stdio_steps

__all__ = ["CodeReward", "dataset_rows"]

Kind = Literal["functions", "stdio"]


def _problems(kind: Kind) -> dict[str, Any]:
    if kind == "functions":
        return {p.name: p for p in function_problems()}
    if kind == "stdio":
        return {p.name: p for p in stdio_problems()}
    raise ValueError(f"kind must be 'functions' or 'stdio', got {kind!r}")


def dataset_rows(kind: Kind = "functions", split: str = "train") -> list[dict[str, Any]]:
    """The bundled problems of ``split`` as rows ``{"prompt": [chat message],
    "problem": name, "difficulty": d}`` (TRL's conversational prompt format)."""
    to_task = function_task if kind == "functions" else stdio_task
    rows = []
    for name, problem in _problems(kind).items():
        task = to_task(problem)
        if task.split == split:
            rows.append({"prompt": task.messages(), "problem": name, "difficulty": task.difficulty})
    return rows


class CodeReward:
    """Score completions to bundled problems in the sandbox (all of a batch
    concurrently). ``kind``: ``"functions"`` or ``"stdio"``; ``rotation``
    picks the random tests (fixed, so scores are reproducible); the other
    kwargs are :class:`~gym_llm_code.verify.GradingPolicy` fields.

    Call it as ``reward(prompts, completions, problem=[...])``: completions are
    strings or lists of chat messages (the last assistant message is scored);
    returns one float per completion. ``last_results`` keeps the full
    :class:`~gym_llm.RewardResult` of each (components, reasons).
    """

    def __init__(self, kind: Kind = "functions", *, rotation: int = 0, sandbox: Sandbox | None = None,
                 **policy: Any):
        self.problems = _problems(kind)
        self.kind = kind
        self.rotation = rotation
        self.sandbox = sandbox
        self.policy = GradingPolicy(**policy)
        self.__name__ = f"code_{kind}_reward"  # TRL logs reward functions by name
        self.last_results: list[Any] = []

    def __call__(self, prompts: Sequence[Any], completions: Sequence[Any], problem: Sequence[str],
                 **kwargs: Any) -> list[float]:
        texts = [message_text(c[-1]) if isinstance(c, list) and c else message_text(c) for c in completions]
        steps = function_steps if self.kind == "functions" else stdio_steps

        async def score_all():
            return await asyncio.gather(*(
                averify(steps(self.problems[name], text, self.rotation, self.policy), self.sandbox)
                for name, text in zip(problem, texts, strict=True)))

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            results = asyncio.run(score_all())
        else:  # called from inside an event loop: score on a thread of our own
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                results = pool.submit(asyncio.run, score_all()).result()
        self.last_results = list(results)
        return [r.score for r in results]
