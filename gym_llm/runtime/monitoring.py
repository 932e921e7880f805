"""Reward-hacking monitors: hack signals, the strict grader's gap, the alarm.

A policy that learns the grader rather than the task shows it two ways, and
this module owns both measurements (docs/monitoring.md):

* **Hack signals.** Each domain plugin names, through the
  ``gym_llm_hack_signals`` hook, the signatures of gaming its grader that it
  can see in a finished episode (several boxed answers, prints that mimic a
  test runner's output, a call to every tool, ...): :class:`HackSignal`
  objects with a pure ``detect(trajectory) -> bool``. :func:`annotate` puts
  the names that fire in ``Trajectory.hack_signals``; :func:`hack_fractions`
  gives ``hacks/<env_id>/<signal>``, the fraction of an env's episodes that
  show a signal, for every signal that applies to the env.
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

import fnmatch
import json
import logging
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gym_llm.envs.rewards import RewardResult
from gym_llm.runtime.rollout import Trajectory

__all__ = [
    "HackSignal", "HackAlert", "HackAlarm", "StrictGrader", "register_signals", "all_signals",
    "signals_for", "detect", "annotate", "hack_fractions", "strict_metrics", "assistant_messages",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class HackSignal:
    """One signature of gaming a grader, visible in a finished episode.

    ``name``: short and stable (the metric is ``hacks/<env_id>/<name>``);
    ``env_ids``: an ``fnmatch`` pattern of the env ids it applies to
    (``"math/*"``); ``description``: what it means, one sentence;
    ``detect``: a pure function of the :class:`~gym_llm.runtime.rollout.Trajectory`
    (its ``messages``, ``info``, ``reward_components``) that says whether the
    episode shows the signature; ``threshold``: the default fraction of an
    env's episodes above which :class:`HackAlarm` fires.
    """

    name: str
    env_ids: str
    description: str
    detect: Callable[[Trajectory], bool]
    threshold: float = 0.2

    def applies_to(self, env_id: str) -> bool:
        """Whether this signal is measured on ``env_id``."""
        return fnmatch.fnmatchcase(env_id, self.env_ids)


def assistant_messages(traj: Trajectory) -> list[dict[str, Any]]:
    """The policy's turns of an episode, in order (what detectors read)."""
    return [m for m in traj.messages if isinstance(m, dict) and m.get("role") == "assistant"]


# ------------------------------------------------------------ signal registry
_registered: list[HackSignal] = []
_warned: set[str] = set()


def _warn_once(key: str, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, RuntimeWarning, stacklevel=3)


def register_signals(*signals: HackSignal) -> None:
    """Add signals from user code (an env module named in a run's
    ``imports``), the way :func:`gym_llm.register` adds envs without a
    plugin. A signal registered again under the same name and pattern
    replaces the earlier one."""
    for s in signals:
        _registered[:] = [r for r in _registered if (r.name, r.env_ids) != (s.name, s.env_ids)]
        _registered.append(s)


def all_signals() -> list[HackSignal]:
    """Every plugin's signals (each plugin's ``gym_llm_hack_signals`` called
    on its own: one that raises or returns something else is skipped with a
    warning naming it) and the ones of :func:`register_signals`."""
    from gym_llm.envs.registry import plugin_manager

    out: list[HackSignal] = []
    for impl in plugin_manager().hook.gym_llm_hack_signals.get_hookimpls():
        try:
            found = list(impl.function())
            bad = [s for s in found if not isinstance(s, HackSignal)]
            if bad:
                raise TypeError(f"returned {type(bad[0]).__name__}, not HackSignal")
        except Exception as e:
            _warn_once(f"plugin:{impl.plugin_name}", f"gym_llm plugin {impl.plugin_name!r}: its hack signals "
                                                     f"were skipped: {type(e).__name__}: {e}")
            continue
        out += found
    return out + list(_registered)


def signals_for(env_id: str, signals: Sequence[HackSignal] | None = None) -> list[HackSignal]:
    """The signals (of ``signals``, default :func:`all_signals`) that apply to ``env_id``."""
    return [s for s in (all_signals() if signals is None else signals) if s.applies_to(env_id)]


def detect(traj: Trajectory, signals: Sequence[HackSignal] | None = None) -> list[str]:
    """Names of the signals that apply to the episode's env and fire on it.
    A detector that raises counts as not firing, with one warning per signal."""
    fired = []
    for s in signals_for(traj.env_id, signals):
        try:
            if s.detect(traj):
                fired.append(s.name)
        except Exception as e:
            _warn_once(f"signal:{s.name}:{s.env_ids}",
                       f"hack signal {s.name!r} ({s.env_ids}) raised and counts as not firing: "
                       f"{type(e).__name__}: {e}")
    return fired


