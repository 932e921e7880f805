"""Losses and advantages, CleanRL style: plain tensor code, one idea per function.

Shapes: per-token tensors are ``[B, T]`` over the *response* positions of a
padded micro-batch; ``mask`` is 1 on tokens the policy generated (the
trajectory's ``loss_mask``) and 0 on prompt, environment and padding tokens.
Every per-token quantity is computed everywhere and then masked, so padding
and environment tokens can never leak into a loss.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

__all__ = [
    "group_advantages", "turn_advantages", "kl_estimate", "policy_loss", "aggregate", "Denominators",
    "gae_advantages", "value_loss", "overlong_penalty", "entropy_from_logits", "masked_mean",
]


def masked_mean(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean of ``x`` over ``mask == 1`` (0 when the mask is empty)."""
    return (x * mask).sum() / mask.sum().clamp(min=1)


def group_advantages(
    rewards: torch.Tensor, group_ids: list, *, std_normalize: bool = True, eps: float = 1e-4
) -> torch.Tensor:
    """GRPO advantage of each sequence: ``r - mean(group)``, divided by
    ``std(group) + eps`` when ``std_normalize`` (the unbiased std, as TRL and
    verl use; Dr.GRPO turns the division off). A group of one gets 0."""
    adv = torch.zeros_like(rewards)
    index: dict = {}
    for i, g in enumerate(group_ids):
        index.setdefault(g, []).append(i)
    for members in index.values():
        r = rewards[members]
        if len(members) < 2:
            continue
        centred = r - r.mean()
        if std_normalize:
            std = r.std()
            # equal rewards: the centred values are exactly 0, keep them so even with eps = 0
            centred = centred / (std + eps) if std > 0 else centred
        adv[members] = centred
    return adv


def turn_advantages(
    turn_rewards: list[list[float]], group_ids: list, *, discount: float = 1.0,
    std_normalize: bool = True, eps: float = 1e-4,
) -> list[list[float]]:
    """Multi-turn GRPO with per-turn credit: the return of turn k of an episode
    is ``sum_j>=k discount**(j-k) * r_j``, compared with the returns of turn k
    of the other members of its group that reached turn k (mean, and std when
    ``std_normalize``). A turn that no other member reached gets 0.

    With ``discount = 0`` each turn is judged by its own reward only: in a
    retry environment a wrong first answer is not credited with the success of
    the second attempt. One-turn episodes reduce to :func:`group_advantages`.
    """
    returns = []
    for rs in turn_rewards:
        g, out = 0.0, []
        for r in reversed(rs):
            g = r + discount * g
            out.append(g)
        returns.append(out[::-1])
    adv = [[0.0] * len(r) for r in returns]
    members: dict = {}
    for i, g in enumerate(group_ids):
        members.setdefault(g, []).append(i)
    for group in members.values():
        for k in range(max(len(returns[i]) for i in group)):
            reached = [i for i in group if len(returns[i]) > k]
            if len(reached) < 2:
                continue
            a = group_advantages(torch.tensor([returns[i][k] for i in reached]), [0] * len(reached),
                                 std_normalize=std_normalize, eps=eps)
            for i, v in zip(reached, a.tolist(), strict=True):
                adv[i][k] = v
    return adv


def kl_estimate(logp: torch.Tensor, ref_logp: torch.Tensor, estimator: str = "k3") -> torch.Tensor:
    """Per-token estimate of KL(pi || ref) from samples of pi (Schulman, 2020).

    k1 = log pi - log ref (unbiased, can be negative); k2 = (log pi - log ref)^2 / 2;
    k3 = ref/pi - 1 - log(ref/pi) (unbiased, >= 0, lower variance).
    """
    log_ratio = logp - ref_logp
    if estimator == "k1":
        return log_ratio
    if estimator == "k2":
        return 0.5 * log_ratio**2
    if estimator == "k3":
        # clamp: exp of a large negative log-ratio is 0, of a large positive one overflows
        neg = (-log_ratio).clamp(max=20.0)
        return torch.exp(neg) - 1.0 - neg
    raise ValueError(f"unknown KL estimator {estimator!r}")


def entropy_from_logits(logits: torch.Tensor) -> torch.Tensor:
    """Entropy of the softmax of ``logits`` along the last axis."""
    logp = torch.log_softmax(logits.float(), dim=-1)
    return -(logp.exp() * logp).sum(-1)


@dataclass
class Denominators:
    """Global normalisers of one optimizer step, so that splitting a batch into
    token-budget micro-batches (and ranks) does not change the loss.
    ``tokens``: policy tokens in the step; ``seqs``: sequences in the step;
    ``norm_len``: the Dr.GRPO constant (the generation limit)."""

    tokens: float
    seqs: float
    norm_len: float = 1.0


