"""What an evaluation's reader sees: ``report.md`` and the PNG plots.

Contract: both are drawn from ``results.json`` alone (:func:`write_report`
also takes the run's description, ``meta``, and its warnings), so they can
be redrawn for any eval directory. Plots need matplotlib (the ``[train]``
extra); they use the Agg backend and never open a window. Figures that are
not finite print as ``-``.
"""

from __future__ import annotations

import math
import os
import platform
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from gym_llm.apps.evaluate.metrics import bucket_start
from gym_llm.apps.runs import EVAL_REPORT_FILE, SAMPLES_FILE
from gym_llm.apps.runs import REPORT_FILE as HTML_REPORT

__all__ = ["write_report", "plot_results", "fmt", "fmt_ci", "machine"]


def fmt(x: Any, digits: int = 3) -> str:
    """A figure of a table: ``digits`` decimals, ``-`` for none or non-finite."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    return f"{x:.{digits}f}" if isinstance(x, float) else str(x)


def fmt_ci(result: dict[str, Any], key: str) -> str:
    """``result[key]`` with its 95% interval ``result[key + "_ci95"]``
    (``0.500 [0.310, 0.690]``); the figure alone for results of an older gym-llm-eval."""
    ci = result.get(f"{key}_ci95")
    return f"{fmt(result.get(key))} [{fmt(ci[0])}, {fmt(ci[1])}]" if ci else fmt(result.get(key))


def machine() -> str:
    """This machine, as the report describes it: cores, CPU model, Python."""
    return f"{os.cpu_count()} cores, {cpu_model()}, Python {platform.python_version()}"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def plot_results(out_dir: str | os.PathLike, results: Mapping[str, Mapping[str, Any]]) -> list[Path]:
    """``reward_by_env.png`` (mean reward, pass@1, pass@k per environment) and
    ``reward_by_difficulty.png`` (mean reward and pass@1 against task
    difficulty, one line per environment); returns the files written."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display on servers and CI
    import matplotlib.pyplot as plt

    out = Path(out_dir)
    keys = list(results)
    if not keys:
        return []
    written = []
    k = max(int(r["k"]) for r in results.values())
    fig, ax = plt.subplots(figsize=(max(6.0, 1.4 * len(keys) + 2), 4.2))
    width = 0.27
    for j, (metric, label) in enumerate(
            [("mean_reward", "mean reward"), ("pass@1", "pass@1"), ("pass@k", f"pass@{k}")]):
        xs = [i + (j - 1) * width for i in range(len(keys))]
        ys = [results[key][metric] or 0.0 for key in keys]
        ax.bar(xs, ys, width, label=label)
    ax.set_xticks(range(len(keys)))
    ax.set_xticklabels(keys, rotation=20, ha="right", fontsize=8)
    means = [results[key]["mean_reward"] or 0.0 for key in keys]
    ax.set_ylim(min(0.0, *means), 1.05 * max(1.0, *means))
    ax.set_title("Held-out reward by environment" if _split_of(results) == "heldout"
                 else f"Reward by environment ({_split_of(results)} split)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = out / "reward_by_env.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    written.append(path)

    fig, (ax_r, ax_p) = plt.subplots(1, 2, figsize=(10, 4), sharex=True)
    rewards = [0.0, 1.0]  # the axis spans [0, 1] at least: small differences are not magnified
    for key in keys:
        by = results[key].get("by_difficulty") or {}
        ds = sorted(by, key=bucket_start)
        xs = [sum(map(float, d.split("-"))) / len(d.split("-")) for d in ds]  # a bin's middle
        ys = [by[d]["mean_reward"] or 0.0 for d in ds]
        rewards += ys
        ax_r.plot(xs, ys, marker="o", label=key)
        ax_p.plot(xs, [by[d]["pass@1"] or 0.0 for d in ds], marker="o", label=key)
    pad = 0.02 * (max(rewards) - min(rewards))
    ax_r.set_ylim(min(rewards) - pad, max(rewards) + pad)
    ax_r.set_xlabel("task difficulty")
    ax_p.set_xlabel("task difficulty")
    ax_r.set_ylabel("mean reward")
    ax_p.set_ylabel("pass@1")
    ax_p.set_ylim(-0.02, 1.02)
    ax_r.legend(fontsize=7)
    fig.suptitle("Reward by difficulty")
    fig.tight_layout()
    path = out / "reward_by_difficulty.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    written.append(path)
    return written


def _split_of(results: Mapping[str, Mapping[str, Any]]) -> str:
    return str(next(iter(results.values())).get("split") or "heldout")


def write_report(out_dir: str | os.PathLike, results: Mapping[str, Mapping[str, Any]],
                 meta: Mapping[str, Any], warnings: Sequence[str] = (),
                 plots: Sequence[Path] = ()) -> Path:
    """``report.md``: what was evaluated (``meta``: model, policy, split,
    tasks, samples, command, date, ...), the results table, pass@j curve,
    reward components, per-difficulty breakdown, warnings, links to
    ``samples.jsonl`` and ``report.html``, and the plots. The strict mean and
    gap print as ``-`` for results of an older gym-llm-eval."""
    out = Path(out_dir)
    lines = ["# Evaluation report", ""]
    lines += [f"- {name}: {value}" for name, value in meta.items()]
    if warnings:
        lines += ["", "## Warnings", ""] + [f"- {w}" for w in warnings]
    if not results:
        lines += ["", "No results (every task failed; see errors.jsonl)."]
    else:
        k = max(int(r["k"]) for r in results.values())
        lines += ["", "## Results", "",
                  f"| environment | tasks | samples | mean reward (± s.e.) | strict mean | gap | pass@1 [95% CI] | pass@{k} "
                  "| turns | generated tokens | truncated | reward errors |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for key, r in results.items():
            lines.append(
                f"| {key} | {r['n']} | {r['num_samples']} | {fmt(r['mean_reward'])} ± "
                f"{fmt(r['reward_stderr'])} | {fmt(r.get('strict_mean'))} | {fmt(r.get('gap'))} | "
                f"{fmt_ci(r, 'pass@1')} | {fmt(r['pass@k'])} | "
                f"{fmt(r['mean_turns'], 2)} | {fmt(r['mean_generated_tokens'], 1)} | "
                f"{fmt(r['truncated_fraction'], 2)} | {r['reward_errors']} |")
        js = sorted({j for r in results.values() for j in r["pass_at"]}, key=int)
        lines += ["", "### pass@j", "", "| environment | " + " | ".join(f"pass@{j}" for j in js) + " |",
                  "|---|" + "---|" * len(js)]
        for key, r in results.items():
            lines.append(f"| {key} | " + " | ".join(fmt(r["pass_at"].get(j)) for j in js) + " |")
        lines += ["", "### Reward components (mean over samples)", ""]
        for key, r in results.items():
            parts = ", ".join(f"{name} {fmt(v)}" for name, v in r["reward_components"].items())
            lines.append(f"- {key}: {parts or '(none reported)'}")
        lines += ["", "### By difficulty", "", "| environment | difficulty | tasks | mean reward | pass@1 "
                  f"| pass@{k} |", "|---|---|---|---|---|---|"]
        for key, r in results.items():
            for d, b in r["by_difficulty"].items():
                lines.append(f"| {key} | {d} | {b['n']} | {fmt(b['mean_reward'])} | "
                             f"{fmt(b['pass@1'])} | {fmt(b['pass@k'])} |")
    lines += ["", "## Files", "", f"- [{SAMPLES_FILE}]({SAMPLES_FILE}): every sample (messages, rewards, "
              "strict score)", f"- [{HTML_REPORT}]({HTML_REPORT}): curves and a sample browser (`gym-llm report`)"]
    if plots:
        lines += ["", "## Plots", ""] + [f"![{p.stem}]({p.name})" for p in plots]
    path = out / EVAL_REPORT_FILE
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
