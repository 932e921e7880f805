"""Which task of which environment: :class:`TaskRef`, the one task identity
that plans, vector envs, Ray workers, the strict grader and the adapters for
other trainers all use.

By the determinism contract, an env made with ``make(env_id, split=split,
**kwargs)`` and reset with ``reset(seed=seed, options={"task_index": i})``
holds the same task every time, so these five values name it. Envs made
with equal ``(env_id, split, kwargs)`` are interchangeable
(:attr:`TaskRef.env_key`): whatever task one held before, a reset onto
another task gives exactly that task.

The row form (:data:`TASK_COLUMNS`, :meth:`TaskRef.to_row`,
:meth:`TaskRef.from_row`) is how a task travels in a dataset row of another
trainer (TRL, verl, SkyRL, verifiers): ``env_id``, ``split``, ``seed``,
``task_index`` and ``env_kwargs``, the make kwargs as a canonical JSON
object string so that any mix of kwargs fits one Arrow/Parquet column.
"""

from __future__ import annotations

import functools
import json
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gym_llm.envs.core import LLMEnv
from gym_llm.envs.registry import make
from gym_llm.envs.tasks import SPLITS

__all__ = ["TaskRef", "TASK_COLUMNS", "TaskColumnError", "canonical_kwargs"]

#: Columns that identify a task in a dataset row.
TASK_COLUMNS: tuple[str, ...] = ("env_id", "split", "seed", "task_index", "env_kwargs")

Observation = list[dict[str, Any]]


class TaskColumnError(ValueError):
    """A row lacks a task column, or holds a value that cannot identify a task.
    The message names the column and the value."""


def canonical_kwargs(env_kwargs: Mapping[str, Any]) -> str:
    """``env_kwargs`` as the canonical JSON object string rows carry (keys
    sorted, no spaces). Raises ``TypeError`` for a value JSON cannot hold."""
    if not env_kwargs:  # the common case, without a json.dumps (a per-completion cost)
        return "{}"
    try:
        return json.dumps(dict(env_kwargs), sort_keys=True, separators=(",", ":"))
    except TypeError as e:
        raise TypeError(f"env kwargs must be JSON values to travel in a dataset row: {e}") from None


