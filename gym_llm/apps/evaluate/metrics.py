"""What an evaluation reports, computed from its sample rows alone.

Contract: :func:`aggregate` is a pure function of the rows of
``samples.jsonl`` (no model, no environment, no file), so ``results.json``
can always be recomputed from the samples; a task is one ``group_id`` and
its ``k`` rows. :func:`pass_at_k` is the unbiased estimator of Chen et al.
(2021). Means over nothing are NaN (written to JSON as ``null`` by
:func:`gym_llm.envs.jsonio.finite`), never 0, so an empty breakdown is not
mistaken for a failing one.

Intervals are clustered by task: a task's ``k`` samples are not independent
(one task is easy for the model, another hard), so the unit of every
standard error is the task: the spread of the per-task figures over the
tasks, divided by the square root of their number. ``reward_ci95`` is the
normal interval ``mean +- 1.96 * stderr``; ``pass@1_ci95`` is a Wilson score
interval at the effective sample size the clustered standard error implies
(Kish: ``p (1 - p) / stderr^2``, between the number of tasks when a task's
samples all agree and ``n * k`` when they are independent), so it stays
inside [0, 1] and does not collapse to a point when every task passed.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["pass_at_k", "aggregate", "difficulty_labels", "bucket_start", "mean", "stderr", "wilson",
           "Z95", "MAX_DIFFICULTY_LEVELS", "DIFFICULTY_BIN"]

#: The two-sided 95% normal quantile of every interval here.
Z95 = 1.959963984540054

#: More distinct task difficulties than this are reported in bins of
#: :data:`DIFFICULTY_BIN` (datasets whose tasks each carry their own difficulty).
MAX_DIFFICULTY_LEVELS = 6
DIFFICULTY_BIN = 0.25


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased estimator of pass@k from ``n`` samples of which ``c`` are
    correct: ``1 - C(n - c, k) / C(n, k)`` (Chen et al. 2021), computed as a
    product so large ``n`` neither overflows nor loses precision.

    Raises ``ValueError`` unless ``0 <= c <= n`` and ``1 <= k <= n``.
    """
    if not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n, got n={n}, c={c}")
    if not 1 <= k <= n:
        raise ValueError(f"need 1 <= k <= n, got n={n}, k={k}")
    if n - c < k:
        return 1.0
    prod = 1.0
    for i in range(n - c + 1, n + 1):
        prod *= 1.0 - k / i
    return 1.0 - prod


def mean(xs: Sequence[float]) -> float:
    """The mean of ``xs``; NaN when there are none (a figure over no samples)."""
    return statistics.fmean(xs) if xs else math.nan


def stderr(xs: Sequence[float]) -> float:
    """Standard error of the mean of ``xs`` (0 for fewer than two values)."""
    return statistics.stdev(xs) / math.sqrt(len(xs)) if len(xs) >= 2 else 0.0


def wilson(p: float, n_eff: float, z: float = Z95) -> list[float]:
    """The Wilson score interval ``[low, high]`` of a proportion ``p`` seen
    over an effective sample size ``n_eff`` (NaNs when ``n_eff`` is not positive)."""
    if not n_eff > 0 or not math.isfinite(p):
        return [math.nan, math.nan]
    centre = (p + z * z / (2 * n_eff)) / (1 + z * z / n_eff)
    half = z / (1 + z * z / n_eff) * math.sqrt(p * (1 - p) / n_eff + z * z / (4 * n_eff * n_eff))
    return [max(0.0, centre - half), min(1.0, centre + half)]


def _pass_interval(task_p1: Sequence[float], num_samples: int) -> tuple[float, list[float]]:
    """``(stderr, ci95)`` of pass@1 from its per-task values (see the module doc)."""
    p, se = mean(task_p1), stderr(task_p1)
    n = len(task_p1)
    if se > 0:
        n_eff = p * (1 - p) / (se * se)
    else:  # every task alike: as good as independent samples, unless they all agree
        n_eff = float(num_samples) if 0 < p < 1 else float(n)
    return se, wilson(p, min(max(n_eff, float(n)), float(num_samples)))


def _ks(k: int) -> list[int]:
    """1, 2, 4, ... up to ``k``, and ``k`` itself: the points of the pass@j curve."""
    ks = [j for j in (2**i for i in range(k.bit_length())) if j <= k]
    return ks if k in ks else [*ks, k]


def _summary(groups: Mapping[str, list[dict[str, Any]]], k: int) -> dict[str, Any]:
    """Reward and pass@j over task groups (``group_id -> its samples``)."""
    task_means, p1, pk = [], [], []
    curve: dict[int, list[float]] = defaultdict(list)
    rewards: list[float] = []
    for rows in groups.values():
        n = len(rows)
        c = sum(bool(r["correct"]) for r in rows)
        rs = [float(r["reward"] or 0.0) for r in rows]
        rewards += rs
        task_means.append(mean(rs))
        p1.append(pass_at_k(n, c, 1))
        pk.append(pass_at_k(n, c, min(k, n)))
        for j in _ks(k):
            if j <= n:
                curve[j].append(pass_at_k(n, c, j))
    reward, reward_se = mean(rewards), stderr(task_means)
    p1_se, p1_ci = _pass_interval(p1, len(rewards))
    return {
        "n": len(groups),
        "k": k,
        "mean_reward": reward,
        "reward_stderr": reward_se,
        "reward_ci95": [reward - Z95 * reward_se, reward + Z95 * reward_se],
        "pass@1": mean(p1),
        "pass@1_stderr": p1_se,
        "pass@1_ci95": p1_ci,
        "pass@k": mean(pk),
        "pass_at": {str(j): mean(v) for j, v in sorted(curve.items())},
    }


