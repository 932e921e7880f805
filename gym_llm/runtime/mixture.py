"""Which environments a run draws, how often, and which episodes it plays:
the one planner that vector envs, the rollout engine, the trainer and the
evaluator share.

A :class:`Mixture` maps *entry names* to environment ids and sampling
probabilities. An entry's probability is its weight times its domain's
weight (``domain_weights``, the part of the id before ``/``; missing domains
weigh 1), normalised to sum to 1; entries of weight 0 are not part of the
mixture. For a plain ``{id: weight}`` mixture an entry's name is its id; a
training mixture names its entries (two entries may share one id with other
kwargs).

Plans are *counter based*: a draw is a function of ``(seed, *keys)`` (for
the trainer ``("plan", step, round, rank)``), never of a generator that has
advanced through earlier draws, so a run resumed at step ``t`` draws what the
uninterrupted run drew at step ``t``.

* :meth:`Mixture.allocate`: ``n`` entry names with low variance (each entry
  gets ``floor(p * n)`` and the rest is drawn in proportion to the fractional
  parts).
* :meth:`Mixture.plan_groups`: GRPO groups, ``group_size`` episodes that
  reset with one seed and so play one task (the environment determinism
  contract).
* :func:`heldout_plan`: the evaluation episodes of one environment: task
  ``i`` of the split (``task_index=i``), reset seed ``seed + i``,
  ``samples`` episodes each.

Each planned episode is an :class:`EpisodeSpec`: the task it plays, as a
:class:`~gym_llm.envs.taskref.TaskRef` (env id, split, make kwargs, reset
seed, task index), and its place in the plan.
* :meth:`Mixture.draw`: one entry for an episode that starts at any time
  (a vector env slot's next episode), from the slot's own generator.
"""

from __future__ import annotations

import fnmatch
import math
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gym_llm.envs.registry import list_envs, spec
from gym_llm.envs.taskref import TaskRef

__all__ = ["Mixture", "EpisodeSpec", "heldout_plan", "step_rng", "allocate", "domain_of", "expand_ids"]

#: Reset seeds are drawn below this bound (what ``numpy`` and every env accept).
SEED_BOUND = 2**31 - 1


@dataclass(frozen=True)
class EpisodeSpec:
    """One planned episode: the ``task`` it plays (a ``None`` seed: one the
    vector env's slot draws), its ``group_id`` and ``sample_index`` (a GRPO
    group is one task sampled several times), and the mixture ``entry`` it
    was planned for (``""``: the task's env id)."""

    task: TaskRef
    group_id: str = ""
    sample_index: int = 0
    entry: str = ""

    @property
    def env_id(self) -> str:
        """The task's env id."""
        return self.task.env_id


def domain_of(env_id: str) -> str:
    """The domain of an environment id: the part before ``/``."""
    return env_id.split("/", 1)[0]


def expand_ids(env_id: str) -> list[str]:
    """The ids a mixture entry's ``id`` names: an id names itself (looked up
    later, where unknown ids are reported); a pattern with ``*``, ``?`` or
    ``[`` names every registered id it matches (``fnmatch``), sorted:
    ``reasoning/*`` every id of a domain, ``*`` every id of every installed
    domain. A pattern that matches nothing raises ``ValueError``."""
    if not any(c in env_id for c in "*?["):
        return [env_id]
    matched = [i for i in list_envs() if fnmatch.fnmatchcase(i, env_id)]
    if not matched:
        raise ValueError(f"mixture id pattern {env_id!r} matches no registered environment")
    return matched


def step_rng(seed: int, *keys: Any) -> random.Random:
    """A ``random.Random`` determined by ``seed`` and ``keys`` (step, rank, ...)."""
    return random.Random("|".join(map(str, (seed, *keys))))


def allocate(probabilities: Mapping[str, float], n: int, rng: random.Random) -> list[str]:
    """Draw ``n`` names with the given probabilities, with low variance:
    each name gets ``floor(p * n)`` slots and the remaining slots are drawn
    without replacement in proportion to the fractional parts. The result is
    shuffled. With ``n >= 1 / min(p)`` every name appears."""
    names = list(probabilities)
    quotas = {k: probabilities[k] * n for k in names}
    out = [k for k in names for _ in range(int(quotas[k]))]
    fractions = {k: quotas[k] - int(quotas[k]) for k in names}
    while len(out) < n:
        pool = [k for k in names if fractions[k] > 0] or names
        pick = rng.choices(pool, weights=[fractions[k] or 1.0 for k in pool])[0]
        fractions[pick] = 0.0
        out.append(pick)
    rng.shuffle(out)
    return out


