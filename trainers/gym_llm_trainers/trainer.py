"""The RL loop: the run's setup (model, resume, the parts below), the warm
start, held-out evals, checkpoints and :meth:`Trainer.train`.

One step::

    batch = collector.rollout(step)        # plan over the mixture, collect, drop flat groups, refill
    learner.prepare(batch)                 # ref / old log-probs, rewards, advantages (PPO: values, GAE)
    learner.update(batch, step)            # mu epochs x num_minibatches optimizer steps
    engine.sync()                          # vLLM gets the weights (async: published to the producer)

The parts, each in its module: :mod:`.collection` (:class:`RolloutCollector`,
:class:`Batch`), :mod:`.advantages` (pure functions),
:mod:`.update` (:class:`Learner`: the loss of a micro-batch,
:meth:`Learner.micro_batch_loss`, is one screen), :mod:`.generation`
(:class:`GenerationEngine`: HF, vLLM, async, LoRA), :mod:`.pipeline` (async).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import logging
import os
import signal
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch
from gym_llm_sandbox.aio import run_sync

from gym_llm.apps.hydra_app import Interrupted
from gym_llm.apps.report import try_write_report
from gym_llm.apps.runs import (
    CHECKPOINTS_DIR,
    MERGED_DIR,
    MODEL_DIR,
    checkpoint_name,
    trajectory_file,
)
from gym_llm.runtime.heldout import HeldoutCurves, env_metric, eval_subset, rotation
from gym_llm.runtime.mixture import Mixture
from gym_llm.runtime.rollout import ChatFormat, RolloutStats, write_jsonl
from gym_llm.runtime.schedule import (
    AdaptiveSchedule,
    EnvObservation,
    Schedule,
    StaticSchedule,
    schedule_metrics,
)

from .batching import MicroBatch
from .checkpoint import load_trainer_state, resolve_resume, save_checkpoint
from .collection import Batch, RolloutCollector, heldout_sampling, nothing_trained, run_entries
from .config import EnvEntry, RunConfig
from .curriculum import Curriculum
from .distributed import DistContext
from .generation import GenerationEngine, sampling_logprobs_are_the_trainers
from .losses import Denominators
from .metrics import MetricsLogger, mean
from .modeling import load_policy_model, load_tokenizer
from .monitoring import RunMonitor
from .pipeline import AsyncRollout
from .preflight import preflight
from .sft import SFTReport, reference_examples, sft_steps, sft_train
from .stopping import AlarmStop, StopOnSignal
from .update import Learner

__all__ = ["Trainer", "Batch", "make_schedule"]

log = logging.getLogger("gym_llm_trainers")


class Trainer:
    """GRPO / PPO over an environment mixture (see the module docstring).

    ``cfg`` is the whole run's :class:`~gym_llm_trainers.config.RunConfig`;
    ``run_dir`` receives metrics.jsonl, trajectories/, checkpoints/,
    tensorboard/, reward_curve.png, the final model in ``model/`` and
    ``report.html`` (:mod:`gym_llm.apps.report`, written when :meth:`train` ends,
    however it ends; a report failure is logged, never raised). A step's
    trajectories are written once its monitoring is done (hack signals and
    strict scores in them), and also when its update fails.
    :meth:`rollout`, :meth:`prepare`, :meth:`update` and :meth:`evaluate`
    run one piece of a step each (``trainer.rollout(1)`` and so on).
    """

    def __init__(self, cfg: RunConfig, run_dir: str | os.PathLike, dist: DistContext | None = None):
        self.cfg = cfg
        self.tc = tc = cfg.trainer
        self.run_dir = Path(run_dir)
        self.dist = dist or DistContext()
        self.device = self.dist.device
        self.ckpt_root = self.run_dir / CHECKPOINTS_DIR
        self.mixture = cfg.mixture.mixture()
        self.probs = self.mixture.probabilities
        #: weight-0 envs are not in the run; code-running ones get the run's sandbox config
        self.entries: dict[str, EnvEntry] = run_entries(cfg)
        # every env, dataset, the model path and the backend, before the model loads and the warm start
        for warning in preflight(cfg, self.entries):
            log.warning("preflight: %s", warning)
        torch.manual_seed(tc.seed)
        self.lr = tc.lr if tc.lr is not None else cfg.model.lr
        self.sft_lr = tc.sft.lr if tc.sft.lr is not None else cfg.model.sft_lr
        if tc.sft.epochs is None:
            tc.sft.epochs = cfg.model.sft_epochs
        self.recompute_old = bool(tc.recompute_old_logprobs or not sampling_logprobs_are_the_trainers(cfg))

        self.resume_from = resolve_resume(tc.resume, self.ckpt_root)
        self.state = load_trainer_state(self.resume_from) if self.resume_from else None
        self.tokenizer = load_tokenizer(cfg.model)
        self.pad_id = int(self.tokenizer.pad_token_id)
        self.chat = ChatFormat(self.tokenizer)
        self.model = self._load_model()
        self.learner = Learner(cfg, self.model, lr=self.lr, pad_id=self.pad_id, dist=self.dist,
                               entries=self.entries, recompute_old=self.recompute_old)
        self.opt, self.sched, self.ref = self.learner.opt, self.learner.sched, self.learner.ref
        self.critic, self.critic_opt = self.learner.critic, self.learner.critic_opt
        self.curriculum = Curriculum(tc.curriculum, {
            name: float(e.kwargs.get("difficulty", 0.0)) for name, e in self.entries.items()
        })
        self.monitor = RunMonitor(tc.monitoring, self.mixture.metric_keys(), seed=tc.seed, rank=self.dist.rank)
        self.schedule = make_schedule(cfg, self.mixture)
        mc = tc.monitoring
        self.heldout = HeldoutCurves([self.mixture.metric_keys()[n] for n in self.entries],
                                     threshold=mc.forgetting_threshold, window=mc.forgetting_window)
        self.forgetting_alerts: list = []  # the last eval's, for the loop's alarm
        self._rotation: list[list[str]] | None = None
        self.step = 0
        if self.state is not None:
            self._load_state(self.state)
        self.engine = GenerationEngine(cfg, self.model, self.tokenizer, self.dist, self.resume_from)
        self.collector = RolloutCollector(cfg, self.entries, self.mixture, self.curriculum, self.dist, self.schedule)
        self._pipe: AsyncRollout | None = None
        self.logger = MetricsLogger(
            self.run_dir, cfg.logging, enabled=self.dist.is_main,
            resume_step=self.step if self.state is not None else None,
            total_steps=tc.total_steps, run_config=_plain(cfg),
        )

    # ================================================================ setup
    def _load_model(self) -> torch.nn.Module:
        """The policy model: the configured one, or the resumed checkpoint's
        (with LoRA: the configured base and the checkpoint's adapters), the
        same on every rank."""
        cfg, resume = self.cfg, self.resume_from
        model_cfg = cfg.model
        if resume is not None and not cfg.model.lora.enabled:
            model_cfg = dataclasses.replace(cfg.model, path=str(resume / MODEL_DIR), tiny={})
        model = load_policy_model(model_cfg, self.device)
        if resume is not None and cfg.model.lora.enabled:
            from peft import set_peft_model_state_dict
            from safetensors.torch import load_file

            set_peft_model_state_dict(model, load_file(resume / MODEL_DIR / "adapter_model.safetensors"))
        self.dist.broadcast_parameters(model)
        return model

    def _load_state(self, state: dict[str, Any]) -> None:
        """Optimizers, schedule, curriculum, hack-alarm streaks, env schedule,
        held-out curves and step of a checkpoint."""
        self.opt.load_state_dict(state["optimizer"])
        self.sched.load_state_dict(state["scheduler"])
        self.curriculum.load_state_dict(state["curriculum"])
        self.monitor.alarm.load_state_dict(state.get("hack_alarm", {}))  # older checkpoints: fresh streaks
        self.schedule.load_state_dict(state.get("schedule", {}))  # older checkpoints: the prior
        self.heldout.load_state_dict(state.get("heldout", {}))
        if self.critic is not None:
            self.critic.load_state_dict(state["critic"])
            self.critic_opt.load_state_dict(state["critic_optimizer"])
        self.step = int(state["step"])

    @property
    def policy(self) -> Any:
        """The rollout policy (:attr:`GenerationEngine.policy`)."""
        return self.engine.policy

    # ============================================================ one step
    def rollout(self, step: int) -> Batch:
        """Collect step ``step``'s batch (:meth:`RolloutCollector.rollout`)."""
        return self.collector.rollout(step, self.engine.policy)

    def prepare(self, batch: Batch) -> dict[str, float]:
        """Samples and per-token fields of the batch (:meth:`Learner.prepare`)."""
        return self.learner.prepare(batch)

    def update(self, batch: Batch, step: int) -> dict[str, float]:
        """The step's optimizer steps (:meth:`Learner.update`)."""
        return self.learner.update(batch, step)

    def micro_batch_loss(self, mb: MicroBatch, den: Denominators) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """The policy loss of one micro-batch (:meth:`Learner.micro_batch_loss`)."""
        return self.learner.micro_batch_loss(mb, den)

    # =============================================================== eval
    def eval_entries(self, step: int) -> list[str]:
        """The entries the eval of step ``step`` covers: all, unless
        ``trainer.eval_budget`` is set and ``step`` is neither 0 nor the last;
        then the next chunk of the rotation (:mod:`gym_llm.runtime.heldout`)."""
        tc = self.tc
        if tc.eval_budget is None:
            return list(self.entries)
        if self._rotation is None:
            k = self.collector.heldout_samples()
            self._rotation = rotation({n: self.collector.heldout_tasks(n) * k for n in self.entries}, tc.eval_budget)
        index = step // max(tc.eval_every, 1) - 1  # the rotating evals: eval_every, 2 x eval_every, ...
        return eval_subset(self._rotation, index, full=step in (0, tc.total_steps))

    def evaluate(self, step: int) -> dict[str, float]:
        """Held-out eval of :meth:`eval_entries`: the first ``eval_tasks``
        held-out tasks of each environment (sharded over ranks),
        ``eval_samples`` samples each at ``eval_temperature`` (one when
        greedy). Returns ``heldout/<env>/reward/mean`` per environment
        evaluated, ``heldout/reward/mean`` (weighted by the mixture's
        probabilities, as the training reward is) and
        ``heldout/reward/macro_mean`` (unweighted) over every env's latest
        held-out value, ``heldout_domain/<domain>/reward/mean``, the
        forgetting drops (:class:`~gym_llm.runtime.heldout.HeldoutCurves`)
        and ``forgetting/alerts``; the alerts themselves are left in
        :attr:`forgetting_alerts`."""
        t0 = time.perf_counter()
        by_entry = self.collector.heldout_plan(self.eval_entries(step))
        sampling = heldout_sampling(self.cfg.policy, self.tc.eval_temperature, self.tc.seed)
        with self.engine.eval_policy() as policy:
            trajs = run_sync(self.collector.collect(by_entry, "heldout", sampling, policy, RolloutStats()))
        name_of = {s.group_id: n for n, specs in by_entry.items() for s in specs}
        sums: dict[str, list[float]] = {n: [0.0, 0.0] for n in by_entry}
        for t in trajs:
            if t.ok:
                acc = sums[name_of[t.group_id]]
                acc[0] += t.reward
                acc[1] += 1
        names = list(by_entry)
        flat = self.dist.all_reduce_sum([v for n in names for v in sums[n]])
        keys = self.mixture.metric_keys()
        fresh = {keys[n]: flat[2 * i] / flat[2 * i + 1] for i, n in enumerate(names) if flat[2 * i + 1]}
        out: dict[str, float] = {env_metric(k): v for k, v in fresh.items()}
        curves, alerts = self.heldout.record(fresh)
        self.forgetting_alerts = alerts if self.tc.monitoring.forgetting != "off" else []
        latest = self.heldout.latest()  # an env this eval skipped counts with its last value
        weighted = [(self.probs[n], latest[keys[n]]) for n in self.entries if keys[n] in latest]
        if weighted:
            # the held-out twin of reward/mean: envs weighted as the mixture draws them
            out["heldout/reward/mean"] = sum(p * v for p, v in weighted) / sum(p for p, _ in weighted)
            out["heldout/reward/macro_mean"] = mean(latest.values())
        out.update(curves)
        out["forgetting/alerts"] = len(self.forgetting_alerts)
        if self.tc.eval_budget is not None:
            out["heldout/envs"] = len(fresh)
            out["heldout/rotation"] = len(self._rotation or [])
        out["time/eval"] = time.perf_counter() - t0
        if self.dist.is_main and self.cfg.logging.save_trajectories:
            write_jsonl(trajs, trajectory_file(self.run_dir, step, heldout=True))
        return out

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
                "hack_alarm": self.monitor.alarm.state_dict(),
                "schedule": self.schedule.state_dict(),
                "heldout": self.heldout.state_dict(),
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
            self._merged_copy().save_pretrained(str(out / MERGED_DIR))
            self.tokenizer.save_pretrained(str(out / MERGED_DIR))

    def _merged_copy(self) -> torch.nn.Module:
        return copy.deepcopy(self.model).merge_and_unload()

    def save_final_model(self) -> Path:
        """``<run_dir>/model``: the trained policy (LoRA merged) and tokenizer,
        loadable with ``from_pretrained`` / ``gym-llm-eval model.path=...``."""
        out = self.run_dir / MODEL_DIR
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
        bar = self.logger.phase_progress("warm start", sft_steps(len(samples), sc))
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
                                log=lambda i, m: log.info("warm start step %d: %s", i, _fmt(m)),
                                progress=lambda done, total, loss: bar(done, f"loss {loss:.3f}"))
        self.engine.sync()
        return SFTReport(len(samples), skipped, steps, loss, time.perf_counter() - t0)

    def _write_trajectories(self, batch: Batch, step: int) -> None:
        lc = self.cfg.logging
        if self.dist.is_main and lc.save_trajectories and step % max(lc.trajectories_every, 1) == 0:
            write_jsonl(batch.trajectories_all, trajectory_file(self.run_dir, step))

    def _keep_trajectories(self, batch: Batch, step: int) -> None:
        """After step ``step`` failed (its update, sync or monitoring raised):
        wait for its strict grading, so no thread writes to the records while
        they are saved and they carry what it scored, then write the step's
        trajectories. Never raises: the step's own error is the one to see."""
        try:
            self.monitor.finish(batch)
        except Exception as e:
            log.warning("step %d: strict grading of the failed step did not finish: %s: %s", step,
                        type(e).__name__, e)
        try:
            self._write_trajectories(batch, step)
        except Exception as e:
            log.warning("step %d: trajectories of the failed step not written: %s: %s", step, type(e).__name__, e)

    def _steps(self) -> Iterator[tuple[int, Batch, dict[str, float]]]:
        """Batches in step order, synchronous or through the async pipeline."""
        first, last = self.step + 1, self.tc.total_steps
        if not self.tc.async_rollout:
            for step in range(first, last + 1):
                yield step, self.rollout(step), {}
            return
        # the policy is current here: made after the resume, synced after the warm start
        pipe = AsyncRollout(self.rollout, self.engine.load, first_step=first, last_step=last, version=self.step,
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
        """After an update: sync the policy, or publish the weights to the
        async producer (which applies them between batches). Returns seconds."""
        if self._pipe is None:
            return self.engine.sync()
        t0 = time.perf_counter()
        self._pipe.publish(step, self.engine.snapshot())
        return time.perf_counter() - t0

    def _monitor(self, batch: Batch, metrics: dict[str, Any], stop: StopOnSignal) -> None:
        """The step's hack fractions, strict scores and gap into ``metrics``;
        each new alert is logged, and with ``alarm=stop`` asks ``stop`` for a
        checkpoint-then-exit after this step."""
        found, alerts = self.monitor.finish(batch)
        metrics.update(found)
        metrics["hacks/alerts"] = len(alerts)
        self._alarm("hack alarm", self.tc.monitoring.alarm, alerts, stop)

    @staticmethod
    def _alarm(name: str, mode: str, alerts: list, stop: StopOnSignal) -> None:
        """Each alert of alarm ``name`` logged (``mode`` log: info, warn and
        stop: a warning; off: nothing); with ``stop``, a checkpoint-then-exit
        asked of ``stop``."""
        for alert in alerts if mode != "off" else []:
            text = f"{name}: {alert.message()}"
            log.log(logging.INFO if mode == "log" else logging.WARNING, "%s", text)
            if mode == "stop":
                stop.request(f"the {text}")

    def _schedule_step(self, step: int, batch: Batch) -> dict[str, float]:
        """After step ``step`` (and its eval): the schedule learns from the
        step's groups, summed over ranks (so every rank holds the same
        schedule), and from the forgetting alarm; returns the schedule
        metrics of the step."""
        names = list(self.entries)
        local = [v for n in names for v in (*batch.observed.get(n, EnvObservation()).as_list(),
                                            float(n in batch.steered), float(n in batch.unsolved))]
        flat = self.dist.all_reduce_sum(local)
        rows = {n: flat[5 * i: 5 * i + 5] for i, n in enumerate(names)}
        observed = {n: EnvObservation(int(r[0]), int(r[1]), r[2]) for n, r in rows.items() if r[0]}
        keys = self.mixture.metric_keys()
        forgetting = set(self.heldout.forgetting()) if self.tc.monitoring.forgetting != "off" else set()
        self.schedule.update(step, observed, steered=[n for n in names if rows[n][3]],
                             unsolved=[n for n in names if rows[n][4]],
                             boosted=[n for n in names if keys[n] in forgetting])
        return schedule_metrics(self.schedule, step, observed, keys)

    def _stop_if_asked(self, stop: StopOnSignal, step: int, saved: bool) -> None:
        """After step ``step``: when a stop signal arrived or an alarm (hack,
        forgetting) asked (on any rank), checkpoint the step (unless just done)
        and raise :class:`Interrupted` (:class:`AlarmStop` for an alarm)."""
        asked = self.dist.all_reduce_sum([float(stop.requested)])[0]  # every rank stops at the same step
        if not asked:
            return
        if not saved:
            self.save(step)
        where = f"checkpoint {self.ckpt_root / checkpoint_name(step)} written (rerun the same command to resume)"
        if stop.signum is None and stop.reason is not None:
            raise AlarmStop(f"stopped after step {step} by {stop.reason}; {where}")
        signum = stop.signum or signal.SIGTERM  # a rank that got no signal of its own
        raise Interrupted(signum, f"{signal.Signals(signum).name}: stopped after step {step}; {where}")

    def train(self) -> list[dict[str, Any]]:
        """Warm start (fresh runs), eval at step 0, then RL to ``total_steps``.
        Returns the logged rows of this process's run. SIGINT/SIGTERM
        (:mod:`.stopping`): the step in progress finishes, is checkpointed,
        and :class:`~gym_llm.apps.hydra_app.Interrupted` is raised; a second
        signal raises it at once."""
        tc = self.tc
        rows: list[dict[str, Any]] = []
        stop = StopOnSignal()

        def record(step: int, metrics: dict[str, Any]) -> None:
            rows.append({"step": step, **metrics})
            self.logger.log(step, metrics)

        try:
            stop.install()
            if self.state is None:
                first: dict[str, Any] = {}
                if tc.sft.enabled:
                    first.update(self.warm_start().metrics())
                if tc.eval_every > 0:
                    first.update(self.evaluate(0))
                    self._alarm("forgetting alarm", tc.monitoring.forgetting, self.forgetting_alerts, stop)
                if first:
                    record(0, first)
                    log.info("step 0: %s", _fmt(first))
                if tc.save_every > 0:
                    self.save(0)
                self._stop_if_asked(stop, 0, saved=tc.save_every > 0)
            t_last = time.perf_counter()
            for step, batch, extra in self._steps():
                self.monitor.start(step, batch)  # strict grading runs while the step trains
                metrics = dict(batch.stats)
                metrics.update(extra)
                try:
                    metrics.update(self.prepare(batch))
                    if batch.samples or self.dist.enabled:
                        metrics.update(self.update(batch, step))
                    metrics["time/sync"] = self._publish(step)
                    self._monitor(batch, metrics, stop)
                except BaseException:
                    self._keep_trajectories(batch, step)  # a failed step still leaves its episodes
                    raise
                self._write_trajectories(batch, step)  # after monitoring: records carry hack_signals, strict_reward
                self.step = step
                metrics["kl"] = metrics.get("kl/ref", metrics.get("kl/update"))
                if tc.eval_every > 0 and (step % tc.eval_every == 0 or step == tc.total_steps):
                    metrics.update(self.evaluate(step))
                    self._alarm("forgetting alarm", tc.monitoring.forgetting, self.forgetting_alerts, stop)
                metrics.update(self._schedule_step(step, batch))
                if self.dist.enabled and (step % max(tc.eval_every, 1) == 0 or step == tc.total_steps):
                    metrics["dist/param_divergence"] = self.dist.param_divergence(self.model)
                now = time.perf_counter()
                metrics["time/step"] = now - t_last
                t_last = now
                # the row first: a checkpoint of step t implies metrics up to t are on disk
                record(step, metrics)
                log.info("step %d: %s", step, _fmt(
                    {k: v for k, v in metrics.items() if k.startswith(("reward/mean", "heldout/", "time/", "kl"))}))
                idle = nothing_trained(metrics)
                if idle is not None:
                    log.warning("step %d trained on nothing: %s", step, idle)
                saved = tc.save_every > 0 and (step % tc.save_every == 0 or step == tc.total_steps)
                if saved:
                    self.save(step)
                self._stop_if_asked(stop, step, saved)
            self.save_final_model()
        finally:
            stop.restore()
            self.logger.close()
            if self.dist.is_main:  # also after a failure: the report shows what the run got to
                try_write_report(self.run_dir, log)
            self.monitor.close()
            self.collector.close()
            self.engine.close()
        return rows


def _fmt(metrics: dict[str, Any]) -> str:
    return " ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in metrics.items())


def _plain(cfg: RunConfig) -> dict[str, Any]:
    return json.loads(json.dumps(asdict(cfg), default=str))


def make_schedule(cfg: RunConfig, mixture: Mixture) -> Schedule:
    """The run's :class:`~gym_llm.runtime.schedule.Schedule` (``schedule``
    config) over ``mixture``. An async rollout runs up to ``max_staleness +
    1`` steps ahead of the update that follows step ``t``, so the adaptive
    weights that update computes apply that many steps later."""
    sc, tc = cfg.schedule, cfg.trainer
    if sc.kind == "static":
        return StaticSchedule(mixture)
    return AdaptiveSchedule(mixture, temperature=sc.temperature, ema=sc.ema, optimism=sc.optimism,
                            env_floor=sc.env_floor, domain_floor=sc.domain_floor, env_cap=sc.env_cap,
                            steered_floor=sc.steered_floor, unsolved_cap=sc.unsolved_cap,
                            forgetting_boost=sc.forgetting_boost,
                            delay=tc.max_staleness + 1 if tc.async_rollout else 0)
