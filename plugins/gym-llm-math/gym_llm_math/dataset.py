"""Math datasets as task sets, in GSM8K, MATH or bare-answer format: rows read
by :func:`gym_llm.envs.datasets.read_rows` (``.jsonl``, ``.json``,
``.parquet``, ``.jsonl.gz``/``.json.gz``, a Hugging Face dataset name or folder).

Rows need a question (``question`` or ``problem``) and an answer (``answer``
or ``solution``); the gold answer is read from it by
:func:`gym_llm_math.extract_gold` (``#### N``, else the last ``\\boxed{}``,
else the last "the answer is ...", else the whole text; a prose solution
with no marked answer is scored as ``info["reward_error"]``). A row's ``level`` ("Level 3", or 1..5 as in MATH)
becomes the task's difficulty ((level - 1) / 4).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

from gym_llm.envs.datasets import DatasetSource, RowTasks, read_rows
from gym_llm.envs.tasks import Task, check_split, content_hash

from .answers import extract_gold

__all__ = ["DatasetTasks", "DatasetSource", "SAMPLE"]

_DATA = Path(__file__).with_name("data")
#: The bundled sample (GSM8K format, written for this package): the default of
#: ``math/Dataset-v0``, so it runs offline out of the box.
SAMPLE: dict[str, str] = {"train": str(_DATA / "sample_train.jsonl"), "heldout": str(_DATA / "sample_heldout.jsonl")}

_QUESTION_KEYS = ("question", "problem")
_ANSWER_KEYS = ("answer", "solution")


def _pick(row: dict[str, Any], key: str | None, candidates: tuple[str, ...], what: str, where: str) -> Any:
    for k in (key,) if key else candidates:
        if k in row and row[k] is not None:
            return row[k]
    wanted = repr(key) if key else " or ".join(map(repr, candidates))
    raise ValueError(f"{where}: row has no {what} field {wanted} (fields: {sorted(row)})")


def _level(row: dict[str, Any]) -> float:
    level = row.get("level")
    m = re.search(r"\d+", str(level)) if level is not None else None
    if m is None:
        return 0.0
    return min(1.0, max(0.0, (int(m.group()) - 1) / 4))


def _gold_format(raw: Any) -> str:
    if isinstance(raw, str) and "####" in raw:
        return "gsm8k"
    if isinstance(raw, str) and "\\boxed" in raw:
        return "math"
    return "bare"


@functools.lru_cache(maxsize=32)
def _load_tasks(
    path: str, stamp: tuple[int, int], split: str, hf_config: str | None,
    question_key: str | None, answer_key: str | None,
) -> tuple[Task, ...]:
    rows = read_rows(path, split, hf_config=hf_config)
    tasks = []
    seen: dict[str, int] = {}
    for k, row in enumerate(rows):
        where = f"{path} row {k}"
        question = _pick(row, question_key, _QUESTION_KEYS, "question", where)
        raw = _pick(row, answer_key, _ANSWER_KEYS, "answer", where)
        if not isinstance(question, str) or not question.strip():
            raise ValueError(f"{where}: the question is empty or not text")
        digest = content_hash(question)[:16]
        # A question repeated within a file keeps one id per occurrence.
        seen[digest] = seen.get(digest, 0) + 1
        task_id = f"math-dataset-{digest}" + (f"-{seen[digest]}" if seen[digest] > 1 else "")
        metadata = {"row": k, "source": path, "gold_format": _gold_format(raw)}
        for extra in ("type", "subject", "unique_id"):
            if extra in row:
                metadata[extra] = row[extra]
        tasks.append(Task(task_id, question, extract_gold(raw), metadata, split=split, difficulty=_level(row)))
    return tuple(tasks)


class DatasetTasks(RowTasks):
    """Tasks read from a dataset; each split is loaded on first use (and cached
    per process, keyed by the file's size and modification time).

    ``path``: one file or dataset name (with one file, all its rows form
    whichever split is asked for, and ``task_index`` k is row k), or a mapping
    ``{"train": ..., "heldout": ...}``. ``max_difficulty``: keep only rows at
    most this difficult (a curriculum over MATH levels); indices then count
    the kept rows.
    """

    def __init__(
        self,
        path: DatasetSource,
        *,
        hf_config: str | None = None,
        question_key: str | None = None,
        answer_key: str | None = None,
        max_difficulty: float | None = None,
    ):
        super().__init__(path)
        self.hf_config, self.question_key, self.answer_key = hf_config, question_key, answer_key
        if max_difficulty is not None and not 0.0 <= max_difficulty <= 1.0:
            raise ValueError(f"difficulty must be in [0, 1], got {max_difficulty}")
        self.max_difficulty = max_difficulty

    def tasks(self, split: str) -> tuple[Task, ...]:
        split = check_split(split)
        if split not in self.paths:
            raise ValueError(f"no dataset given for split {split!r} (have {sorted(self.paths)})")
        path = self.paths[split]
        tasks = _load_tasks(path, self.stamp(path), split, self.hf_config, self.question_key, self.answer_key)
        if self.max_difficulty is None:
            return tasks
        return tuple(t for t in tasks if t.difficulty <= self.max_difficulty)
