"""``gym-llm-eval`` with torch's OpenMP threads spinning a while before they
sleep (the runtime's default, which gym-llm-eval keeps) against sleeping at
once (``OMP_WAIT_POLICY=PASSIVE``, which gym-llm-train sets: see
bench_warm_start_contention.py), side by side, alternating, on whatever else
the machine runs (``--busy`` adds competing busy loops). Which is faster
depends on the work: decoding's many small parallel ops favour spinning,
jails and other processes beside it favour sleeping.

Each row is a fresh ``gym-llm-eval`` process: the default env set (math,
code and tool use in jails, long context) on the built-in tiny model, or
``--args`` of your own. Reported: the eval's own wall time (what it prints),
the process's wall time, and the CPU time it used (user + system, its
children included), per round.

    python benchmarks/bench_eval_openmp.py [--rounds 3] [--busy 0] [--args "num_tasks=64 k=2"]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

#: row -> the OMP_WAIT_POLICY its process starts with (None: unset)
MODES = {"spinning, then sleeping (the runtime's default)": None, "OMP_WAIT_POLICY=PASSIVE": "PASSIVE"}


def child(overrides: list[str]) -> None:
    """``gym-llm-eval`` in this process."""
    from gym_llm.apps.evaluate.app import main

    sys.argv = ["gym-llm-eval", *overrides]
    main()


def run_row(policy: str | None, overrides: list[str], out_dir: str) -> tuple[float, float, float]:
    """(the eval's own seconds, wall seconds, CPU seconds) of one fresh process."""
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if policy is not None:
        env["OMP_WAIT_POLICY"] = policy
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, __file__, "--child", "--", *overrides, f"hydra.run.dir={out_dir}"],
                          env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        sys.exit(f"gym-llm-eval failed:\n{proc.stderr[-3000:]}")
    found = re.findall(r"\((\d+(?:\.\d+)?) s\)", " ".join((proc.stdout + proc.stderr).split()))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return float(found[-1]), wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3, help="times each mode runs (alternating)")
    ap.add_argument("--busy", type=int, default=0, help="competing busy-loop processes")
    ap.add_argument("--args", default="num_tasks=64 k=2", help="gym-llm-eval overrides (space-separated)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("overrides", nargs="*", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.overrides)
        return
    from _common import busy_loops, header  # noqa: I001  (benchmarks/ is the script dir)

    rows: dict[str, list[tuple[float, float, float]]] = {m: [] for m in MODES}
    with busy_loops(args.busy), tempfile.TemporaryDirectory() as tmp:
        load_before = os.getloadavg()[0]
        for r in range(args.rounds):
            for i, (mode, policy) in enumerate(MODES.items()):
                rows[mode].append(run_row(policy, args.args.split(), f"{tmp}/{r}-{i}"))
                print(f"{mode}: {rows[mode][-1]}", file=sys.stderr, flush=True)
    print(header("gym-llm-eval: OpenMP threads spinning vs sleeping"))
    print(f"- setup: `gym-llm-eval {args.args}` (the default env set and model unless overridden), a fresh "
          f"process per row, {args.rounds} rounds alternating the rows, {args.busy} competing busy loops; "
          f"load average {load_before:.1f} when it started\n")
    print("| torch threads wait by | eval s (each round) | median | process wall s (median) "
          "| CPU s, user + system (median) |")
    print("|---|---|---:|---:|---:|")
    for mode in MODES:
        evals = [e for e, _, _ in rows[mode]]
        print(f"| {mode} | {', '.join(f'{v:.1f}' for v in evals)} | {statistics.median(evals):.1f} | "
              f"{statistics.median(w for _, w, _ in rows[mode]):.1f} | "
              f"{statistics.median(c for _, _, c in rows[mode]):.1f} |")
    print()


if __name__ == "__main__":
    main()
