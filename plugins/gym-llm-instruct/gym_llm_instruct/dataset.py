"""IFEval-format datasets as task sets (``instruct/Dataset-v0``).

Rows (read by :func:`gym_llm.envs.datasets.read_rows`: ``.jsonl``, ``.json``,
``.parquet``, gzip, Hugging Face names or folders) hold ``prompt``,
``instruction_id_list`` and ``kwargs`` (one dict per id; ``None`` values
dropped, as IFEval's evaluation drops them). ``combination:repeat_prompt``
rows carry ``prompt_to_repeat`` as in IFEval. A row whose ids or arguments
this library does not support raises ``ValueError`` naming the row, unless
``skip_unsupported`` (then the row is left out).

``path`` is one source, split by the hash of each prompt (``heldout_fraction``
of them held out), or ``{"train": ..., "heldout": ...}`` (a split left out has
no tasks). The request check of a dataset task is the generic one (no known
topic: the response must share a content word with the prompt).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gym_llm.envs.datasets import DatasetSource, RowTasks, read_rows
from gym_llm.envs.tasks import Task, check_split, content_hash

from .constraints import validate

__all__ = ["IFEvalTasks", "SAMPLE", "DatasetSource"]

_DATA = Path(__file__).with_name("data")
#: The bundled sample (IFEval format, written for this package): the default
#: of ``instruct/Dataset-v0``, so it runs offline out of the box.
SAMPLE: dict[str, str] = {"train": str(_DATA / "sample_train.jsonl"), "heldout": str(_DATA / "sample_heldout.jsonl")}


def _row_task(row: dict[str, Any], where: str, split: str) -> Task:
    prompt, ids, kwargs = row.get("prompt"), row.get("instruction_id_list"), row.get("kwargs")
    if not isinstance(prompt, str) or not prompt.strip():
        raise ValueError(f"{where}: 'prompt' is empty or not text")
    if not isinstance(ids, list) or not ids:
        raise ValueError(f"{where}: 'instruction_id_list' must be a non-empty list")
    if kwargs is None:
        kwargs = [{} for _ in ids]
    if not isinstance(kwargs, list) or len(kwargs) != len(ids):
        raise ValueError(f"{where}: 'kwargs' must be a list of {len(ids)} dicts, one per instruction id")
    try:
        constraints = [validate({"id": i, "kwargs": k}) for i, k in zip(ids, kwargs, strict=True)]
    except ValueError as e:
        raise ValueError(f"{where}: {e}") from None
    metadata = {"constraints": constraints, "request": {"kind": "dataset"}}
    if "key" in row:
        metadata["key"] = row["key"]
    return Task(f"instruct-dataset-{content_hash([prompt, constraints])[:16]}", prompt, constraints, metadata,
                split=split)


@functools.lru_cache(maxsize=32)
def _load(path: str, stamp: tuple[int, int], split: str, hashed: float | None, skip: bool) -> tuple[Task, ...]:
    tasks: dict[str, Task] = {}
    threshold = None if hashed is None else int(hashed * 2**32)
    for k, row in enumerate(read_rows(path, split)):
        if threshold is not None and isinstance(row.get("prompt"), str):
            landed = "heldout" if int(content_hash(row["prompt"])[:8], 16) < threshold else "train"
            if landed != split:
                continue
        try:
            task = _row_task(row, f"{path} row {k}", split)
        except ValueError:
            if skip:
                continue
            raise
        tasks.setdefault(task.id, task)  # a row repeated verbatim is one task
    return tuple(tasks.values())


class IFEvalTasks(RowTasks):
    """Tasks from IFEval-format rows; each split is read on first use (cached
    per process, keyed by the file's size and modification time)."""

    def __init__(self, path: DatasetSource, *, heldout_fraction: float = 0.2, skip_unsupported: bool = False):
        super().__init__(path)
        self.hashed: float | None = None
        if not isinstance(path, Mapping):
            if not 0.0 < heldout_fraction < 1.0:
                raise ValueError(f"heldout_fraction must be in (0, 1), got {heldout_fraction}")
            self.hashed = heldout_fraction
        self.skip_unsupported = bool(skip_unsupported)

    def tasks(self, split: str) -> tuple[Task, ...]:
        split = check_split(split)
        if split not in self.paths:
            return ()
        path = self.paths[split]
        return _load(path, self.stamp(path), split, self.hashed, self.skip_unsupported)
