"""Dataset rows, read one way for every domain: the reader behind
``math/Dataset-v0``, ``code/Dataset-v0`` and any env that loads rows.

Sources, by what ``source`` names:

* a file: ``.jsonl`` (one JSON object a line; blank lines skipped), ``.json``
  (a list of objects, or an object holding that list under ``"rows"`` or
  ``"data"``), ``.parquet`` (needs ``pyarrow``), or ``.jsonl.gz`` /
  ``.json.gz`` (the same, gzip-compressed);
* a folder: a Hugging Face dataset saved with ``save_to_disk``, or a folder of
  data files as ``datasets.load_dataset`` reads it (needs ``datasets``);
* a Hugging Face hub name such as ``openai/gsm8k`` (needs ``datasets`` and,
  unless cached, the network).

One file holds the rows of whichever split it is read for. A folder or hub
dataset has splits of its own: ours map to theirs through :data:`HF_SPLITS`.
A file that exists but cannot be read raises :class:`DatasetFileError`, whose
message names the file (and, for a malformed JSON Lines row, the line) and
the reason; a source that is neither a file, a folder nor a hub name raises
``FileNotFoundError`` at once, without asking the hub
(:func:`local_path_reason` is the rule for what is a local path; ``~`` is
expanded). ``pyarrow`` and ``datasets`` are imported only when a
source needs them.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import zlib
from abc import abstractmethod
from collections.abc import Mapping
from typing import Any

from .jsonio import parse_jsonl
from .tasks import Task, TaskSet, check_split

__all__ = [
    "read_rows", "local_path_reason", "DatasetFileError", "HF_SPLITS", "FILE_TYPES", "DATA_FILE_ENDINGS",
    "DatasetSource", "RowTasks",
]

#: What a dataset env's ``path`` takes: one source for both splits, or ``{"train": ..., "heldout": ...}``.
DatasetSource = str | os.PathLike | Mapping[str, "str | os.PathLike"]

#: The Hugging Face split read for each of our splits (folders, hub names).
HF_SPLITS: dict[str, str] = {"train": "train", "heldout": "test"}

#: The file name endings :func:`read_rows` reads (case-insensitive).
FILE_TYPES = (".jsonl", ".jsonl.gz", ".json", ".json.gz", ".parquet")

#: What a hub name looks like (``name`` or ``owner/name``); any other missing
#: path is a file that is not there (:func:`local_path_reason`).
_HUB_NAME = re.compile(r"[A-Za-z0-9][\w.-]*(/[\w.-]+)?")

#: Endings of data files (ours and other tools'): a missing source ending so is
#: a file, never a hub name (hub names hold dots too, e.g. ``AI-MO/NuminaMath-1.5``).
DATA_FILE_ENDINGS = (*FILE_TYPES, ".gz", ".zst", ".xz", ".bz2", ".zip", ".csv", ".tsv", ".txt", ".arrow")


class DatasetFileError(ValueError):
    """A dataset source that exists but cannot be read. The message names it
    (``path: reason``, or ``path:line: reason`` for a malformed JSON Lines
    row); ``path`` is the file or folder."""

    def __init__(self, message: str, *, path: str):
        super().__init__(message)
        self.path = path


def _unreadable(path: str, reason: str) -> DatasetFileError:
    return DatasetFileError(f"{path}: {reason}", path=path)


def read_rows(
    source: str | os.PathLike,
    split: str = "train",
    *,
    hf_config: str | None = None,
    hf_splits: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Every row of ``source`` in order, each a ``dict``.

    ``split`` (``train`` or ``heldout``; ``test`` means ``heldout``) picks the
    split of a folder or hub dataset: ``HF_SPLITS`` overridden by
    ``hf_splits``; ``hf_config`` is the hub dataset's config. A file ignores
    both. Raises :class:`DatasetFileError` for a file or folder it cannot
    read, ``FileNotFoundError`` for a source that is not there, and
    ``ImportError`` when the source needs ``pyarrow`` or ``datasets`` and it
    is not installed.
    """
    path = os.path.expanduser(os.fspath(source))
    hf_split = {**HF_SPLITS, **(hf_splits or {})}[check_split(split)]
    if os.path.isfile(path):
        return _objects(path, _read_file(path))
    if os.path.isdir(path):
        return _read_folder(path, hf_split, hf_config)
    local = local_path_reason(path)
    if local:
        raise FileNotFoundError(f"no dataset file or folder {path!r} (read as a local path, not a Hugging Face "
                                f"hub name: {local})")
    datasets = _import("datasets", f"{path!r} is not a file; reading it as a Hugging Face dataset")
    return [dict(row) for row in datasets.load_dataset(path, hf_config, split=hf_split)]


def local_path_reason(path: str) -> str | None:
    """Why the missing source ``path`` is a local path rather than a Hugging
    Face hub name (``None``: it may be a hub name, and only then is the hub
    asked). The rule: a hub name is ``name`` or ``owner/name`` (letters,
    digits, ``_``, ``.``, ``-``); a source is local when it is not of that
    form (``./x``, ``../x``, ``/abs``, ``~/x``, ``a/b/c``), ends as a data file
    does (:data:`DATA_FILE_ENDINGS`), or its first part is a folder that exists
    here (``data/nope`` beside a ``data/`` folder)."""
    if not _HUB_NAME.fullmatch(path):
        return "a hub name is NAME or OWNER/NAME"
    if path.lower().endswith(DATA_FILE_ENDINGS):
        return "it ends as a data file does"
    owner, sep, _ = path.partition("/")
    if sep and os.path.isdir(owner):
        return f"{owner}/ is a folder here"
    return None


