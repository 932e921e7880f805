"""Held-out evaluation at scale: which envs an eval covers, each env's and
each domain's held-out curve, and the forgetting alarm.

* :func:`rotation`: under a budget of episodes per eval, the mixture's
  entries in declaration order cut into consecutive chunks of at most the
  budget (an entry over the budget alone is a chunk of its own). Rotating
  evals cover one chunk each, in turn, so every env is evaluated once every
  ``K = len(chunks)`` rotating evals; the trainer's first and last evals
  cover all (:func:`eval_subset`).
* :class:`HeldoutCurves`: each env's held-out rewards in eval order (an env
  not in an eval keeps its latest value, so means over all envs stay
  comparable from eval to eval), each domain's (the mean of its envs'
  latest values), and the forgetting alarm over both: a curve whose mean
  over its last ``window`` evals is more than ``threshold`` below its best
  raises a :class:`ForgettingAlert`, once, until it comes back within the
  threshold.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gym_llm.runtime.mixture import domain_of

__all__ = ["rotation", "eval_subset", "HeldoutCurves", "ForgettingAlert", "env_metric", "domain_metric"]


def rotation(costs: Mapping[str, int], budget: int | None) -> list[list[str]]:
    """The chunks rotating evals cover (module doc): ``costs``, entry ->
    held-out episodes it takes, in declaration order; ``budget``, episodes
    per eval (``None``: one chunk of every entry)."""
    names = list(costs)
    if budget is None:
        return [names] if names else []
    chunks: list[list[str]] = []
    used = budget + 1
    for name in names:
        if used + costs[name] > budget or not chunks:
            chunks.append([])
            used = 0
        chunks[-1].append(name)
        used += costs[name]
    return chunks


def eval_subset(chunks: Sequence[Sequence[str]], index: int, *, full: bool) -> list[str]:
    """The entries of rotating eval ``index`` (0, 1, ...): chunk ``index mod
    K``; every entry when ``full``."""
    if full or not chunks:
        return [n for chunk in chunks for n in chunk]
    return list(chunks[index % len(chunks)])


def env_metric(key: str) -> str:
    """The metric of an env's held-out curve: ``heldout/<key>/reward/mean``."""
    return f"heldout/{key}/reward/mean"


def domain_metric(domain: str) -> str:
    """The metric of a domain's held-out curve: ``heldout_domain/<domain>/reward/mean``."""
    return f"heldout_domain/{domain}/reward/mean"


@dataclass(frozen=True)
class ForgettingAlert:
    """A held-out curve (``metric``) whose mean over its last ``window``
    evals (``recent``) is more than ``threshold`` below its ``best``."""

    metric: str
    best: float
    recent: float
    window: int
    threshold: float

    def message(self) -> str:
        return (f"{self.metric} fell from its best {self.best:.3f} to {self.recent:.3f} (mean of its last "
                f"{self.window} evals), more than {self.threshold:.2f} below: the run may be forgetting it")


class HeldoutCurves:
    """Held-out curves per env and per domain, and the forgetting alarm (module doc).

    ``keys``: the env metric keys (their domain is the part before ``/``);
    ``threshold``, ``window``: the alarm's.
    """

    def __init__(self, keys: Sequence[str], *, threshold: float = 0.1, window: int = 2):
        if threshold < 0 or window < 1:
            raise ValueError("threshold must be >= 0 and window >= 1")
        self.keys = list(keys)
        self.threshold, self.window = float(threshold), int(window)
        self.domains = list(dict.fromkeys(domain_of(k) for k in self.keys))
        #: metric -> its values, one per eval that measured it
        self.curves: dict[str, list[float]] = {}
        self._fired: set[str] = set()

    def latest(self) -> dict[str, float]:
        """Env key -> its latest held-out value (envs evaluated at least once), in ``keys`` order."""
        return {k: self.curves[env_metric(k)][-1] for k in self.keys if env_metric(k) in self.curves}

    def drop(self, metric: str) -> float | None:
        """Best value minus the mean of the last ``window`` ones (``None``
        until the curve has ``window + 1`` values)."""
        values = self.curves.get(metric, [])
        if len(values) <= self.window:
            return None
        return max(values) - sum(values[-self.window:]) / self.window

    def record(self, values: Mapping[str, float]) -> tuple[dict[str, float], list[ForgettingAlert]]:
        """One eval's held-out means (env key -> value; the envs it covered).
        Returns its metrics (``heldout_domain/<d>/reward/mean`` for every
        domain whose envs all have a value and one of them was evaluated now;
        ``forgetting/<key>/drop`` and ``forgetting_domain/<d>/drop`` for each
        curve that moved and has a drop) and the alerts that fire now."""
        moved: list[tuple[str, str]] = []  # (curve, its drop's metric)
        for key in self.keys:
            if key in values:
                self.curves.setdefault(env_metric(key), []).append(float(values[key]))
                moved.append((env_metric(key), f"forgetting/{key}/drop"))
        latest = self.latest()
        metrics: dict[str, float] = {}
        for d in self.domains:
            mine = [k for k in self.keys if domain_of(k) == d]
            if any(k in values for k in mine) and all(k in latest for k in mine):
                mean = sum(latest[k] for k in mine) / len(mine)
                self.curves.setdefault(domain_metric(d), []).append(mean)
                metrics[domain_metric(d)] = mean
                moved.append((domain_metric(d), f"forgetting_domain/{d}/drop"))
        alerts = []
        for metric, drop_metric in moved:
            drop = self.drop(metric)
            if drop is None:
                continue
            metrics[drop_metric] = drop
            if drop <= self.threshold:
                self._fired.discard(metric)
            elif metric not in self._fired:
                self._fired.add(metric)
                best = max(self.curves[metric])
                alerts.append(ForgettingAlert(metric, best, best - drop, self.window, self.threshold))
        return metrics, alerts

    def forgetting(self) -> list[str]:
        """The env keys whose curve, or whose domain's, is in a forgetting alarm now."""
        return [k for k in self.keys if env_metric(k) in self._fired or domain_metric(domain_of(k)) in self._fired]

    def state_dict(self) -> dict[str, Any]:
        return {"curves": {m: list(v) for m, v in self.curves.items()}, "fired": sorted(self._fired)}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.curves = {str(m): [float(x) for x in v] for m, v in dict(state.get("curves", {})).items()}
        self._fired = {str(m) for m in state.get("fired", [])}