def annotate(trajs: Iterable[Trajectory], signals: Sequence[HackSignal] | None = None) -> None:
    """Set ``hack_signals`` of every episode (:func:`detect`)."""
    signals = all_signals() if signals is None else signals
    for t in trajs:
        t.hack_signals = detect(t, signals)


def _by_key(trajs: Iterable[Trajectory], key_of: Callable[[Trajectory], str] | None) -> dict[str, list[Trajectory]]:
    groups: dict[str, list[Trajectory]] = defaultdict(list)
    for t in trajs:
        groups[key_of(t) if key_of else t.env_id].append(t)
    return groups


def hack_fractions(trajs: Iterable[Trajectory], key_of: Callable[[Trajectory], str] | None = None,
                   signals: Sequence[HackSignal] | None = None) -> dict[str, float]:
    """``hacks/<key>/<signal>``: the fraction of the key's annotated
    (:func:`annotate`) episodes whose ``hack_signals`` hold the signal, for
    every signal that applies to their env (0.0 included). ``key_of`` names
    an episode's metric key (default: its env id; the trainer passes the
    mixture's metric key, which is the env id unless two entries share it).
    Episodes that could not run (``error``) are left out."""
    signals = all_signals() if signals is None else signals
    out: dict[str, float] = {}
    for key, group in _by_key((t for t in trajs if t.error is None), key_of).items():
        for s in signals_for(group[0].env_id, signals):
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

    def update(self, trajs: Sequence[Trajectory], key_of: Callable[[Trajectory], str] | None = None,
               signals: Sequence[HackSignal] | None = None) -> list[HackAlert]:
        """Measure one step's annotated episodes; the alerts that fire now."""
        signals = all_signals() if signals is None else signals
        fractions = hack_fractions(trajs, key_of, signals)
        alerts = []
        for key, group in _by_key((t for t in trajs if t.error is None), key_of).items():
            if len(group) < self.min_trajectories:
                continue
            for s in signals_for(group[0].env_id, signals):
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

    For each episode an env of its id and kwargs on ``split`` is reset with
    the episode's reset ``seed`` and ``options`` (the determinism contract
    gives the same task), checked to hold the episode's task, and asked for
    its strict score. Envs are pooled per (id, kwargs), one per episode in
    flight, so gradings run concurrently on one event loop. :meth:`grade`
    never raises: an episode that cannot be graded keeps
    ``strict_reward = None`` with the reason in ``info["strict_error"]``.
    """

    def __init__(self, split: str):
        self.split = split
        self._idle: dict[str, list[Any]] = defaultdict(list)

    async def grade(self, traj: Trajectory, kwargs: Mapping[str, Any], *, seed: int | None,
                    options: Mapping[str, Any] | None) -> float | None:
        """Set and return ``traj.strict_reward`` (``None`` when it cannot be
        graded: the episode failed, the env failed, or the task differs)."""
        if not traj.ok or not traj.messages:
            return None
        from gym_llm.envs.registry import make

        pool = self._idle[f"{traj.env_id}|{json.dumps(dict(kwargs), sort_keys=True, default=str)}"]
        env = None
        try:
            env = pool.pop() if pool else make(traj.env_id, split=self.split, seed=seed, **dict(kwargs))
            base = env.unwrapped
            _, info = await base.areset(seed=seed, options=dict(options) if options else None)
            if str(info.get("task_id")) != traj.task_id:
                raise RuntimeError(f"reset gave task {info.get('task_id')!r}, the episode had {traj.task_id!r}")
            result: RewardResult = await base.astrict_score(list(traj.messages), float(traj.reward))
            if result.error:
                raise RuntimeError(result.error)
            traj.strict_reward = float(result.score)
            if result.info.get("reason"):
                traj.info["strict_reason"] = str(result.info["reason"])
        except Exception as e:
            traj.info["strict_error"] = f"{type(e).__name__}: {e}"
            log.debug("strict grading of %s %s failed: %s", traj.env_id, traj.task_id, e)
        finally:
            if env is not None:
                pool.append(env)
        return traj.strict_reward

    def close(self) -> None:
        """Close the pooled envs."""
        for pool in self._idle.values():
            for env in pool:
                env.close()
        self._idle.clear()
