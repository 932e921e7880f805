"""The one owner of "which task is this row" and "what does ``env.step`` give
this completion on it", shared by every adapter in :mod:`gym_llm.apps.integrations`.

Stable API (the TRL, verl, SkyRL and verifiers adapters are built on it):

* :data:`TASK_COLUMNS`: the columns a dataset row carries to identify its
  task: ``env_id``, ``split``, ``seed``, ``task_index`` and ``env_kwargs``
  (the environment's keyword arguments as a canonical JSON object string, so
  any mix of kwargs fits one Arrow/Parquet column).
* :class:`TaskRef`: that identity as a value. ``TaskRef.from_row(row)`` reads
  it back from a row (or a verl ``extra_info``) and raises
  :class:`TaskColumnError` naming the missing or malformed column;
  ``ref.to_row()`` writes the columns.
* :func:`task_rows`: ``n`` rows of an env id, each the prompt messages, the
  tools offered (or ``None``), ``task_id`` and the identity columns. Row ``i``
  is the task ``env.reset(seed=seed + i)`` picks, so the rows are exactly the
  tasks our own rollouts would draw with those seeds.
* :func:`score` / :func:`ascore`: reset the environment on the task
  (``reset(seed=ref.seed, options={"task_index": ref.task_index})``) and step
  it with the completion (a string, an assistant message dict, or a list of
  chat messages whose last assistant message is the turn), returning a
  :class:`Score` with the step's reward, reward components, reason and
  ``reward_error``. Equal to ``env.step`` by construction: it *is* ``env.step``
  on an environment made with the same id, split and kwargs.
* :func:`score_row` / :func:`score_rows`: :func:`score` on the task a row
  names, never raising on a row that names none (it gets :func:`error_score`).
* :func:`error_score`: the lowest reward (0.0) with a reason, for input that
  cannot even name a task (missing columns, unknown id); adapters return it
  instead of raising inside a peer's training loop.
* :func:`make_env` / :func:`reset_env`: a made environment on a task, for
  adapters that play whole episodes (multi-turn, tools).
* ``_POOL.env(ref)`` (a context manager) or ``_POOL.take(ref)`` /
  ``_POOL.give(ref, env)``: a pooled environment for ``ref`` held for a whole
  episode (given back on success, closed if the episode raised).
* :func:`canonical_kwargs`: env kwargs as the JSON string rows carry; pass it
  as ``env_kwargs`` to :meth:`TaskRef.from_row` to skip re-encoding per row.

Environments are pooled per (env id, split, kwargs), so scoring a completion
costs one ``reset`` and one ``step``, not a ``make`` (task sets and sandboxes
are built once). The pool is thread-safe and async-safe: each call holds its
own instance for the duration of its episode.
"""

from __future__ import annotations

import functools
import json
import numbers
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from gym_llm.envs.core import LLMEnv
from gym_llm.envs.registry import make, spec

__all__ = [
    "TASK_COLUMNS", "TaskColumnError", "TaskRef", "Score", "task_rows", "score", "ascore",
    "score_row", "score_rows", "error_score", "canonical_kwargs", "make_env", "reset_env", "completion_turn", "LOWEST_REWARD",
]

#: Columns that identify a task in a dataset row.
TASK_COLUMNS: tuple[str, ...] = ("env_id", "split", "seed", "task_index", "env_kwargs")

#: What a completion earns when no task could be scored at all. Every env's
#: rewards are >= 0, so this is the lowest reward there is.
LOWEST_REWARD = 0.0


class TaskColumnError(ValueError):
    """A row lacks a task column, or holds a value that cannot identify a task.
    The message names the column and the value."""


def _canonical_kwargs(env_kwargs: Mapping[str, Any]) -> str:
    try:
        return json.dumps(dict(env_kwargs), sort_keys=True, separators=(",", ":"))
    except TypeError as e:
        raise TypeError(f"env kwargs must be JSON values to travel in a dataset row: {e}") from None


def canonical_kwargs(env_kwargs: Mapping[str, Any]) -> str:
    """``env_kwargs`` as the canonical JSON object string rows carry."""
    return _canonical_kwargs(env_kwargs)


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
        return _canonical_kwargs(parsed)
    return _canonical_kwargs({**json.loads(defaults), **parsed})


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