@dataclass(frozen=True, eq=True)
class TaskRef:
    """One task: ``env_id`` made on ``split`` with ``kwargs``, reset with
    ``seed`` and ``options={"task_index": task_index}`` (a ``None`` task index:
    the task the seed draws; a ``None`` seed: the env's own draw)."""

    env_id: str
    split: str = "train"
    seed: int | None = None
    task_index: int | None = None
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    @functools.cached_property
    def env_key(self) -> str:
        """Equal for refs whose envs are interchangeable: the same id, split
        and kwargs (what pools key instances by). Kwargs JSON cannot hold
        count by their ``repr``."""
        if not self.kwargs:
            return f"{self.env_id}|{self.split}|{{}}"
        kwargs = json.dumps(dict(self.kwargs), sort_keys=True, separators=(",", ":"), default=repr)
        return f"{self.env_id}|{self.split}|{kwargs}"

    def __hash__(self) -> int:
        return hash((self.env_key, self.seed, self.task_index))

    @property
    def options(self) -> dict[str, Any] | None:
        """The reset options that pick the task (``None``: no task index)."""
        return None if self.task_index is None else {"task_index": self.task_index}

    def make(self) -> LLMEnv:
        """A new env this ref's task can be reset onto (the caller owns it)."""
        return make(self.env_id, split=self.split, seed=self.seed, **self.kwargs)

    def reset(self, env: LLMEnv) -> tuple[Observation, dict[str, Any]]:
        """Reset ``env`` (made from an equal :attr:`env_key`) onto this task."""
        return env.reset(seed=self.seed, options=self.options)

    async def areset(self, env: LLMEnv) -> tuple[Observation, dict[str, Any]]:
        """Async :meth:`reset`."""
        return await env.areset(seed=self.seed, options=self.options)

    # ------------------------------------------------------------ row form
    def to_row(self) -> dict[str, Any]:
        """The :data:`TASK_COLUMNS` of a dataset row (``TypeError`` for
        kwargs JSON cannot hold)."""
        return {"env_id": self.env_id, "split": self.split, "seed": self.seed,
                "task_index": self.task_index, "env_kwargs": canonical_kwargs(self.kwargs)}

    @classmethod
    def from_row(cls, row: Mapping[str, Any], *, env_id: str | None = None,
                 env_kwargs: Mapping[str, Any] | str | None = None) -> TaskRef:
        """Read a task from ``row`` (a dataset row, or verl's ``extra_info``).

        ``env_id``, if given, is the adapter's env id: a row may omit the
        column, and one that names another id is an error. ``env_kwargs`` are
        the adapter's kwargs: the row's own ``env_kwargs`` (a JSON object
        string or a mapping) win key by key, since they are what made the
        row's task; an adapter passes its kwargs as canonical JSON
        (:func:`canonical_kwargs`) to skip re-encoding them per row. Raises
        :class:`TaskColumnError` naming the column.
        """
        if not isinstance(row, Mapping):
            raise TaskColumnError(f"task row must be a mapping of columns, got {type(row).__name__}")
        row_id = row.get("env_id")
        if row_id is None:
            if env_id is None:
                raise TaskColumnError("missing task column 'env_id'")
            row_id = env_id
        elif not isinstance(row_id, str):
            raise TaskColumnError(f"task column 'env_id' must be a string, got {row_id!r}")
        elif env_id is not None and row_id != env_id:
            raise TaskColumnError(f"task column 'env_id' is {row_id!r} but this adapter scores {env_id!r}")
        seed, task_index = _int_column(row, "seed"), _int_column(row, "task_index")
        split = row.get("split", "train")
        if split not in SPLITS:
            raise TaskColumnError(f"task column 'split' must be 'train' or 'heldout', got {split!r}")
        defaults = env_kwargs if isinstance(env_kwargs, str) else canonical_kwargs(env_kwargs or {})
        raw = row.get("env_kwargs")
        if raw is None or isinstance(raw, str):
            merged = _merge_kwargs(raw, defaults)
        elif isinstance(raw, Mapping):
            merged = _merge_kwargs(canonical_kwargs(raw), defaults)
        else:
            raise TaskColumnError(f"task column 'env_kwargs' must be a JSON object, got {raw!r}")
        ref = cls(row_id, split, seed, task_index, dict(_parsed_kwargs(merged)))
        # the key from the JSON in hand, not encoded again (a per-completion cost)
        ref.__dict__["env_key"] = f"{row_id}|{split}|{merged}"
        return ref


@functools.lru_cache(maxsize=4096)
def _merge_kwargs(raw: str | None, defaults: str) -> str:
    """The canonical JSON of ``defaults`` updated by the row's ``raw`` kwargs
    (cached: a dataset repeats a handful of kwargs across all its rows)."""
    if raw is None:
        return defaults
    try:
        parsed = json.loads(raw)
    except (ValueError, RecursionError) as e:
        raise TaskColumnError(f"task column 'env_kwargs' is not JSON ({e}): {raw[:80]!r}") from None
    if not isinstance(parsed, dict):
        raise TaskColumnError(f"task column 'env_kwargs' must be a JSON object, got {raw[:80]!r}")
    if defaults == "{}":
        return canonical_kwargs(parsed)
    return canonical_kwargs({**json.loads(defaults), **parsed})


@functools.lru_cache(maxsize=4096)
def _parsed_kwargs(canonical: str) -> dict[str, Any]:
    """Canonical kwargs JSON parsed (cached: callers copy it)."""
    return json.loads(canonical)


def _int_column(row: Mapping[str, Any], column: str) -> int:
    """The integer in ``row[column]``; raises :class:`TaskColumnError` naming it."""
    value = row.get(column)
    if type(value) is int:  # the common case, without the ABC checks below (a per-completion cost)
        return value
    if value is None:
        raise TaskColumnError(f"missing task column {column!r}")
    # numbers.Real: Parquet/NumPy hand back numpy integers
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or int(value) != value:
        raise TaskColumnError(f"task column {column!r} must be an integer, got {value!r}")
    return int(value)
