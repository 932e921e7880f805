"""What every adapter in :mod:`gym_llm.apps.integrations` shares: the task
a dataset row names, and what ``env.step`` gives a completion on it.

Stable API (the TRL, verl, SkyRL and verifiers adapters are built on it):

* :data:`TASK_COLUMNS`, :class:`TaskRef`, :class:`TaskColumnError` and
  :func:`canonical_kwargs`: the task identity and its row form, owned by
  :mod:`gym_llm.envs.taskref` (``TaskRef.from_row(row)`` reads a row, or a
  verl ``extra_info``; ``ref.to_row()`` writes the columns).
* :func:`task_rows`: ``n`` rows of an env id, each the prompt messages, the
  tools offered (or ``None``), ``task_id`` and the identity columns. Row ``i``
  is the task ``env.reset(seed=seed + i)`` picks, so the rows are exactly the
  tasks our own rollouts would draw with those seeds.
* :func:`score` / :func:`ascore`: reset the environment on the task and step
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
* :func:`bad_task_score`, :func:`on_row_task` / :func:`aon_row_task`: the one
  rule for a row that names a task the env does not have (a ``task_index``
  out of range, ``env_kwargs`` the env rejects): making the env or resetting
  it onto the task raised, so the row scores :func:`error_score` with a reason
  naming the task and the env's error. Every adapter (TRL, verl, SkyRL,
  verifiers) follows it: a bad row never raises in a peer's loop.
* ``POOL``: the adapters' :class:`~gym_llm.runtime.pool.EnvPool`, for those
  that hold an env for a whole episode (``POOL.take(ref)`` / ``POOL.give(ref,
  env)``) or play one on a task (``POOL.aon_task``).

Environments are pooled per (env id, split, kwargs), so scoring a completion
costs one ``reset`` and one ``step``, not a ``make`` (task sets and sandboxes
are built once).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from gym_llm.envs.core import LLMEnv
from gym_llm.envs.registry import make, spec
from gym_llm.envs.taskref import TASK_COLUMNS, TaskColumnError, TaskRef, canonical_kwargs
from gym_llm.runtime.pool import EnvPool

__all__ = [
    "TASK_COLUMNS", "TaskColumnError", "TaskRef", "Score", "task_rows", "score", "ascore",
    "score_row", "score_rows", "error_score", "bad_task_score", "on_row_task", "aon_row_task", "canonical_kwargs",
    "completion_turn", "LOWEST_REWARD", "POOL",
]

T = TypeVar("T")

#: What a completion earns when no task could be scored at all. Every env's
#: rewards are >= 0, so this is the lowest reward there is.
LOWEST_REWARD = 0.0


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


def bad_task_score(ref: TaskRef, error: Exception) -> Score:
    """The lowest reward for a row whose task the env does not have: making
    the env with the row's kwargs, or resetting it onto the row's task, raised
    ``error``. The reason names the task (id, split, task index, kwargs) and
    the env's error."""
    kwargs = json.dumps(dict(ref.kwargs), sort_keys=True, default=repr)
    return error_score(f"no such task: {ref.env_id} split={ref.split!r} task_index={ref.task_index} "
                       f"env_kwargs={kwargs} ({type(error).__name__}: {error})")


#: The adapters' env instances.
POOL = EnvPool()


def on_row_task(ref: TaskRef, act: Callable[[LLMEnv, dict[str, Any]], T],
                on_bad: Callable[[Score], T]) -> T:
    """``POOL.on_task(ref, act)``, except that a task the env does not have
    (making the env or the reset raised: see :func:`bad_task_score`) gives
    ``on_bad(bad_task_score(...))`` instead of raising. What ``act`` raises is
    raised (``env.step`` itself never raises on a bad action)."""
    acted = False

    def tracked(env: LLMEnv, info: dict[str, Any]) -> T:
        nonlocal acted
        acted = True
        return act(env, info)

    try:
        return POOL.on_task(ref, tracked)
    except Exception as e:
        if acted:
            raise
        return on_bad(bad_task_score(ref, e))


async def aon_row_task(ref: TaskRef, act: Callable[[LLMEnv, dict[str, Any]], Awaitable[T]],
                       on_bad: Callable[[Score], T]) -> T:
    """Async :func:`on_row_task` (``POOL.aon_task``)."""
    acted = False

    async def tracked(env: LLMEnv, info: dict[str, Any]) -> T:
        nonlocal acted
        acted = True
        return await act(env, info)

    try:
        return await POOL.aon_task(ref, tracked)
    except Exception as e:
        if acted:
            raise
        return on_bad(bad_task_score(ref, e))


def task_rows(env_id: str, split: str = "train", n: int = 1, seed: int = 0,
              **env_kwargs: Any) -> list[dict[str, Any]]:
    """``n`` rows for ``env_id``: row ``i`` is the task ``reset(seed=seed + i)``
    picks, as ``prompt`` (chat messages), ``tools`` (OpenAI schemas or
    ``None``), ``task_id`` and the :data:`TASK_COLUMNS`. Unknown ids raise
    :class:`~gym_llm.envs.registry.UnknownEnvError` naming close matches."""
    spec(env_id)
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    canonical_kwargs(env_kwargs)  # kwargs that cannot travel in a row fail before the env is made
    rows = []
    env = make(env_id, split=split, seed=seed, **env_kwargs)
    try:
        for i in range(n):
            obs, info = env.reset(seed=seed + i)
            ref = TaskRef(env_id, split, seed + i, int(info["task_index"]), env_kwargs)
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


def _same(s: Score) -> Score:
    return s


def score(ref: TaskRef, completion: Any) -> Score:
    """Reset the env on ``ref``'s task and step it with ``completion`` (see
    :func:`completion_turn`): exactly ``env.step``'s reward and info; a task
    the env does not have gets :func:`bad_task_score`."""
    return on_row_task(ref, lambda env, _: _as_score(env.step(completion_turn(completion))), _same)


async def ascore(ref: TaskRef, completion: Any) -> Score:
    """Async :func:`score` (``env.astep``: sandboxed work never blocks the loop)."""
    async def step(env: LLMEnv, _: dict[str, Any]) -> Score:
        return _as_score(await env.astep(completion_turn(completion)))

    return await aon_row_task(ref, step, _same)


def score_row(row: Mapping[str, Any], completion: Any, *, env_id: str | None = None,
              env_kwargs: Mapping[str, Any] | str | None = None) -> Score:
    """:func:`score` on the task ``row`` names; a row that names none (see
    :meth:`TaskRef.from_row`), an unknown env id or a task the env does not
    have (:func:`bad_task_score`) gets :func:`error_score` with the reason, so
    a peer's training loop never crashes on one bad row."""
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
