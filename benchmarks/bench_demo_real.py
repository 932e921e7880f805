"""The real-model recipe, end to end: ``make demo-real`` (SmolLM2-135M-Instruct,
GRPO on CPU, then ``gym-llm-eval`` of the result), timed, with its held-out
reward curve and the peak memory of each command.

The recipe's targets (issue 17): the whole target in at most 45 minutes on
2 CPU cores; the mixture-weighted held-out reward (``heldout/reward/mean``)
rises by at least 0.1 from the first eval (step 0, the untouched model) to
the last, on every seed; the peak memory leaves most of the machine's RAM
free. Seeds run one after the other, never side by side, so each has the
machine to itself. Peak memory is the resident set summed over the command's
process tree (the in-process vLLM engine and the sandbox jails included),
sampled every 0.2 s.

    python benchmarks/bench_demo_real.py [--seeds 0,1] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import header, run_with_peak_memory
from gym_llm_trainers.metrics import read_metrics

ROOT = Path(__file__).resolve().parents[1]
TIME_LIMIT_S = 45 * 60
MIN_RISE = 0.1
GIB = 2**30


def run_recipe(seed: int, run_dir: Path, log: Path) -> tuple[float, int]:
    """Wall seconds and peak RSS of ``make demo-real`` for ``seed``; exits on failure."""
    cmd = ["make", "--no-print-directory", "demo-real", f"RUN_DIR={run_dir}",
           f"ARGS=trainer.seed={seed} logging.progress=false"]
    with log.open("w") as out:
        code, wall, peak = run_with_peak_memory(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    if code != 0:
        sys.exit(f"make demo-real failed (exit {code}); its output: {log}")
    return wall, peak


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="0,1", help="comma-separated trainer.seed values, run one after the other")
    ap.add_argument("--keep", type=Path, help="keep the run directories (and logs) here")
    args = ap.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    total_ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    base = args.keep or Path(tempfile.mkdtemp(prefix="bench_demo_real-"))
    base.mkdir(parents=True, exist_ok=True)
    results = []
    try:
        for seed in seeds:
            run_dir = base / f"seed{seed}"
            shutil.rmtree(run_dir, ignore_errors=True)
            wall, peak = run_recipe(seed, run_dir, base / f"seed{seed}.log")
            rows = read_metrics(run_dir)
            evals = [r for r in rows if r.get("heldout/reward/mean") is not None]
            steps = [r["time/step"] for r in rows if r["step"] > 0 and "time/step" in r]
            final = json.loads((run_dir / "eval" / "results.json").read_text())
            results.append((seed, wall, peak, sum(steps) / len(steps), evals, final))
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)
    print(header("Real-model recipe: `make demo-real` (SmolLM2-135M-Instruct, GRPO on CPU, then gym-llm-eval)"))
    print(f"- targets: the whole target (training, its held-out evals, then gym-llm-eval) in at most "
          f"{TIME_LIMIT_S // 60} min on 2 CPU cores; held-out reward (mixture-weighted) +{MIN_RISE} or more from "
          f"step 0 to the last eval on every seed; peak memory well under the machine's "
          f"{total_ram / GIB:.0f} GiB\n")
    print("| seed | wall (whole target) | mean step (evals included) | peak memory | held-out reward at eval steps "
          "| rise | time target | rise target |")
    print("|---:|---:|---:|---:|---|---:|---|---|")
    for seed, wall, peak, step_s, evals, _ in results:
        curve = ", ".join(f"{r['heldout/reward/mean']:.3f} ({r['step']})" for r in evals)
        rise = evals[-1]["heldout/reward/mean"] - evals[0]["heldout/reward/mean"]
        print(f"| {seed} | {wall / 60:.1f} min | {step_s:.1f} s | {peak / GIB:.1f} GiB | {curve} | {rise:+.3f} | "
              f"{'met' if wall <= TIME_LIMIT_S else 'MISSED'} | {'met' if rise >= MIN_RISE else 'MISSED'} |")
    print("\nPer env at the first and last eval, and `gym-llm-eval` of the trained model (held-out, "
          "its own tasks and samples: `results.json`):\n")
    print("| seed | env | first eval | last eval | gym-llm-eval mean reward | pass@1 | pass@k (k) |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    for seed, _, _, _, evals, final in results:
        for env_id, r in sorted(final.items()):
            key = f"heldout/{env_id}/reward/mean"
            print(f"| {seed} | {env_id} | {evals[0].get(key, float('nan')):.3f} | {evals[-1].get(key, float('nan')):.3f} "
                  f"| {r['mean_reward']:.3f} | {r['pass@1']:.3f} | {r['pass@k']:.3f} ({r['k']}) |")
    print()


if __name__ == "__main__":
    main()