def aggregate(loss_tok: torch.Tensor, mask: torch.Tensor, mode: str, den: Denominators) -> torch.Tensor:
    """Reduce per-token losses of one micro-batch to its share of the step's loss.

    * ``token-mean``: sum over all policy tokens / all policy tokens of the step
      (long answers weigh more; DAPO);
    * ``seq-mean-token-mean``: each sequence's token mean, averaged over sequences
      (GRPO paper);
    * ``seq-mean-token-sum-norm``: each sequence's token sum / ``norm_len``,
      averaged over sequences (Dr.GRPO: no length bias).
    Summing this over the micro-batches of a step gives the step's loss.
    """
    if mode == "token-mean":
        return (loss_tok * mask).sum() / den.tokens
    seq_sum = (loss_tok * mask).sum(-1)
    if mode == "seq-mean-token-mean":
        per_seq = seq_sum / mask.sum(-1).clamp(min=1)
    elif mode == "seq-mean-token-sum-norm":
        per_seq = seq_sum / den.norm_len
    else:
        raise ValueError(f"unknown loss aggregation {mode!r}")
    return per_seq.sum() / den.seqs


def policy_loss(
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    advantages: torch.Tensor,
    *,
    clip_low: float,
    clip_high: float,
    dual_clip: float | None = None,
    is_weight: torch.Tensor | None = None,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Clipped surrogate, per token (PPO; clip-higher; dual clip).

    ``loss = max(-A * r, -A * clip(r, 1 - clip_low, 1 + clip_high))`` with
    ``r = exp(logp - old_logp)``; with ``dual_clip = c`` the loss of a token with
    ``A < 0`` is further capped at ``-c * A`` (Ye et al., 2020), so one token with
    a huge ratio cannot dominate. ``is_weight`` (detached) multiplies each
    token's loss: the truncated importance weight pi_old / pi_engine.
    Returns the per-token loss and per-token clip indicators for logging.
    """
    ratio = torch.exp(logp - old_logp)
    unclipped = -advantages * ratio
    clipped = -advantages * torch.clamp(ratio, 1.0 - clip_low, 1.0 + clip_high)
    loss = torch.maximum(unclipped, clipped)
    stats = {
        "clip_low": ((ratio < 1.0 - clip_low) & (advantages < 0)).float(),
        "clip_high": ((ratio > 1.0 + clip_high) & (advantages > 0)).float(),
    }
    if dual_clip is not None:
        cap = -advantages * dual_clip
        dual = (advantages < 0) & (loss > cap)
        loss = torch.where(dual, cap, loss)
        stats["clip_dual"] = dual.float()
    if is_weight is not None:
        loss = loss * is_weight
    stats["ratio"] = ratio.detach()
    return loss, stats


def gae_advantages(
    rewards: torch.Tensor, values: torch.Tensor, mask: torch.Tensor, *, gamma: float, lam: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """Generalised advantage estimation over the policy tokens of each row.

    ``rewards[b, t]``: reward received after policy token t (0 elsewhere);
    ``values[b, t]``: the critic's value before emitting token t. Tokens with
    ``mask == 0`` (environment turns, padding) are skipped: the next policy
    token's value bootstraps across them, as the environment's tokens are part
    of the state, not actions. The value after the last policy token is 0 (the
    episode ended). Returns ``(advantages, returns)``, zero where masked.
    """
    B, T = rewards.shape
    adv = torch.zeros_like(rewards)
    next_value = torch.zeros(B, dtype=rewards.dtype, device=rewards.device)
    next_adv = torch.zeros_like(next_value)
    for t in reversed(range(T)):
        m = mask[:, t]
        delta = rewards[:, t] + gamma * next_value - values[:, t]
        a = delta + gamma * lam * next_adv
        adv[:, t] = a * m
        next_value = torch.where(m > 0, values[:, t], next_value)
        next_adv = torch.where(m > 0, a, next_adv)
    returns = (adv + values) * mask
    return adv, returns


def value_loss(
    values: torch.Tensor, old_values: torch.Tensor, returns: torch.Tensor, *, clip: float
) -> torch.Tensor:
    """Per-token clipped value loss: ``0.5 * max((v - R)^2, (v_clip - R)^2)`` with
    ``v_clip = old + clamp(v - old, -clip, clip)`` (``clip = 0``: unclipped)."""
    loss = (values - returns) ** 2
    if clip > 0:
        v_clipped = old_values + torch.clamp(values - old_values, -clip, clip)
        loss = torch.maximum(loss, (v_clipped - returns) ** 2)
    return 0.5 * loss


def overlong_penalty(lengths: torch.Tensor, *, max_len: int, buffer: int, penalty: float) -> torch.Tensor:
    """DAPO's soft overlong penalty (<= 0) for responses of ``lengths`` policy
    tokens: 0 up to ``max_len - buffer``, then falling linearly to ``-penalty``
    at ``max_len`` (and beyond). ``buffer = 0`` disables it."""
    if buffer <= 0:
        return torch.zeros_like(lengths, dtype=torch.float32)
    excess = (lengths.float() - (max_len - buffer)).clamp(min=0) / buffer
    return -penalty * excess.clamp(max=1.0)