def difficulty_labels(values: Iterable[float]) -> dict[float, str]:
    """The ``by_difficulty`` key of each difficulty: the value itself
    (``"0.5"``) when there are at most :data:`MAX_DIFFICULTY_LEVELS` distinct
    values, else its bin (``"0.25-0.5"``; the last bin includes 1.0)."""
    distinct = sorted(set(values))
    if len(distinct) <= MAX_DIFFICULTY_LEVELS:
        return {d: f"{d:g}" for d in distinct}
    bins = round(1 / DIFFICULTY_BIN)
    out = {}
    for d in distinct:
        i = min(int(d / DIFFICULTY_BIN), bins - 1)
        out[d] = f"{i * DIFFICULTY_BIN:g}-{(i + 1) * DIFFICULTY_BIN:g}"
    return out


def bucket_start(label: str) -> float:
    """Where a :func:`difficulty_labels` label starts (its sort key)."""
    return float(label.split("-")[0])


def _generated_tokens(row: dict[str, Any]) -> int:
    """Tokens a sample generated: its loss mask (token-level policies), else
    the server's per-turn counts (message-level: no token ids to mask)."""
    if row.get("loss_mask"):
        return sum(row["loss_mask"])
    return sum(int(t.get("generated_tokens") or 0) for t in (row.get("info") or {}).get("policy_turns") or [])


def _strict(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The strict grader's figures over the samples it scored (``strict_reward``
    a number): their count, mean, and the mean reward minus it over them."""
    graded = [r for r in rows if isinstance(r.get("strict_reward"), int | float)
              and math.isfinite(r["strict_reward"])]
    strict = mean([float(r["strict_reward"]) for r in graded])
    return {"strict_graded": len(graded), "strict_mean": strict,
            "gap": mean([float(r["reward"] or 0.0) for r in graded]) - strict if graded else math.nan}


def aggregate(samples: Iterable[dict[str, Any]], k: int) -> dict[str, dict[str, Any]]:
    """``results.json`` from sample rows (each with ``eval_key``, ``env_id``,
    ``group_id`` (one per task), ``difficulty``, ``reward``, ``correct``, ``reward_components``,
    ``reward_error``, ``num_turns``, ``truncated``, ``loss_mask``).

    Per ``eval_key`` (the environment id unless an env set names two variants
    of one id): ``n`` tasks, ``k``, ``num_samples``, ``mean_reward`` (over
    samples), ``reward_stderr`` (standard error over task means) and
    ``reward_ci95``, ``pass@1`` with ``pass@1_stderr`` and ``pass@1_ci95``
    (the intervals of the module doc), ``pass@k`` and ``pass_at`` (``{j: pass@j}`` for j = 1, 2,
    4, ... k), ``reward_components`` (mean of each named part over the samples
    that report it), ``by_difficulty`` (the same reward/pass figures per task
    difficulty, keyed by :func:`difficulty_labels`), ``mean_turns``, ``mean_generated_tokens``,
    ``truncated_fraction`` and ``reward_errors`` (samples whose environment
    failed to score; their reward is not trustworthy); the strict grader's
    ``strict_graded`` (samples with a ``strict_reward``), ``strict_mean``
    (their mean strict score) and ``gap`` (their mean reward minus
    ``strict_mean``): NaN when none was graded (samples of an older
    gym-llm-eval).
    """
    by_key: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in samples:
        by_key[row["eval_key"]].append(row)
    results: dict[str, dict[str, Any]] = {}
    for key in sorted(by_key):
        rows = by_key[key]
        groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
        by_diff: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
        components: dict[str, list[float]] = defaultdict(list)
        label = difficulty_labels([float(r.get("difficulty") or 0.0) for r in rows])
        for r in rows:
            groups[r["group_id"]].append(r)
            by_diff[label[float(r.get("difficulty") or 0.0)]][r["group_id"]].append(r)
            for name, value in (r.get("reward_components") or {}).items():
                if isinstance(value, int | float) and math.isfinite(value):
                    components[name].append(float(value))
        res = {"env_id": rows[0]["env_id"], "split": rows[0].get("split"), **_summary(groups, k)}
        res.update(
            num_samples=len(rows),
            reward_components={name: mean(v) for name, v in sorted(components.items())},
            by_difficulty={
                d: {key_: v for key_, v in _summary(g, k).items() if key_ not in ("k", "pass_at")}
                for d, g in sorted(by_diff.items(), key=lambda item: bucket_start(item[0]))
            },
            mean_turns=mean([float(r.get("num_turns") or 0) for r in rows]),
            mean_generated_tokens=mean([float(_generated_tokens(r)) for r in rows]),
            truncated_fraction=mean([float(bool(r.get("truncated"))) for r in rows]),
            reward_errors=sum(1 for r in rows if r.get("reward_error")),
            **_strict(rows),
        )
        results[key] = res
    return results