@dataclass(frozen=True)
class TaskRef:
    """One task: ``env_id`` on ``split``, picked by ``task_index``, the env
    reset with ``seed``; ``env_kwargs`` is the canonical JSON of the kwargs
    the env is made with (see :attr:`kwargs`)."""

    env_id: str
    split: str
    seed: int
    task_index: int
    env_kwargs: str = "{}"

    @classmethod
    def of(cls, env_id: str, split: str, seed: int, task_index: int,
           env_kwargs: Mapping[str, Any] | None = None) -> TaskRef:
        """Build a ref from plain values (kwargs as a mapping)."""
        return cls(env_id, split, int(seed), int(task_index), _canonical_kwargs(env_kwargs or {}))

    @property
    def kwargs(self) -> dict[str, Any]:
        """The env kwargs as a dict."""
        return json.loads(self.env_kwargs)

    def to_row(self) -> dict[str, Any]:
        """The :data:`TASK_COLUMNS` of a dataset row."""
        return {"env_id": self.env_id, "split": self.split, "seed": self.seed,
                "task_index": self.task_index, "env_kwargs": self.env_kwargs}

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
        if split not in ("train", "heldout"):
            raise TaskColumnError(f"task column 'split' must be 'train' or 'heldout', got {split!r}")
        # no kwargs (the common case): skip a json.dumps per row
        defaults = env_kwargs if isinstance(env_kwargs, str) else (
            _canonical_kwargs(env_kwargs) if env_kwargs else "{}")
        raw = row.get("env_kwargs")
        if raw is None or isinstance(raw, str):
            merged = _merge_kwargs(raw, defaults)
        elif isinstance(raw, Mapping):
            merged = _merge_kwargs(_canonical_kwargs(raw), defaults)
        else:
            raise TaskColumnError(f"task column 'env_kwargs' must be a JSON object, got {raw!r}")
        return cls(row_id, split, seed, task_index, merged)


@dataclass
class Score:
    """What ``env.step`` gave one completion: ``reward``, the
    ``reward_components``, the env's ``reason`` (why it is not full credit, when
    it says), ``reward_error`` (set when the environment failed and the reward
    must not be trusted), the step's flags and new messages, and its whole
    ``info``."""

    reward: float
    components: dict[str, float] = field(default_factory=dict)
    reason: str | None = None
    reward_error: str | None = None
    terminated: bool = True
    truncated: bool = False
    messages: list[dict[str, Any]] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def value(self) -> float | None:
        """The reward, or ``None`` where the environment failed (TRL's "no
        reward for this sample")."""
        return None if self.reward_error else self.reward


def error_score(reason: str) -> Score:
    """The lowest reward for input that names no scorable task, with
    ``reason`` as both the reason and the ``reward_error`` (it says nothing
    about the model)."""
    return Score(LOWEST_REWARD, {}, reason, reason, info={"reason": reason, "reward_error": reason})


class _Pool:
    """Free environments per (env id, split, kwargs JSON)."""

    def __init__(self) -> None:
        self._free: dict[tuple[str, str, str], list[LLMEnv]] = {}
        self._lock = threading.Lock()

    # take/give rather than a context manager: scoring a math answer costs
    # ~100 us, and a generator-based ``with`` is a measurable part of that
    def take(self, ref: TaskRef) -> LLMEnv:
        """A free env for ``ref`` (made on a miss); hand it back with :meth:`give`."""
        key = (ref.env_id, ref.split, ref.env_kwargs)
        with self._lock:
            free = self._free.get(key)
            if free:
                return free.pop()
        return make(ref.env_id, split=ref.split, seed=ref.seed, **ref.kwargs)

    def give(self, ref: TaskRef, env: LLMEnv) -> None:
        with self._lock:
            self._free.setdefault((ref.env_id, ref.split, ref.env_kwargs), []).append(env)

    @contextmanager
    def env(self, ref: TaskRef) -> Iterator[LLMEnv]:
        """A pooled env held for a whole episode (adapters that play many
        steps); closed, not pooled, if the episode raised."""
        env = self.take(ref)
        try:
            yield env
        except BaseException:
            env.close()  # its state is unknown: do not hand it to the next caller
            raise
        self.give(ref, env)


_POOL = _Pool()


def make_env(ref: TaskRef) -> LLMEnv:
    """A new environment for ``ref`` (its id, split, kwargs), not yet reset;
    the caller owns and closes it."""
    return make(ref.env_id, split=ref.split, seed=ref.seed, **ref.kwargs)


