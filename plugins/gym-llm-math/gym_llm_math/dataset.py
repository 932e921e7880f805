"""Math datasets as task sets: ``.jsonl``, ``.json``, ``.parquet`` files or a
Hugging Face dataset, in GSM8K, MATH or bare-answer format.

Rows need a question (``question`` or ``problem``) and an answer (``answer``
or ``solution``); the gold answer is read from it by
:func:`gym_llm_math.extract_gold` (``#### N``, else the last ``\\boxed{}``,
else the last "the answer is ...", else the whole text; a prose solution
with no marked answer is scored as ``info["reward_error"]``). A row's ``level`` ("Level 3", or 1..5 as in MATH)
becomes the task's difficulty ((level - 1) / 4).
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gym_llm import Task, TaskSet
from gym_llm.envs.jsonio import parse_jsonl
from gym_llm.envs.tasks import check_split, content_hash

from .answers import extract_gold

__all__ = ["DatasetTasks", "DatasetSource", "load_rows", "SAMPLE"]

_DATA = Path(__file__).with_name("data")
#: The bundled sample (GSM8K format, written for this package): the default of
#: ``math/Dataset-v0``, so it runs offline out of the box.
SAMPLE: dict[str, str] = {"train": str(_DATA / "sample_train.jsonl"), "heldout": str(_DATA / "sample_heldout.jsonl")}

DatasetSource = str | os.PathLike | Mapping[str, "str | os.PathLike"]

_QUESTION_KEYS = ("question", "problem")
_ANSWER_KEYS = ("answer", "solution")
#: Hugging Face split read for each of our splits when ``path`` is a dataset name.
HF_SPLITS = {"train": "train", "heldout": "test"}


def load_rows(path: str | os.PathLike, split: str = "train", hf_config: str | None = None) -> list[dict[str, Any]]:
    """The rows of a ``.jsonl``/``.json``/``.parquet`` file in file order, or of
    split ``HF_SPLITS[split]`` of a Hugging Face dataset (a hub name or a local
    dataset folder, loaded with ``datasets.load_dataset(path, hf_config)``)."""
    p = Path(path)
    if p.is_file():
        suffix = p.suffix.lower()
        if suffix == ".jsonl":
            with p.open(encoding="utf-8") as f:
                return parse_jsonl(f, p)
        if suffix == ".json":
            data = json.loads(p.read_text(encoding="utf-8"))
            if not isinstance(data, list):
                raise ValueError(f"{p}: a .json dataset must be a list of row objects")
            return data
        if suffix == ".parquet":
            import pyarrow.parquet as pq

            return pq.read_table(p).to_pylist()
        raise ValueError(f"{p}: unsupported dataset file type {suffix!r} (use .jsonl, .json or .parquet)")
    try:
        import datasets
    except ImportError as e:
        raise ValueError(
            f"{path!r} is not a file, and loading it as a Hugging Face dataset needs `datasets` "
            "(pip install gym-llm-math[data])"
        ) from e
    return list(datasets.load_dataset(str(path), hf_config, split=HF_SPLITS[split]))


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
    rows = load_rows(path, split, hf_config)
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


class DatasetTasks(TaskSet):
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
        if isinstance(path, Mapping):
            unknown = {check_split(s) for s in path} - {"train", "heldout"}
            if unknown:
                raise ValueError(f"unknown splits in dataset mapping: {sorted(unknown)}")
            self.paths = {check_split(s): os.fspath(p) for s, p in path.items()}
        else:
            self.paths = {"train": os.fspath(path), "heldout": os.fspath(path)}
        self.hf_config, self.question_key, self.answer_key = hf_config, question_key, answer_key
        if max_difficulty is not None and not 0.0 <= max_difficulty <= 1.0:
            raise ValueError(f"difficulty must be in [0, 1], got {max_difficulty}")
        self.max_difficulty = max_difficulty

    def tasks(self, split: str) -> tuple[Task, ...]:
        split = check_split(split)
        if split not in self.paths:
            raise ValueError(f"no dataset given for split {split!r} (have {sorted(self.paths)})")
        path = self.paths[split]
        try:
            st = os.stat(path)
            stamp = (st.st_size, st.st_mtime_ns)
        except OSError:  # a Hugging Face dataset name
            stamp = (0, 0)
        tasks = _load_tasks(path, stamp, split, self.hf_config, self.question_key, self.answer_key)
        if self.max_difficulty is None:
            return tasks
        return tuple(t for t in tasks if t.difficulty <= self.max_difficulty)

    def size(self, split: str) -> int:
        return len(self.tasks(split))

    def get(self, split: str, index: int) -> Task:
        tasks = self.tasks(split)
        if not 0 <= index < len(tasks):
            raise IndexError(f"task_index {index} out of range for split {split!r} ({len(tasks)} tasks)")
        return tasks[index]
