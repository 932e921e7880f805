""":func:`evaluate`: a policy on the first tasks of each environment's split.

Contract: every environment gets the episodes of
:func:`gym_llm.runtime.mixture.heldout_plan` (task ``i`` of the split, reset seed
``seed + i``, ``k`` samples in one group), the same for every model, so
scores compare across runs. Every turn of every sample is sampled with its
own seed, a hash of ``(seed, results key, env kwargs, task index, sample
index, turn)`` (the rollout engine's per-request seed), so what a sample
draws does not depend on the order episodes finish in, ``concurrency``, the
backend the environments run on, or a resume; ``samples.jsonl`` is rewritten
in plan order (environments as given, task index, sample index) when the run
ends. Each finished task goes to the
:class:`~gym_llm.apps.evaluate.store.SampleStore` at once; ``results.json`` is
:func:`~gym_llm.apps.evaluate.metrics.aggregate` of exactly the requested tasks'
samples (resumed ones included). Every sample of a task that ran is also
scored by its env's strict grader (:meth:`gym_llm.LLMEnv.astrict_score`,
``strict_reward`` in ``samples.jsonl``; ``strict_mean`` and ``gap`` in the
results), before the task is stored. A task whose episodes could not run (the
policy's server down, an env crash) is kept out of the results, in
``errors.jsonl``, and counted in :attr:`EvalOutcome.failed_tasks`;
``errors.jsonl`` holds the failures of the latest run only (a resumed run
retries the earlier ones, so a run that succeeds leaves none).
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from gym_llm_sandbox.aio import run_sync

from gym_llm.apps.evaluate.contamination import contamination_warnings, guard_split
from gym_llm.apps.evaluate.envs import EvalEnv
from gym_llm.apps.evaluate.metrics import Z95, aggregate
from gym_llm.apps.evaluate.store import (
    SampleStore,
    append_errors,
    check_resume,
    fingerprint,
)
from gym_llm.apps.runs import ERRORS_FILE, EVAL_CONFIG_FILE, RESULTS_FILE, SAMPLES_FILE
from gym_llm.envs.jsonio import write_json
from gym_llm.envs.registry import make
from gym_llm.runtime.mixture import Mixture, heldout_plan
from gym_llm.runtime.monitoring import StrictGrader
from gym_llm.runtime.policies.base import Policy, SamplingParams
from gym_llm.runtime.rollout import EpisodeSpec, RolloutStats, Trajectory, acollect
from gym_llm.runtime.vector import make_vec

__all__ = ["evaluate", "EvalOutcome"]

log = logging.getLogger(__name__)


@dataclass
class EvalOutcome:
    """What :func:`evaluate` did: ``results`` (as in ``results.json``),
    ``warnings``, ``failed_tasks`` (tasks whose episodes could not run; rerun
    to retry them), ``skipped_tasks`` (already in ``samples.jsonl``),
    ``wall_time_s``, the rollout ``stats``, ``errors`` (each distinct
    reason a task could not run, first seen first) and ``env_workers``
    (where the environments ran: ``{"backend": "local"}``, or the remote
    backend's ``num_workers`` and fault counters)."""

    results: dict[str, dict[str, Any]]
    warnings: list[str]
    failed_tasks: int
    skipped_tasks: int
    wall_time_s: float
    stats: RolloutStats
    errors: list[str] = field(default_factory=list)
    env_workers: dict[str, Any] = field(default_factory=lambda: {"backend": "local"})


@dataclass
class _Planned:
    env: EvalEnv
    task_ids: list[str]  # of task_index 0..n-1
    todo: list[int]      # task indices not yet in samples.jsonl


def _group_id(env: EvalEnv, task_index: int) -> str:
    """One group per (results key, env kwargs, task): what resume and pass@k count by."""
    return f"{env.key}|{json.dumps(dict(env.kwargs), sort_keys=True, default=str)}|{task_index}"


def _row(t: Trajectory, env: EvalEnv, success_threshold: float) -> dict[str, Any]:
    row = t.to_dict()
    row.update(eval_key=env.key, env_kwargs=dict(env.kwargs),
               task_index=int(t.group_id.rsplit("|", 1)[1]),
               correct=bool(t.reward is not None and t.reward >= success_threshold))
    return row


async def _aevaluate(policy: Policy, plan: list[_Planned], *, k: int, split: str,
                     sampling: SamplingParams, seed: int, max_episode_tokens: int | None,
                     concurrency: int, success_threshold: float, store: SampleStore,
                     errors_path: Path, stats: RolloutStats, errors: dict[str, None],
                     vec_options: Mapping[str, Any], env_workers: dict[str, Any], strict: bool) -> int:
    """Run the planned tasks concurrently (one acollect per env variant on one
    event loop, so a batching policy batches across environments); strict-grade
    (when ``strict``) each finished task's samples (:class:`~gym_llm.runtime.monitoring.StrictGrader`:
    ``strict_reward``, or ``info["strict_error"]``) and append it to ``store``,
    each failed one to ``errors_path`` (its reason to ``errors``). Returns the
    number of failed tasks. ``vec_options`` (make_vec's backend arguments,
    e.g. Ray's) put every variant in one vector env on that backend; without
    them each variant runs in its own local vector env; ``env_workers`` gets
    that backend's name, worker count and fault counters."""
    total = sum(len(p.todo) for p in plan) * k
    failed = finished = 0
    grader = StrictGrader()
    pending: dict[str, list[Trajectory]] = defaultdict(list)
    last_log = time.monotonic()

    def handler(planned: _Planned, specs: dict[str, EpisodeSpec]):
        async def handle(t: Trajectory) -> None:
            nonlocal failed, finished, last_log
            finished += 1
            group = pending[t.group_id]
            group.append(t)
            if len(group) < k:
                return
            del pending[t.group_id]
            group.sort(key=lambda x: x.sample_index)
            if strict and not any(x.error for x in group):
                # the strict grader beside the training reward, before the task is stored
                task = specs[t.group_id].task
                await asyncio.gather(*(grader.grade(x, task) for x in group))
            rows = [_row(x, planned.env, success_threshold) for x in group]
            if any(x.error for x in group):
                failed += 1
                append_errors(errors_path, rows)
                error = next(x.error for x in group if x.error)
                errors[error] = None
                log.warning("%s task %d could not run: %s", planned.env.key, rows[0]["task_index"], error)
            else:
                store.append(rows)
            if time.monotonic() - last_log > 10:
                last_log = time.monotonic()
                log.info("%d/%d episodes", finished, total)
        return handle

    active = [p for p in plan if p.todo]
    shared = None
    if vec_options and active:
        # one remote vector env (one set of workers) over every variant, each a mixture entry
        mixture = Mixture({p.env.key: 1.0 for p in active}, env_ids={p.env.key: p.env.id for p in active})
        shared = make_vec(mixture, max(1, min(concurrency, total)), seed=seed, split=split,
                          env_kwargs={p.env.key: dict(p.env.kwargs) for p in active}, **vec_options)
    jobs = []
    shared_episodes: list[EpisodeSpec] = []
    shared_handlers: dict[str, Any] = {}
    for planned in active:
        env = planned.env
        episodes = heldout_plan(env.id, planned.todo, seed=seed, samples=k, split=split, kwargs=dict(env.kwargs),
                                group_id=lambda i, env=env: _group_id(env, i))
        handle = handler(planned, {e.group_id: e for e in episodes})
        if shared is not None:
            shared_episodes += episodes
            shared_handlers.update((e.group_id, handle) for e in episodes)
            continue
        # Concurrency shared out in proportion to each variant's episodes.
        slots = max(1, min(len(episodes), round(concurrency * len(episodes) / max(1, total))))
        jobs.append(acollect(
            policy, env.id, episodes=episodes, sampling=sampling, seed=seed, num_envs=slots, max_tokens=max_episode_tokens,
            on_trajectory=handle, stats=stats,
        ))
    if shared is not None:
        jobs.append(acollect(policy, shared, episodes=shared_episodes, sampling=sampling,
                             max_tokens=max_episode_tokens, stats=stats,
                             on_trajectory=lambda t: shared_handlers[t.group_id](t)))
    try:
        await asyncio.gather(*jobs)
    finally:
        grader.close()
        if shared is not None:
            shared.close()
            env_workers.update(backend=vec_options["backend"], num_workers=shared.num_workers,
                               **asdict(shared.fault_stats))
    return failed


def _plan(envs: Sequence[EvalEnv], *, num_tasks: int, split: str, seed: int,
          done: set[tuple[str, str]], warnings: list[str]) -> list[_Planned]:
    """Each environment's first ``num_tasks`` task ids (all of them, with a
    warning appended to ``warnings``, when the split holds fewer distinct
    tasks), and which of them ``samples.jsonl`` does not hold yet."""
    plan: list[_Planned] = []
    for env in envs:
        base = make(env.id, split=split, seed=seed, **dict(env.kwargs)).unwrapped
        n = base.task_set.distinct_count(split, num_tasks)
        if n < num_tasks:
            warnings.append(f"{env.key} has only {n} distinct {split} tasks (with {dict(env.kwargs)}); "
                            f"num_tasks={num_tasks} evaluates all {n} of them")
            log.warning("%s", warnings[-1])
        ids = [base.task_set.get(split, i).id for i in range(n)]
        base.close()
        if len(set(ids)) < n:  # a task set that repeats a task would count it twice
            raise ValueError(f"{env.key}: the first {n} {split} tasks hold {len(set(ids))} distinct task ids")
        plan.append(_Planned(env, ids, [i for i in range(n) if (_group_id(env, i), ids[i]) not in done]))
    return plan


def evaluate(
    policy: Policy,
    envs: Sequence[EvalEnv] | Sequence[str],
    out_dir: str | os.PathLike,
    *,
    num_tasks: int = 8,
    k: int = 4,
    split: str = "heldout",
    sampling: SamplingParams | None = None,
    max_episode_tokens: int | None = None,
    seed: int = 0,
    success_threshold: float = 1.0,
    concurrency: int = 64,
    resume: bool = True,
    allow_train_split: bool = False,
    train_run: str | os.PathLike | None = None,
    policy_identity: Mapping[str, Any] | None = None,
    vec_options: Mapping[str, Any] | None = None,
    strict: bool = True,
) -> EvalOutcome:
    """Evaluate ``policy`` on the first ``num_tasks`` tasks of ``split`` of
    each of ``envs``, ``k`` samples per task; write ``samples.jsonl``,
    ``results.json`` and ``eval_config.json`` into ``out_dir`` (see the
    module doc; :func:`~gym_llm.apps.evaluate.write_report` and
    :func:`~gym_llm.apps.evaluate.plot_results` add the report).

    ``split="train"`` raises :class:`~gym_llm.apps.evaluate.ContaminationError`
    unless ``allow_train_split``. ``train_run``: a training run directory to
    check for overlap (warnings in the outcome and the log). ``resume``: keep the
    tasks already in ``out_dir/samples.jsonl`` and run only the others
    (``ValueError`` if that directory was evaluated with a different
    ``policy_identity``, sampling, ``k``, ``split``, ``seed`` or
    ``max_episode_tokens``); ``False`` starts over. ``policy_identity`` names
    the model for that check (path, backend, ...). ``concurrency``: episodes
    in flight at once. ``vec_options``: :func:`gym_llm.make_vec` backend
    arguments where the environments run (``gym_llm.runtime.distributed.workers.vec_kwargs``
    of an ``env_workers`` config: Ray actors); default in this process.
    ``strict``: also score every sample with its env's strict grader
    (``strict_reward``, ``strict_mean`` and ``gap`` in the results); ``False``
    saves its cost (about as much again as the episode for code envs).
    Results cover exactly the requested tasks, resumed ones included.
    """
    start = time.perf_counter()
    split = guard_split(split, allow_train_split)
    if num_tasks < 1 or k < 1:
        raise ValueError(f"num_tasks and k must be >= 1, got num_tasks={num_tasks}, k={k}")
    envs = [e if isinstance(e, EvalEnv) else EvalEnv(str(e)) for e in envs]
    if not envs:
        raise ValueError("no environments to evaluate")
    sampling = sampling or SamplingParams()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    fp = fingerprint(policy_identity or {"class": type(policy).__name__}, sampling, k, split,
                     max_episode_tokens, seed)
    if resume:
        check_resume(out, fp)
    # the tasks that failed before are not in samples.jsonl, so they run again:
    # their old errors would describe a run that is over
    (out / ERRORS_FILE).unlink(missing_ok=True)
    store = SampleStore(out / SAMPLES_FILE, k, resume=resume)
    warnings: list[str] = []
    plan = _plan(envs, num_tasks=num_tasks, split=split, seed=seed, done=store.done(), warnings=warnings)
    skipped = sum(len(p.task_ids) - len(p.todo) for p in plan)

    if train_run is not None:
        contaminated = contamination_warnings(train_run, [(p.env, p.task_ids) for p in plan], split)
        for w in contaminated:
            log.warning("contamination: %s", w)
        warnings += contaminated
    write_json(out / EVAL_CONFIG_FILE, {**fp, "envs": [asdict(e) for e in envs]})
    if skipped:
        log.info("resuming: %d task(s) already in %s", skipped, store.path)
    stats = RolloutStats()
    errors: dict[str, None] = {}  # ordered set
    env_workers: dict[str, Any] = {"backend": "local"}
    if sampling.seed is None:  # each request then gets its own seed from (seed, task, sample, turn)
        sampling = replace(sampling, seed=seed)
    failed = run_sync(_aevaluate(
        policy, plan, k=k, split=split, sampling=sampling, seed=seed,
        max_episode_tokens=max_episode_tokens, concurrency=concurrency,
        success_threshold=success_threshold, store=store, errors_path=out / ERRORS_FILE, stats=stats,
        errors=errors, vec_options=vec_options or {}, env_workers=env_workers,
        strict=strict,
    ))

    order = {(_group_id(p.env, i), task_id): n for n, (p, i, task_id) in
             enumerate((p, i, t) for p in plan for i, t in enumerate(p.task_ids))}
    store.sort(lambda r: (order.get((r["group_id"], r["task_id"]), len(order)), r["group_id"], r["sample_index"]))
    found = aggregate((r for r in store.rows if (r["group_id"], r["task_id"]) in order), k)
    # bit-exact reruns need a policy whose numbers do not depend on its batches (HFPolicy(batch_invariant=True))
    exact = bool(getattr(policy, "batch_invariant", False))
    results = {}
    for key in dict.fromkeys(e.key for e in envs):  # the env set's order
        if key in found:
            results[key] = {**found[key], "success_threshold": success_threshold, "reproducible": exact}
            if found[key]["mean_turns"] == 0:
                warnings.append(f"{key}: no sample got to generate a turn (prompts longer than "
                                f"max_episode_tokens={max_episode_tokens}?)")
    if results and not exact:
        spread = ", ".join(f"{key} ±{Z95 * math.sqrt(2) * r['pass@1_stderr']:.3f}" for key, r in results.items())
        warnings.append(f"{type(policy).__name__} is not bit-exact run to run (its batches change its numbers: "
                        f"docs/eval.md, reproducibility); a rerun's pass@1 can differ by up to about: {spread}")
    write_json(out / RESULTS_FILE, results)
    return EvalOutcome(results, warnings, failed, skipped, time.perf_counter() - start, stats, list(errors),
                       env_workers)
