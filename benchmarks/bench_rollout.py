"""Rollout benchmarks, printed as a Markdown section.

1. Backends: tokens/s of ``HFPolicy`` and ``VLLMPolicy`` on the tiny model
   (batch of ``--batch`` prompts, ``--tokens`` new tokens each, EOS ignored),
   next to the raw engines they wrap (``model.generate`` and
   ``vllm.LLM.generate``) measured in the same run. Target: vLLM >= 2x HF.
2. Environment overhead: a rollout through a four-domain mixture (one id per
   domain among math/, code/, tool/, longctx/ as registered) against the same
   policy generating the same number of tokens from the same contexts with no
   environment (each episode's turns replayed in order, as fast as the policy
   answers). Target: overhead <= 10%.

    python benchmarks/bench_rollout.py            # both sections
    python benchmarks/bench_rollout.py --quick    # smaller, for a smoke run
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
import subprocess
import sys
import time
from typing import Any

from gym_llm.apps.evaluate.report import cpu_model

DOMAINS = ("math", "code", "tool", "longctx")
PREFERRED = ("math/Arithmetic-v0", "code/PythonFunctions-v0", "tool/FunctionCalling-v0", "longctx/Needle-v0")


def pick_mixture() -> dict[str, float]:
    """One registered id per domain (the preferred one when present)."""
    import gym_llm

    ids = gym_llm.list_envs()
    mixture = {}
    for domain in DOMAINS:
        pref = [i for i in PREFERRED if i.startswith(domain + "/") and i in ids]
        any_of = [i for i in ids if i.startswith(domain + "/")]
        if pref or any_of:
            mixture[(pref or any_of)[0]] = 1.0
    return mixture


def bench_prompts(tokenizer, n: int) -> list[list[int]]:
    from gym_llm.runtime.chat import ChatFormat

    return [ChatFormat(tokenizer).prompt_ids([{"role": "user", "content": f"Question {i}: what is {i} + {2 * i}?"}])
            for i in range(n)]


def timed(fn, *args, **kwargs) -> tuple[Any, float]:
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    elapsed = time.perf_counter() - t0
    print(f"[bench] {getattr(fn, '__name__', fn)}: {elapsed:.2f} s", file=sys.stderr, flush=True)
    return out, elapsed


# ------------------------------------------------------------------ backends
def raw_hf_generate(model, prompts: list[list[int]], tokens: int, pad_id: int) -> int:
    import torch

    width = max(map(len, prompts))
    ids = torch.tensor([[pad_id] * (width - len(p)) + p for p in prompts])
    mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts])
    with torch.inference_mode():
        out = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=tokens, min_new_tokens=tokens,
                             do_sample=True, temperature=1.0, top_k=0, pad_token_id=pad_id)
    return (out.shape[1] - width) * len(prompts)


def raw_vllm_generate(llm, prompts: list[list[int]], tokens: int) -> int:
    from vllm import SamplingParams as VSP
    from vllm.inputs import TokensPrompt

    outs = llm.generate([TokensPrompt(prompt_token_ids=p) for p in prompts],
                        VSP(temperature=1.0, max_tokens=tokens, ignore_eos=True, logprobs=0), use_tqdm=False)
    return sum(len(o.outputs[0].token_ids) for o in outs)


def policy_generate(policy, prompts: list[list[int]], tokens: int) -> int:
    from gym_llm.runtime.policies import SamplingParams

    gens = policy.generate(prompts, SamplingParams(max_new_tokens=tokens, ignore_eos=True))
    return sum(len(g.token_ids) for g in gens)


def best_of(repeats: int, fn, *args) -> tuple[int, float]:
    """(tokens, seconds) of the fastest of ``repeats`` runs after one warm-up."""
    fn(*args)
    runs = [timed(fn, *args) for _ in range(repeats)]
    return min(runs, key=lambda r: r[1])


# ------------------------------------------------------------------ overhead
async def replay(policy, trajectories) -> tuple[int, float]:
    """Generate exactly the tokens of ``trajectories`` from the same contexts,
    with no environment: each episode's turns in order, all episodes at once."""
    from gym_llm.runtime.policies import SamplingParams
    from gym_llm.runtime.policies.base import GenerationRequest

    async def episode(t) -> int:
        n = 0
        for start, end in t.turn_spans:
            context = t.prompt_token_ids + t.response_token_ids[:start]
            gen = await policy.agenerate(GenerationRequest(
                prompt_token_ids=context,
                params=SamplingParams(max_new_tokens=end - start, ignore_eos=True)))
            n += len(gen.token_ids)
        return n

    t0 = time.perf_counter()
    counts = await asyncio.gather(*(episode(t) for t in trajectories))
    return sum(counts), time.perf_counter() - t0


