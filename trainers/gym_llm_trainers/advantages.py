"""From a step's trajectories to what the loss weighs each token by: pure
functions of trajectories, tensors and config values, testable without a model.

* The *trained rewards* of an episode (:func:`trained_rewards`): its turn
  rewards and total, or zeros when a policy turn was cut at its token limit
  and ``truncated_turns=penalize``.
* Reward shaping (:func:`shaped_rewards`): plus the DAPO overlong penalty;
  GRPO may also subtract ``kl_coef x`` the sequence KL (the trainer does, with
  the reference's log-probs).
* GRPO (:func:`grpo_advantages`): one advantage per episode relative to its
  group, or, with ``turn_credit=turn``, one per policy turn relative to the
  same turn of the group (:func:`gym_llm_trainers.losses.turn_advantages`).
* PPO (:func:`ppo_token_rewards`, :func:`ppo_advantages`): rewards placed on
  the policy tokens that earned them, GAE against the critic's values, then
  advantages whitened over every policy token of the batch.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import torch

from gym_llm.runtime.rollout import Trajectory

from .config import EnvEntry, TrainerConfig
from .losses import gae_advantages, group_advantages, masked_mean, overlong_penalty, turn_advantages

__all__ = [
    "was_cut", "trained_rewards", "policy_tokens_per_turn", "shaped_rewards", "turn_credit",
    "per_turn_rewards", "grpo_advantages", "ppo_token_rewards", "ppo_advantages", "explained_variance",
]

#: An episode's trained rewards: (per-turn rewards, episode reward).
Rewards = tuple[list[float], float]


def was_cut(t: Trajectory) -> bool:
    """Whether a policy turn of ``t`` stopped at its token limit, not at an end-of-turn token."""
    return any(turn.get("finish_reason") == "length" for turn in t.info.get("policy_turns", ()))


def trained_rewards(t: Trajectory, truncated_turns: str) -> Rewards:
    """The turn rewards and episode reward the loss uses (see ``truncated_turns``)."""
    if truncated_turns == "penalize" and was_cut(t):
        return [0.0] * len(t.turn_rewards), 0.0
    return list(t.turn_rewards), t.reward


def policy_tokens_per_turn(t: Trajectory) -> int:
    """The policy-token count of ``t``'s longest turn (what the overlong penalty measures)."""
    spans = t.turn_spans or [[0, len(t.response_token_ids)]]
    return max(sum(t.loss_mask[a:b]) for a, b in spans)


def shaped_rewards(trajectories: Sequence[Trajectory], base: Sequence[Rewards], *, max_new_tokens: int,
                   overlong_buffer: int, overlong_penalty_max: float) -> tuple[torch.Tensor, torch.Tensor]:
    """``(shaped, penalty)``: each episode's trained reward (``base``) plus
    its overlong penalty, and the penalty alone (float32, one per episode)."""
    rewards = torch.tensor([r for _, r in base], dtype=torch.float32)
    lengths = torch.tensor([policy_tokens_per_turn(t) for t in trajectories])
    penalty = overlong_penalty(lengths, max_len=max_new_tokens, buffer=overlong_buffer, penalty=overlong_penalty_max)
    return rewards + penalty, penalty


def turn_credit(entry: EnvEntry, tc: TrainerConfig) -> tuple[str, float]:
    """``(turn_credit, turn_discount)`` of a mixture entry: its own, else the trainer's."""
    return (entry.turn_credit or tc.turn_credit,
            tc.turn_discount if entry.turn_discount is None else entry.turn_discount)


def per_turn_rewards(t: Trajectory, shaped: float, base: Rewards) -> tuple[list[float], list[list[int]]]:
    """Per-policy-turn rewards and token spans of ``t`` from its trained
    rewards ``base``; reward shaping (the overlong penalty, KL in the reward)
    lands on the last turn. Episodes whose turns and rewards do not pair up
    count as one turn spanning everything."""
    spans = [list(sp) for sp in t.turn_spans]
    rewards, reward = base
    if not spans or len(spans) != len(rewards):
        return [shaped], [[0, len(t.response_token_ids)]]
    rewards = list(rewards)
    rewards[-1] += shaped - reward
    return rewards, spans


