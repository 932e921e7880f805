"""The update: a step's trajectories become samples with every per-token
field the loss needs (:meth:`Learner.prepare`), then ``mu`` epochs of
``num_minibatches`` optimizer steps over them (:meth:`Learner.update`), each
summing token-budget micro-batches' gradients across ranks. The loss of a
micro-batch (GRPO and PPO share it; PPO adds the critic's) is
:meth:`Learner.micro_batch_loss`, one screen.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import torch

from gym_llm.runtime.mixture import step_rng

from .advantages import (
    explained_variance,
    grpo_advantages,
    ppo_advantages,
    ppo_token_rewards,
    shaped_rewards,
    trained_rewards,
    turn_credit,
)
from .batching import MicroBatch, Sample, collate, padding_fraction, plan_micro_batches
from .config import EnvEntry, RunConfig, TrainerConfig
from .distributed import DistContext
from .losses import Denominators, aggregate, kl_estimate, masked_mean, policy_loss, value_loss
from .metrics import mean
from .modeling import Critic, RefModel, forward_logprobs

if TYPE_CHECKING:
    from .collection import Batch

__all__ = ["Learner", "lr_factor"]


def lr_factor(tc: TrainerConfig, step: int) -> float:
    """Learning-rate multiplier of RL step ``step + 1`` (the scheduler steps
    once per RL step, after all of its ``mu * num_minibatches`` optimizer steps)."""
    warm = min(1.0, (step + 1) / tc.warmup_steps) if tc.warmup_steps > 0 else 1.0
    frac = min(1.0, step / max(1, tc.total_steps))
    decay = {"constant": 1.0, "linear": 1.0 - frac, "cosine": 0.5 * (1 + math.cos(math.pi * frac))}
    return warm * decay[tc.lr_schedule]


class Learner:
    """The policy ``model`` (and, for PPO, its critic) with their optimizers,
    the learning-rate schedule and the frozen reference (``kl_coef > 0``).

    ``entries``: the run's mixture entries (their turn credit);
    ``recompute_old``: compute pi_old with the trainer instead of taking the
    engine's sampling log-probs. Building it draws the critic head's initial
    weights from torch's global generator.
    """

    def __init__(self, cfg: RunConfig, model: torch.nn.Module, *, lr: float, pad_id: int, dist: DistContext,
                 entries: Mapping[str, EnvEntry], recompute_old: bool):
        self.cfg, self.tc = cfg, cfg.trainer
        self.model, self.pad_id, self.dist, self.device = model, pad_id, dist, dist.device
        self.entries = entries
        self.recompute_old = recompute_old
        # One optimizer step per batch: pi_old is the model as it stands at the update, so the
        # update's own forward gives it (as TRL does with one iteration), saving a forward pass
        # over the batch. kl_in_reward needs pi_old before the advantages, so it keeps the pass.
        self.old_logp_in_update = (recompute_old and self.tc.mu == 1 and self.tc.num_minibatches == 1
                                   and not (self.tc.kl_coef > 0 and self.tc.kl_in_reward))
        self.params = [p for p in model.parameters() if p.requires_grad]
        self.opt = torch.optim.AdamW(self.params, lr=lr, betas=tuple(self.tc.adam_betas),
                                     weight_decay=self.tc.weight_decay)
        self.sched = torch.optim.lr_scheduler.LambdaLR(self.opt, self._lr_factor)
        self.critic = self.critic_opt = None
        if self.tc.algorithm == "ppo":
            self.critic = Critic(model).to(self.device)
            dist.broadcast_parameters(self.critic)
            self.critic_opt = torch.optim.AdamW(self.critic.parameters(), lr=self.tc.critic_lr)
        self.ref = RefModel(model, cfg.model, self.device) if self.tc.kl_coef > 0 else None

    def _lr_factor(self, step: int) -> float:
        return lr_factor(self.tc, step)

    # ============================================================ prepare
    def _forward_all(self, samples: list[Sample], fn: Callable[[MicroBatch], torch.Tensor]) -> dict[int, torch.Tensor]:
        """Apply ``fn(micro_batch) -> [B, K]`` over token-budget micro-batches
        without gradients; returns each sample's response-length row."""
        out: dict[int, torch.Tensor] = {}
        with torch.no_grad():
            for idx in plan_micro_batches(samples, self.tc.micro_batch_tokens):
                mb = collate([samples[i] for i in idx], self.pad_id).to(self.device)
                for i, row in zip(mb.indices, mb.rows(fn(mb).float().cpu()), strict=True):
                    out[i] = row
        return out

    def prepare(self, batch: Batch) -> dict[str, float]:
        """Turn the batch's trajectories into samples with every per-token
        field the loss needs: engine log-probs, old log-probs (recomputed or
        the engine's), truncated IS weights, reference log-probs, advantages
        (PPO: old values and returns)."""
        tc, T = self.tc, self.cfg.policy.temperature
        stats: dict[str, float] = {}
        samples = []
        for i, t in enumerate(batch.trajectories):
            engine = [0.0] * len(t.response_token_ids)
            it = iter(t.logprobs)
            for j, m in enumerate(t.loss_mask):
                if m:
                    engine[j] = next(it)
            samples.append(Sample(t.prompt_token_ids, t.response_token_ids, t.loss_mask,
                                  {"engine_logp": engine}, index=i))
        batch.samples = samples
        if not samples:
            return stats
        t0 = time.perf_counter()
        self.model.eval()  # no dropout in the log-probs the ratio is taken against
        if self.old_logp_in_update:
            pass  # micro_batch_loss takes pi_old from its forward (see __init__)
        elif self.recompute_old:
            old = self._forward_all(samples, lambda mb: forward_logprobs(self.model, mb, T)[0])
            for s in samples:
                s.token_fields["old_logp"] = old[s.index].tolist()
                eng = torch.tensor(s.token_fields["engine_logp"])
                w = torch.exp(old[s.index] - eng)
                if tc.tis_cap is not None:
                    w = w.clamp(max=tc.tis_cap)
                s.token_fields["is_weight"] = w.tolist()
            mask = torch.cat([torch.tensor(s.loss_mask, dtype=torch.float32) for s in samples])
            gap = torch.cat([old[s.index] - torch.tensor(s.token_fields["engine_logp"]) for s in samples])
            stats["offpolicy/logp_gap_abs"] = float(masked_mean(gap.abs(), mask))
            stats["offpolicy/is_weight_mean"] = float(masked_mean(
                torch.cat([torch.tensor(s.token_fields["is_weight"]) for s in samples]), mask))
        else:
            for s in samples:
                s.token_fields["old_logp"] = list(s.token_fields["engine_logp"])
        stats["time/old_logp"] = time.perf_counter() - t0
        seq_kl = torch.zeros(len(samples))
        if self.ref is not None:
            t0 = time.perf_counter()
            ref = self._forward_all(samples, lambda mb: self.ref.logprobs(mb, T))
            kls, masks = [], []
            for s in samples:
                s.token_fields["ref_logp"] = ref[s.index].tolist()
                kl = kl_estimate(torch.tensor(s.token_fields["old_logp"]), ref[s.index], tc.kl_estimator)
                m = torch.tensor(s.loss_mask, dtype=torch.float32)
                seq_kl[s.index] = (kl * m).sum()
                s.token_fields["kl_reward"] = (-tc.kl_coef * kl * m).tolist() if tc.kl_in_reward else [0.0] * len(m)
                kls.append(kl)
                masks.append(m)
            stats["kl/ref"] = float(masked_mean(torch.cat(kls), torch.cat(masks)))
            stats["time/ref"] = time.perf_counter() - t0
        trajs = batch.trajectories
        base = [trained_rewards(t, tc.truncated_turns) for t in trajs]
        shaped, penalty = shaped_rewards(trajs, base, max_new_tokens=self.cfg.policy.max_new_tokens,
                                         overlong_buffer=tc.overlong_buffer, overlong_penalty_max=tc.overlong_penalty)
        stats["reward/overlong_penalty"] = float(penalty.mean())
        if tc.algorithm == "grpo":
            if self.ref is not None and tc.kl_in_reward:
                shaped = shaped - tc.kl_coef * seq_kl
            credit = [turn_credit(self.entries[t.info["group_env"]], tc) for t in trajs]
            advs, units = grpo_advantages(trajs, shaped, base, credit, std_normalize=tc.std_normalize,
                                          eps=tc.adv_eps)
            for s, a in zip(samples, advs, strict=True):
                s.token_fields["adv"] = a
            stats["advantage/abs_mean"] = mean(units)
        else:
            self._ppo_advantages(batch, shaped, base, stats)
        self.model.train()
        return stats

    def _ppo_advantages(self, batch: Batch, shaped: torch.Tensor, base: list[tuple[list[float], float]],
                        stats: dict[str, float]) -> None:
        """Critic values, token rewards, GAE, whitened advantages."""
        tc, samples = self.tc, batch.samples
        values = self._forward_all(samples, self.critic)
        rewards = [ppo_token_rewards(t, base[s.index], float(shaped[s.index]), s.token_fields.get("kl_reward"))
                   for s, t in zip(samples, batch.trajectories, strict=True)]
        masks = [torch.tensor(s.loss_mask, dtype=torch.float32) for s in samples]
        advs, rets = ppo_advantages(rewards, [values[s.index] for s in samples], masks, gamma=tc.gamma,
                                    lam=tc.gae_lambda, whiten=tc.std_normalize, eps=tc.adv_eps)
        for s, a, ret in zip(samples, advs, rets, strict=True):
            s.token_fields["adv"] = a.tolist()
            s.token_fields["returns"] = ret.tolist()
            s.token_fields["old_values"] = values[s.index].tolist()
        flat_v, flat_r, flat_m = (torch.cat(x) for x in ([values[s.index] for s in samples], rets, masks))
        stats["ppo/explained_variance"] = explained_variance(flat_r, flat_v, flat_m)
        stats["ppo/value_mean"] = float(masked_mean(flat_v, flat_m))

    # ============================================================= update
    def micro_batch_loss(self, mb: MicroBatch, den: Denominators) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """The policy loss of one micro-batch: its share of the step's loss."""
        tc, f = self.tc, mb.fields
        logp, entropy = forward_logprobs(self.model, mb, self.cfg.policy.temperature, with_entropy=True)
        if tc.entropy_coef == 0:
            entropy = entropy.detach()
        extra: dict[str, torch.Tensor] = {}
        if self.old_logp_in_update:
            old_logp = logp.detach()
            gap = old_logp - f["engine_logp"]
            is_weight = torch.exp(gap) if tc.tis_cap is None else torch.exp(gap).clamp(max=tc.tis_cap)
            extra = {"logp_gap_abs": (gap.abs() * mb.mask).sum(), "is_weight": (is_weight * mb.mask).sum()}
        else:
            old_logp, is_weight = f["old_logp"], f.get("is_weight")
        pg, clip = policy_loss(logp, old_logp, f["adv"], clip_low=tc.clip_eps_low, clip_high=tc.clip_eps_high,
                               dual_clip=tc.dual_clip, is_weight=is_weight)
        loss_tok = pg - tc.entropy_coef * entropy
        if self.ref is not None and not tc.kl_in_reward:
            loss_tok = loss_tok + tc.kl_coef * kl_estimate(logp, f["ref_logp"], tc.kl_estimator)
        loss = aggregate(loss_tok, mb.mask, tc.loss_agg, den)
        m = mb.mask
        stats = {k: (v * m).sum() for k, v in clip.items() if k != "ratio"} | extra
        stats["entropy"] = (entropy.detach() * m).sum()
        # k3 estimate of KL(pi_old || pi_new): how far this update moved the policy
        stats["kl_update"] = (kl_estimate(old_logp, logp.detach(), "k3") * m).sum()
        if self.ref is not None:
            stats["kl_ref_now"] = (kl_estimate(logp.detach(), f["ref_logp"], tc.kl_estimator) * m).sum()
        stats["pg_loss"] = (pg.detach() * m).sum()
        return loss, stats

    def critic_loss(self, mb: MicroBatch, den: Denominators) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """PPO: the clipped value loss of one micro-batch (token mean)."""
        values = self.critic(mb)
        f = mb.fields
        loss_tok = value_loss(values, f["old_values"], f["returns"], clip=self.tc.value_clip)
        clipped = ((values - f["old_values"]).abs() > self.tc.value_clip).float() if self.tc.value_clip > 0 \
            else torch.zeros_like(values)
        return aggregate(loss_tok, mb.mask, "token-mean", den), {
            "value_loss": (loss_tok.detach() * mb.mask).sum(), "value_clip": (clipped * mb.mask).sum()}

    def _minibatches(self, samples: list[Sample], step: int, epoch: int) -> list[list[Sample]]:
        order = list(range(len(samples)))
        step_rng(self.tc.seed, "shuffle", step, epoch, self.dist.rank).shuffle(order)
        k = self.tc.num_minibatches
        return [[samples[i] for i in order[j::k]] for j in range(k)]

    def _optimizer_step(self, grad_norms: list[float]) -> None:
        """Sum gradients across ranks, clip, step the policy (and critic)."""
        tc = self.tc
        self.dist.sum_gradients(self.params)
        if tc.max_grad_norm > 0:
            grad_norms.append(float(torch.nn.utils.clip_grad_norm_(self.params, tc.max_grad_norm)))
        self.opt.step()
        if self.critic is not None:
            cparams = list(self.critic.parameters())
            self.dist.sum_gradients(cparams)
            if tc.max_grad_norm > 0:
                torch.nn.utils.clip_grad_norm_(cparams, tc.max_grad_norm)
            self.critic_opt.step()

    def update(self, batch: Batch, step: int) -> dict[str, float]:
        """``mu`` epochs of ``num_minibatches`` optimizer steps over the batch."""
        tc = self.tc
        sums: dict[str, float] = defaultdict(float)
        tokens_total = 0.0
        pad_fracs, n_micro, grad_norms, t0 = [], 0, [], time.perf_counter()
        self.model.train()
        for epoch in range(tc.mu):
            for mini in self._minibatches(batch.samples, step, epoch):
                local_tokens = float(sum(sum(s.loss_mask) for s in mini))
                g_tokens, g_seqs = self.dist.all_reduce_sum([local_tokens, float(len(mini))])
                if g_tokens == 0:
                    continue
                den = Denominators(tokens=g_tokens, seqs=g_seqs, norm_len=float(self.cfg.policy.max_new_tokens))
                self.opt.zero_grad(set_to_none=True)
                if self.critic_opt is not None:
                    self.critic_opt.zero_grad(set_to_none=True)
                parts = plan_micro_batches(mini, tc.micro_batch_tokens) if mini else []
                pad_fracs.append(padding_fraction(mini, parts) if parts else 0.0)
                for idx in parts:
                    mb = collate([mini[i] for i in idx], self.pad_id).to(self.device)
                    loss, st = self.micro_batch_loss(mb, den)
                    if self.critic is not None:
                        vloss, vst = self.critic_loss(mb, den)
                        loss = loss + vloss
                        st.update(vst)
                    loss.backward()
                    n_micro += 1
                    sums["loss"] += float(loss.detach())
                    for k, v in st.items():
                        sums[k] += float(v)
                tokens_total += local_tokens
                self._optimizer_step(grad_norms)
        lr = self.opt.param_groups[0]["lr"]  # this step's, before the scheduler moves on
        self.sched.step()
        n_tok = max(tokens_total, 1.0)
        out = {
            "loss": sums["loss"] / max(tc.mu * tc.num_minibatches, 1),
            "loss/policy_gradient": sums["pg_loss"] / n_tok,
            "entropy": sums["entropy"] / n_tok,
            "clip/low_fraction": sums["clip_low"] / n_tok,
            "clip/high_fraction": sums["clip_high"] / n_tok,
            "kl/update": sums["kl_update"] / n_tok,
            "grad_norm": mean(grad_norms),
            "lr": lr,
            "batching/padding_fraction": mean(pad_fracs),
            "batching/micro_batches": n_micro,
            "time/update": time.perf_counter() - t0,
        }
        if tc.dual_clip is not None:
            out["clip/dual_fraction"] = sums["clip_dual"] / n_tok
        if self.old_logp_in_update:
            out["offpolicy/logp_gap_abs"] = sums["logp_gap_abs"] / n_tok
            out["offpolicy/is_weight_mean"] = sums["is_weight"] / n_tok
        if self.ref is not None:
            out["kl/ref_after"] = sums["kl_ref_now"] / n_tok
        if self.critic is not None:
            out["ppo/value_loss"] = sums["value_loss"] / n_tok
            out["ppo/value_clip_fraction"] = sums["value_clip"] / n_tok
        return out
