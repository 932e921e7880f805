"""Reward-hacking monitors: hack signals, the strict grader's gap, the alarm.

A policy that learns the grader rather than the task shows it two ways, and
this module owns both measurements (docs/monitoring.md):

* **Hack signals.** Each env class declares the signatures of gaming its
  grader that a finished episode can show (several boxed answers, prints that
  mimic a test runner's output, a call to every tool, ...) in
  :attr:`gym_llm.LLMEnv.hack_signals`: :class:`~gym_llm.envs.grading.HackSignal`
  objects with a pure ``detect(episode) -> bool``. :func:`annotate` puts
  the names that fire in ``Trajectory.hack_signals``; :func:`hack_fractions`
  gives ``hacks/<env_id>/<signal>``, the fraction of an env's episodes that
  show a signal, for every signal its env declares.
* **The strict grader.** Every env can score a finished episode with a
  stricter grader than its training reward
  (:meth:`gym_llm.LLMEnv.astrict_score`); :class:`StrictGrader` replays the
  episode's reset and asks it, setting ``Trajectory.strict_reward``;
  :func:`strict_metrics` gives ``strict/<env_id>/mean`` and ``gap/<env_id>``
  (mean training reward minus mean strict score over the strict-graded
  episodes). An honest policy has a gap near 0; a widening gap is a policy
  being paid for what the task did not ask.

:class:`HackAlarm` turns the fractions into alerts: a signal whose fraction
stays above its threshold for ``patience`` steps (over at least
``min_trajectories`` episodes of the env) fires once.
"""

from __future__ import annotations

import logging
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gym_llm.envs.core import LLMEnv
from gym_llm.envs.grading import HackSignal
from gym_llm.envs.registry import UnknownEnvError, spec
from gym_llm.envs.rewards import RewardResult
from gym_llm.envs.taskref import TaskRef
from gym_llm.runtime.pool import EnvPool
from gym_llm.runtime.rollout import Trajectory

__all__ = [
    "HackAlert", "HackAlarm", "StrictGrader", "signals_for", "detect", "annotate", "hack_fractions",
    "strict_metrics",
]

log = logging.getLogger(__name__)


# ------------------------------------------------------------- hack signals
_warned: set[str] = set()


def _warn_once(key: str, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, RuntimeWarning, stacklevel=3)


def signals_for(env_id: str) -> tuple[HackSignal, ...]:
    """The hack signals ``env_id``'s env declares: the
    :attr:`~gym_llm.LLMEnv.hack_signals` of the env class its registered
    entry point names. None for a factory entry point (the class it returns
    is not known until it runs), an id not registered in this process, or
    one whose entry point fails to import (with one warning)."""
    try:
        entry_point = spec(env_id).resolve()
    except UnknownEnvError:
        return ()
    except Exception as e:
        _warn_once(f"env:{env_id}", f"the hack signals of {env_id!r} are not measured: its entry point "
                                    f"failed to import: {type(e).__name__}: {e}")
        return ()
    return tuple(getattr(entry_point, "hack_signals", ())) if isinstance(entry_point, type) else ()


def detect(traj: Trajectory, signals: Sequence[HackSignal] | None = None) -> list[str]:
    """Names of the signals (default: those the episode's env declares,
    :func:`signals_for`) that fire on the episode. A detector that raises
    counts as not firing, with one warning per signal."""
    fired = []
    for s in signals_for(traj.env_id) if signals is None else signals:
        try:
            if s.detect(traj):
                fired.append(s.name)
        except Exception as e:
            _warn_once(f"signal:{s.name}:{traj.env_id}",
                       f"hack signal {s.name!r} ({traj.env_id}) raised and counts as not firing: "
                       f"{type(e).__name__}: {e}")
    return fired


def annotate(trajs: Iterable[Trajectory]) -> None:
    """Set ``hack_signals`` of every episode (:func:`detect`)."""
    for t in trajs:
        t.hack_signals = detect(t)


def _by_key(trajs: Iterable[Trajectory], key_of: Callable[[Trajectory], str] | None) -> dict[str, list[Trajectory]]:
    groups: dict[str, list[Trajectory]] = defaultdict(list)
    for t in trajs:
        groups[key_of(t) if key_of else t.env_id].append(t)
    return groups


def hack_fractions(trajs: Iterable[Trajectory], key_of: Callable[[Trajectory], str] | None = None
                   ) -> dict[str, float]:
    """``hacks/<key>/<signal>``: the fraction of the key's annotated
    (:func:`annotate`) episodes whose ``hack_signals`` hold the signal, for
    every signal their env declares (0.0 included). ``key_of`` names
    an episode's metric key (default: its env id; the trainer passes the
    mixture's metric key, which is the env id unless two entries share it).
    Episodes that could not run (``error``) are left out."""
    out: dict[str, float] = {}
    for key, group in _by_key((t for t in trajs if t.error is None), key_of).items():
        for s in signals_for(group[0].env_id):
            out[f"hacks/{key}/{s.name}"] = sum(s.name in t.hack_signals for t in group) / len(group)
    return out