def _read_file(path: str) -> list[Any]:
    name = path.lower()
    if name.endswith(".parquet"):
        return _read_parquet(path)
    lines = name.endswith((".jsonl", ".jsonl.gz"))
    if not lines and not name.endswith((".json", ".json.gz")):
        raise _unreadable(path, f"unsupported dataset file type {os.path.splitext(name)[1]!r} "
                                f"(use {', '.join(FILE_TYPES)})")
    try:
        with (gzip.open(path, "rt", encoding="utf-8") if name.endswith(".gz")
              else open(path, encoding="utf-8")) as f:
            return parse_jsonl(f, path) if lines else _json_rows(path, f.read())
    except DatasetFileError:
        raise
    except UnicodeDecodeError as e:
        raise _unreadable(path, f"not UTF-8 text ({e})") from None
    except (gzip.BadGzipFile, EOFError, zlib.error) as e:
        raise _unreadable(path, f"corrupt or truncated gzip data ({e})") from None
    except RecursionError:
        raise _unreadable(path, "JSON nested too deeply") from None
    except OSError as e:
        raise _unreadable(path, e.strerror or str(e)) from None
    except ValueError as e:  # parse_jsonl's malformed row, already naming path and line
        raise DatasetFileError(str(e), path=path) from None


def _json_rows(path: str, text: str) -> list[Any]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise _unreadable(path, f"malformed JSON ({e.msg} at line {e.lineno} column {e.colno})") from None
    except ValueError as e:  # an integer of more digits than Python converts
        raise _unreadable(path, f"malformed JSON ({e})") from None
    if isinstance(data, dict):
        data = data.get("rows", data.get("data"))
    if not isinstance(data, list):
        raise _unreadable(path, 'a .json dataset must be a list of row objects, or an object holding '
                                'that list under "rows" or "data"')
    return data


def _read_parquet(path: str) -> list[Any]:
    pa = _import("pyarrow", f"reading {path}")
    import pyarrow.parquet as pq

    try:
        return pq.read_table(path).to_pylist()
    except (pa.ArrowException, ValueError, OSError) as e:
        raise _unreadable(path, f"not a readable Parquet file ({e})") from None


def _read_folder(path: str, hf_split: str, hf_config: str | None) -> list[dict[str, Any]]:
    datasets = _import("datasets", f"reading the dataset folder {path}")
    # save_to_disk writes state.json (one dataset) or dataset_dict.json (splits);
    # any other folder holds data files for load_dataset.
    if not os.path.exists(os.path.join(path, "state.json")) and not os.path.exists(
            os.path.join(path, "dataset_dict.json")):
        return [dict(row) for row in datasets.load_dataset(path, hf_config, split=hf_split)]
    saved = datasets.load_from_disk(path)
    if isinstance(saved, datasets.DatasetDict):
        if hf_split not in saved:
            raise _unreadable(path, f"the saved dataset has no split {hf_split!r} (it has {sorted(saved)})")
        saved = saved[hf_split]
    return [dict(row) for row in saved]


def _objects(path: str, rows: list[Any]) -> list[dict[str, Any]]:
    for k, row in enumerate(rows):
        if not isinstance(row, dict):
            raise _unreadable(path, f"row {k} is a {type(row).__name__}, not an object of named fields")
    return rows


def _import(module: str, purpose: str) -> Any:
    """``module``, or an ``ImportError`` saying what needed it and how to install it."""
    try:
        return __import__(module)
    except ImportError as e:
        raise ImportError(f"{purpose} needs `{module}`: pip install {module} "
                          "(or the domain's [data] extra, e.g. gym-llm-math[data])") from e


class RowTasks(TaskSet):
    """A task set read from dataset rows: ``paths`` maps each split to its
    source (one source serves both splits; a mapping's keys are checked
    splits); a subclass reads a split's tasks in :meth:`tasks`, keyed by
    :meth:`stamp` so a per-process cache reads an edited file again; size and
    indexing follow from them."""

    def __init__(self, path: DatasetSource):
        if isinstance(path, Mapping):
            self.paths = {check_split(s): os.fspath(p) for s, p in path.items()}
        else:
            self.paths = {"train": os.fspath(path), "heldout": os.fspath(path)}

    @staticmethod
    def stamp(path: str) -> tuple[int, int]:
        """``(size, mtime_ns)`` of a local file; ``(0, 0)`` for a Hugging Face name."""
        try:
            st = os.stat(path)
        except OSError:
            return (0, 0)
        return (st.st_size, st.st_mtime_ns)

    @abstractmethod
    def tasks(self, split: str) -> tuple[Task, ...]:
        """The tasks of ``split``, in row order."""

    def size(self, split: str) -> int:
        return len(self.tasks(split))

    def get(self, split: str, index: int) -> Task:
        tasks = self.tasks(split)
        if not 0 <= index < len(tasks):
            raise IndexError(f"task_index {index} out of range for split {split!r} ({len(tasks)} tasks)")
        return tasks[index]
