"""Schedules: how often each environment of a mixture is drawn, step by step.

A training run plans each step's GRPO groups over a
:class:`~gym_llm.runtime.mixture.Mixture` (:meth:`Mixture.plan_groups`). A
:class:`Schedule` says which probabilities step ``t`` plans with
(:meth:`Schedule.mixture`), and learns from what each step observed
(:meth:`Schedule.update`, given each env's :class:`EnvObservation`).

* :class:`StaticSchedule`: the mixture itself every step (the default; the
  plan is exactly the mixture's).
* :class:`AdaptiveSchedule`: the mixture's probabilities are the prior, and
  each env's share follows how much learning signal its groups carry
  (docs/training.md "Schedules" has the rule with its formula):

  - learnability of a group: the variance of its rewards, ``p(1 - p)`` for
    0/1 rewards (LILO's learnability, measured per task: an env with half of
    its tasks always solved and half never has none); of an env at a step:
    ``l = 4 x`` the mean over its groups (in ``[0, 1]`` for rewards in
    ``[0, 1]``; 0 = every group flat, 1 = every group split half and half);
  - score: ``s <- (1 - ema) s + ema l`` at each step that drew the env
    (``optimism`` before its first draw, so every env is tried);
  - target: ``q_e = prior_e x boost_e x exp(s_e / temperature)`` (Boltzmann,
    as SEC; ``boost_e = forgetting_boost`` while the env's held-out reward is
    in a forgetting alarm, else 1);
  - bounds: ``env_floor x prior_e <= p_e <= env_cap x prior_e``, each
    domain at least ``domain_floor x`` its prior share; an env the
    curriculum is moving at least ``steered_floor x prior_e``, one at its
    hardest and unsolved at most ``unsolved_cap x prior_e``;
  - ``p = clip(lambda q, floor, cap)`` with ``lambda`` such that it sums to
    1 (:func:`fit`), domains first (their floors, and their envs' bounds
    summed), then each domain's share among its envs.

Determinism: the probabilities are a function of the updates in step order.
Those computed by the update after step ``t`` apply from step ``t + 1 +
delay``, so a rollout that runs ahead of the trainer (``delay``: the async
pipeline's lead) plans with probabilities that exist when it starts, and
:meth:`Schedule.state_dict` after step ``t`` resumes a run that chooses
exactly as the uninterrupted one.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from gym_llm.runtime.mixture import Mixture, domain_of

__all__ = ["Schedule", "StaticSchedule", "AdaptiveSchedule", "EnvObservation", "observe", "fit",
           "schedule_metrics", "learnability"]

#: Rewards closer than this count as equal (a group with no learning signal).
FLAT_TOLERANCE = 1e-8


def learnability(rewards: Sequence[float]) -> float:
    """The variance of a group's rewards (population): ``p(1 - p)`` for a
    group of 0/1 rewards with ``p`` of them 1; 0 for a group of fewer than
    two."""
    n = len(rewards)
    if n < 2:
        return 0.0
    m = sum(rewards) / n
    return sum((r - m) ** 2 for r in rewards) / n


@dataclass(frozen=True)
class EnvObservation:
    """What one step saw of one env: ``groups`` sampled, of which
    ``no_signal`` had all rewards equal (compared, so at least two), and
    ``learnability``, the sum over its groups of :func:`learnability`."""

    groups: int = 0
    no_signal: int = 0
    learnability: float = 0.0

    def as_list(self) -> list[float]:
        """The three numbers, for an all-reduce over ranks."""
        return [float(self.groups), float(self.no_signal), self.learnability]


def observe(groups: Iterable[tuple[str, Sequence[float]]]) -> dict[str, EnvObservation]:
    """Entry -> :class:`EnvObservation` of a step's groups, each given as
    ``(entry, the rewards its members were trained on)``."""
    acc: dict[str, list[float]] = {}
    for entry, rewards in groups:
        a = acc.setdefault(entry, [0, 0, 0.0])
        a[0] += 1
        a[1] += len(rewards) >= 2 and max(rewards) - min(rewards) <= FLAT_TOLERANCE
        a[2] += learnability(rewards)
    return {e: EnvObservation(int(g), int(f), float(v)) for e, (g, f, v) in acc.items()}


def fit(target: Mapping[str, float], low: Mapping[str, float], high: Mapping[str, float],
        total: float = 1.0) -> dict[str, float]:
    """``p_k = clip(lambda x target_k, low_k, high_k)`` with the ``lambda``
    that makes the ``p`` sum to ``total`` (targets > 0; needs ``sum(low) <=
    total <= sum(high)``). Exact active-set solution: while the free
    entries' shares break a bound, the side whose breaches weigh more stays
    broken at the solution and is pinned to its bound."""
    pinned: dict[str, float] = {}
    while True:
        free = [k for k in target if k not in pinned]
        rest = total - sum(pinned.values())
        if not free:
            return pinned
        scale = rest / sum(target[k] for k in free)
        p = {k: scale * target[k] for k in free}
        over = {k: p[k] - high[k] for k in free if p[k] > high[k]}
        under = {k: low[k] - p[k] for k in free if p[k] < low[k]}
        if not over and not under:
            return {k: pinned[k] if k in pinned else p[k] for k in target}
        excess = sum(over.values()) - sum(under.values())
        if excess >= 0:  # lambda must grow: what is over its cap now stays over
            pinned.update({k: high[k] for k in over})
        if excess <= 0:  # lambda must shrink: what is under its floor now stays under
            pinned.update({k: low[k] for k in under})


class Schedule(Protocol):
    """How often each entry of a mixture is drawn at each step (module doc)."""

    #: ``"static"`` or ``"adaptive"``
    kind: str

    def weights(self, step: int) -> dict[str, float]:
        """Entry -> probability of step ``step`` (every entry of the mixture, summing to 1)."""

    def mixture(self, step: int) -> Mixture:
        """The mixture step ``step`` plans its groups over."""

    def scores(self) -> dict[str, float]:
        """Entry -> the signal its weight follows (none for a static schedule)."""

    def update(self, step: int, observed: Mapping[str, EnvObservation], *, steered: Collection[str] = (),
               unsolved: Collection[str] = (), boosted: Collection[str] = ()) -> None:
        """Learn from step ``step``: ``observed``, entry -> what the step saw
        of it; ``steered``, entries the curriculum is moving; ``unsolved``,
        entries at their hardest and unsolved; ``boosted``, entries in a
        forgetting alarm."""

    def state_dict(self) -> dict[str, Any]:
        """Everything :meth:`load_state_dict` needs to choose as this schedule will."""

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore :meth:`state_dict` (one of another kind, or empty: start fresh)."""


