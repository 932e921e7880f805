"""JSON as gym-llm writes it: one rule for values JSON cannot hold, one
atomic writer.

JSON has no NaN or infinity; a metric, reward or result that is not finite
is written as ``null`` everywhere (metrics.jsonl, trajectories, results.json).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

__all__ = ["finite", "write_json"]


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