async def replay_envs(vec, trajectories, specs) -> float:
    """Run only the environment side of ``trajectories``: the same resets and
    the same assistant turns, all episodes at once. Seconds."""

    async def episode(slot: int, t, spec) -> None:
        await vec.areset_at(slot, task=spec.task)
        for m in t.messages:
            if m["role"] == "assistant":
                await vec.astep_at(slot, m)
        vec.release(slot)

    t0 = time.perf_counter()
    await asyncio.gather(*(episode(i, t, s) for i, (t, s) in enumerate(zip(trajectories, specs, strict=True))))
    return time.perf_counter() - t0


def rollout_vs_replay(policy, mixture, args) -> dict[str, Any]:
    from gym_llm import make_vec
    from gym_llm.runtime.policies import SamplingParams
    from gym_llm.runtime.rollout import RolloutStats, collect, plan_groups

    env_kwargs = {i: ({"max_turns": 2} if i.startswith(("math/", "code/")) else {}) for i in mixture}
    sampling = SamplingParams(max_new_tokens=args.max_new_tokens, temperature=1.0)
    # As a trainer does: one vector env for the whole run, made (and warmed) once.
    vec = make_vec(mixture, num_envs=args.groups * args.group_size, seed=0, env_kwargs=env_kwargs)
    kwargs = dict(num_groups=args.groups, group_size=args.group_size, sampling=sampling)
    collect(policy, vec, seed=999, **kwargs)  # warm-up
    pairs = []
    # vLLM's prefix cache would serve the replay's prompts from the rollout's KV: start both cold.
    cold = getattr(policy, "reset_prefix_cache", lambda: None)
    for r in range(args.repeats):  # rollout and its replay back to back, to share the machine's mood
        stats = RolloutStats()
        cold()
        trajs, t_rollout = timed(collect, policy, vec, seed=1 + r, stats=stats, **kwargs)
        tokens = sum(t.num_generated_tokens for t in trajs)
        cold()
        replayed, t_replay = asyncio.run(replay(policy, trajs))
        assert replayed == tokens, (replayed, tokens)
        specs = plan_groups(vec.mixture, args.groups, args.group_size, 1 + r)
        t_envs = asyncio.run(replay_envs(vec, trajs, specs))
        pairs.append((t_rollout / t_replay - 1.0, t_rollout, t_replay, t_envs, tokens, trajs))
    pairs.sort(key=lambda p: p[0])
    overhead, t_rollout, t_replay, t_envs, tokens, trajs = pairs[len(pairs) // 2]  # the median pair
    return {
        "episodes": len(trajs), "turns": sum(t.num_turns for t in trajs), "tokens": tokens,
        "errors": sum(t.error is not None for t in trajs), "rollout_s": t_rollout, "replay_s": t_replay,
        "env_only_s": t_envs, "overhead": overhead, "all": [p[0] for p in pairs],
        "by_env": {e: sum(t.env_id == e for t in trajs) for e in mixture},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes for a smoke run")
    ap.add_argument("--batch", type=int, default=64, help="prompts per backend batch")
    ap.add_argument("--tokens", type=int, default=128, help="new tokens per prompt in the backend section")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per measurement (best kept)")
    ap.add_argument("--groups", type=int, default=32, help="rollout groups")
    ap.add_argument("--group-size", type=int, default=4, help="episodes per group")
    ap.add_argument("--max-new-tokens", type=int, default=128, help="token cap per policy turn in rollouts")
    ap.add_argument("--hf-groups", type=int, default=8,
                    help="rollout groups for HFPolicy's overhead (HF pads long prompts: slow on CPU)")
    ap.add_argument("--skip-hf-overhead", action="store_true", help="measure the env overhead with vLLM only")
    args = ap.parse_args()
    if args.quick:
        args.batch, args.tokens, args.repeats, args.groups, args.hf_groups = 16, 32, 1, 4, 2

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from gym_llm.runtime.models import tiny_model_path
    from gym_llm.runtime.policies import HFPolicy, VLLMPolicy

    path = tiny_model_path()
    tok = AutoTokenizer.from_pretrained(path)
    prompts = bench_prompts(tok, args.batch)
    mixture = pick_mixture()
    rows: list[tuple[str, int, float]] = []

    model = AutoModelForCausalLM.from_pretrained(path, attn_implementation="sdpa").eval()
    rows.append(("HF `model.generate` (raw)",
                 *best_of(args.repeats, raw_hf_generate, model, prompts, args.tokens, tok.pad_token_id)))
    hf = HFPolicy(model, tok)
    rows.append(("`HFPolicy`", *best_of(args.repeats, policy_generate, hf, prompts, args.tokens)))
    hf_args = argparse.Namespace(**{**vars(args), "groups": min(args.groups, args.hf_groups)})
    hf_overhead = None if args.skip_hf_overhead or not mixture else rollout_vs_replay(hf, mixture, hf_args)

    vllm_policy = VLLMPolicy(path, dtype="float32", gpu_memory_utilization=0.2, max_model_len=4096)
    rows.append(("vLLM `LLM.generate` (raw)",
                 *best_of(args.repeats, raw_vllm_generate, vllm_policy.llm, prompts, args.tokens)))
    rows.append(("`VLLMPolicy`", *best_of(args.repeats, policy_generate, vllm_policy, prompts, args.tokens)))
    vllm_overhead = rollout_vs_replay(vllm_policy, mixture, args) if mixture else None
    vllm_small = rollout_vs_replay(vllm_policy, mixture, hf_args) if hf_overhead else None

    rate = {name: n / s for name, n, s in rows}
    ratio = rate["`VLLMPolicy`"] / rate["`HFPolicy`"]
    nproc = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip() or str(os.cpu_count())
    print("## Rollout: backends and environment overhead\n")
    print(f"Machine: {nproc} CPUs ({cpu_model()}), torch {torch.__version__}, "
          f"date {dt.date.today().isoformat()}. Model: the tiny local Qwen2 "
          f"({sum(p.numel() for p in model.parameters()) / 1e6:.2f} M parameters, float32).\n")
    print(f"Command: `python benchmarks/bench_rollout.py{' --quick' if args.quick else ''}`\n")
    print(f"### Backends (batch {args.batch}, {args.tokens} new tokens each, EOS ignored, best of {args.repeats})\n")
    print("| backend | tokens | seconds | tokens/s |\n|---|---:|---:|---:|")
    for name, n, s in rows:
        print(f"| {name} | {n} | {s:.2f} | {n / s:,.0f} |")
    raw_ratio = rate["vLLM `LLM.generate` (raw)"] / rate["HF `model.generate` (raw)"]
    print(f"\nvLLM / HF through our policies: **{ratio:.2f}x** (target >= 2x); raw engines: {raw_ratio:.2f}x.\n")
    if not mixture:
        print("No domain plugin registered: overhead section skipped.")
        return
    print(f"### Environment overhead ({args.groups} groups x {args.group_size} for vLLM, "
          f"{min(args.groups, args.hf_groups)} x {args.group_size} for HF; up to "
          f"{args.max_new_tokens} tokens per turn; math and code allow 2 attempts)\n")
    print(f"Mixture (equal weights): {', '.join(f'`{i}`' for i in mixture)}.\n")
    print("| policy | episodes | turns | tokens | env errors | rollout s | no-env replay s | "
          "env-only replay s | overhead |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, r in (("`VLLMPolicy`", vllm_overhead), ("`HFPolicy`", hf_overhead)):
        if r is None:
            continue
        print(f"| {name} | {r['episodes']} | {r['turns']} | {r['tokens']} | {r['errors']} | {r['rollout_s']:.2f} | "
              f"{r['replay_s']:.2f} | {r['env_only_s']:.2f} | **{100 * r['overhead']:+.1f}%** "
              f"({', '.join(f'{100 * o:+.0f}%' for o in r['all'])}) |")
    if hf_overhead and vllm_small:
        hf_rate = hf_overhead["tokens"] / hf_overhead["rollout_s"]
        v_rate = vllm_small["tokens"] / vllm_small["rollout_s"]
        print(f"\nRollout throughput on the same plan ({hf_args.groups} x {args.group_size} episodes, mixed prompt "
              f"lengths up to ~2k tokens): `VLLMPolicy` {v_rate:,.0f} tokens/s, `HFPolicy` {hf_rate:,.0f} "
              f"tokens/s: **{v_rate / hf_rate:.1f}x** (HF pads every row of a batch to its longest context).")
    print(f"\nOverhead = rollout time / no-env replay time - 1, the median of {args.repeats} rollout/replay "
          "pairs (all pairs in brackets): the no-env replay generates the same tokens "
          "from the same contexts with the same policy and no environment (target <= 10%). The env-only "
          "replay runs the same resets and steps with no policy: on a machine where sandboxed code and "
          "generation share the same cores, it is CPU the rollout cannot hide. Episodes per env: "
          + ", ".join(f"`{k}` {v}" for k, v in vllm_overhead["by_env"].items()) + ".")
    vllm_policy.close()


if __name__ == "__main__":
    main()