def strict_metrics(trajs: Iterable[Trajectory],
                   key_of: Callable[[Trajectory], str] | None = None) -> dict[str, float]:
    """``strict/<key>/mean`` and ``gap/<key>`` (mean training reward minus
    mean strict score) over the episodes that were strict-graded
    (``strict_reward`` not ``None``), per key as in :func:`hack_fractions`."""
    out: dict[str, float] = {}
    graded = [t for t in trajs if t.strict_reward is not None and t.ok]
    for key, group in _by_key(graded, key_of).items():
        strict = sum(t.strict_reward for t in group) / len(group)  # type: ignore[misc]
        out[f"strict/{key}/mean"] = strict
        out[f"gap/{key}"] = sum(t.reward for t in group) / len(group) - strict
    return out


# ----------------------------------------------------------------- the alarm
@dataclass(frozen=True)
class HackAlert:
    """A signal above its threshold: ``metric`` (``hacks/<key>/<signal>``),
    its ``fraction`` this step over ``n`` episodes, the ``threshold``, and
    for how many measured steps in a row it has been above (``steps``)."""

    metric: str
    signal: str
    fraction: float
    threshold: float
    n: int
    steps: int

    def message(self) -> str:
        return (f"{self.metric} = {self.fraction:.2f} over {self.n} episodes, above its threshold "
                f"{self.threshold:.2f} for {self.steps} step(s): the policy may be gaming the grader")


class HackAlarm:
    """Fires when a hack signal's fraction stays above its threshold.

    ``thresholds``: per-signal overrides (signal name -> fraction) of each
    :class:`HackSignal`'s default threshold; ``min_trajectories``: a step
    with fewer episodes of an env is not measured for it (the streak is kept);
    ``patience``: measured steps in a row above the threshold before the
    alert. A metric fires once per streak: it fires again only after falling
    back to or below its threshold first.
    """

    def __init__(self, thresholds: Mapping[str, float] | None = None, *, min_trajectories: int = 8,
                 patience: int = 1):
        self.thresholds = dict(thresholds or {})
        self.min_trajectories = int(min_trajectories)
        self.patience = max(1, int(patience))
        self._streak: dict[str, int] = defaultdict(int)
        self._fired: set[str] = set()

    def threshold(self, signal: HackSignal) -> float:
        """The threshold in force for ``signal``."""
        return float(self.thresholds.get(signal.name, signal.threshold))

    def update(self, trajs: Sequence[Trajectory], key_of: Callable[[Trajectory], str] | None = None
               ) -> list[HackAlert]:
        """Measure one step's annotated episodes; the alerts that fire now."""
        fractions = hack_fractions(trajs, key_of)
        alerts = []
        for key, group in _by_key((t for t in trajs if t.error is None), key_of).items():
            if len(group) < self.min_trajectories:
                continue
            for s in signals_for(group[0].env_id):
                metric, limit = f"hacks/{key}/{s.name}", self.threshold(s)
                if fractions[metric] <= limit:
                    self._streak[metric] = 0
                    self._fired.discard(metric)
                    continue
                self._streak[metric] += 1
                if self._streak[metric] >= self.patience and metric not in self._fired:
                    self._fired.add(metric)
                    alerts.append(HackAlert(metric, s.name, fractions[metric], limit, len(group),
                                            self._streak[metric]))
        return alerts

    def state_dict(self) -> dict[str, Any]:
        """The streaks and the metrics that fired, so a resumed run alarms
        when the uninterrupted one would have (checkpointed by the trainer)."""
        return {"streak": {m: n for m, n in self._streak.items() if n}, "fired": sorted(self._fired)}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self._streak = defaultdict(int, {str(m): int(n) for m, n in dict(state.get("streak", {})).items()})
        self._fired = {str(m) for m in state.get("fired", [])}


# ----------------------------------------------------------- strict grading
class StrictGrader:
    """Strict-grades finished episodes (:meth:`gym_llm.LLMEnv.astrict_score`).

    For each episode an env is reset onto the episode's task (its
    :class:`~gym_llm.envs.taskref.TaskRef`: the determinism contract gives the
    same task), checked to hold the episode's task, and asked for its strict
    score (:meth:`~gym_llm.runtime.pool.EnvPool.aon_task`: envs are pooled,
    one per episode in flight, so gradings run concurrently on one event
    loop). :meth:`grade` never raises: an episode that cannot be graded keeps
    ``strict_reward = None`` with the reason in ``info["strict_error"]``.
    """

    def __init__(self) -> None:
        self._pool = EnvPool()

    async def grade(self, traj: Trajectory, task: TaskRef) -> float | None:
        """Set and return ``traj.strict_reward`` of the episode played on
        ``task`` (``None`` when it cannot be graded: the episode failed, the
        env failed, or the task differs)."""
        if not traj.ok or not traj.messages:
            return None

        async def strict_score(env: LLMEnv, info: dict[str, Any]) -> RewardResult:
            if str(info.get("task_id")) != traj.task_id:
                raise RuntimeError(f"reset gave task {info.get('task_id')!r}, the episode had {traj.task_id!r}")
            result: RewardResult = await env.unwrapped.astrict_score(list(traj.messages), float(traj.reward))
            if result.error:
                raise RuntimeError(result.error)
            return result

        try:
            result = await self._pool.aon_task(task, strict_score)
            traj.strict_reward = float(result.score)
            if result.info.get("reason"):
                traj.info["strict_reason"] = str(result.info["reason"])
        except Exception as e:
            traj.info["strict_error"] = f"{type(e).__name__}: {e}"
            log.debug("strict grading of %s %s failed: %s", traj.env_id, traj.task_id, e)
        return traj.strict_reward

    def close(self) -> None:
        """Close the pooled envs."""
        self._pool.close()
