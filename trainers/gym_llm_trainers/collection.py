"""Collection: what a step trains on, and the held-out episodes.

Each step plans its groups over the mixture its
:class:`~gym_llm.runtime.schedule.Schedule` gives for the step (the run's
:class:`~gym_llm.runtime.mixture.Mixture` itself under ``schedule=static``;
counter based: the draw is a function of ``(seed, "plan", step, round,
rank)``, so a resumed run draws what the uninterrupted run drew), collects
them through one vector env per split over that mixture (each entry made with
its own kwargs; the curriculum's difficulty on the train split; in this
process or, with ``env_workers=ray``, in Ray actors), keeps the
groups worth training on (dynamic sampling drops those with no reward
variance and refills), reports the rollout metrics and what the schedule
learns from (each env's :class:`~gym_llm.runtime.schedule.EnvObservation`).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import torch
from gym_llm_sandbox.aio import run_sync

import gym_llm
from gym_llm.envs.registry import UnknownEnvError, with_sandbox
from gym_llm.envs.taskref import TaskRef
from gym_llm.runtime.distributed.workers import vec_kwargs
from gym_llm.runtime.mixture import EpisodeSpec, Mixture, heldout_plan
from gym_llm.runtime.policies.base import SamplingParams
from gym_llm.runtime.rollout import RolloutStats, Trajectory, acollect
from gym_llm.runtime.schedule import EnvObservation, Schedule, StaticSchedule, observe
from gym_llm.runtime.vector import VectorLLMEnv, is_env_lost

from .advantages import trained_rewards, was_cut
from .batching import Sample
from .config import EnvEntry, PolicyConfig, RunConfig
from .curriculum import Curriculum
from .distributed import DistContext
from .metrics import mean
from .preflight import cannot_start

__all__ = ["Batch", "RolloutCollector", "run_entries", "zero_variance_groups", "rollout_sampling",
           "heldout_sampling", "nothing_trained"]


def run_entries(cfg: RunConfig) -> dict[str, EnvEntry]:
    """The mixture entries of a run, as their environments are made (train,
    held-out and the warm start's alike): those of weight > 0, in declaration
    order, and every one whose environment takes a ``sandbox`` kwarg
    (the code envs, math/PythonTool, tool/Shell) with the run's ``sandbox``
    config in its kwargs by :func:`gym_llm.envs.registry.with_sandbox` (null values
    dropped; an entry that sets ``sandbox`` itself keeps its own). An id no
    environment is registered under raises a ``ConfigError`` naming every
    such entry's key (``mixture.envs.<name>.id``) and the closest ids."""
    probabilities = cfg.mixture.probabilities()
    entries, unknown = {}, []
    for k, e in cfg.mixture.entries().items():
        if k not in probabilities:
            continue
        try:
            entries[k] = dataclasses.replace(e, kwargs=with_sandbox(e.id, e.kwargs, cfg.sandbox))
        except UnknownEnvError as error:
            unknown.append(f"mixture.envs.{k}.id: {error}")
    if unknown:
        raise cannot_start(unknown)
    return entries


class Batch:
    """One step's collection: ``trajectories``, the episodes it trains on
    (the kept groups' usable members); ``trajectories_all``, every episode
    collected (dropped groups, errors and refill rounds included); the rollout
    ``stats``; the weight ``version`` that generated it (async); the
    trainer-side ``samples`` of ``trajectories`` once prepared;
    ``episodes``, group id -> the :class:`~gym_llm.envs.taskref.TaskRef` its
    members played, what replays a group's task (the strict grader); and what
    the schedule learns from: ``observed``, entry -> its
    :class:`~gym_llm.runtime.schedule.EnvObservation` (every group sampled,
    refills included), ``steered`` (entries the curriculum is moving) and
    ``unsolved`` (entries at their hardest and unsolved), as of this step."""

    def __init__(self, trajectories: list[Trajectory], stats: dict[str, float], version: int = 0,
                 trajectories_all: list[Trajectory] | None = None):
        self.trajectories = trajectories
        self.trajectories_all: list[Trajectory] = list(trajectories if trajectories_all is None else trajectories_all)
        self.stats = stats
        self.version = version
        self.samples: list[Sample] = []
        self.episodes: dict[str, TaskRef] = {}
        self.observed: dict[str, EnvObservation] = {}
        self.steered: list[str] = []
        self.unsolved: list[str] = []


def zero_variance_groups(group_ids: Sequence[Any], rewards: Sequence[float], tol: float = 1e-8) -> set:
    """Groups whose rewards are all equal (within ``tol``): their GRPO
    advantages are all zero, so they carry no learning signal."""
    by_group: dict[Any, list[float]] = {}
    for g, r in zip(group_ids, rewards, strict=True):
        by_group.setdefault(g, []).append(r)
    return {g for g, rs in by_group.items() if max(rs) - min(rs) <= tol}


def nothing_trained(stats: dict[str, float]) -> str | None:
    """Why a step whose rollout metrics are ``stats`` trains on nothing
    (``trajectories/trained`` 0: no update happens), or ``None`` when it
    trains on something. The trainer prints it as a warning, since such a
    step otherwise passes like any other."""
    if stats.get("trajectories/trained", 1) > 0:
        return None
    collected, sampled, kept = (int(stats.get(k, 0)) for k in ("trajectories/collected", "groups/sampled",
                                                                 "groups/kept"))
    if not collected:
        return "no episode was collected"
    if not kept:
        return (f"groups/kept 0: in each of the {sampled} sampled group(s) every completion got the same reward, "
                "so no advantage is non-zero (tasks too hard or too easy for the policy? the curriculum, "
                "trainer.group_size or trainer.max_refill_rounds can help)")
    return (f"trajectories/trained 0: the {kept} kept group(s) had no usable episode "
            f"({int(stats.get('trajectories/error', 0))} errors, {int(stats.get('trajectories/cut_turn', 0))} "
            "cut turns of the collected ones; see trainer.truncated_turns)")


def rollout_sampling(pc: PolicyConfig, seed: int) -> SamplingParams:
    """Sampling of training rollouts: ``policy.temperature`` and ``policy.top_p``.

    ``seed`` (``trainer.seed``) seeds every request on its own: the rollout
    engine hashes it with the group id (which names the step, round and rank),
    the sample index and the turn. What an episode samples is then a function
    of the run's seed and its place in the plan, not of the order episodes
    finish in, so a run repeats itself (bit for bit where the backend's
    batches do, e.g. HF with ``policy.max_batch_size=1``) and a resumed run
    samples what the uninterrupted one sampled."""
    return SamplingParams(temperature=pc.temperature, top_p=pc.top_p, max_new_tokens=pc.max_new_tokens, seed=seed)


def heldout_sampling(pc: PolicyConfig, temperature: float, seed: int) -> SamplingParams:
    """Sampling of held-out evals: ``temperature`` (``trainer.eval_temperature``;
    0 is greedy), no nucleus truncation, each request seeded as in
    :func:`rollout_sampling`. A held-out group id names the entry and the task,
    not the step, so every eval of a run samples task ``i``'s sample ``j`` with
    the same seeds: the curve moves with the model, not with the draws."""
    return SamplingParams(temperature=temperature, top_p=1.0, max_new_tokens=pc.max_new_tokens, seed=seed)


class RolloutCollector:
    """Plans, collects and filters the episodes of a run (see the module doc).

    ``entries``: the run's mixture entries (weight > 0), ``mixture`` their
    :class:`~gym_llm.runtime.mixture.Mixture`; ``curriculum`` moves their
    difficulty from the episodes collected; ``schedule`` gives each step's
    mixture (default: the mixture itself at every step).
    """

    def __init__(self, cfg: RunConfig, entries: dict[str, EnvEntry], mixture: Mixture, curriculum: Curriculum,
                 dist: DistContext, schedule: Schedule | None = None):
        self.cfg, self.tc = cfg, cfg.trainer
        self.entries, self.mixture, self.curriculum, self.dist = entries, mixture, curriculum, dist
        self.schedule: Schedule = schedule or StaticSchedule(mixture)
        self.keys = mixture.metric_keys()
        self._vecs: dict[str, VectorLLMEnv] = {}  # split -> the vector env over the mixture
        self._vec_kwargs: dict[str, dict[str, dict[str, Any]]] = {}  # split -> entry -> its make kwargs
        self._heldout_sizes: dict[str, int] = {}

    # ========================================================== environments
    def env_kwargs(self, name: str, split: str) -> dict[str, Any]:
        """``make`` kwargs of a mixture entry: held-out overrides, or the
        curriculum's difficulty on the train split."""
        entry = self.entries[name]
        kwargs = dict(entry.kwargs)
        if split == "heldout":
            kwargs.update(entry.heldout_kwargs)
        elif "difficulty" in kwargs or self.tc.curriculum.enabled:
            kwargs["difficulty"] = self.curriculum.difficulty(name)
        return kwargs

    def vec(self, split: str, slots: int) -> VectorLLMEnv:
        """The run's vector env of ``split`` over the whole mixture, each entry
        made with its own kwargs (:meth:`env_kwargs`); rebuilt larger when a
        collection needs more slots than it has. ``env_workers`` decides
        where its instances run."""
        vec = self._vecs.get(split)
        if vec is None or vec.num_envs < slots:
            if vec is not None:
                vec.close()
            kwargs = {name: self.env_kwargs(name, split) for name in self.entries}
            vec = gym_llm.make_vec(self.mixture, max(slots, 1), seed=self.tc.seed + 7919 * self.dist.rank,
                                   split=split, env_kwargs=kwargs,
                                   **vec_kwargs(dataclasses.asdict(self.cfg.env_workers), self.cfg.imports))
            self._vecs[split] = vec
            self._vec_kwargs[split] = kwargs
        return vec

    def heldout_size(self, name: str) -> int:
        """Tasks in an entry's held-out split (bundled datasets can be small)."""
        if name not in self._heldout_sizes:
            env = gym_llm.make(self.entries[name].id, split="heldout", seed=self.tc.seed,
                               **self.env_kwargs(name, "heldout"))
            self._heldout_sizes[name] = env.unwrapped.num_tasks
            env.close()
        return self._heldout_sizes[name]

    def close(self) -> None:
        for vec in self._vecs.values():
            vec.close()

    # ============================================================= collecting
    async def collect(self, by_entry: dict[str, list[EpisodeSpec]], split: str, sampling: SamplingParams,
                      policy: Any, stats: RolloutStats) -> list[Trajectory]:
        """Run the planned episodes of each entry on ``split``."""
        # One environment at a time: a decoding batch then holds prompts of
        # similar length (arithmetic's 50 tokens are not padded to a tool
        # schema's 700), which matters far more than overlapping the envs.
        out: list[Trajectory] = []
        vec = self.vec(split, max((len(specs) for specs in by_entry.values()), default=1))
        for name, specs in sorted(by_entry.items()):
            kwargs = self.env_kwargs(name, split)
            if kwargs != self._vec_kwargs[split][name]:  # the curriculum moved the difficulty
                vec.set_entry_kwargs(name, kwargs)
                self._vec_kwargs[split][name] = kwargs
            out += await acollect(policy, vec, episodes=specs, sampling=sampling,
                                  max_tokens=self.cfg.policy.max_episode_tokens, stats=stats)
        return out

    def plan(self, step: int, rnd: int, n_groups: int) -> dict[str, list[EpisodeSpec]]:
        """Round ``rnd`` of step ``step``: ``n_groups`` groups by mixture entry,
        drawn from the schedule's mixture of the step."""
        rank = self.dist.rank
        specs = self.schedule.mixture(step).plan_groups(n_groups, self.tc.group_size, seed=self.tc.seed,
                                         keys=("plan", step, rnd, rank), group_prefix=f"s{step}-r{rnd}-k{rank}-g",
                                         split="train", kwargs={n: self.env_kwargs(n, "train") for n in self.entries})
        by_entry: dict[str, list[EpisodeSpec]] = defaultdict(list)
        for spec in specs:
            by_entry[spec.entry].append(spec)
        return by_entry

    def heldout_tasks(self, name: str) -> int:
        """Held-out tasks of entry ``name`` per eval: its ``eval_tasks`` (or
        the trainer's), at most its held-out split's size."""
        e = self.entries[name]
        return min(self.tc.eval_tasks if e.eval_tasks is None else e.eval_tasks, self.heldout_size(name))

    def heldout_samples(self) -> int:
        """Samples per held-out task: ``eval_samples`` (one when greedy)."""
        return 1 if self.tc.eval_temperature == 0 else max(1, self.tc.eval_samples)

    def heldout_plan(self, names: list[str] | None = None) -> dict[str, list[EpisodeSpec]]:
        """The held-out episodes of an eval, by entry (``names``, default
        all): the first :meth:`heldout_tasks` held-out tasks of each (sharded
        over ranks), :meth:`heldout_samples` samples each."""
        tc, dist = self.tc, self.dist
        k = self.heldout_samples()
        by_entry: dict[str, list[EpisodeSpec]] = {}
        for name in self.entries if names is None else names:
            e, n = self.entries[name], self.heldout_tasks(name)
            by_entry[name] = heldout_plan(e.id, range(dist.rank, n, dist.world_size), seed=tc.seed, samples=k,
                                          group_id=lambda i, name=name: f"eval-{name}-{i}", entry=name,
                                          split="heldout", kwargs=self.env_kwargs(name, "heldout"))
        return by_entry

    def _usable(self, members: list[Trajectory]) -> list[Trajectory]:
        """The members of a group that can be trained on: no error, some
        tokens generated, and not cut at the token limit under ``truncated_turns=mask``."""
        mask_cut = self.tc.truncated_turns == "mask"
        return [t for t in members if t.ok and t.num_generated_tokens > 0 and not (mask_cut and was_cut(t))]

    def rollout(self, step: int, policy: Any) -> Batch:
        """Collect the step's groups; with dynamic sampling, drop groups with
        no reward variance and refill (at most ``max_refill_rounds`` more rounds)."""
        tc = self.tc
        t0 = time.perf_counter()
        stats = RolloutStats()
        everything: list[Trajectory] = []
        kept: dict[str, list[Trajectory]] = {}
        sampled = zero_var = 0
        names: dict[str, str] = {}
        episodes: dict[str, TaskRef] = {}
        outcomes: list[tuple[str, list[float]]] = []  # (entry, the rewards GRPO compares) of every group
        need, rnd = tc.num_groups, 0
        while True:
            plan = self.plan(step, rnd, need)
            for name, specs in plan.items():
                for s in specs:
                    names[s.group_id] = name
                    episodes[s.group_id] = s.task
            trajs = run_sync(self.collect(plan, "train", rollout_sampling(self.cfg.policy, tc.seed), policy, stats))
            everything += trajs
            groups: dict[str, list[Trajectory]] = defaultdict(list)
            for t in trajs:
                groups[t.group_id].append(t)
            sampled += len(groups)
            for gid, members in groups.items():
                good = self._usable(members)
                trained = [trained_rewards(t, tc.truncated_turns)[1] for t in good]
                outcomes.append((names[gid], trained))
                if tc.algorithm == "grpo" and len(good) < 2:
                    continue
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
        batch = Batch([t for g in chosen for t in kept[g]], {}, trajectories_all=everything)
        batch.episodes = episodes
        batch.observed = observe(outcomes)
        for t in everything:
            t.info["group_env"] = names.get(t.group_id)
        batch.stats = self._metrics(everything, stats, t0, trained=len(batch.trajectories), sampled=sampled,
                                    kept=len(chosen), zero_var=zero_var, rounds=rnd)
        faults = getattr(self._vecs.get("train"), "fault_stats", None)
        if faults is not None:  # env_workers=ray: the run's worker faults so far (cumulative)
            batch.stats.update({f"env_workers/{k}": float(v) for k, v in dataclasses.asdict(faults).items()})
        by_env: dict[str, list[float]] = defaultdict(list)
        for t in everything:
            if t.ok:
                by_env[t.info["group_env"]].append(t.reward)
        for name, rs in by_env.items():
            batch.stats[f"reward/{self.keys[name]}/mean"] = mean(rs)
        if tc.curriculum.enabled:
            for name, rs in by_env.items():
                self.curriculum.update(name, rs)
            batch.stats.update(self.curriculum.metrics())
            batch.steered = [n for n in self.entries if self.curriculum.steering(n)]
            batch.unsolved = [n for n in self.entries
                              if self.curriculum.unsolved_at_hardest(n, self.cfg.schedule.unsolved_success)]
        return batch

    @staticmethod
    def _metrics(everything: list[Trajectory], stats: RolloutStats, t0: float, *, trained: int, sampled: int,
                 kept: int, zero_var: int, rounds: int) -> dict[str, float]:
        """Rewards, errors, lengths and throughput of every episode collected,
        and what the group filter kept of them."""
        rewards = [t.reward for t in everything if t.ok]
        elapsed = max(time.perf_counter() - t0, 1e-9)
        return {
            "reward/mean": mean(rewards),
            "reward/std": float(torch.tensor(rewards).std()) if len(rewards) > 1 else 0.0,
            "trajectories/collected": len(everything),
            "trajectories/trained": trained,
            "trajectories/error": sum(t.error is not None for t in everything),
            # episodes whose env worker was lost past the retry budget (env_workers=ray); part of error
            "trajectories/env_lost": sum(is_env_lost(t.error) for t in everything),
            "trajectories/reward_error": sum(t.reward_error is not None for t in everything),
            "trajectories/cut_turn": sum(was_cut(t) for t in everything),
            "groups/sampled": sampled,
            "groups/kept": kept,
            "groups/zero_variance_fraction": zero_var / max(sampled, 1),
            "rollout/rounds": rounds,
            "response_length/mean": mean([t.num_generated_tokens for t in everything]),
            "response_length/max": max([t.num_generated_tokens for t in everything], default=0),
            "episode_tokens/mean": mean([len(t.response_token_ids) for t in everything]),
            "turns/mean": mean([t.num_turns for t in everything]),
            "truncated_fraction": mean([float(t.truncated) for t in everything]),
            "time/rollout": elapsed,
            "throughput/tokens_per_s": stats.generated_tokens / elapsed,
            "throughput/completions_per_s": len(everything) / elapsed,
        }