class Mixture:
    """Entry name -> (environment id, sampling probability); see the module doc.

    ``weights``: entry name -> relative weight (finite, >= 0). ``env_ids``:
    entry name -> environment id (default: the name is the id).
    ``domain_weights``: domain -> multiplier of its entries' weights.
    ``validate``: look every id up in the registry now, so an unknown id
    fails here naming close matches (:class:`gym_llm.UnknownEnvError`);
    ``name`` labels errors and logs.
    Raises ``ValueError`` for an empty mixture, a negative or non-finite
    weight, or weights that sum to zero.
    """

    def __init__(
        self,
        weights: Mapping[str, float],
        *,
        env_ids: Mapping[str, str] | None = None,
        domain_weights: Mapping[str, float] | None = None,
        validate: bool = True,
        name: str = "",
    ):
        if not weights:
            raise ValueError("empty environment mixture")
        self.name = name
        ids = {str(k): str((env_ids or {}).get(k, k)) for k in weights}
        domains = {str(k): float(v) for k, v in (domain_weights or {}).items()}
        raw: dict[str, float] = {}
        for entry, w in weights.items():
            entry, w = str(entry), float(w)
            if validate:
                spec(ids[entry])  # fail early, naming close matches
            if not math.isfinite(w) or w < 0:
                raise ValueError(f"mixture weight of {entry!r} must be finite and >= 0, got {w}")
            raw[entry] = w * domains.get(domain_of(ids[entry]), 1.0)
        total = sum(raw.values())
        if total <= 0:
            label = f"mixture {name!r}" if name else "the mixture"
            raise ValueError(f"{label} has no positive weight (weights sum to zero): {raw}")
        #: entry name -> probability (sums to 1; weight-0 entries left out), in declaration order
        self.probabilities: dict[str, float] = {k: v / total for k, v in raw.items() if v > 0}
        self._ids = {k: ids[k] for k in self.probabilities}
        self._names = list(self.probabilities)
        self._p = np.array([self.probabilities[k] for k in self._names])

    @classmethod
    def of(cls, ids_or_mixture: str | Sequence[str] | Mapping[str, float] | Mixture) -> Mixture:
        """A mixture from ``"id"``, ``["id", ...]`` (equal weights; a repeated
        id counts twice), ``{id: weight}`` or a :class:`Mixture` (returned as is)."""
        if isinstance(ids_or_mixture, Mixture):
            return ids_or_mixture
        if isinstance(ids_or_mixture, str):
            return cls({ids_or_mixture: 1.0})
        if isinstance(ids_or_mixture, Mapping):
            return cls({str(k): float(v) for k, v in ids_or_mixture.items()})
        weights: dict[str, float] = {}
        for env_id in ids_or_mixture:
            weights[str(env_id)] = weights.get(str(env_id), 0.0) + 1.0
        return cls(weights)

    # ------------------------------------------------------------ queries
    @property
    def entries(self) -> list[str]:
        """Entry names, in declaration order."""
        return list(self._names)

    def env_id(self, entry: str) -> str:
        """The environment id of ``entry`` (a name that is no entry is taken
        to be an env id itself, as in a plain ``{id: weight}`` mixture)."""
        return self._ids.get(entry, entry)

    @property
    def env_ids(self) -> list[str]:
        """Distinct environment ids, in declaration order."""
        return list(dict.fromkeys(self._ids.values()))

    def by_env_id(self) -> dict[str, float]:
        """Environment id -> probability (entries of one id summed)."""
        out: dict[str, float] = {}
        for entry, p in self.probabilities.items():
            out[self._ids[entry]] = out.get(self._ids[entry], 0.0) + p
        return out

    def metric_keys(self) -> dict[str, str]:
        """Entry -> the name its metrics and results are reported under: its
        env id, or ``<id>#<entry>`` when several entries share one id."""
        ids = list(self._ids.values())
        return {n: (i if ids.count(i) == 1 else f"{i}#{n}") for n, i in self._ids.items()}

    # -------------------------------------------------------------- draws
    def draw(self, rng: np.random.Generator) -> str:
        """One entry, drawn i.i.d. from ``rng``."""
        if len(self._names) == 1:
            return self._names[0]
        return self._names[int(rng.choice(len(self._names), p=self._p))]

    def allocate(self, n: int, rng: random.Random) -> list[str]:
        """``n`` entries with low variance (:func:`allocate`)."""
        return allocate(self.probabilities, n, rng)

    def plan_groups(self, num_groups: int, group_size: int, *, seed: int, keys: Sequence[Any] = (),
                    group_prefix: str | None = None, split: str = "train",
                    kwargs: Mapping[str, Mapping[str, Any]] | None = None) -> list[EpisodeSpec]:
        """``num_groups * group_size`` episodes, group-major. The groups'
        entries come from :meth:`allocate` and their reset seeds from the same
        ``step_rng(seed, *keys)``; group ``g``'s id is ``f"{group_prefix}{g}"``
        (default prefix: ``"<seed>-"`` and each key followed by ``-``). The
        tasks are on ``split``, each made with its entry's ``kwargs``
        (entry -> make kwargs; none for an entry not there)."""
        if num_groups < 0 or group_size < 1:
            raise ValueError("num_groups must be >= 0 and group_size >= 1")
        rng = step_rng(seed, *keys)
        prefix = group_prefix if group_prefix is not None else "".join(f"{k}-" for k in (seed, *keys))
        specs: list[EpisodeSpec] = []
        for g, entry in enumerate(self.allocate(num_groups, rng)):
            task = TaskRef(self._ids[entry], split, rng.randrange(SEED_BOUND), None, (kwargs or {}).get(entry, {}))
            specs.extend(EpisodeSpec(task, group_id=f"{prefix}{g}", sample_index=k, entry=entry)
                         for k in range(group_size))
        return specs

    def __repr__(self) -> str:
        mix = ", ".join(f"{k}: {v:.3g}" for k, v in self.probabilities.items())
        return f"Mixture({{{mix}}})"


def heldout_plan(env_id: str, task_indices: Iterable[int], *, seed: int, samples: int = 1,
                 group_id: Callable[[int], str], entry: str = "", split: str = "heldout",
                 kwargs: Mapping[str, Any] | None = None) -> list[EpisodeSpec]:
    """The evaluation episodes of one environment (made on ``split`` with
    ``kwargs``): for each task index ``i``, ``samples`` episodes of task ``i``
    reset with seed ``seed + i``, in group ``group_id(i)``."""
    return [EpisodeSpec(TaskRef(env_id, split, seed + i, i, kwargs or {}), group_id=group_id(i), sample_index=s,
                        entry=entry)
            for i in task_indices for s in range(samples)]
