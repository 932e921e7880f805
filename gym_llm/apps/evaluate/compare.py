"""Two evaluations side by side: which tasks flipped (``gym-llm compare A B``).

Contract: :func:`compare` reads the ``samples.jsonl`` of two eval
directories (tolerantly: a torn last line or a malformed row is skipped and
noted) and pairs their tasks by ``(eval_key, task_id)``, so the same
environments evaluated on the same ``task_index`` range (``gym-llm-eval``
picks the same tasks for every model) line up. A task *passes* when at least
half of its samples are ``correct`` (reward >= the run's
``success_threshold``): for ``k = 1`` that is its one sample, for larger ``k``
a majority, so one lucky sample of eight does not count as a flip. Per
environment: the tasks in both, in A only and in B only, pass rates, mean
reward and strict mean over the paired tasks, and the task ids that flipped
pass -> fail and fail -> pass.

Whether a change is larger than its noise is judged on the paired tasks
(:func:`paired_difference`): per task, B's pass@1 (or mean reward) minus
A's; the mean of those differences, its standard error over the tasks and
95% interval (``mean +- 1.96 * stderr``), and the p-value of a paired
sign-flip (randomisation) test: how often flipping the signs of the
per-task differences at random gives a mean at least as far from 0 (all
``2^n`` flips up to 16 tasks, else 20,000 seeded draws). A difference is
``significant`` when that p-value is below 0.05; with fewer than 6 paired
tasks none can be.
"""

from __future__ import annotations

import math
import os
from collections import defaultdict
from pathlib import Path
from typing import Any

from gym_llm.apps.evaluate.metrics import Z95, mean, stderr
from gym_llm.apps.report.data import read_jsonl_tolerant
from gym_llm.apps.runs import SAMPLES_FILE

__all__ = ["compare", "format_comparison", "paired_difference"]

#: Below this p-value a paired difference is reported as larger than its noise.
SIGNIFICANCE = 0.05


