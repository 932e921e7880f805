"""The RL loop: rollouts through :mod:`gym_llm.rollout`, GRPO or PPO updates,
held-out evals, checkpoints and metrics.

One step::

    specs    = plan(step)                      # mixture draw, task per group (counter-based RNG)
    trajs    = collect(policy, envs, specs)    # + refill rounds when dynamic sampling drops groups
    batch    = prepare(trajs)                  # ref / old log-probs, rewards, advantages (PPO: values, GAE)
    for epoch in range(mu):                    # inner epochs
        for minibatch in split(batch):         # one optimizer step each
            for mb in token_budget(minibatch): # micro-batches, gradients accumulated
                loss(mb).backward()
            sum gradients across ranks; clip; step
    sync weights into the engine (vLLM) / publish them (async)

The loss of a micro-batch (GRPO and PPO share it; PPO adds the critic's) is
:meth:`Trainer.micro_batch_loss`, one screen.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import os
import time
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

import gym_llm
from gym_llm.aio import run_sync
from gym_llm.mixture import heldout_plan, step_rng
from gym_llm.policies.base import SamplingParams
from gym_llm.rollout import ChatFormat, EpisodeSpec, RolloutStats, Trajectory, acollect, write_jsonl
from gym_llm.vector import VectorLLMEnv

from .batching import MicroBatch, Sample, collate, padding_fraction, plan_micro_batches
from .checkpoint import load_trainer_state, resolve_resume, save_checkpoint
from .config import EnvEntry, RunConfig
from .distributed import DistContext
from .losses import (
    Denominators,
    aggregate,
    gae_advantages,
    group_advantages,
    kl_estimate,
    masked_mean,
    overlong_penalty,
    policy_loss,
    turn_advantages,
    value_loss,
)
from .metrics import MetricsLogger
from .modeling import (
    Critic,
    RefModel,
    forward_logprobs,
    load_policy_model,
    load_tokenizer,
    merged_state_dict,
    resolve_model_path,
)
from .pipeline import AsyncRollout
from .sampling import Curriculum, zero_variance_groups
from .sft import SFTReport, reference_examples, sft_train

__all__ = ["Trainer", "Batch"]

log = logging.getLogger("gym_llm_trainers")


class Batch:
    """The trajectories of one step and their trainer-side samples."""

    def __init__(self, trajectories: list[Trajectory], stats: dict[str, float], version: int = 0):
        self.trajectories = trajectories  # every episode collected, dropped ones included
        self.stats = stats
        self.version = version
        self.samples: list[Sample] = []
        self.trajectories_all: list[Trajectory] = list(trajectories)


def _was_cut(t: Trajectory) -> bool:
    """Whether a policy turn of ``t`` stopped at its token limit, not at an end-of-turn token."""
    return any(turn.get("finish_reason") == "length" for turn in t.info.get("policy_turns", ()))


def _trained_rewards(t: Trajectory, truncated_turns: str) -> tuple[list[float], float]:
    """The turn rewards and episode reward the loss uses (see ``truncated_turns``)."""
    if truncated_turns == "penalize" and _was_cut(t):
        return [0.0] * len(t.turn_rewards), 0.0
    return list(t.turn_rewards), t.reward


def _turn_rewards(t: Trajectory, shaped: float, base: tuple[list[float], float]) -> tuple[list[float], list[list[int]]]:
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


def _policy_tokens_per_turn(t: Trajectory) -> int:
    spans = t.turn_spans or [[0, len(t.response_token_ids)]]
    return max(sum(t.loss_mask[a:b]) for a, b in spans)


class Trainer:
    """GRPO / PPO over an environment mixture (see the module docstring).

    ``cfg`` is the whole run's :class:`~gym_llm_trainers.config.RunConfig`;
    ``run_dir`` receives metrics.jsonl, trajectories/, checkpoints/,
    tensorboard/, reward_curve.png and the final model in ``model/``.
    """

    def __init__(self, cfg: RunConfig, run_dir: str | os.PathLike, dist: DistContext | None = None):
        self.cfg = cfg
        self.tc = cfg.trainer
        self.run_dir = Path(run_dir)
        self.dist = dist or DistContext()
        self.device = self.dist.device
        self.ckpt_root = self.run_dir / "checkpoints"
        self.entries: dict[str, EnvEntry] = cfg.mixture.entries()
        self.mixture = cfg.mixture.mixture()
        self.probs = self.mixture.probabilities
        self.entries = {k: self.entries[k] for k in self.probs}  # weight-0 envs are not part of the run
        self.keys = self.mixture.metric_keys()
        torch.manual_seed(self.tc.seed)
        self.lr = self.tc.lr if self.tc.lr is not None else cfg.model.lr
        self.sft_lr = self.tc.sft.lr if self.tc.sft.lr is not None else cfg.model.sft_lr
        if self.tc.sft.epochs is None:
            self.tc.sft.epochs = cfg.model.sft_epochs
        self.recompute_old = bool(self.tc.recompute_old_logprobs or self.tc.async_rollout
                                  or cfg.policy.backend != "hf" or cfg.policy.top_p < 1.0)

        self.resume_from = resolve_resume(self.tc.resume, self.ckpt_root)
        self.state = load_trainer_state(self.resume_from) if self.resume_from else None
        self.tokenizer = load_tokenizer(cfg.model)
        self.pad_id = int(self.tokenizer.pad_token_id)
        self.chat = ChatFormat(self.tokenizer)
        model_cfg = cfg.model
        if self.resume_from is not None and not cfg.model.lora.enabled:
            model_cfg = dataclasses.replace(cfg.model, path=str(self.resume_from / "model"), tiny={})
        self.model = load_policy_model(model_cfg, self.device)
        if self.resume_from is not None and cfg.model.lora.enabled:
            from peft import set_peft_model_state_dict
            from safetensors.torch import load_file

            set_peft_model_state_dict(self.model, load_file(self.resume_from / "model" / "adapter_model.safetensors"))
        self.dist.broadcast_parameters(self.model)
        self.params = [p for p in self.model.parameters() if p.requires_grad]
        self.opt = torch.optim.AdamW(self.params, lr=self.lr, betas=tuple(self.tc.adam_betas),
                                     weight_decay=self.tc.weight_decay)
        self.sched = torch.optim.lr_scheduler.LambdaLR(self.opt, self._lr_factor)
        self.critic = self.critic_opt = None
        if self.tc.algorithm == "ppo":
            self.critic = Critic(self.model).to(self.device)
            self.dist.broadcast_parameters(self.critic)
            self.critic_opt = torch.optim.AdamW(self.critic.parameters(), lr=self.tc.critic_lr)
        self.curriculum = Curriculum(self.tc.curriculum, {
            name: float(e.kwargs.get("difficulty", 0.0)) for name, e in self.entries.items()
        })
        self.step = 0
        if self.state is not None:
            self.opt.load_state_dict(self.state["optimizer"])
            self.sched.load_state_dict(self.state["scheduler"])
            self.curriculum.load_state_dict(self.state["curriculum"])
            if self.critic is not None:
                self.critic.load_state_dict(self.state["critic"])
                self.critic_opt.load_state_dict(self.state["critic_optimizer"])
            self.step = int(self.state["step"])
        self.ref = RefModel(self.model, cfg.model, self.device) if self.tc.kl_coef > 0 else None
        self.policy = self._make_policy()
        self._vecs: dict[str, VectorLLMEnv] = {}  # split -> the vector env over the mixture
        self._vec_kwargs: dict[str, dict[str, dict[str, Any]]] = {}  # split -> entry -> its make kwargs
        self._heldout_sizes: dict[str, int] = {}
        self.logger = MetricsLogger(
            self.run_dir, cfg.logging, enabled=self.dist.is_main,
            resume_step=self.step if self.state is not None else None,
            total_steps=self.tc.total_steps, run_config=_plain(cfg),
        )

    # ================================================================ setup
    def _lr_factor(self, step: int) -> float:
        """Learning-rate multiplier of RL step ``step + 1`` (the scheduler steps
        once per RL step, after all of its ``mu * num_minibatches`` optimizer steps)."""
        warm = min(1.0, (step + 1) / self.tc.warmup_steps) if self.tc.warmup_steps > 0 else 1.0
        frac = min(1.0, step / max(1, self.tc.total_steps))
        decay = {"constant": 1.0, "linear": 1.0 - frac, "cosine": 0.5 * (1 + math.cos(math.pi * frac))}
        return warm * decay[self.tc.lr_schedule]

    def _make_policy(self) -> Any:
        from gym_llm.policies import make_policy

        pc = self.cfg.policy
        seed = self.tc.seed * 1000 + self.dist.rank
        if pc.backend == "hf":
            if self.tc.async_rollout:  # the producer thread samples from its own copy
                import copy

                self.gen_model = copy.deepcopy(self.model).eval()
                return make_policy("hf", self.gen_model, self.tokenizer, seed=seed,
                                   max_batch_size=pc.max_batch_size)
            return make_policy("hf", self.model, self.tokenizer, seed=seed, max_batch_size=pc.max_batch_size)
        if pc.backend == "vllm":
            path = str(self.resume_from / "model") if self.resume_from and not self.cfg.model.lora.enabled \
                else resolve_model_path(self.cfg.model)
            policy = make_policy("vllm", path, seed=seed, gpu_memory_utilization=pc.gpu_memory_utilization,
                                 **pc.vllm_kwargs)
            if self.resume_from is not None and self.cfg.model.lora.enabled:
                policy.update_weights(merged_state_dict(self.model))
            return policy
        raise ValueError(f"policy.backend must be hf or vllm for training, got {pc.backend!r}")

    def _sync_engine(self) -> float:
        """Push the updated weights into a separate engine (vLLM); the HF
        policy shares the training model and needs nothing."""
        if self.cfg.policy.backend == "hf":
            return 0.0
        t0 = time.perf_counter()
        self.policy.update_weights(merged_state_dict(self.model))
        return time.perf_counter() - t0

    def _vec(self, split: str, slots: int) -> VectorLLMEnv:
        """The run's vector env of ``split`` over the whole mixture, each entry
        made with its own kwargs (:meth:`_env_kwargs`); rebuilt larger when a
        collection needs more slots than it has."""
        vec = self._vecs.get(split)
        if vec is None or vec.num_envs < slots:
            if vec is not None:
                vec.close()
            kwargs = {name: self._env_kwargs(name, split) for name in self.entries}
            vec = VectorLLMEnv(self.mixture, max(slots, 1), seed=self.tc.seed + 7919 * self.dist.rank,
                               split=split, env_kwargs=kwargs)
            self._vecs[split] = vec
            self._vec_kwargs[split] = kwargs
        return vec

    def _env_kwargs(self, name: str, split: str) -> dict[str, Any]:
        """``make`` kwargs of a mixture entry: held-out overrides, or the
        curriculum's difficulty on the train split."""
        entry = self.entries[name]
        kwargs = dict(entry.kwargs)
        if split == "heldout":
            kwargs.update(entry.heldout_kwargs)
        elif "difficulty" in kwargs or self.tc.curriculum.enabled:
            kwargs["difficulty"] = self.curriculum.difficulty(name)
        return kwargs

    # ============================================================== rollout
    def _sampling(self, step: int, greedy: bool = False) -> SamplingParams:
        pc = self.cfg.policy
        temperature = self.tc.eval_temperature if greedy else pc.temperature
        # no per-request seed: the engine gives every request the same params, and
        # a shared seed would make the members of a group identical samples
        return SamplingParams(temperature=temperature, top_p=1.0 if greedy else pc.top_p,
                              max_new_tokens=pc.max_new_tokens)

    def _seed_policy(self, step: int, rnd: int) -> None:
        gen = getattr(self.policy, "generator", None)
        if gen is not None:  # HF: per-step seeding makes a resumed run draw what the original drew
            gen.manual_seed(int(step_rng(self.tc.seed, "sample", step, rnd, self.dist.rank).getrandbits(62)))

    async def _collect(self, by_entry: dict[str, list[EpisodeSpec]], split: str, sampling: SamplingParams,
                       stats: RolloutStats, policy: Any = None) -> list[Trajectory]:
        # One environment at a time: a decoding batch then holds prompts of
        # similar length (arithmetic's 50 tokens are not padded to a tool
        # schema's 700), which matters far more than overlapping the envs.
        out: list[Trajectory] = []
        vec = self._vec(split, max(len(specs) for specs in by_entry.values()) if by_entry else 1)
        for name, specs in sorted(by_entry.items()):
            kwargs = self._env_kwargs(name, split)
            if kwargs != self._vec_kwargs[split][name]:  # the curriculum moved the difficulty
                vec.set_entry_kwargs(name, kwargs)
                self._vec_kwargs[split][name] = kwargs
            out += await acollect(policy or self.policy, vec, episodes=specs, sampling=sampling,
                                  max_tokens=self.cfg.policy.max_episode_tokens, stats=stats)
        return out

    def _plan(self, step: int, rnd: int, n_groups: int) -> dict[str, list[EpisodeSpec]]:
        specs = self.mixture.plan_groups(n_groups, self.tc.group_size, seed=self.tc.seed,
                                         keys=("plan", step, rnd, self.dist.rank),
                                         group_prefix=f"s{step}-r{rnd}-k{self.dist.rank}-g")
        by_entry: dict[str, list[EpisodeSpec]] = defaultdict(list)
        for spec in specs:
            by_entry[spec.entry].append(spec)
        return by_entry

    def rollout(self, step: int) -> Batch:
        """Collect the step's groups; with dynamic sampling, drop groups with
        no reward variance and refill (at most ``max_refill_rounds`` more rounds)."""
        tc = self.tc
        t0 = time.perf_counter()
        stats = RolloutStats()
        everything: list[Trajectory] = []
        kept: dict[str, list[Trajectory]] = {}
        sampled = zero_var = 0
        names: dict[str, str] = {}
        need, rnd = tc.num_groups, 0
        while True:
            plan = self._plan(step, rnd, need)
            for name, specs in plan.items():
                for s in specs:
                    names[s.group_id] = name
            self._seed_policy(step, rnd)
            trajs = run_sync(self._collect(plan, "train", self._sampling(step), stats))
            everything += trajs
            groups: dict[str, list[Trajectory]] = defaultdict(list)
            for t in trajs:
                groups[t.group_id].append(t)
            sampled += len(groups)
            for gid, members in groups.items():
                good = [t for t in members if t.ok and t.num_generated_tokens > 0
                        and not (tc.truncated_turns == "mask" and _was_cut(t))]
                if tc.algorithm == "grpo" and len(good) < 2:
                    continue
                trained = [_trained_rewards(t, tc.truncated_turns)[1] for t in good]
                flat = zero_variance_groups([gid] * len(good), trained) and tc.algorithm == "grpo"
                zero_var += bool(flat)
                if flat and tc.dynamic_sampling:
                    continue
                kept[gid] = good
            rnd += 1
            missing = tc.num_groups - len(kept)
            if not tc.dynamic_sampling or missing <= 0 or rnd > tc.max_refill_rounds:
                break
            useful = max(len(kept) / max(sampled, 1), 0.25)  # oversample by the observed yield
            need = min(int(math.ceil(missing / useful)), 4 * tc.num_groups)
        chosen = list(kept)[: tc.num_groups]
        batch = Batch([t for g in chosen for t in kept[g]], {})
        for t in everything:
            t.info["group_env"] = names.get(t.group_id)
        rewards_all = [t.reward for t in everything if t.ok]
        s = {
            "reward/mean": _mean(rewards_all),
            "reward/std": float(torch.tensor(rewards_all).std()) if len(rewards_all) > 1 else 0.0,
            "trajectories/collected": len(everything),
            "trajectories/trained": len(batch.trajectories),
            "trajectories/error": sum(t.error is not None for t in everything),
            "trajectories/reward_error": sum(t.reward_error is not None for t in everything),
            "trajectories/cut_turn": sum(_was_cut(t) for t in everything),
            "groups/sampled": sampled,
            "groups/kept": len(chosen),
            "groups/zero_variance_fraction": zero_var / max(sampled, 1),
            "rollout/rounds": rnd,
            "response_length/mean": _mean([t.num_generated_tokens for t in everything]),
            "response_length/max": max([t.num_generated_tokens for t in everything], default=0),
            "episode_tokens/mean": _mean([len(t.response_token_ids) for t in everything]),
            "turns/mean": _mean([t.num_turns for t in everything]),
            "truncated_fraction": _mean([float(t.truncated) for t in everything]),
            "time/rollout": time.perf_counter() - t0,
            "throughput/tokens_per_s": stats.generated_tokens / max(time.perf_counter() - t0, 1e-9),
            "throughput/completions_per_s": len(everything) / max(time.perf_counter() - t0, 1e-9),
        }
        by_env: dict[str, list[float]] = defaultdict(list)
        for t in everything:
            if t.ok:
                by_env[t.info["group_env"]].append(t.reward)
        for name, rs in by_env.items():
            s[f"reward/{self.keys[name]}/mean"] = _mean(rs)
        if tc.curriculum.enabled:
            for name, rs in by_env.items():
                self.curriculum.update(name, rs)
            s.update(self.curriculum.metrics())
        batch.trajectories_all = everything
        batch.stats = s
        return batch

    # ============================================================ prepare
    def _forward_all(self, samples: list[Sample], fn) -> dict[int, torch.Tensor]:
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
        if self.recompute_old:
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
        base = [_trained_rewards(t, tc.truncated_turns) for t in batch.trajectories]
        rewards = torch.tensor([r for _, r in base], dtype=torch.float32)
        lengths = torch.tensor([_policy_tokens_per_turn(t) for t in batch.trajectories])
        penalty = overlong_penalty(lengths, max_len=self.cfg.policy.max_new_tokens,
                                   buffer=tc.overlong_buffer, penalty=tc.overlong_penalty)
        stats["reward/overlong_penalty"] = float(penalty.mean())
        shaped = rewards + penalty
        if tc.algorithm == "grpo":
            if self.ref is not None and tc.kl_in_reward:
                shaped = shaped - tc.kl_coef * seq_kl
            self._grpo_advantages(batch, shaped, base, stats)
        else:
            self._prepare_ppo(batch, shaped, base, stats)
        self.model.train()
        return stats

    def _grpo_advantages(self, batch: Batch, shaped: torch.Tensor, base: list[tuple[list[float], float]],
                         stats: dict[str, float]) -> None:
        """Group-relative advantages, per episode or per turn (the env entry's
        ``turn_credit``/``turn_discount``, else the trainer's)."""
        tc = self.tc
        trajs, samples = batch.trajectories, batch.samples
        groups = [t.group_id for t in trajs]
        episode = group_advantages(shaped, groups, std_normalize=tc.std_normalize, eps=tc.adv_eps)
        by_group: dict[str, list[int]] = defaultdict(list)
        for i, g in enumerate(groups):
            by_group[g].append(i)
        advs: list[float] = []
        for members in by_group.values():
            entry = self.entries[trajs[members[0]].info["group_env"]]
            credit = entry.turn_credit or tc.turn_credit
            if credit != "turn":
                for i in members:
                    samples[i].token_fields["adv"] = [float(episode[i])] * len(samples[i].response_ids)
                    advs.append(abs(float(episode[i])))
                continue
            per_turn = [_turn_rewards(trajs[i], float(shaped[i]), base[i]) for i in members]
            discount = tc.turn_discount if entry.turn_discount is None else entry.turn_discount
            turn_adv = turn_advantages([r for r, _ in per_turn], [0] * len(members), discount=discount,
                                       std_normalize=tc.std_normalize, eps=tc.adv_eps)
            for i, (_, spans), a in zip(members, per_turn, turn_adv, strict=True):
                tok = [0.0] * len(samples[i].response_ids)
                for (lo, hi), v in zip(spans, a, strict=True):
                    tok[lo:hi] = [v] * (hi - lo)
                samples[i].token_fields["adv"] = tok
                advs += [abs(v) for v in a]
        stats["advantage/abs_mean"] = _mean(advs)

    def _prepare_ppo(self, batch: Batch, shaped: torch.Tensor, base: list[tuple[list[float], float]],
                     stats: dict[str, float]) -> None:
        """Token rewards (each turn's reward at its last policy token, the
        final shaped reward's extra at the last one, per-token KL when in the
        reward), critic values, GAE, whitened advantages."""
        tc = self.tc
        samples = batch.samples
        values = self._forward_all(samples, self.critic)
        advs, rets, masks = {}, {}, {}
        for s, t in zip(samples, batch.trajectories, strict=True):
            R = len(s.response_ids)
            r = torch.zeros(R)
            spans = t.turn_spans or [[0, R]]
            turn_rewards, reward = base[s.index]
            turn_r = turn_rewards if len(turn_rewards) == len(spans) else [0.0] * (len(spans) - 1) + [reward]
            for (a, b), tr in zip(spans, turn_r, strict=True):
                last = max(j for j in range(a, b) if t.loss_mask[j]) if any(t.loss_mask[a:b]) else None
                if last is not None:
                    r[last] += tr
            last_policy = max((j for j, m in enumerate(t.loss_mask) if m), default=None)
            if last_policy is not None:
                r[last_policy] += float(shaped[s.index]) - reward  # the overlong penalty
            if "kl_reward" in s.token_fields:
                r += torch.tensor(s.token_fields["kl_reward"])
            m = torch.tensor(s.loss_mask, dtype=torch.float32)
            a, ret = gae_advantages(r[None], values[s.index][None], m[None], gamma=tc.gamma, lam=tc.gae_lambda)
            advs[s.index], rets[s.index], masks[s.index] = a[0], ret[0], m
        flat_a = torch.cat(list(advs.values()))
        flat_m = torch.cat(list(masks.values()))
        mean = masked_mean(flat_a, flat_m)
        std = masked_mean((flat_a - mean) ** 2, flat_m).sqrt()
        for s in samples:
            a = advs[s.index]
            if tc.std_normalize:
                a = (a - mean) / (std + tc.adv_eps) * masks[s.index]
            s.token_fields["adv"] = a.tolist()
            s.token_fields["returns"] = rets[s.index].tolist()
            s.token_fields["old_values"] = values[s.index].tolist()
        flat_v = torch.cat([values[s.index] for s in samples])
        flat_r = torch.cat([rets[s.index] for s in samples])
        var_r = masked_mean((flat_r - masked_mean(flat_r, flat_m)) ** 2, flat_m)
        stats["ppo/explained_variance"] = float(1 - masked_mean((flat_r - flat_v) ** 2, flat_m) / (var_r + 1e-8))
        stats["ppo/value_mean"] = float(masked_mean(flat_v, flat_m))

    # ============================================================= update
    def micro_batch_loss(self, mb: MicroBatch, den: Denominators) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """The policy loss of one micro-batch: its share of the step's loss."""
        tc, f = self.tc, mb.fields
        logp, entropy = forward_logprobs(self.model, mb, self.cfg.policy.temperature, with_entropy=True)
        if tc.entropy_coef == 0:
            entropy = entropy.detach()
        pg, clip = policy_loss(logp, f["old_logp"], f["adv"], clip_low=tc.clip_eps_low, clip_high=tc.clip_eps_high,
                               dual_clip=tc.dual_clip, is_weight=f.get("is_weight"))
        loss_tok = pg - tc.entropy_coef * entropy
        if self.ref is not None and not tc.kl_in_reward:
            loss_tok = loss_tok + tc.kl_coef * kl_estimate(logp, f["ref_logp"], tc.kl_estimator)
        loss = aggregate(loss_tok, mb.mask, tc.loss_agg, den)
        m = mb.mask
        stats = {k: (v * m).sum() for k, v in clip.items() if k != "ratio"}
        stats["entropy"] = (entropy.detach() * m).sum()
        # k3 estimate of KL(pi_old || pi_new): how far this update moved the policy
        stats["kl_update"] = (kl_estimate(f["old_logp"], logp.detach(), "k3") * m).sum()
        if self.ref is not None:
            stats["kl_ref_now"] = (kl_estimate(logp.detach(), f["ref_logp"], tc.kl_estimator) * m).sum()
        stats["pg_loss"] = (pg.detach() * m).sum()
        return loss, stats

    def _critic_loss(self, mb: MicroBatch, den: Denominators) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
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
                        vloss, vst = self._critic_loss(mb, den)
                        loss = loss + vloss
                        st.update(vst)
                    loss.backward()
                    n_micro += 1
                    sums["loss"] += float(loss.detach())
                    for k, v in st.items():
                        sums[k] += float(v)
                tokens_total += local_tokens
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
            "grad_norm": _mean(grad_norms),
            "lr": lr,
            "batching/padding_fraction": _mean(pad_fracs),
            "batching/micro_batches": n_micro,
            "time/update": time.perf_counter() - t0,
        }
        if tc.dual_clip is not None:
            out["clip/dual_fraction"] = sums["clip_dual"] / n_tok
        if self.ref is not None:
            out["kl/ref_after"] = sums["kl_ref_now"] / n_tok
        if self.critic is not None:
            out["ppo/value_loss"] = sums["value_loss"] / n_tok
            out["ppo/value_clip_fraction"] = sums["value_clip"] / n_tok
        return out

    # =============================================================== eval
    def evaluate(self, step: int) -> dict[str, float]:
        """Held-out eval: the first ``eval_tasks`` held-out tasks of every
        environment (sharded over ranks), ``eval_samples`` samples each at
        ``eval_temperature`` (one when greedy). Returns
        ``heldout/<env>/reward/mean`` per environment,
        ``heldout/reward/mean`` (weighted by the mixture's probabilities, as
        the training reward is) and ``heldout/reward/macro_mean`` (unweighted)."""
        t0 = time.perf_counter()
        by_entry: dict[str, list[EpisodeSpec]] = {}
        k = 1 if self.tc.eval_temperature == 0 else max(1, self.tc.eval_samples)
        for name, e in self.entries.items():
            n = min(self.tc.eval_tasks if e.eval_tasks is None else e.eval_tasks, self._heldout_size(name))
            idx = range(self.dist.rank, n, self.dist.world_size)
            by_entry[name] = heldout_plan(e.id, idx, seed=self.tc.seed, samples=k,
                                          group_id=lambda i, name=name: f"eval-{name}-{i}", entry=name)
        policy = self._eval_policy()
        gen = getattr(policy, "generator", None)
        if gen is not None:
            gen.manual_seed(int(step_rng(self.tc.seed, "eval", step, self.dist.rank).getrandbits(62)))
        stats = RolloutStats()
        try:
            trajs = run_sync(self._collect(by_entry, "heldout", self._sampling(-1, greedy=True), stats, policy))
        finally:
            if policy is not self.policy:
                policy.close()
        name_of = {s.group_id: n for n, specs in by_entry.items() for s in specs}
        sums: dict[str, list[float]] = {n: [0.0, 0.0] for n in self.entries}
        for t in trajs:
            if t.ok:
                acc = sums[name_of[t.group_id]]
                acc[0] += t.reward
                acc[1] += 1
        names = list(self.entries)
        flat = self.dist.all_reduce_sum([v for n in names for v in sums[n]])
        out, weighted, weight = {}, 0.0, 0.0
        for i, n in enumerate(names):
            total, count = flat[2 * i], flat[2 * i + 1]
            if count:
                out[f"heldout/{self.keys[n]}/reward/mean"] = total / count
                weighted += self.probs[n] * total / count
                weight += self.probs[n]
        if weight:
            # the held-out twin of reward/mean: envs weighted as the mixture draws them
            out["heldout/reward/mean"] = weighted / weight
            out["heldout/reward/macro_mean"] = _mean([v for k, v in out.items() if k.endswith("/reward/mean")])
        out["time/eval"] = time.perf_counter() - t0
        if self.dist.is_main and self.cfg.logging.save_trajectories:
            write_jsonl(trajs, self.run_dir / "trajectories" / f"heldout_step_{step:06d}.jsonl")
        return out

    def _heldout_size(self, name: str) -> int:
        """Tasks in an env's held-out split (bundled datasets can be small)."""
        if name not in self._heldout_sizes:
            entry = self.entries[name]
            env = gym_llm.make(entry.id, split="heldout", seed=self.tc.seed, **self._env_kwargs(name, "heldout"))
            self._heldout_sizes[name] = env.unwrapped.num_tasks
            env.close()
        return self._heldout_sizes[name]

    def _eval_policy(self) -> Any:
        """The synchronous policy, or, while the async producer owns it, an HF
        policy over the training model (whose weights are current and idle
        between updates)."""
        if not self.tc.async_rollout:
            return self.policy
        from gym_llm.policies import make_policy

        return make_policy("hf", self.model, self.tokenizer, seed=self.tc.seed,
                           max_batch_size=self.cfg.policy.max_batch_size)

    def gen_model_sync(self) -> None:
        """Async HF: copy the trainer's weights into the generation copy."""
        gen = getattr(self, "gen_model", None)
        if gen is not None:
            with torch.no_grad():
                for dst, src in zip(gen.parameters(), self.model.parameters(), strict=True):
                    dst.copy_(src)

    # ======================================================== checkpoints
    def save(self, step: int) -> Path | None:
        """Checkpoint ``step`` (rank 0 writes; everyone waits)."""
        path = None
        if self.dist.is_main:
            state = {
                "step": step,
                "optimizer": self.opt.state_dict(),
                "scheduler": self.sched.state_dict(),
                "curriculum": self.curriculum.state_dict(),
                "config": _plain(self.cfg),
            }
            if self.critic is not None:
                state["critic"] = self.critic.state_dict()
                state["critic_optimizer"] = self.critic_opt.state_dict()
            path = save_checkpoint(self.ckpt_root, step, self._write_model, state,
                                   meta={"model": self.cfg.model.name}, keep_last=self.tc.keep_last)
        self.dist.barrier()
        return path

    def _write_model(self, out: Path) -> None:
        """``save_pretrained`` of the policy and tokenizer; with LoRA, the
        adapter here and the merged full model in ``merged/`` (what
        ``gym-llm-eval checkpoint=...`` and inference engines load)."""
        self.model.save_pretrained(str(out))
        self.tokenizer.save_pretrained(str(out))
        if self.cfg.model.lora.enabled:
            self._merged_copy().save_pretrained(str(out / "merged"))
            self.tokenizer.save_pretrained(str(out / "merged"))

    def _merged_copy(self) -> torch.nn.Module:
        import copy

        return copy.deepcopy(self.model).merge_and_unload()

    def save_final_model(self) -> Path:
        """``<run_dir>/model``: the trained policy (LoRA merged) and tokenizer,
        loadable with ``from_pretrained`` / ``gym-llm-eval model.path=...``."""
        out = self.run_dir / "model"
        if self.dist.is_main:
            model = self._merged_copy() if self.cfg.model.lora.enabled else self.model
            model.save_pretrained(str(out))
            self.tokenizer.save_pretrained(str(out))
            (out / "gym_llm_train.json").write_text(json.dumps(
                {"step": self.step, "model": self.cfg.model.name, "mixture": self.cfg.mixture.name}, indent=1))
        self.dist.barrier()
        return out

    # =========================================================== the loop
    def warm_start(self) -> SFTReport:
        """SFT on verified reference answers of the train splits."""
        sc = self.tc.sft
        t0 = time.perf_counter()
        eos = [self.tokenizer.convert_tokens_to_ids(self.tokenizer.eos_token)]
        samples, skipped, sources = reference_examples(
            self.entries, self.chat, eos, sc.examples_per_env, seed=self.tc.seed,
            max_tokens=sc.max_seq_tokens)
        # batches mix the envs as the rollouts will: env share = its mixture probability
        counts = Counter(sources)
        weights = [self.probs[n] / counts[n] for n in sources]
        log.info("warm start: %d verified reference answers (%.1fs); skipped per env: %s",
                 len(samples), time.perf_counter() - t0, skipped)
        rank_seed = self.tc.seed * 7 + self.dist.rank
        all_reduce = None
        if self.dist.enabled:
            import torch.distributed as tdist

            def all_reduce(g: torch.Tensor) -> torch.Tensor:
                tdist.all_reduce(g)
                g /= self.dist.world_size
                return g

        steps, loss = sft_train(self.model, samples, sc, lr=self.sft_lr, pad_id=self.pad_id, seed=rank_seed,
                                token_budget=self.tc.micro_batch_tokens, all_reduce=all_reduce, weights=weights,
                                optimizer=self.opt if sc.keep_optimizer_state else None,
                                log=lambda i, m: log.info("warm start step %d: %s", i, _fmt(m)))
        self._sync_engine()
        return SFTReport(len(samples), skipped, steps, loss, time.perf_counter() - t0)

    def _write_trajectories(self, batch: Batch, step: int) -> None:
        lc = self.cfg.logging
        if self.dist.is_main and lc.save_trajectories and step % max(lc.trajectories_every, 1) == 0:
            write_jsonl(batch.trajectories_all, self.run_dir / "trajectories" / f"step_{step:06d}.jsonl")

    def _steps(self) -> Iterator[tuple[int, Batch, dict[str, float]]]:
        """Batches in step order, synchronous or through the async pipeline."""
        first, last = self.step + 1, self.tc.total_steps
        if not self.tc.async_rollout:
            for step in range(first, last + 1):
                yield step, self.rollout(step), {}
            return
        if self.cfg.policy.backend == "hf":
            def apply(weights):
                with torch.no_grad():
                    for dst, src in zip(self.gen_model.parameters(), weights, strict=True):
                        dst.copy_(src)
        else:
            apply = self.policy.update_weights
        self.gen_model_sync()
        pipe = AsyncRollout(self.rollout, apply, first_step=first, last_step=last, version=self.step,
                            max_staleness=self.tc.max_staleness)
        self._pipe = pipe
        try:
            for step in range(first, last + 1):
                produced, waited = pipe.get(step)
                produced.payload.version = produced.version
                yield step, produced.payload, {
                    "async/staleness": (step - 1) - produced.version,
                    "async/trainer_idle_s": waited,
                    "async/rollout_idle_s": produced.rollout_idle_s,
                }
        finally:
            pipe.close()
            self._pipe = None

    def _publish(self, step: int) -> float:
        pipe = getattr(self, "_pipe", None)
        if pipe is None:
            return self._sync_engine()
        t0 = time.perf_counter()
        if self.cfg.policy.backend == "hf":
            weights = [p.detach().clone() for p in self.model.parameters()]
        else:
            weights = merged_state_dict(self.model)
        pipe.publish(step, weights)
        return time.perf_counter() - t0

    def train(self) -> list[dict[str, Any]]:
        """Warm start (fresh runs), eval at step 0, then RL to ``total_steps``.
        Returns the logged rows of this process's run."""
        tc = self.tc
        rows: list[dict[str, Any]] = []

        def record(step: int, metrics: dict[str, Any]) -> None:
            rows.append({"step": step, **metrics})
            self.logger.log(step, metrics)

        try:
            if self.state is None:
                first: dict[str, Any] = {}
                if tc.sft.enabled:
                    first.update(self.warm_start().metrics())
                if tc.eval_every > 0:
                    first.update(self.evaluate(0))
                if first:
                    record(0, first)
                    log.info("step 0: %s", _fmt(first))
                if tc.save_every > 0:
                    self.save(0)
            t_last = time.perf_counter()
            for step, batch, extra in self._steps():
                self._write_trajectories(batch, step)
                metrics = dict(batch.stats)
                metrics.update(extra)
                metrics.update(self.prepare(batch))
                if batch.samples or self.dist.enabled:
                    metrics.update(self.update(batch, step))
                metrics["time/sync"] = self._publish(step)
                self.step = step
                metrics["kl"] = metrics.get("kl/ref", metrics.get("kl/update"))
                if tc.eval_every > 0 and (step % tc.eval_every == 0 or step == tc.total_steps):
                    metrics.update(self.evaluate(step))
                if self.dist.enabled and (step % max(tc.eval_every, 1) == 0 or step == tc.total_steps):
                    metrics["dist/param_divergence"] = self.dist.param_divergence(self.model)
                now = time.perf_counter()
                metrics["time/step"] = now - t_last
                t_last = now
                # the row first: a checkpoint of step t implies metrics up to t are on disk
                record(step, metrics)
                log.info("step %d: %s", step, _fmt(
                    {k: v for k, v in metrics.items() if k.startswith(("reward/mean", "heldout/", "time/", "kl"))}))
                if tc.save_every > 0 and (step % tc.save_every == 0 or step == tc.total_steps):
                    self.save(step)
            self.save_final_model()
        finally:
            self.logger.close()
            for vec in self._vecs.values():
                vec.close()
            self.policy.close()
        return rows


def _fmt(metrics: dict[str, Any]) -> str:
    return " ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in metrics.items())


def _mean(xs: Sequence[float]) -> float:
    xs = [x for x in xs if x is not None]
    return float(sum(xs) / len(xs)) if xs else 0.0


def _plain(cfg: RunConfig) -> dict[str, Any]:
    return json.loads(json.dumps(asdict(cfg), default=str))