def grpo_advantages(trajectories: Sequence[Trajectory], shaped: torch.Tensor, base: Sequence[Rewards],
                    credit: Sequence[tuple[str, float]], *, std_normalize: bool,
                    eps: float) -> tuple[list[list[float]], list[float]]:
    """Group-relative advantages, one value per response token of each
    trajectory (0 on the tokens of no policy turn when credited per turn).

    ``shaped``: each episode's shaped reward; ``base``: its trained rewards;
    ``credit``: its entry's :func:`turn_credit` (the first member's decides
    for a group). ``episode`` credit gives every token the episode's
    advantage; ``turn`` compares each turn's return with the same turn of the
    group. Returns the per-token advantages and the absolute advantage of
    each credited unit (episode or turn), for ``advantage/abs_mean``."""
    groups = [t.group_id for t in trajectories]
    episode = group_advantages(shaped, groups, std_normalize=std_normalize, eps=eps)
    by_group: dict[str, list[int]] = defaultdict(list)
    for i, g in enumerate(groups):
        by_group[g].append(i)
    tokens: list[list[float]] = [[] for _ in trajectories]
    units: list[float] = []
    for members in by_group.values():
        mode, discount = credit[members[0]]
        if mode != "turn":
            for i in members:
                tokens[i] = [float(episode[i])] * len(trajectories[i].response_token_ids)
                units.append(abs(float(episode[i])))
            continue
        per_turn = [per_turn_rewards(trajectories[i], float(shaped[i]), base[i]) for i in members]
        turn_adv = turn_advantages([r for r, _ in per_turn], [0] * len(members), discount=discount,
                                   std_normalize=std_normalize, eps=eps)
        for i, (_, spans), a in zip(members, per_turn, turn_adv, strict=True):
            tok = [0.0] * len(trajectories[i].response_token_ids)
            for (lo, hi), v in zip(spans, a, strict=True):
                tok[lo:hi] = [v] * (hi - lo)
            tokens[i] = tok
            units += [abs(v) for v in a]
    return tokens, units


def ppo_token_rewards(t: Trajectory, base: Rewards, shaped: float,
                      kl_reward: Sequence[float] | None = None) -> torch.Tensor:
    """PPO's per-token rewards of ``t``: each turn's reward at its last policy
    token (the episode reward at the last one when turns and rewards do not
    pair up), the shaping's extra (``shaped - base reward``, the overlong
    penalty) at the last policy token, plus the per-token KL reward if any."""
    R = len(t.response_token_ids)
    r = torch.zeros(R)
    spans = t.turn_spans or [[0, R]]
    turn_rewards, reward = base
    turn_r = turn_rewards if len(turn_rewards) == len(spans) else [0.0] * (len(spans) - 1) + [reward]
    for (a, b), tr in zip(spans, turn_r, strict=True):
        last = max(j for j in range(a, b) if t.loss_mask[j]) if any(t.loss_mask[a:b]) else None
        if last is not None:
            r[last] += tr
    last_policy = max((j for j, m in enumerate(t.loss_mask) if m), default=None)
    if last_policy is not None:
        r[last_policy] += shaped - reward  # the overlong penalty
    if kl_reward is not None:
        r += torch.tensor(kl_reward)
    return r


def ppo_advantages(token_rewards: Sequence[torch.Tensor], values: Sequence[torch.Tensor],
                   masks: Sequence[torch.Tensor], *, gamma: float, lam: float, whiten: bool,
                   eps: float) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """GAE advantages and returns of each sequence (over its policy tokens,
    ``masks`` 1); with ``whiten`` the advantages are normalised to zero mean
    and unit std over every policy token of the batch (0 elsewhere)."""
    advs, rets = [], []
    for r, v, m in zip(token_rewards, values, masks, strict=True):
        a, ret = gae_advantages(r[None], v[None], m[None], gamma=gamma, lam=lam)
        advs.append(a[0])
        rets.append(ret[0])
    if whiten and advs:
        flat_a, flat_m = torch.cat(advs), torch.cat(list(masks))
        mean = masked_mean(flat_a, flat_m)
        std = masked_mean((flat_a - mean) ** 2, flat_m).sqrt()
        advs = [(a - mean) / (std + eps) * m for a, m in zip(advs, masks, strict=True)]
    return advs, rets


def explained_variance(returns: torch.Tensor, values: torch.Tensor, mask: torch.Tensor) -> float:
    """``1 - Var(returns - values) / Var(returns)`` over the masked tokens."""
    var_r = masked_mean((returns - masked_mean(returns, mask)) ** 2, mask)
    return float(1 - masked_mean((returns - values) ** 2, mask) / (var_r + 1e-8))
