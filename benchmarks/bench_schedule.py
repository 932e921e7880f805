"""``schedule=static`` (equal weights) vs ``schedule=adaptive`` on a mixture of
22 environments from 4 domains, side by side (issue 35, item 5).

The mixture: math (Arithmetic at six difficulties plus a multi-turn one,
Algebra at three), tool use (FunctionCalling at four difficulties), long
context (Needle at three, VariableTracking, WordFrequency, MultiHopQA, with
short haystacks) and code (PythonFunctions in two difficulty bands), every
entry of weight 1 (the prior the adaptive schedule starts from).

One warm start (SFT, ``--warm-epochs`` epochs, on reference answers of the
five easiest envs only: ``--warm-examples`` for Arithmetic at 0 and 0.1, half
as many for Arithmetic at 0.2 and Algebra at 0, a quarter for FunctionCalling
at 0; the others start unlearnable for the tiny model, as most envs of a large
mixture are for a given model) is trained first and every RL run starts from
it (``model.path``), so both schedules start from the same policy; then each
schedule runs the same number of GRPO steps with the same batch shape, for
each seed, one run after the other (static, adaptive, static, adaptive, ...).
Each run evaluates every env at step 0 and at the last step
(``trainer.eval_budget`` rotates the evals in between). Reported per run: the
held-out macro-mean over all envs at the first and last eval, how many envs'
held-out reward rose, and the share of the sampled groups whose rewards were
all equal (no learning signal; dynamic sampling drops them and samples more,
so that share is compute spent for nothing).

    python benchmarks/bench_schedule.py [--seeds 0,1] [--steps 10] [--eval-tasks 3] [--warm-examples 32]
        [--warm-epochs 40] [--keep DIR] [--kinds static,adaptive] [--adaptive "schedule.temperature=0.05 ..."]

``--keep DIR`` keeps the runs (and reuses a warm start already there);
``--adaptive`` adds overrides to the adaptive runs (their directories are
named after them).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import header  # noqa: E402
from gym_llm_trainers.metrics import read_metrics  # noqa: E402

#: name -> (env id, kwargs, warm-start examples as a share of --warm-examples)
ENVS: dict[str, tuple[str, dict, float]] = {
    "ar00": ("math/Arithmetic-v0", {"difficulty": 0.0, "max_turns": 1}, 1.0),
    "ar10": ("math/Arithmetic-v0", {"difficulty": 0.1, "max_turns": 1}, 1.0),
    "ar10_retry": ("math/Arithmetic-v0", {"difficulty": 0.1, "max_turns": 2}, 0.0),
    "ar20": ("math/Arithmetic-v0", {"difficulty": 0.2, "max_turns": 1}, 0.5),
    "ar35": ("math/Arithmetic-v0", {"difficulty": 0.35, "max_turns": 1}, 0.0),
    "ar50": ("math/Arithmetic-v0", {"difficulty": 0.5, "max_turns": 1}, 0.0),
    "ar80": ("math/Arithmetic-v0", {"difficulty": 0.8, "max_turns": 1}, 0.0),
    "alg00": ("math/Algebra-v0", {"difficulty": 0.0}, 0.5),
    "alg50": ("math/Algebra-v0", {"difficulty": 0.5}, 0.0),
    "alg100": ("math/Algebra-v0", {"difficulty": 1.0}, 0.0),
    "fc00": ("tool/FunctionCalling-v0", {"difficulty": 0.0, "max_turns": 1}, 0.25),
    "fc30": ("tool/FunctionCalling-v0", {"difficulty": 0.3, "max_turns": 1}, 0.0),
    "fc60": ("tool/FunctionCalling-v0", {"difficulty": 0.6, "max_turns": 1}, 0.0),
    "fc100": ("tool/FunctionCalling-v0", {"difficulty": 1.0, "max_turns": 1}, 0.0),
    "needle00": ("longctx/Needle-v0", {"difficulty": 0.0, "context_tokens": 160, "max_turns": 1}, 0.0),
    "needle50": ("longctx/Needle-v0", {"difficulty": 0.5, "context_tokens": 256, "max_turns": 1}, 0.0),
    "needle100": ("longctx/Needle-v0", {"difficulty": 1.0, "context_tokens": 256, "max_turns": 1}, 0.0),
    "vars00": ("longctx/VariableTracking-v0", {"difficulty": 0.0, "context_tokens": 256, "max_turns": 1}, 0.0),
    "words00": ("longctx/WordFrequency-v0", {"difficulty": 0.0, "context_tokens": 400, "max_turns": 1}, 0.0),
    "hops00": ("longctx/MultiHopQA-v0", {"difficulty": 0.0, "context_tokens": 384, "max_turns": 1}, 0.0),
    "fn00": ("code/PythonFunctions-v0", {"max_difficulty": 0.0, "max_turns": 1}, 0.0),
    "fn20": ("code/PythonFunctions-v0", {"min_difficulty": 0.1, "max_difficulty": 0.25, "max_turns": 1}, 0.0),
}

#: Held-out samples per task, and how many envs a rotating eval between the first and last covers.
EVAL_SAMPLES, ROTATING_ENVS = 2, 6
COMMON = ["logging=quiet", "policy.max_new_tokens=32", "trainer.num_groups=8", "trainer.group_size=4",
          f"trainer.eval_samples={EVAL_SAMPLES}", "trainer.save_every=0"]


def write_mixture(conf: Path, warm_examples: int) -> None:
    lines = ["name: schedule22", "envs:"]
    for name, (env_id, kwargs, share) in ENVS.items():
        kw = ", ".join(f"{k}: {v}" for k, v in kwargs.items())
        lines.append(f"  {name}: {{id: {env_id}, weight: 1.0, kwargs: {{{kw}}}, heldout_kwargs: {{}}, "
                     f"sft_examples: {round(share * warm_examples)}}}")
    (conf / "mixture").mkdir(parents=True, exist_ok=True)
    (conf / "mixture" / "schedule22.yaml").write_text("\n".join(lines) + "\n")


def train(run_dir: Path, conf: Path, *overrides: str) -> float:
    cmd = [sys.executable, "-m", "gym_llm_trainers.train", f"hydra.searchpath=[file://{conf}]", "mixture=schedule22",
           f"hydra.run.dir={run_dir}", *COMMON, *overrides]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr[-4000:]}")
    return time.perf_counter() - t0


def summary(rows: list[dict]) -> dict:
    evals = [r for r in rows if "heldout/reward/macro_mean" in r]
    first, last = evals[0], evals[-1]
    envs = sorted(k for k in first if k.startswith("heldout/") and k.endswith("/reward/mean")
                  and k != "heldout/reward/mean")
    steps = [r for r in rows if r["step"] > 0 and "groups/zero_variance_fraction" in r]
    sampled = sum(r["groups/sampled"] for r in steps)
    flat = sum(r["groups/zero_variance_fraction"] * r["groups/sampled"] for r in steps)
    domains = sorted({k.split("/")[1] for r in steps for k in r if k.startswith("schedule_domain/")})
    return {
        "first": first["heldout/reward/macro_mean"], "last": last["heldout/reward/macro_mean"],
        "improved": sum(last.get(k, 0.0) > first[k] for k in envs), "worse": sum(last.get(k, 0.0) < first[k]
                                                                                  for k in envs),
        "envs": len(envs), "no_signal": flat / max(sampled, 1.0),
        "train_reward": statistics.fmean(r["reward/mean"] for r in steps),
        "domain_weights": {d: statistics.fmean(r[f"schedule_domain/{d}/weight"] for r in steps[len(steps) // 2:])
                           for d in domains},
        "per_env": {k: (first[k], last.get(k)) for k in envs},
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="0,1")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--eval-tasks", type=int, default=3, help="held-out tasks per env at an eval (2 samples each)")
    ap.add_argument("--warm-examples", type=int, default=32, help="warm-start reference answers per easy env")
    ap.add_argument("--warm-epochs", type=int, default=40, help="warm-start epochs (40: the tiny model's default)")
    ap.add_argument("--keep", default=None, help="keep the run directories here")
    ap.add_argument("--kinds", default="static,adaptive", help="the schedules to run, in this order per seed")
    ap.add_argument("--adaptive", default="", help="extra overrides of the adaptive runs (space-separated)")
    args = ap.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench_schedule_"))
    conf = root / "conf"
    write_mixture(conf, args.warm_examples)
    warm = root / "warm"
    if not (warm / "model").is_dir():
        warm_s = train(warm, conf, "trainer.total_steps=0", "trainer.eval_every=0", "trainer.seed=0",
                       f"trainer.sft.epochs={args.warm_epochs}")
        print(f"warm start: {warm_s:.0f} s", file=sys.stderr)
    results = []
    extra = args.adaptive.split()
    kinds = [k if k == "static" or not extra else f"{k} {' '.join(extra)}" for k in args.kinds.split(",")]
    for seed in seeds:
        for kind in kinds:
            schedule, *overrides = kind.split()
            run = root / f"{'_'.join(kind.replace('schedule.', '').replace('=', '-').split())}_seed{seed}"
            wall = train(run, conf, f"schedule={schedule}", *overrides, f"model.path={warm / 'model'}",
                         "trainer.sft.enabled=false", f"trainer.total_steps={args.steps}", f"trainer.seed={seed}",
                         f"trainer.eval_tasks={args.eval_tasks}", "trainer.eval_every=5",
                         f"trainer.eval_budget={ROTATING_ENVS * args.eval_tasks * EVAL_SAMPLES}",
                         "trainer.warmup_steps=2")
            results.append((kind, seed, wall, summary(read_metrics(run))))
            print(f"{kind} seed {seed}: {wall:.0f} s", file=sys.stderr)
    print(header("Schedules: static (equal weights) vs adaptive on 22 envs from 4 domains"))
    warm_total = sum(round(share * args.warm_examples) for _, _, share in ENVS.values())
    print(f"- setup: the tiny model warm-started once (SFT, {args.warm_epochs} epochs, on {warm_total} reference "
          f"answers of the five easiest envs: Arithmetic 0/0.1/0.2, Algebra 0, FunctionCalling 0), then "
          f"{args.steps} GRPO steps of 8 groups x 4 per run, <= 32 new tokens, held-out {args.eval_tasks} tasks "
          f"x {EVAL_SAMPLES} samples per env at step 0 and at the last step; seeds {args.seeds}\n")
    print("| schedule | seed | wall | held-out macro-mean first -> last | change | envs improved / worse (of N) "
          "| no-signal share of sampled groups | train reward (mean) | domain shares, 2nd half |")
    print("|---|---:|---:|---|---:|---|---:|---:|---|")
    for kind, seed, wall, s in results:
        shares = ", ".join(f"{d} {w:.2f}" for d, w in s["domain_weights"].items())
        print(f"| {kind} | {seed} | {wall / 60:.1f} min | {s['first']:.3f} -> {s['last']:.3f} | "
              f"{s['last'] - s['first']:+.3f} | {s['improved']} / {s['worse']} (of {s['envs']}) | "
              f"{s['no_signal']:.2f} | {s['train_reward']:.3f} | {shares} |")
    for kind in kinds:
        mine = [s for k, _, _, s in results if k == kind]
        print(f"\n{kind}, mean over seeds: macro-mean change "
              f"{statistics.fmean(s['last'] - s['first'] for s in mine):+.3f}, last macro-mean "
              f"{statistics.fmean(s['last'] for s in mine):.3f}, envs improved "
              f"{statistics.fmean(s['improved'] for s in mine):.1f}, no-signal share "
              f"{statistics.fmean(s['no_signal'] for s in mine):.2f}")
    print("\nPer env, held-out first -> last (seed " f"{seeds[0]}):\n")
    print("| env | " + " | ".join(kinds) + " |")
    print("|---|" + "---|" * len(kinds))
    by_kind = {k: s for k, seed, _, s in results if seed == seeds[0]}
    for env in by_kind[kinds[0]]["per_env"]:
        cells = []
        for kind in kinds:
            a, b = by_kind[kind]["per_env"][env]
            cells.append(f"{a:.2f} -> {b:.2f}" if b is not None else f"{a:.2f} -> ?")
        print(f"| {env[len('heldout/'):-len('/reward/mean')]} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
