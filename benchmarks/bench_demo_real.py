"""A real-model recipe, end to end: ``make demo-real`` or ``make demo-instruct``
(SmolLM2-135M-Instruct, GRPO on CPU, then ``gym-llm-eval`` of the result),
timed, with its held-out reward curve and the peak memory of each command.

The recipes' targets: the mixture-weighted held-out reward
(``heldout/reward/mean``) rises by at least 0.1 from the first eval (step 0,
the untouched model) to the last, on every seed, within 45 minutes on 2 CPU
cores: the whole target (training, then ``gym-llm-eval``) for ``demo-real``
(issue 17), the training that shows the rise for ``demo-instruct`` (issue 34:
"rises ... within 45 minutes"; its final eval of 2,048 episodes, the strict and
loose accuracy, comes after). Both walls are reported for both. The peak memory
leaves most of the machine's RAM free. Seeds run one after the other, never side
by side, so each has the machine to itself. Peak memory is the resident set summed over
the command's process tree (the in-process vLLM engine and the sandbox jails
included), sampled every 0.2 s.

``--base-eval`` also evaluates the untrained model with the target's own eval
(``make real-eval``: the same env set, tasks, samples and seeds), and
``--others ENVSET`` evaluates the untrained and every trained model on another
env set (the other domains), so that what training did elsewhere shows as a
paired difference per env (:func:`gym_llm.apps.evaluate.compare`: the same
tasks on both sides, a 95% interval and a sign-flip p-value).

    python benchmarks/bench_demo_real.py [--target demo-instruct] [--seeds 0,1] [--base-eval]
        [--others default] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from datetime import datetime
from pathlib import Path

from _common import header, run_with_peak_memory
from gym_llm_trainers.metrics import read_metrics

from gym_llm.apps.evaluate import compare

ROOT = Path(__file__).resolve().parents[1]
TIME_LIMIT_S = 45 * 60
MIN_RISE = 0.1
GIB = 2**30
BASE_MODEL = "model=smollm2-135m-instruct"
#: What each target's own eval takes besides the model: the Makefile's variable, which make expands.
TARGET_EVAL = {"demo-real": "$(DEMO_REAL_EVAL)", "demo-instruct": "$(DEMO_INSTRUCT_EVAL)"}
#: Which wall each target's time limit applies to (see the module doc).
TIMED = {"demo-real": "whole target", "demo-instruct": "training"}
#: The other domains' eval: fewer tasks than the target's (a paired comparison), answers with room.
OTHERS_EVAL = "num_tasks=64 k=2 policy.max_new_tokens=160"


def run_make(args: list[str], log: Path) -> tuple[float, int]:
    """Wall seconds and peak RSS of ``make ARGS``; exits on failure."""
    with log.open("w") as out:
        code, wall, peak = run_with_peak_memory(["make", "--no-print-directory", *args], cwd=ROOT, stdout=out,
                                                stderr=subprocess.STDOUT)
    if code != 0:
        sys.exit(f"make {args[0]} failed (exit {code}); its output: {log}")
    return wall, peak


def real_eval(model: str, eval_args: str, out_dir: Path, log: Path) -> None:
    """``make real-eval`` of ``model`` (``model=...`` or ``checkpoint=...``) into ``out_dir``."""
    run_make(["real-eval", f"EVAL_ARGS={model} {eval_args} hydra.run.dir={out_dir}"], log)


def print_comparison(title: str, base: Path, trained: dict[int, Path]) -> None:
    print(f"\n{title}\n")
    print("| env | seed | untrained mean reward | trained mean reward | paired pass@1 change [95% CI] | p |")
    print("|---|---:|---:|---:|---|---:|")
    for seed, run in trained.items():
        for key, e in compare(base, run)["envs"].items():
            d = e["pass_delta"]
            print(f"| {key} | {seed} | {e['mean_reward_a']:.3f} | {e['mean_reward_b']:.3f} | {d['mean']:+.3f} "
                  f"[{d['ci95'][0]:+.3f}, {d['ci95'][1]:+.3f}] | {d['p_value']:.3f} |")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", choices=sorted(TARGET_EVAL), default="demo-real")
    ap.add_argument("--base-eval", action="store_true", help="also evaluate the untrained model with the target's eval")
    ap.add_argument("--others", metavar="ENVSET", help="an env set (conf/envs) to evaluate before and after training")
    ap.add_argument("--seeds", default="0,1", help="comma-separated trainer.seed values, run one after the other")
    ap.add_argument("--keep", type=Path, help="keep the run directories (and logs) here")
    args = ap.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    total_ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    base = args.keep or Path(tempfile.mkdtemp(prefix="bench_demo_real-"))
    base.mkdir(parents=True, exist_ok=True)
    results = []
    others_eval = f"envs={args.others} {OTHERS_EVAL}"
    try:
        if args.base_eval:
            shutil.rmtree(base / "base", ignore_errors=True)
            real_eval(BASE_MODEL, TARGET_EVAL[args.target], base / "base", base / "base.log")
        if args.others:
            shutil.rmtree(base / "base-others", ignore_errors=True)
            real_eval(BASE_MODEL, others_eval, base / "base-others", base / "base-others.log")
        for seed in seeds:
            run_dir = base / f"seed{seed}"
            shutil.rmtree(run_dir, ignore_errors=True)
            wall, peak = run_make([args.target, f"RUN_DIR={run_dir}",
                                   f"ARGS=trainer.seed={seed} logging.progress=false"], base / f"seed{seed}.log")
            if args.others:
                real_eval(f"checkpoint={run_dir}", others_eval, run_dir / "eval-others", base / f"seed{seed}-others.log")
            rows = read_metrics(run_dir)
            evals = [r for r in rows if r.get("heldout/reward/mean") is not None]
            steps = [r["time/step"] for r in rows if r["step"] > 0 and "time/step" in r]
            final = json.loads((run_dir / "eval" / "results.json").read_text())
            results.append((seed, wall, training_wall(run_dir), peak, sum(steps) / len(steps), evals, final))
        print(header(f"Real-model recipe: `make {args.target}` (SmolLM2-135M-Instruct, GRPO on CPU, then gym-llm-eval)"))
        report(results, total_ram, TIMED[args.target])
        if args.base_eval:
            print_comparison(f"The target's eval, untrained (`make real-eval EVAL_ARGS=\"{BASE_MODEL} "
                             f"{TARGET_EVAL[args.target]}\"`) and trained, paired by task:",
                             base / "base", {seed: base / f"seed{seed}" / "eval" for seed in seeds})
        if args.others:
            print_comparison(f"Other domains, untrained and trained (`{others_eval}`), paired by task:",
                             base / "base-others", {seed: base / f"seed{seed}" / "eval-others" for seed in seeds})
        print()
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)


def training_wall(run_dir: Path) -> float:
    """Seconds from the first to the last line of the run's ``train.log``
    (model loading, the held-out evals and the last checkpoint included)."""
    stamps = [datetime.strptime(line[1:24], "%Y-%m-%d %H:%M:%S,%f")
              for line in (run_dir / "train.log").read_text().splitlines() if line.startswith("[20")]
    return (stamps[-1] - stamps[0]).total_seconds()


def report(results: list[tuple], total_ram: int, timed: str) -> None:
    print(f"- targets: the {timed} in at most {TIME_LIMIT_S // 60} min on 2 CPU cores; held-out reward "
          f"(mixture-weighted) +{MIN_RISE} or more from step 0 to the last eval on every seed; peak memory well "
          f"under the machine's {total_ram / GIB:.0f} GiB\n")
    print("| seed | wall: training | wall: whole target | mean step (evals included) | peak memory "
          "| held-out reward at eval steps | rise | time target | rise target |")
    print("|---:|---:|---:|---:|---:|---|---:|---|---|")
    for seed, wall, train_wall, peak, step_s, evals, _ in results:
        curve = ", ".join(f"{r['heldout/reward/mean']:.3f} ({r['step']})" for r in evals)
        rise = evals[-1]["heldout/reward/mean"] - evals[0]["heldout/reward/mean"]
        limited = train_wall if timed == "training" else wall
        print(f"| {seed} | {train_wall / 60:.1f} min | {wall / 60:.1f} min | {step_s:.1f} s | {peak / GIB:.1f} GiB "
              f"| {curve} | {rise:+.3f} | {'met' if limited <= TIME_LIMIT_S else 'MISSED'} "
              f"| {'met' if rise >= MIN_RISE else 'MISSED'} |")
    print("\nPer env at the first and last eval (— where training's evals do not score it: the loose "
          "verdicts), and `gym-llm-eval` of the trained model (held-out, its own tasks and samples: "
          "`results.json`):\n")
    print("| seed | env | first eval | last eval | gym-llm-eval mean reward | pass@1 | pass@k (k) |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    for seed, *_, evals, final in results:
        for env_id, r in sorted(final.items()):
            key = f"heldout/{env_id}/reward/mean"
            first, last = (f"{e[key]:.3f}" if key in e else "—" for e in (evals[0], evals[-1]))
            print(f"| {seed} | {env_id} | {first} | {last} "
                  f"| {r['mean_reward']:.3f} | {r['pass@1']:.3f} | {r['pass@k']:.3f} ({r['k']}) |")


if __name__ == "__main__":
    main()