class StaticSchedule:
    """The mixture's own probabilities at every step; learns nothing."""

    kind = "static"

    def __init__(self, mixture: Mixture):
        self.base = mixture

    def weights(self, step: int) -> dict[str, float]:
        return dict(self.base.probabilities)

    def mixture(self, step: int) -> Mixture:
        return self.base

    def scores(self) -> dict[str, float]:
        return {}

    def update(self, step: int, observed: Mapping[str, EnvObservation], *, steered: Collection[str] = (),
               unsolved: Collection[str] = (), boosted: Collection[str] = ()) -> None:
        return None

    def state_dict(self) -> dict[str, Any]:
        return {"kind": self.kind}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        return None


class AdaptiveSchedule:
    """Weights that follow each env's learning signal, within floors and caps
    around the mixture's probabilities (the prior); see the module doc for
    the rule and ``delay``. Raises ``ValueError`` for a knob out of range."""

    kind = "adaptive"

    def __init__(self, mixture: Mixture, *, temperature: float = 0.25, ema: float = 0.3, optimism: float = 1.0,
                 env_floor: float = 0.25, domain_floor: float = 0.5, env_cap: float = 4.0,
                 steered_floor: float = 1.0, unsolved_cap: float = 1.0, forgetting_boost: float = 2.0,
                 delay: int = 0):
        for name, value, ok in (("temperature", temperature, temperature > 0), ("ema", ema, 0 < ema <= 1),
                                ("optimism", optimism, optimism >= 0), ("env_floor", env_floor, 0 <= env_floor <= 1),
                                ("domain_floor", domain_floor, 0 <= domain_floor <= 1),
                                ("env_cap", env_cap, env_cap >= 1), ("steered_floor", steered_floor,
                                                                     0 <= steered_floor <= 1),
                                ("unsolved_cap", unsolved_cap, unsolved_cap >= 1),
                                ("forgetting_boost", forgetting_boost, forgetting_boost >= 1),
                                ("delay", delay, delay >= 0)):
            if not ok:
                raise ValueError(f"AdaptiveSchedule: {name}={value} is out of range")
        self.base = mixture
        self.prior = dict(mixture.probabilities)
        self.domains = {e: domain_of(mixture.env_id(e)) for e in self.prior}
        self.temperature, self.ema, self.optimism = temperature, ema, optimism
        self.env_floor, self.domain_floor, self.env_cap = env_floor, domain_floor, env_cap
        self.steered_floor, self.unsolved_cap, self.forgetting_boost = steered_floor, unsolved_cap, forgetting_boost
        self.delay = delay
        self._scores = {e: float(optimism) for e in self.prior}
        self._initial = self._fit((), (), ())
        #: (first step, probabilities), oldest first: what update() decided and from when
        self._changes: list[tuple[int, dict[str, float]]] = []
        self._mixtures: dict[int, Mixture] = {}
        self._lock = threading.Lock()  # an async rollout reads while the trainer updates

    # ---------------------------------------------------------------- rule
    def _fit(self, steered: Collection[str], unsolved: Collection[str], boosted: Collection[str]) -> dict[str, float]:
        prior, top = self.prior, max(self._scores.values())
        target = {e: prior[e] * (self.forgetting_boost if e in boosted else 1.0)
                  * math.exp((self._scores[e] - top) / self.temperature) for e in prior}
        low = {e: prior[e] * (max(self.env_floor, self.steered_floor) if e in steered else self.env_floor)
               for e in prior}
        high = {e: max(low[e], prior[e] * (min(self.env_cap, self.unsolved_cap) if e in unsolved else self.env_cap))
                for e in prior}
        domains = list(dict.fromkeys(self.domains.values()))
        members = {d: [e for e in prior if self.domains[e] == d] for d in domains}
        shares = fit({d: sum(target[e] for e in members[d]) for d in domains},
                     {d: max(self.domain_floor * sum(prior[e] for e in members[d]), sum(low[e] for e in members[d]))
                      for d in domains},
                     {d: sum(high[e] for e in members[d]) for d in domains})
        out: dict[str, float] = {}
        for d in domains:
            out.update(fit({e: target[e] for e in members[d]}, low, high, shares[d]))
        return {e: out[e] for e in prior}

    # ------------------------------------------------------------- queries
    def weights(self, step: int) -> dict[str, float]:
        with self._lock:
            return dict(self._weights_at(step)[1])

    def _weights_at(self, step: int) -> tuple[int, dict[str, float]]:
        for first, probs in reversed(self._changes):
            if first <= step:
                return first, probs
        return 0, self._initial

    def mixture(self, step: int) -> Mixture:
        with self._lock:
            first, probs = self._weights_at(step)
            if first not in self._mixtures:
                self._mixtures = {first: Mixture(probs, env_ids={e: self.base.env_id(e) for e in probs},
                                                 validate=False, name=self.base.name)}
            return self._mixtures[first]

    def scores(self) -> dict[str, float]:
        return dict(self._scores)

    # -------------------------------------------------------------- update
    def update(self, step: int, observed: Mapping[str, EnvObservation], *, steered: Collection[str] = (),
               unsolved: Collection[str] = (), boosted: Collection[str] = ()) -> None:
        for e, seen in observed.items():
            if e in self._scores and seen.groups:
                signal = 4.0 * seen.learnability / seen.groups
                self._scores[e] = (1 - self.ema) * self._scores[e] + self.ema * signal
        probs = self._fit(set(steered), set(unsolved), set(boosted))
        with self._lock:
            self._changes = [*self._changes, (step + 1 + self.delay, probs)][-(self.delay + 2):]

    def state_dict(self) -> dict[str, Any]:
        with self._lock:
            return {"kind": self.kind, "scores": dict(self._scores),
                    "changes": [[first, dict(p)] for first, p in self._changes]}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        if state.get("kind") != self.kind:
            return
        with self._lock:
            self._scores.update({e: float(s) for e, s in state["scores"].items() if e in self._scores})
            self._changes = [(int(first), {e: float(v) for e, v in p.items()}) for first, p in state["changes"]]
            self._mixtures = {}