def reset_env(env: LLMEnv, ref: TaskRef) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Reset ``env`` on exactly the task ``ref`` names."""
    return env.reset(seed=ref.seed, options={"task_index": ref.task_index})


def task_rows(env_id: str, split: str = "train", n: int = 1, seed: int = 0,
              **env_kwargs: Any) -> list[dict[str, Any]]:
    """``n`` rows for ``env_id``: row ``i`` is the task ``reset(seed=seed + i)``
    picks, as ``prompt`` (chat messages), ``tools`` (OpenAI schemas or
    ``None``), ``task_id`` and the :data:`TASK_COLUMNS`. Unknown ids raise
    :class:`~gym_llm.envs.registry.UnknownEnvError` naming close matches."""
    spec(env_id)
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    kwargs = _canonical_kwargs(env_kwargs)
    rows = []
    env = make(env_id, split=split, seed=seed, **env_kwargs)
    try:
        for i in range(n):
            obs, info = env.reset(seed=seed + i)
            ref = TaskRef(env_id, split, seed + i, int(info["task_index"]), kwargs)
            rows.append({"prompt": obs, "tools": info.get("tools"), "task_id": info["task_id"], **ref.to_row()})
    finally:
        env.close()
    return rows


def completion_turn(completion: Any) -> Any:
    """The assistant turn in ``completion``: a string or message dict as it
    is; from a list of chat messages (TRL's conversational completions), the
    last assistant message. Anything else is returned unchanged, for
    ``env.step`` to score as the malformed action it is."""
    if isinstance(completion, list) and completion and all(isinstance(m, Mapping) for m in completion):
        for message in reversed(completion):
            if message.get("role", "assistant") == "assistant":
                return dict(message)
        return dict(completion[-1])  # no assistant turn: env.step reports the wrong role
    return completion


def _as_score(step: tuple[list[dict[str, Any]], float, bool, bool, dict[str, Any]]) -> Score:
    obs, reward, terminated, truncated, info = step
    error = info.get("reward_error")
    return Score(float(reward), dict(info.get("reward_components") or {}), info.get("reason"),
                 str(error) if error else None, bool(terminated), bool(truncated), list(obs), info)


def score(ref: TaskRef, completion: Any) -> Score:
    """Reset the env on ``ref``'s task and step it with ``completion`` (see
    :func:`completion_turn`): exactly ``env.step``'s reward and info."""
    env = _POOL.take(ref)
    try:
        env.reset(seed=ref.seed, options={"task_index": ref.task_index})
        result = _as_score(env.step(completion_turn(completion)))
    except BaseException:
        env.close()  # its state is unknown: it goes back to no caller
        raise
    _POOL.give(ref, env)
    return result


async def ascore(ref: TaskRef, completion: Any) -> Score:
    """Async :func:`score` (``env.astep``: sandboxed work never blocks the loop)."""
    env = _POOL.take(ref)
    try:
        await env.areset(seed=ref.seed, options={"task_index": ref.task_index})
        result = _as_score(await env.astep(completion_turn(completion)))
    except BaseException:
        env.close()
        raise
    _POOL.give(ref, env)
    return result


def score_row(row: Mapping[str, Any], completion: Any, *, env_id: str | None = None,
              env_kwargs: Mapping[str, Any] | str | None = None) -> Score:
    """:func:`score` on the task ``row`` names; a row that names none (see
    :meth:`TaskRef.from_row`) or an unknown env id gets :func:`error_score`
    with the reason, so a peer's training loop never crashes on one bad row."""
    try:
        ref = TaskRef.from_row(row, env_id=env_id, env_kwargs=env_kwargs)
    except TaskColumnError as e:
        return error_score(str(e))
    try:
        spec(ref.env_id)
    except LookupError as e:
        return error_score(f"task column 'env_id': {e}")
    return score(ref, completion)


def score_rows(rows: Sequence[Mapping[str, Any]], completions: Sequence[Any], *, env_id: str | None = None,
               env_kwargs: Mapping[str, Any] | str | None = None) -> list[Score]:
    """:func:`score_row` for each (row, completion) pair; the lengths must match."""
    if len(rows) != len(completions):
        raise ValueError(f"{len(completions)} completions for {len(rows)} task rows")
    return [score_row(r, c, env_id=env_id, env_kwargs=env_kwargs) for r, c in zip(rows, completions, strict=True)]
