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
"""

from __future__ import annotations

import math
import os
from collections import defaultdict
from pathlib import Path
from typing import Any

from gym_llm.apps.evaluate.metrics import mean
from gym_llm.apps.report.data import read_jsonl_tolerant
from gym_llm.apps.runs import SAMPLES_FILE

__all__ = ["compare", "format_comparison"]


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


def compare(dir_a: str | os.PathLike, dir_b: str | os.PathLike) -> dict[str, Any]:
    """``{"a", "b", "notes", "envs": {eval_key: {...}}}``; per env: ``tasks``
    (paired), ``only_a``, ``only_b``, ``pass_a``, ``pass_b`` (fractions of
    the paired tasks), ``mean_reward_a/b``, ``strict_mean_a/b`` (NaN when a
    side has no strict scores), ``pass_to_fail`` and ``fail_to_pass`` (sorted
    task ids). ``FileNotFoundError`` when a directory has no samples.jsonl."""
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
        }
        if not both:
            notes.append(f"{key}: no task evaluated in both directories (other env kwargs or num_tasks?)")
    return {"a": str(a), "b": str(b), "notes": notes, "envs": envs}


def format_comparison(result: dict[str, Any], *, max_ids: int = 20) -> str:
    """A plain-text table of :func:`compare`'s result, then the flipped task
    ids per environment (at most ``max_ids`` each) and the notes."""

    def f(x: Any) -> str:
        return "-" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.3f}"

    lines = [f"A: {result['a']}", f"B: {result['b']}", "",
             f"{'environment':<32} {'tasks':>5} {'pass A':>7} {'pass B':>7} {'reward A':>8} {'reward B':>8} "
             f"{'strict A':>8} {'strict B':>8} {'P->F':>5} {'F->P':>5}"]
    for key, e in result["envs"].items():
        lines.append(f"{key:<32} {e['tasks']:>5} {f(e['pass_a']):>7} {f(e['pass_b']):>7} "
                     f"{f(e['mean_reward_a']):>8} {f(e['mean_reward_b']):>8} {f(e['strict_mean_a']):>8} "
                     f"{f(e['strict_mean_b']):>8} {len(e['pass_to_fail']):>5} {len(e['fail_to_pass']):>5}")
    for key, e in result["envs"].items():
        for label, ids in (("pass -> fail", e["pass_to_fail"]), ("fail -> pass", e["fail_to_pass"])):
            if ids:
                more = f" (+{len(ids) - max_ids} more)" if len(ids) > max_ids else ""
                lines.append(f"{key} {label}: {', '.join(ids[:max_ids])}{more}")
        if e["only_a"] or e["only_b"]:
            lines.append(f"{key}: {e['only_a']} task(s) only in A, {e['only_b']} only in B (not compared)")
    lines += [f"note: {n}" for n in result["notes"]]
    return "\n".join(lines)
