"""What a bit-exact evaluation costs, printed as a Markdown section.

``gym-llm-eval``'s default env set (the four domains) with the tiny model on
CPU, evaluated by ``evaluate()`` with ``HFPolicy(batch_invariant=True)`` (each
sequence in its own forward pass: the same files whatever concurrency) and
``batch_invariant=False`` (batched), alternated in one process so both see
the same machine load. Each run's ``samples.jsonl`` is compared with the
first of its kind: the invariant runs must be identical.

    python benchmarks/bench_eval_repro.py                 # 8 tasks x 4 samples per env, 2 rounds
    python benchmarks/bench_eval_repro.py --tasks 4 --rounds 1
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from _common import header

from gym_llm.apps.evaluate import evaluate
from gym_llm.apps.evaluate.envs import env_set
from gym_llm.runtime.models import tiny_model_path
from gym_llm.runtime.policies import HFPolicy, SamplingParams


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    from omegaconf import OmegaConf

    conf = OmegaConf.load(Path(__file__).resolve().parents[1] / "gym_llm/apps/conf/envs/default.yaml")
    envs = env_set(OmegaConf.to_container(conf.envs, resolve=True))
    sampling = SamplingParams(temperature=1.0, max_new_tokens=48)
    times: dict[bool, list[float]] = {True: [], False: []}
    files: dict[bool, list[str]] = {True: [], False: []}
    path = tiny_model_path()
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for invariant in (False, True):
                with HFPolicy(path, device="cpu", batch_invariant=invariant) as policy:
                    out = Path(tmp) / f"{invariant}-{r}"
                    t0 = time.perf_counter()
                    evaluate(policy, envs, out, num_tasks=args.tasks, k=4, sampling=sampling,
                             max_episode_tokens=1024, seed=0, concurrency=64, strict=False)
                    times[invariant].append(time.perf_counter() - t0)
                    files[invariant].append((out / "samples.jsonl").read_text())
    batched, alone = statistics.median(times[False]), statistics.median(times[True])
    print(header("Evaluation: bit-exact (batch-invariant) against batched HF decoding"))
    print(f"- load when it started: {load}\n- default env set, {args.tasks} tasks x 4 samples per env, "
          f"tiny model, temperature 1, {args.rounds} round(s), alternated\n")
    print("| decoding | wall time (median) | runs | samples.jsonl identical across runs |")
    print("|---|---|---|---|")
    print(f"| batched (`batch_invariant=false`) | {batched:.1f} s | {len(times[False])} | "
          f"{len(set(files[False])) == 1} |")
    print(f"| one sequence per forward (`batch_invariant=true`) | {alone:.1f} s | {len(times[True])} | "
          f"{len(set(files[True])) == 1} |")
    print(f"\nratio invariant / batched: {alone / batched:.2f}x")


if __name__ == "__main__":
    main()
