"""The embedded demo, end to end: ``gym-llm-train`` with no overrides (only a
run directory and a seed), timed, and its held-out reward curve.

The demo's targets: it finishes in at most 10 minutes on 2 CPU cores, and the
mixture-weighted held-out reward (``heldout/reward/mean``) rises by at least
0.1 from the first eval (step 0: after the warm start, before any RL update)
to the last. Several seeds (``--seeds 0,1``) run one after the other, never
side by side, so each has the machine to itself.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import header
from gym_llm_trainers.metrics import read_metrics

TIME_LIMIT_S = 600
MIN_RISE = 0.1


def run_demo(seed: int, run_dir: Path) -> tuple[float, list[dict]]:
    """Wall seconds and the metrics rows of one default training run."""
    cmd = [sys.executable, "-m", "gym_llm_trainers.train", f"hydra.run.dir={run_dir}", f"trainer.seed={seed}",
           "logging.progress=false"]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t0
    return wall, read_metrics(run_dir)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="0", help="comma-separated trainer.seed values, run one after the other")
    args = ap.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in seeds:
            wall, rows = run_demo(seed, Path(tmp) / f"seed{seed}")
            evals = [r for r in rows if r.get("heldout/reward/mean") is not None]
            sft_s = next(r["sft/seconds"] for r in rows if "sft/seconds" in r)
            step_s = [r["time/step"] for r in rows if r["step"] > 0 and "time/step" in r]
            results.append((seed, wall, sft_s, sum(step_s) / len(step_s), evals))
    print(header("Embedded demo: `gym-llm-train` with no overrides"))
    print(f"- targets: at most {TIME_LIMIT_S // 60} min on 2 CPU cores; held-out reward (mixture-weighted) "
          f"+{MIN_RISE} or more from step 0 to the last eval\n")
    print("| seed | wall | warm start | mean GRPO step | held-out reward at eval steps | rise | time | rise |")
    print("|---:|---:|---:|---:|---|---:|---|---|")
    for seed, wall, sft_s, step_s, evals in results:
        curve = ", ".join(f"{r['heldout/reward/mean']:.3f} ({r['step']})" for r in evals)
        rise = evals[-1]["heldout/reward/mean"] - evals[0]["heldout/reward/mean"]
        print(f"| {seed} | {wall / 60:.1f} min | {sft_s:.0f} s | {step_s:.1f} s | {curve} | {rise:+.3f} | "
              f"{'met' if wall <= TIME_LIMIT_S else 'MISSED'} | {'met' if rise >= MIN_RISE else 'MISSED'} |")
    last = results[-1][4][-1]
    per_env = ", ".join(f"{k.removeprefix('heldout/').removesuffix('/reward/mean')} {v:.3f}"
                        for k, v in last.items()
                        if k.startswith("heldout/") and k.endswith("/reward/mean") and k != "heldout/reward/mean")
    print(f"\nLast eval per env (seed {results[-1][0]}): {per_env}. Wall time: the whole command (warm start, "
          "every GRPO step, every held-out eval, checkpoints and the plot).\n")


if __name__ == "__main__":
    main()
