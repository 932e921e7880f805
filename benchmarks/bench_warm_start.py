"""The hand-off from the SFT warm start to RL: what the first optimizer steps
after the warm start do to it, with the warm start's AdamW moments carried
over (``trainer.sft.keep_optimizer_state: true``, the default) and with a
fresh AdamW, side by side on the same warm-started model.

Both continue the *same* objective (cross-entropy on the gold answers the
warm start used, full batch, lr 3e-4), so any drop is the optimizer's doing:
a fresh Adam's first step moves every weight by about the learning rate
whatever its gradient. Reported: the mean probability of the gold answer over
the warm start's examples (math/Arithmetic-v0, difficulty 0) before and after
each step.
"""

from __future__ import annotations

import argparse
import math

import torch
from _common import header  # noqa: I001  (benchmarks/ is the script dir)
from gym_llm_trainers.batching import collate
from gym_llm_trainers.config import EnvEntry, ModelConfig, SFTConfig, TrainerConfig
from gym_llm_trainers.losses import Denominators, aggregate
from gym_llm_trainers.modeling import forward_logprobs, load_policy_model, load_tokenizer
from gym_llm_trainers.sft import reference_examples, sft_train

from gym_llm.runtime.rollout import ChatFormat


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sft-epochs", type=float, default=60)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--lr", type=float, default=3e-4)
    args = ap.parse_args()
    torch.set_num_threads(2)
    mc = ModelConfig()
    tok = load_tokenizer(mc)
    chat = ChatFormat(tok)
    eos = [tok.convert_tokens_to_ids(tok.eos_token)]
    entry = EnvEntry(id="math/Arithmetic-v0", kwargs={"difficulty": 0.0}, sft_examples=512)
    samples, _, _ = reference_examples({"arithmetic": entry}, chat, eos, 512, seed=0)
    batch = collate(samples, tok.pad_token_id)

    def gold_probability(model: torch.nn.Module) -> float:
        model.eval()
        with torch.no_grad():
            logp, _ = forward_logprobs(model, batch)
        return sum(math.exp(float(row.sum())) for row in batch.rows(logp)) / len(samples)

    betas = tuple(TrainerConfig().adam_betas)  # the RL optimizer's, as the trainer builds it
    rows = {}
    for carried in (True, False):
        model = load_policy_model(mc, "cpu")
        opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=betas)
        sft_train(model, samples, SFTConfig(epochs=args.sft_epochs), lr=3e-3, pad_id=tok.pad_token_id,
                  seed=0, token_budget=8192, optimizer=opt)
        if not carried:
            opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=betas)
        curve = [gold_probability(model)]
        for _ in range(args.steps):
            model.train()
            opt.zero_grad()
            logp, _ = forward_logprobs(model, batch)
            den = Denominators(tokens=float(batch.mask.sum()), seqs=float(len(samples)))
            aggregate(-logp, batch.mask, "token-mean", den).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            curve.append(gold_probability(model))
        rows["carried over (default)" if carried else "fresh AdamW"] = curve
    print(header("Warm start -> RL hand-off: the first optimizer steps after SFT"))
    print(f"- setup: tiny model, {len(samples)} arithmetic examples, warm start {args.sft_epochs:g} epochs "
          f"(lr 3e-3), then {args.steps} full-batch steps on the same examples at lr {args.lr:g}\n")
    print("| AdamW moments | " + " | ".join(f"after {i}" for i in range(args.steps + 1)) + " | worst drop |")
    print("|---|" + "---:|" * (args.steps + 2))
    for name, curve in rows.items():
        drop = curve[0] - min(curve)
        print(f"| {name} | " + " | ".join(f"{p:.3f}" for p in curve) + f" | {drop:.3f} |")
    print("\nValues: mean probability of the gold answer over the warm start's examples.\n")


if __name__ == "__main__":
    main()