def _tasks(eval_dir: Path, notes: list[str]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    path = eval_dir / SAMPLES_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{eval_dir} has no {SAMPLES_FILE} (not a gym-llm-eval directory?)")
    tasks: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    local: list[str] = []
    for _, row in read_jsonl_tolerant(path, local):
        key = row.get("eval_key") or row.get("env_id")
        if key is None or row.get("task_id") is None:
            local.append(f"{SAMPLES_FILE}: a row without eval_key/task_id skipped.")
            continue
        tasks[(str(key), str(row["task_id"]))].append(row)
    notes += [f"{eval_dir}: {n}" for n in dict.fromkeys(local)]
    return tasks


def _passes(rows: list[dict[str, Any]]) -> bool:
    return 2 * sum(bool(r.get("correct")) for r in rows) >= len(rows)


def _strict(rows: list[dict[str, Any]]) -> list[float]:
    return [float(r["strict_reward"]) for r in rows
            if isinstance(r.get("strict_reward"), int | float) and math.isfinite(r["strict_reward"])]


def paired_difference(diffs: list[float]) -> dict[str, Any]:
    """``{"tasks", "mean", "stderr", "ci95", "p_value", "significant"}`` of
    per-task differences (B minus A; see the module doc). NaNs for no tasks."""
    import numpy as np

    n = len(diffs)
    if n == 0:
        return {"tasks": 0, "mean": math.nan, "stderr": math.nan, "ci95": [math.nan, math.nan],
                "p_value": math.nan, "significant": False}
    d = np.asarray(diffs, dtype=float)
    m, se = float(d.mean()), stderr(diffs)
    if n <= 16:  # every sign pattern
        signs = 1 - 2 * ((np.arange(2**n)[:, None] >> np.arange(n)) & 1)
    else:
        signs = np.random.default_rng(0).choice([-1.0, 1.0], size=(20_000, n))
    flipped = np.abs(signs @ d) / n
    p = float(np.mean(flipped >= abs(m) - 1e-12)) if m != 0 else 1.0
    return {"tasks": n, "mean": m, "stderr": se, "ci95": [m - Z95 * se, m + Z95 * se],
            "p_value": p, "significant": p < SIGNIFICANCE}


def _pass1(rows: list[dict[str, Any]]) -> float:
    return sum(bool(r.get("correct")) for r in rows) / len(rows)


def _reward(rows: list[dict[str, Any]]) -> float:
    return mean([float(r.get("reward") or 0.0) for r in rows])


def compare(dir_a: str | os.PathLike, dir_b: str | os.PathLike) -> dict[str, Any]:
    """``{"a", "b", "notes", "envs": {eval_key: {...}}}``; per env: ``tasks``
    (paired), ``only_a``, ``only_b``, ``pass_a``, ``pass_b`` (fractions of
    the paired tasks), ``mean_reward_a/b``, ``strict_mean_a/b`` (NaN when a
    side has no strict scores), ``pass_to_fail`` and ``fail_to_pass`` (sorted
    task ids), ``pass_delta`` and ``reward_delta`` (:func:`paired_difference`
    of the per-task pass@1 and mean reward, B minus A). ``FileNotFoundError``
    when a directory has no samples.jsonl."""
    a, b = Path(dir_a), Path(dir_b)
    notes: list[str] = []
    ta, tb = _tasks(a, notes), _tasks(b, notes)
    envs: dict[str, dict[str, Any]] = {}
    for key in sorted({k for k, _ in ta} | {k for k, _ in tb}):
        ids_a = {t for k, t in ta if k == key}
        ids_b = {t for k, t in tb if k == key}
        both = sorted(ids_a & ids_b)
        pa = {t: _passes(ta[(key, t)]) for t in both}
        pb = {t: _passes(tb[(key, t)]) for t in both}
        rows_a = [r for t in both for r in ta[(key, t)]]
        rows_b = [r for t in both for r in tb[(key, t)]]
        envs[key] = {
            "tasks": len(both), "only_a": len(ids_a - ids_b), "only_b": len(ids_b - ids_a),
            "pass_a": mean([float(v) for v in pa.values()]), "pass_b": mean([float(v) for v in pb.values()]),
            "mean_reward_a": mean([float(r.get("reward") or 0.0) for r in rows_a]),
            "mean_reward_b": mean([float(r.get("reward") or 0.0) for r in rows_b]),
            "strict_mean_a": mean(_strict(rows_a)), "strict_mean_b": mean(_strict(rows_b)),
            "pass_to_fail": [t for t in both if pa[t] and not pb[t]],
            "fail_to_pass": [t for t in both if pb[t] and not pa[t]],
            "pass_delta": paired_difference([_pass1(tb[(key, t)]) - _pass1(ta[(key, t)]) for t in both]),
            "reward_delta": paired_difference([_reward(tb[(key, t)]) - _reward(ta[(key, t)]) for t in both]),
        }
        if not both:
            notes.append(f"{key}: no task evaluated in both directories (other env kwargs or num_tasks?)")
    return {"a": str(a), "b": str(b), "notes": notes, "envs": envs}


def format_comparison(result: dict[str, Any], *, max_ids: int = 20) -> str:
    """A plain-text table of :func:`compare`'s result, then the flipped task
    ids per environment (at most ``max_ids`` each) and the notes."""

    def f(x: Any) -> str:
        return "-" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.3f}"

    def delta(d: dict[str, Any] | None) -> str:
        if not d or not d["tasks"]:
            return "-"
        return f"{d['mean']:+.3f}±{Z95 * d['stderr']:.3f}{'*' if d['significant'] else ' '}"

    lines = [f"A: {result['a']}", f"B: {result['b']}", "",
             f"{'environment':<32} {'tasks':>5} {'pass A':>7} {'pass B':>7} {'reward A':>8} {'reward B':>8} "
             f"{'strict A':>8} {'strict B':>8} {'P->F':>5} {'F->P':>5} {'Δpass@1':>14} {'Δreward':>14}"]
    for key, e in result["envs"].items():
        lines.append(f"{key:<32} {e['tasks']:>5} {f(e['pass_a']):>7} {f(e['pass_b']):>7} "
                     f"{f(e['mean_reward_a']):>8} {f(e['mean_reward_b']):>8} {f(e['strict_mean_a']):>8} "
                     f"{f(e['strict_mean_b']):>8} {len(e['pass_to_fail']):>5} {len(e['fail_to_pass']):>5} "
                     f"{delta(e.get('pass_delta')):>14} {delta(e.get('reward_delta')):>14}")
    lines.append("Δ: B - A over the paired tasks, ± its 95% interval; * larger than its noise "
                 f"(paired sign-flip test, p < {SIGNIFICANCE})")
    for key, e in result["envs"].items():
        for label, ids in (("pass -> fail", e["pass_to_fail"]), ("fail -> pass", e["fail_to_pass"])):
            if ids:
                more = f" (+{len(ids) - max_ids} more)" if len(ids) > max_ids else ""
                lines.append(f"{key} {label}: {', '.join(ids[:max_ids])}{more}")
        if e["only_a"] or e["only_b"]:
            lines.append(f"{key}: {e['only_a']} task(s) only in A, {e['only_b']} only in B (not compared)")
    lines += [f"note: {n}" for n in result["notes"]]
    return "\n".join(lines)
