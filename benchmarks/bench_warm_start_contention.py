"""The SFT warm start on a CPU shared with other jobs (issue 38, item 9): its
optimizer steps with torch's OpenMP threads spinning while they wait (the
runtime's default, what ``gym-llm-train`` ran before) against sleeping
(``OMP_WAIT_POLICY=PASSIVE``, which importing ``gym_llm_trainers`` now sets
before torch loads), and on one thread for reference; side by side,
alternating, in the same window, with ``--busy`` competing busy loops
(``python -c 'while 1: pass'``) started for the measurement and stopped
after it.

Each row is a fresh process that builds the demo's warm start (the default
mixture's verified reference answers, the tiny model) and times ``--steps``
optimizer steps of it (the demo runs about 160).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

#: row -> (environment overrides, whether torch loads before gym_llm_trainers sets its default)
MODES = {
    "spinning (before: runtime default)": ({}, True),
    "OMP_WAIT_POLICY=PASSIVE (now the default)": ({}, False),
    "one thread (OMP_NUM_THREADS=1)": ({"OMP_NUM_THREADS": "1"}, False),
}


def child(steps: int, torch_first: bool) -> None:
    """Time the warm start's verification and ``steps`` SFT steps; print JSON."""
    if torch_first:  # what gym-llm-train did before: torch's OpenMP started with no wait policy
        os.environ.pop("OMP_WAIT_POLICY", None)
        import torch  # noqa: F401
    from gym_llm_trainers.collection import run_entries
    from gym_llm_trainers.modeling import load_policy_model, load_tokenizer
    from gym_llm_trainers.sft import reference_examples, sft_train
    from gym_llm_trainers.train import compose, run_config

    from gym_llm.runtime.chat import ChatFormat

    cfg = run_config(compose([]))
    tokenizer = load_tokenizer(cfg.model)
    chat = ChatFormat(tokenizer)
    sc = cfg.trainer.sft
    t0 = time.perf_counter()
    samples, _, _ = reference_examples(run_entries(cfg), chat, [tokenizer.convert_tokens_to_ids(tokenizer.eos_token)],
                                       sc.examples_per_env, seed=0, max_tokens=sc.max_seq_tokens)
    verify_s = time.perf_counter() - t0
    model = load_policy_model(cfg.model, "cpu")
    sc.epochs = steps * sc.batch_size / len(samples)
    t0 = time.perf_counter()
    n, _ = sft_train(model, samples, sc, lr=cfg.model.sft_lr, pad_id=tokenizer.pad_token_id, seed=0,
                     token_budget=cfg.trainer.micro_batch_tokens)
    print(json.dumps({"verify_s": verify_s, "steps": n, "sft_s": time.perf_counter() - t0,
                      "policy": os.environ.get("OMP_WAIT_POLICY")}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=3, help="SFT optimizer steps timed per row")
    ap.add_argument("--rounds", type=int, default=2, help="times each mode runs (alternating)")
    ap.add_argument("--busy", type=int, default=2, help="competing busy-loop processes")
    ap.add_argument("--child", choices=["torch-first", "package-first"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.steps, args.child == "torch-first")
        return
    from _common import busy_loops, header  # noqa: I001  (benchmarks/ is the script dir)

    per_step: dict[str, list[float]] = {m: [] for m in MODES}
    verify: dict[str, list[float]] = {m: [] for m in MODES}
    with busy_loops(args.busy):
        load_before = os.getloadavg()[0]
        for _ in range(args.rounds):
            for mode, (env, torch_first) in MODES.items():
                proc = subprocess.run(
                    [sys.executable, __file__, "--child", "torch-first" if torch_first else "package-first",
                     "--steps", str(args.steps)],
                    env={k: v for k, v in {**os.environ, **env}.items() if k != "OMP_WAIT_POLICY"},
                    capture_output=True, text=True, check=True)
                row = json.loads(proc.stdout.strip().splitlines()[-1])
                per_step[mode].append(row["sft_s"] / row["steps"])
                verify[mode].append(row["verify_s"])
                print(f"{mode}: {per_step[mode][-1]:.2f} s per step", file=sys.stderr, flush=True)
    print(header("Warm start under CPU contention: OpenMP threads spinning vs sleeping"))
    print(f"- setup: the demo's warm start (default mixture, tiny model, batch 32), {args.steps} SFT steps "
          f"per row, {args.rounds} rounds alternating the rows, {args.busy} competing `while 1: pass` "
          f"processes, torch threads 2 (one for the last row), niceness {os.nice(0)}; load average "
          f"{load_before:.1f} when it started (above 2 + {args.busy}: other jobs shared the machine too)\n")
    print("| torch threads wait by | s per SFT step (each round) | median | speed-up vs spinning | "
          "verification (s, median) |")
    print("|---|---|---:|---:|---:|")
    base = statistics.median(per_step[next(iter(MODES))])
    for mode in MODES:
        med = statistics.median(per_step[mode])
        print(f"| {mode} | {', '.join(f'{v:.2f}' for v in per_step[mode])} | {med:.2f} | {base / med:.1f}x | "
              f"{statistics.median(verify[mode]):.1f} |")
    print("\nThe verification (reference answers scored by each env, code run in the sandbox) is not "
          "where the time goes; the SFT steps' many small parallel ops are: a spinning thread burns the "
          "time slice the thread holding the work needs.\n")


if __name__ == "__main__":
    main()
