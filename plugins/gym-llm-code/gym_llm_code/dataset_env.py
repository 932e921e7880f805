"""``code/Dataset-v0``: code tasks from dataset rows in HumanEval, MBPP or
stdin/stdout format (:mod:`gym_llm_code.dataset_rows`), read by
:func:`gym_llm.envs.datasets.read_rows` (``.jsonl``, ``.jsonl.gz``, ``.json``,
``.json.gz``, ``.parquet``, a Hugging Face dataset name or folder). One file
holds all rows of the split it is loaded for; ``task_index`` k is row k.
Answers are graded by :mod:`gym_llm_code.assertion_grading` (HumanEval, MBPP)
and :func:`gym_llm_code.verify.stdio_steps`.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from importlib import resources
from typing import Any

from gym_llm.envs.datasets import DatasetSource, read_rows
from gym_llm.envs.rewards import RewardResult
from gym_llm.envs.tasks import Task, TaskList, check_split

from .assertion_grading import assertion_steps
from .dataset_rows import AssertionItem, StdioItem, parse_row
from .envs import CodeEnv
from .harness import Steps
from .verify import GradingPolicy, stdio_steps

__all__ = ["DatasetEnv", "DEFAULT_PATH"]

#: The dataset ``code/Dataset-v0`` loads by default: bundled tasks exported
#: to the three formats (see :func:`~gym_llm_code.dataset_rows.sample_rows`).
DEFAULT_PATH = {"train": "sample-train.jsonl", "heldout": "sample-heldout.jsonl"}


def _resolve_default(name: str) -> str:
    return str(resources.files("gym_llm_code") / "data" / name)


class DatasetEnv(CodeEnv):
    """Code tasks loaded from a dataset: HumanEval, MBPP or stdin/stdout format,
    from a .jsonl/.jsonl.gz/.json/.json.gz/.parquet file, or a Hugging Face
    dataset name or folder (:func:`gym_llm.envs.datasets.read_rows`).

    Kwargs: ``path`` -- one file (all its rows form the requested split) or
    ``{"train": ..., "heldout": ...}`` (default: a bundled sample in all three
    formats); ``format`` (``"auto"`` per row, or ``humaneval``/``mbpp``/``stdio``);
    ``hf_config`` and ``hf_splits`` (default ``{"train": "train", "heldout":
    "test"}``) for Hugging Face datasets; ``challenge_tests`` adds MBPP's
    ``challenge_test_list``; ``raw_completions`` (default: HumanEval rows only)
    takes an unfenced answer as the completion; ``name`` prefixes task ids
    (default: the file or dataset name). Datasets have fixed tests only:
    ``tests`` must be ``"fixed"`` (``"both"`` is read as ``"fixed"``), and
    the other :class:`~gym_llm_code.envs.CodeEnv` kwargs apply.
    """

    def __init__(
        self,
        *,
        path: DatasetSource | None = None,
        format: str = "auto",
        hf_config: str | None = None,
        hf_splits: Mapping[str, str] | None = None,
        challenge_tests: bool = False,
        raw_completions: bool | None = None,
        name: str | None = None,
        split: str = "train",
        tests: str = "fixed",
        **kwargs: Any,
    ):
        split = check_split(split)
        if tests == "random":
            raise ValueError("dataset tasks have fixed tests only: use tests='fixed'")
        if path is None:
            path = {s: _resolve_default(f) for s, f in DEFAULT_PATH.items()}
        source = path.get(split) if isinstance(path, Mapping) else path
        if source is None:
            raise ValueError(f"no dataset file given for split {split!r}")
        rows = read_rows(str(source), split, hf_config=hf_config, hf_splits=hf_splits)
        label = name or os.path.basename(str(source)).split(".")[0] or str(source)
        self.items: dict[str, AssertionItem | StdioItem] = {}
        #: What the strict grader verifies (:meth:`strict_steps`).
        self.strict_items: dict[str, AssertionItem | StdioItem] = {}
        tasks = []
        for i, row in enumerate(rows):
            item = parse_row(row, i, format, challenge_tests)
            task_id = f"{label}/{item.task_id}"
            if task_id in self.items:
                task_id = f"{task_id}#{i}"
            self.items[task_id] = item
            self.strict_items[task_id] = _strict_item(row, i, format, item)
            tasks.append(self._task(task_id, item, split))
        self.raw_completions = raw_completions
        super().__init__(TaskList(tasks), split=split, tests="fixed", **kwargs)

    @staticmethod
    def _task(task_id: str, item: AssertionItem | StdioItem, split: str) -> Task:
        if isinstance(item, StdioItem):
            p = item.problem
            prompt = (f"{p.statement}\n\nWrite a complete program that reads standard input and writes "
                      "standard output. Reply with it in a single ```python or ```cpp code block.")
            return Task(id=task_id, prompt=prompt, answer=p.reference or None, split=split,
                        metadata={"format": "stdio", "tests": len(p.tests)})
        return Task(id=task_id, prompt=item.prompt, answer=item.solution or None, split=split,
                    metadata={"format": item.format, "entry_point": item.entry_point,
                              "harness": "split" if item.checks is not None else "in-process"})

    def steps(self, task: Task, text: str) -> Steps[RewardResult]:
        return self._steps(self.items[task.id], text, self.policy)

    def strict_steps(self, task: Task, text: str) -> Steps[RewardResult]:
        """Every test the row holds (:func:`_strict_item`), every one must
        pass: a dataset has no generator, so no fresh random tests."""
        return self._steps(self.strict_items[task.id], text, dataclasses.replace(self.policy, reward="passed"))

    def _steps(self, item: AssertionItem | StdioItem, text: str, policy: GradingPolicy) -> Steps[RewardResult]:
        if isinstance(item, StdioItem):
            return stdio_steps(item.problem, text, self.current_rotation, policy)
        raw = self.raw_completions if self.raw_completions is not None else item.format == "humaneval"
        return assertion_steps(item, text, policy, raw)


def _strict_item(row: Mapping[str, Any], index: int, format: str,
                 item: AssertionItem | StdioItem) -> AssertionItem | StdioItem:
    """The strict grader's version of a row: MBPP with its
    ``challenge_test_list`` (when the row has one), stdin/stdout with the
    public example counted as a hidden test too; otherwise ``item`` (HumanEval
    rows hold no more tests than training runs)."""
    if isinstance(item, StdioItem):
        p = item.problem
        if p.tests == p.examples:  # a one-test row already grades its only test
            return item
        return StdioItem(item.task_id, dataclasses.replace(p, tests=p.examples + p.tests))
    if item.format == "mbpp" and row.get("challenge_test_list"):
        return parse_row(row, index, format, challenge_tests=True)
    return item
