"""The supervised warm start: reference answers of the train splits, verified.

For each train task, the task's ``answer`` is rendered as a response in the
conventions every domain shares (``\\boxed{}`` for final answers, a fenced
```python block for code, Hermes ``<tool_call>`` blocks for gold calls, the
bare value(s) for retrieval) and *the environment itself scores it*: the first
rendering that earns a success reward becomes an SFT example, and tasks with
none are skipped (and counted). So the warm start never teaches a wrong
format, needs no per-domain code here, and stays honest for any new plugin.

The example's ids are exactly what the rollout engine would have built: the
prompt rendered once by the chat template (:class:`gym_llm.runtime.chat.ChatFormat`)
followed by the encoded response and the end-of-turn token; the loss covers
the response and its end-of-turn token only.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import torch

import gym_llm

from .batching import Sample, collate, plan_micro_batches
from .config import EnvEntry, SFTConfig
from .losses import Denominators, aggregate
from .modeling import forward_logprobs

__all__ = ["reference_candidates", "reference_examples", "sft_steps", "sft_train", "weighted_passes", "SFTReport"]


def _is_call(x: Any) -> bool:
    return isinstance(x, dict) and isinstance(x.get("name"), str)


def reference_candidates(answer: Any) -> list[str]:
    """Responses that state ``answer`` in the shared conventions, most
    specific first (they are tried in order against the environment)."""
    out: list[str] = []
    if _is_call(answer) or (isinstance(answer, list) and answer and all(map(_is_call, answer))):
        calls = answer if isinstance(answer, list) else [answer]
        out.append("\n".join(
            "<tool_call>\n" + json.dumps({"name": c["name"], "arguments": c.get("arguments", {})}) + "\n</tool_call>"
            for c in calls
        ))
        return out
    if isinstance(answer, str) and ("\n" in answer.strip() or answer.lstrip().startswith(("def ", "import ", "class "))):
        out.append(f"```python\n{answer.strip()}\n```")
    if isinstance(answer, list | tuple | set):
        joined = ", ".join(str(v) for v in answer)
        out += [f"\\boxed{{{joined}}}", joined]
    else:
        out += [f"\\boxed{{{answer}}}", str(answer)]
    if answer is not None:  # reasoning-gym's convention (the reasoning envs)
        out.append(f"<answer>{out[-1]}</answer>")
    return out


@dataclass
class SFTReport:
    """What the warm start did (logged under ``sft/``)."""

    examples: int
    skipped: dict[str, int]
    steps: int
    final_loss: float
    seconds: float

    def metrics(self) -> dict[str, float]:
        out = {"sft/examples": self.examples, "sft/steps": self.steps, "sft/final_loss": self.final_loss,
               "sft/seconds": self.seconds}
        out.update({f"sft/skipped/{k}": v for k, v in self.skipped.items()})
        return out


def reference_examples(
    entries: dict[str, EnvEntry],
    chat: Any,
    eos_ids: Sequence[int],
    per_env: int,
    *,
    seed: int,
    success: float = 1.0,
    max_tokens: int = 512,
) -> tuple[list[Sample], dict[str, int], list[str]]:
    """SFT samples from the first ``per_env`` train tasks of each environment
    (``entry.sft_examples`` where set); a task seen twice is used once.

    ``chat`` is a :class:`~gym_llm.runtime.chat.ChatFormat`; ``eos_ids`` the
    end-of-turn id(s) appended to each response. Returns the samples, per
    environment how many tasks had no rendering the environment scored
    ``>= success`` (or were longer than ``max_tokens``), and each sample's
    environment (its mixture name).
    """
    samples: list[Sample] = []
    sources: list[str] = []
    skipped: dict[str, int] = {}
    seen: set[tuple[str, str]] = set()
    for name, entry in entries.items():
        env = gym_llm.make(entry.id, split="train", seed=seed, **entry.kwargs)
        base = env.unwrapped
        skipped[name] = 0
        n = min(per_env if entry.sft_examples is None else entry.sft_examples, base.num_tasks)
        for index in range(n):
            obs, info = env.reset(options={"task_index": index})
            if (entry.id, info["task_id"]) in seen:  # two entries of one env share tasks
                continue
            seen.add((entry.id, info["task_id"]))
            text = None
            for candidate in reference_candidates(base.task.answer):
                env.reset(options={"task_index": index})
                _, reward, terminated, _, step_info = env.step(candidate)
                if terminated and reward >= success and not step_info.get("reward_error"):
                    text = candidate
                    break
            prompt = chat.prompt_ids(obs, info.get("tools"))
            response = (chat.encode(text) + list(eos_ids)) if text is not None else []
            if text is None or len(prompt) + len(response) > max_tokens:
                skipped[name] += 1
                continue
            samples.append(Sample(prompt, response, [1] * len(response), index=len(samples)))
            sources.append(name)
        env.close()
    return samples, skipped, sources


def weighted_passes(weights: Sequence[float], generator: torch.Generator) -> Iterator[int]:
    """Example indices, endlessly, in shuffled passes: in each pass example
    ``i`` appears ``len(weights) * weights[i] / sum(weights)`` times, rounded
    up or down at random (so equal weights give plain epochs, each example
    exactly once per pass). Unlike independent draws, no example goes unseen
    for long by chance, which matters when a few examples must be memorised."""
    share = torch.tensor(weights, dtype=torch.float64)
    if len(share) == 0 or not (share >= 0).all() or share.sum() <= 0:
        raise ValueError("weights must be non-negative with a positive sum")
    share = share / share.sum() * len(share)
    while True:
        counts = torch.floor(share + torch.rand(len(share), generator=generator, dtype=torch.float64)).long()
        uses = torch.repeat_interleave(torch.arange(len(share)), counts)
        yield from uses[torch.randperm(len(uses), generator=generator)].tolist()


def sft_steps(num_samples: int, cfg: SFTConfig) -> int:
    """The optimizer steps of a warm start on ``num_samples`` examples
    (``epochs * num_samples / batch_size``, at least 1; 0 without examples)."""
    if not num_samples:
        return 0
    return max(1, int(round(cfg.epochs * max(1, num_samples // cfg.batch_size))))


def sft_train(
    model: torch.nn.Module,
    samples: list[Sample],
    cfg: SFTConfig,
    *,
    lr: float,
    pad_id: int,
    seed: int,
    token_budget: int,
    log: Callable[[int, dict[str, float]], None] | None = None,
    all_reduce: Callable[[torch.Tensor], torch.Tensor] | None = None,
    weights: Sequence[float] | None = None,
    optimizer: torch.optim.Optimizer | None = None,
    progress: Callable[[int, int, float], None] | None = None,
) -> tuple[int, float]:
    """Cross-entropy on the response tokens of ``samples`` (token mean per
    optimizer step), AdamW with linear warmup and cosine decay, for
    :func:`sft_steps` steps. Batches are cut from
    :func:`weighted_passes` over ``weights`` (one per sample; none = plain
    epochs). Returns ``(optimizer steps, last loss)``. ``all_reduce``
    averages gradients across data-parallel ranks when given; ``log`` gets
    every 20th step's metrics, ``progress(steps done, total, loss)`` every step.

    ``optimizer`` (over the model's trainable parameters) is used instead of
    a fresh AdamW and keeps its moments afterwards; its learning rates and
    weight decay are set for the warm start and restored at the end."""
    if not samples:
        return 0, float("nan")
    gen = torch.Generator().manual_seed(seed)
    total = sft_steps(len(samples), cfg)
    warmup = max(1, int(cfg.warmup_ratio * total))
    params = [p for p in model.parameters() if p.requires_grad]
    opt = optimizer or torch.optim.AdamW(params, lr=lr, betas=(0.9, 0.98), weight_decay=cfg.weight_decay)
    saved = [(g["lr"], g["weight_decay"]) for g in opt.param_groups]
    for g in opt.param_groups:
        g["weight_decay"] = cfg.weight_decay

    def set_lr(s: int) -> float:
        value = lr * min((s + 1) / warmup, 0.5 * (1 + math.cos(math.pi * min(1.0, s / total))))
        for g in opt.param_groups:
            g["lr"] = value
        return value

    model.train()
    order = weighted_passes(weights if weights is not None else [1.0] * len(samples), gen)
    loss_value = float("nan")
    t0 = time.perf_counter()
    for step in range(total):
        current_lr = set_lr(step)
        batch = [samples[next(order)] for _ in range(cfg.batch_size)]
        den = Denominators(tokens=float(sum(sum(s.loss_mask) for s in batch)), seqs=float(len(batch)))
        opt.zero_grad(set_to_none=True)
        total_loss = 0.0
        device = next(model.parameters()).device
        for idx in plan_micro_batches(batch, token_budget):
            mb = collate([batch[i] for i in idx], pad_id).to(device)
            logp, _ = forward_logprobs(model, mb)
            loss = aggregate(-logp, mb.mask, "token-mean", den)
            loss.backward()
            total_loss += loss.item()
        if all_reduce is not None:
            for p in params:
                if p.grad is not None:
                    all_reduce(p.grad)
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        loss_value = total_loss
        if progress is not None:
            progress(step + 1, total, loss_value)
        if log is not None and (step % 20 == 0 or step == total - 1):
            log(step, {"sft/loss": loss_value, "sft/lr": current_lr, "sft/seconds": time.perf_counter() - t0})
    for g, (group_lr, decay) in zip(opt.param_groups, saved, strict=True):
        g["lr"], g["weight_decay"] = group_lr, decay
    return total, loss_value
