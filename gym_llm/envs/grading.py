"""How an environment is graded: the vocabulary of its grading declarations.

An env class declares, in one place (itself), the three ways it is graded:

* its **training reward**: what :meth:`~gym_llm.envs.core.LLMEnv.respond`
  returns in :attr:`~gym_llm.envs.core.Turn.reward` (a
  :class:`~gym_llm.envs.core.SingleTurnEnv` takes it as ``reward_fn``, a
  :class:`~gym_llm.envs.tools.ToolEnv` writes
  :meth:`~gym_llm.envs.tools.ToolEnv.score_episode`);
* its **strict grader**: :meth:`~gym_llm.envs.core.LLMEnv.astrict_score`, a
  stricter score of a finished episode;
* its **hack signals**: :attr:`~gym_llm.envs.core.LLMEnv.hack_signals`, the
  :class:`HackSignal` signatures of gaming its grader a finished episode can show.

:mod:`gym_llm.runtime.monitoring` reads these declarations and measures them on
training runs (docs/monitoring.md). A detector reads a finished episode through
:class:`Episode`, the fields of a rollout record it may rely on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["HackSignal", "Episode", "assistant_messages"]


class Episode(Protocol):
    """A finished episode as a hack signal's ``detect`` reads it (the rollout's
    :class:`~gym_llm.runtime.rollout.Trajectory` is one): which env and task,
    the whole conversation, the tools offered, the outcome and the last
    step's ``info``."""

    @property
    def env_id(self) -> str: ...

    @property
    def task_id(self) -> str: ...

    @property
    def messages(self) -> list[dict[str, Any]]: ...

    @property
    def tools(self) -> list[dict[str, Any]] | None: ...

    @property
    def reward(self) -> float: ...

    @property
    def reward_components(self) -> dict[str, float]: ...

    @property
    def info(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class HackSignal:
    """One signature of gaming a grader, visible in a finished episode.

    ``name``: short and stable (the metric is ``hacks/<env_id>/<name>``);
    ``description``: what it means, one sentence; ``detect``: a pure, fast
    function of the :class:`Episode` (its ``messages``, ``info``,
    ``reward_components``) that says whether it shows the signature;
    ``threshold``: the default fraction of an env's episodes above which the
    hack alarm fires. An env declares the signals it can show in its class's
    :attr:`~gym_llm.envs.core.LLMEnv.hack_signals`.
    """

    name: str
    description: str
    detect: Callable[[Episode], bool]
    threshold: float = 0.2


def assistant_messages(messages: Sequence[Any]) -> list[dict[str, Any]]:
    """The policy's turns of a conversation, in order (what strict graders and
    detectors read)."""
    return [m for m in messages if isinstance(m, dict) and m.get("role") == "assistant"]
