"""JSON as gym-llm writes it: one rule for values JSON cannot hold, one
atomic writer; and one reader of JSON Lines datasets that names the file and
line of a malformed row.

JSON has no NaN or infinity; a metric, reward or result that is not finite
is written as ``null`` everywhere (metrics.jsonl, trajectories, results.json).
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["dumps_utf8", "utf8_text", "finite", "write_json", "parse_jsonl"]

_SURROGATE = re.compile("[\ud800-\udfff]")


def utf8_text(text: str) -> str:
    """``text`` with each lone surrogate (bytes that were not UTF-8, kept by
    ``surrogateescape``: a jailed program's output or file names) replaced by
    U+FFFD, so it encodes as UTF-8: what env messages and server replies carry."""
    return text if text.isascii() or not _SURROGATE.search(text) else _SURROGATE.sub("\ufffd", text)


def parse_jsonl(lines: Iterable[str], source: str | os.PathLike) -> list[Any]:
    """The JSON value of each non-blank line of ``lines`` (a dataset file's,
    read from ``source``); ``ValueError`` naming ``source:line`` and what is
    wrong at the first malformed one."""
    rows = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as e:
            raise ValueError(f"{os.fspath(source)}:{number}: malformed JSON row ({e.msg} at column {e.colno})") from None
        except ValueError as e:  # an integer of more digits than Python converts
            raise ValueError(f"{os.fspath(source)}:{number}: malformed JSON row ({e})") from None
    return rows


def dumps_utf8(obj: Any, **kwargs: Any) -> str:
    """``json.dumps`` keeping non-ASCII text as is wherever the result can be written
    as UTF-8. A string holding lone surrogates cannot (a file name that is not UTF-8,
    decoded with ``surrogateescape``, say: a jailed program chooses its file names), so
    then the whole value is written with ASCII escapes (``\\udcff``), which read back
    to the same strings, instead of failing the write and losing the file."""
    text = json.dumps(obj, ensure_ascii=False, **kwargs)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(obj, **kwargs)
    return text


def finite(obj: Any) -> Any:
    """``obj`` with every non-finite float replaced by ``None``, recursing
    into dicts, lists and tuples (tuples become lists)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [finite(v) for v in obj]
    return obj


def write_json(path: str | os.PathLike, obj: Any) -> None:
    """Write ``obj`` (non-finite floats as null) to ``path`` atomically: a
    temp file beside it, then a rename, so a reader never sees half a file."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(finite(obj), indent=1, allow_nan=False))
    os.replace(tmp, path)