def schedule_metrics(schedule: Schedule, step: int, observed: Mapping[str, EnvObservation],
                     keys: Mapping[str, str]) -> dict[str, float]:
    """A step's schedule metrics, per env under its metric key (``keys``:
    entry -> key, as for ``reward/<key>/mean``): ``schedule/<key>/weight``
    (the probability the step drew it with; they sum to 1),
    ``schedule/<key>/groups`` (groups it got, refills included),
    ``schedule/<key>/no_signal`` (the share of them with all rewards equal),
    ``schedule/<key>/score`` (adaptive: the signal after this step, what the
    next weights follow), and ``schedule_domain/<domain>/weight``."""
    out: dict[str, float] = {}
    scores = schedule.scores()
    domains: dict[str, float] = {}
    for entry, w in schedule.weights(step).items():
        key = keys.get(entry, entry)
        seen = observed.get(entry, EnvObservation())
        out[f"schedule/{key}/weight"] = w
        out[f"schedule/{key}/groups"] = float(seen.groups)
        if seen.groups:
            out[f"schedule/{key}/no_signal"] = seen.no_signal / seen.groups
        if entry in scores:
            out[f"schedule/{key}/score"] = scores[entry]
        domain = domain_of(key)
        domains[domain] = domains.get(domain, 0.0) + w
    out.update({f"schedule_domain/{d}/weight": w for d, w in domains.items()})
    return out
