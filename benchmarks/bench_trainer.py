"""GRPO throughput and reward curve: gym-llm's trainer vs TRL's GRPOTrainer.

Same tiny model (gym_llm.models, warm-started once by our SFT on arithmetic
reference answers so that both runs start from a policy with signal), same
task (math/Arithmetic-v0 at difficulty 0.1, the demo's place-value rung,
single turn, prompts drawn at random from its train split), same reward
(gym_llm_math.verify), same hyper-parameters: 64 completions per step (8
prompts x group 8), at most 32 new tokens, temperature 1, learning rate with
5 warmup steps, clip 0.2, token-mean loss, no KL, one update per batch,
a completion cut at the token limit scored on its text (TRL's default), CPU.
Completions per second count every completion generated during training
(model loading and the warm start excluded). Reward curve: the mean training
reward per step; with 8 prompts a step it swings by +-0.2 from step to step
and a trainer's mean over a run by about 0.05 between seeds (3 seeds once put
TRL 0.04 ahead, 10 others put it 0.02 behind), so each trainer runs 8 seeds
(the same ones) and the table gives the per-step mean over seeds, the mean
over the run with its standard error across seeds, and each seed's mean.

    python benchmarks/bench_trainer.py [--steps 40] [--lr 3e-4] [--seeds 0,1,2,3,4,5,6,7]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import header  # noqa: E402

ROWS, GROUP, MAX_NEW = 64, 8, 32
#: The embedded demo's arithmetic (53 + 4, no carrying): a task RL can improve
#: on, so the reward curves compare learning, not only noise.
DIFFICULTY = 0.1
#: Linear warmup steps, then a constant learning rate, in both trainers.
WARMUP = 5
ARITHMETIC = ["mixture=math_only", "mixture.envs.arithmetic.kwargs.max_turns=1",
              f"mixture.envs.arithmetic.kwargs.difficulty={DIFFICULTY}"]


def warm_start(workdir: Path) -> Path:
    """Our SFT on arithmetic reference answers; returns the checkpoint dir."""
    from gym_llm_trainers.train import compose, run_config
    from gym_llm_trainers.trainer import Trainer

    run = workdir / "warm"
    # ~180 SFT steps: a policy that solves some problems (a reward with signal), not all
    cfg = compose([f"output_dir={run}", *ARITHMETIC, "logging=quiet", "trainer.total_steps=0",
                   "trainer.eval_every=0", "trainer.save_every=0", "trainer.sft.epochs=55"])
    Trainer(run_config(cfg), run).train()
    return run / "model"


def ours(model: Path, workdir: Path, steps: int, lr: float, backend: str, seed: int) -> dict:
    from gym_llm_trainers.metrics import read_metrics
    from gym_llm_trainers.train import compose, run_config
    from gym_llm_trainers.trainer import Trainer

    run = workdir / f"ours-{backend}-{seed}"
    cfg = compose([
        f"output_dir={run}", f"model.path={model}", *ARITHMETIC,
        "logging=quiet", "trainer.sft.enabled=false", "trainer.eval_every=0", "trainer.save_every=0",
        f"trainer.total_steps={steps}", f"trainer.num_groups={ROWS // GROUP}", f"trainer.group_size={GROUP}",
        f"policy.max_new_tokens={MAX_NEW}", f"trainer.lr={lr}", "trainer.clip_eps_high=0.2",
        "trainer.dynamic_sampling=false", "trainer.loss_agg=token-mean", f"policy={backend}",
        f"trainer.warmup_steps={WARMUP}", f"trainer.seed={seed}", "trainer.truncated_turns=keep",
    ])
    trainer = Trainer(run_config(cfg), run)
    t0 = time.perf_counter()
    trainer.train()
    wall = time.perf_counter() - t0
    rows = [r for r in read_metrics(run) if "reward/mean" in r]
    completions = sum(r["trajectories/collected"] for r in rows)
    return {"completions": completions, "seconds": wall, "rewards": [r["reward/mean"] for r in rows]}


def trl(model: Path, workdir: Path, steps: int, lr: float, seed: int) -> dict:
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    import gym_llm
    from gym_llm.integrations import trl as gtrl
    from gym_llm.integrations._tasks import TaskRef

    env = gym_llm.make("math/Arithmetic-v0", split="train", seed=0, difficulty=DIFFICULTY)
    rows = []
    # prompts drawn as our trainer draws them (a reset with a random seed), not the
    # first train tasks, which are the ones the warm start saw
    draw = random.Random(seed)
    for _ in range(steps * ROWS // GROUP):
        reset_seed = draw.randrange(2**31 - 1)
        obs, info = env.reset(seed=reset_seed)
        ref = TaskRef.of("math/Arithmetic-v0", "train", reset_seed, info["task_index"], {"difficulty": DIFFICULTY})
        rows.append({"prompt": obs, **ref.to_row()})
    rewards: list[float] = []

    class Rewards(TrainerCallback):
        def on_log(self, args, state, control, logs=None, **kw):
            if logs and "reward" in logs:
                rewards.append(float(logs["reward"]))

    args = GRPOConfig(
        output_dir=str(workdir / f"trl-{seed}"), per_device_train_batch_size=ROWS, num_generations=GROUP,
        max_completion_length=MAX_NEW, learning_rate=lr, max_steps=steps, logging_steps=1, use_cpu=True,
        report_to="none", save_strategy="no", temperature=1.0, beta=0.0, loss_type="dapo", epsilon=0.2,
        lr_scheduler_type="constant_with_warmup", warmup_steps=WARMUP, adam_beta2=0.99, max_grad_norm=1.0,
        disable_dropout=True, seed=seed, bf16=False,
    )
    trainer = GRPOTrainer(
        model=AutoModelForCausalLM.from_pretrained(model), reward_funcs=[gtrl.reward_function("math/Arithmetic-v0")],
        args=args, train_dataset=Dataset.from_list(rows), processing_class=AutoTokenizer.from_pretrained(model),
        callbacks=[Rewards()],
    )
    t0 = time.perf_counter()
    # transformers prints every step's log dict: keep stdout for this report's Markdown
    with contextlib.redirect_stdout(sys.stderr):
        trainer.train()
    wall = time.perf_counter() - t0
    return {"completions": steps * ROWS, "seconds": wall, "rewards": rewards}


def _curve(rewards: list[float]) -> str:
    k = max(1, len(rewards) // 4)
    return f"{sum(rewards[:k]) / k:.3f} -> {sum(rewards[-k:]) / k:.3f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--vllm", action="store_true", help="also run our trainer with policy=vllm")
    ap.add_argument("--seeds", default="0,1,2,3,4,5,6,7",
                    help="comma-separated seeds: each trainer runs once per seed (its sampling and prompt draws)")
    ap.add_argument("--json", help="write the raw figures here")
    args = ap.parse_args()
    seeds = [int(x) for x in args.seeds.split(",")]
    workdir = Path(tempfile.mkdtemp(prefix="bench_trainer-"))
    runs: dict[str, list[dict]] = {"gym-llm (hf)": [], "TRL GRPOTrainer": []}
    if args.vllm:
        runs["gym-llm (vllm)"] = []
    try:
        model = warm_start(workdir)
        for seed in seeds:  # interleaved, so a slow spell of the machine hits both trainers
            runs["gym-llm (hf)"].append(ours(model, workdir, args.steps, args.lr, "hf", seed))
            if args.vllm:
                runs["gym-llm (vllm)"].append(ours(model, workdir, args.steps, args.lr, "vllm", seed))
            runs["TRL GRPOTrainer"].append(trl(model, workdir, args.steps, args.lr, seed))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    results = {name: {"completions": sum(r["completions"] for r in rs), "seconds": sum(r["seconds"] for r in rs),
                      "rewards": [statistics.mean(step) for step in zip(*(r["rewards"] for r in rs), strict=True)],
                      "per_seed": rs}
               for name, rs in runs.items()}
    anchor = results["TRL GRPOTrainer"]
    anchor_rate = anchor["completions"] / anchor["seconds"]
    print(header("GRPO trainer: completions per second vs TRL GRPOTrainer"))
    print(f"- setup: tiny Qwen2 model (gym_llm.models, warm-started by our SFT), math/Arithmetic-v0 (difficulty {DIFFICULTY}),"
          f" {ROWS} completions per step ({ROWS // GROUP} prompts x group {GROUP}), <= {MAX_NEW} new tokens,"
          f" lr {args.lr}, {args.steps} steps, seeds {args.seeds}, CPU,"
          f" torch threads {__import__('torch').get_num_threads()}\n")
    print("| trainer | completions | seconds | completions/s | vs TRL | train reward, mean over seeds "
          "(first quarter -> last quarter) | mean over the run +- s.e. across seeds | each seed's mean |")
    print("|---|---:|---:|---:|---:|---|---|---|")
    for name, r in results.items():
        rate = r["completions"] / r["seconds"]
        means = [statistics.mean(x["rewards"]) for x in r["per_seed"]]
        spread = statistics.stdev(means) / math.sqrt(len(means)) if len(means) > 1 else float("nan")
        print(f"| {name} | {r['completions']} | {r['seconds']:.1f} | {rate:.1f} | {rate / anchor_rate:.2f}x |"
              f" {_curve(r['rewards'])} | {statistics.mean(means):.3f} +- {spread:.3f} | {', '.join(f'{m:.3f}' for m in means)} |")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    main()
