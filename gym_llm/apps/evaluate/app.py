"""``gym-llm-eval``: the Hydra application (``conf/eval.yaml``) around :func:`evaluate`.

Contract: one job composes the environments (``env_ids``, or a training
run's mixture with ``env_ids=mixture``, else the ``envs`` group), applies
the ``sandbox`` group to every environment that takes one, checks the split
and every id *before* a model loads, builds the policy, evaluates, then
writes ``report.md``, the plots and ``report.html`` (:mod:`gym_llm.apps.report`;
a failure there is logged and never fails the eval) and prints a summary. It exits with
status 1 when tasks could not run (a single run; a sweep keeps going), and
returns the mean reward over the environments as a sweeper's objective.
The ``${gym_llm_slug:...}`` resolver that ``conf/eval.yaml``'s sweep
subdirectories use is registered by importing :mod:`gym_llm.apps.sweeps`, which
this module does.
"""

from __future__ import annotations

import datetime
import os
import statistics
import sys
from pathlib import Path
from typing import Any

from gym_llm.apps.evaluate.contamination import guard_split
from gym_llm.apps.evaluate.envs import EvalEnv, check_envs, env_set, with_sandbox
from gym_llm.apps.evaluate.policy import build_policy
from gym_llm.apps.evaluate.report import fmt, fmt_ci, machine, plot_results, write_report
from gym_llm.apps.evaluate.runner import EvalOutcome, evaluate
from gym_llm.apps.hydra_app import CONFIG_DIR, ConfigError, import_modules, threads_for_sweep
from gym_llm.apps.report import try_write_report
from gym_llm.apps.runs import ERRORS_FILE, resolve_checkpoint, run_config, training_mixture
from gym_llm.apps.sweeps import slug
from gym_llm.runtime.distributed.workers import vec_kwargs
from gym_llm.runtime.policies.base import SamplingParams

__all__ = ["main", "slug", "eval_envs", "CONFIG_DIR"]


def eval_imports(cfg: Any, train_run: str | os.PathLike | None = None) -> list[str]:
    """The modules an eval imports first (ones that register environments):
    the config's ``imports``, plus the training run's own for ``env_ids=mixture``."""
    imports = list(cfg.get("imports") or [])
    if cfg.get("env_ids") == "mixture" and train_run is not None:
        imports += list(run_config(train_run).get("imports") or [])
    return imports


def eval_envs(cfg: Any, train_run: str | os.PathLike | None = None) -> list[EvalEnv]:
    """The environments a composed eval config evaluates, its ``sandbox``
    group applied (:func:`~gym_llm.apps.evaluate.envs.with_sandbox`). Imports
    :func:`eval_imports` first, so ids they register resolve; an unknown id raises."""
    from omegaconf import OmegaConf

    env_ids = cfg.get("env_ids")
    if OmegaConf.is_config(env_ids):
        env_ids = OmegaConf.to_container(env_ids, resolve=True)
    if env_ids == "mixture":
        if train_run is None:
            raise ConfigError("env_ids", "env_ids=mixture evaluates a training run's mixture: pass "
                                         "checkpoint=<run dir> or train_run=<run dir>")
        entries = training_mixture(train_run)
        if not entries:
            raise ConfigError("env_ids", f"{train_run} has no config.yaml with a mixture")
        envs = env_set(entries)
    elif env_ids:
        envs = env_set(env_ids)
    else:
        envs = env_set(OmegaConf.to_container(cfg.envs.envs, resolve=True))
    import_modules(eval_imports(cfg, train_run))  # modules that register environments on import
    sandbox = cfg.get("sandbox")
    if OmegaConf.is_config(sandbox):
        sandbox = OmegaConf.to_container(sandbox, resolve=True)
    return with_sandbox(envs, sandbox)


def _run(cfg: Any, out_dir: Path) -> EvalOutcome:
    from omegaconf import OmegaConf

    train_run = cfg.get("train_run")
    if train_run is None and cfg.get("checkpoint"):
        train_run = resolve_checkpoint(cfg.checkpoint)[1]
    envs = eval_envs(cfg, train_run)  # an unknown id fails here, before a model loads
    split = guard_split(cfg.split, bool(cfg.allow_train_split))  # before a model loads
    check_envs(envs, split)  # every env made and its dataset read, before a model loads
    sampling = SamplingParams(temperature=float(cfg.policy.temperature), top_p=float(cfg.policy.top_p),
                              max_new_tokens=int(cfg.policy.max_new_tokens))
    workers_cfg = cfg.get("env_workers")
    vec_options = vec_kwargs(OmegaConf.to_container(workers_cfg, resolve=True) if workers_cfg is not None else None,
                             eval_imports(cfg, train_run))
    policy, identity = build_policy(cfg)
    try:
        outcome = evaluate(
            policy, envs, out_dir, num_tasks=int(cfg.num_tasks), k=int(cfg.k), split=split,
            sampling=sampling, max_episode_tokens=cfg.policy.get("max_episode_tokens"),
            seed=int(cfg.seed), success_threshold=float(cfg.success_threshold),
            concurrency=int(cfg.concurrency), resume=bool(cfg.resume),
            allow_train_split=bool(cfg.allow_train_split), train_run=train_run,
            policy_identity=identity, vec_options=vec_options, strict=bool(cfg.strict),
        )
    finally:
        policy.close()
    warnings = outcome.warnings
    plots: list[Path] = []
    if cfg.plots and outcome.results:
        try:
            plots = plot_results(out_dir, outcome.results)
        except ImportError as e:  # matplotlib ships with the [train] extra, not the core
            warnings.append(f"plots skipped ({e}): pip install matplotlib")
    if outcome.failed_tasks:
        # the reason itself (a server's refusal names its missing flags), not only a count
        warnings.append(f"{outcome.failed_tasks} task(s) could not run (see {ERRORS_FILE}), first because: "
                        f"{outcome.errors[0]}; rerun into this directory to retry them")
    errors = sum(r["reward_errors"] for r in outcome.results.values())
    if errors:
        warnings.append(f"{errors} sample(s) have reward_error: the environment failed to score them "
                        "(sandbox or verifier down?); their reward is 0 and not trustworthy")
    workers = outcome.env_workers
    if workers.get("episodes_lost"):
        warnings.append(f"{workers['episodes_lost']} episode(s) lost to env worker faults past the retry budget "
                        "(their tasks are in errors.jsonl; rerun into this directory to retry them)")
    meta = {
        "model": f"`{identity.get('model')}`" + (f" (checkpoint=`{cfg.checkpoint}`)" if cfg.get("checkpoint") else ""),
        "policy": f"{identity['backend']}" + (f" at {identity['base_url']}" if identity.get("base_url") else ""),
        "sampling": f"temperature {sampling.temperature}, top_p {sampling.top_p}, "
                    f"max_new_tokens {sampling.max_new_tokens}, "
                    f"max_episode_tokens {cfg.policy.get('max_episode_tokens')}",
        "environments": "in this process" if workers["backend"] == "local" else (
            f"{workers['backend']}, {workers['num_workers']} workers ({workers['worker_deaths']} worker deaths, "
            f"{workers['step_timeouts']} step timeouts, {workers['episodes_rerun']} episodes rerun, "
            f"{workers['episodes_lost']} lost)"),
        "split": split,
        "tasks per env": int(cfg.num_tasks),
        "samples per task (k)": int(cfg.k),
        "correct when": f"reward >= {cfg.success_threshold}",
        "resumed tasks": outcome.skipped_tasks,
        "wall time": f"{outcome.wall_time_s:.1f} s ({outcome.stats.generated_tokens} tokens generated)",
        "command": f"`{' '.join(['gym-llm-eval', *sys.argv[1:]])}`",
        "machine": machine(),
        "date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
    }
    write_report(out_dir, outcome.results, meta, warnings, plots)
    try_write_report(out_dir)  # report.html; a failure is logged, never fails the eval
    return outcome


def _print_summary(outcome: EvalOutcome, out_dir: Path) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"gym-llm-eval: {out_dir}")
    table.add_column("environment", overflow="fold")
    for col in ("tasks", "mean reward", "strict", "pass@1 [95% CI]", "pass@k"):
        table.add_column(col, no_wrap=True)
    for key, r in outcome.results.items():
        table.add_row(key, str(r["n"]), fmt(r["mean_reward"]), fmt(r.get("strict_mean")), fmt_ci(r, "pass@1"),
                      f"{fmt(r['pass@k'])} (k={r['k']})")
    console = Console(stderr=True)
    console.print(table)
    for w in outcome.warnings:
        console.print(f"[yellow]warning:[/yellow] {w}", markup=True, highlight=False)
    console.print(f"results, samples, report.md and report.html in {out_dir} ({outcome.wall_time_s:.1f} s)")


def main() -> None:
    """Console entry point ``gym-llm-eval`` (Hydra; config ``conf/eval.yaml``)."""
    import hydra
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode
    from omegaconf import DictConfig

    @hydra.main(config_path=CONFIG_DIR, config_name="eval", version_base="1.3")
    def app(cfg: DictConfig) -> float | None:
        hc = HydraConfig.get()
        threads_for_sweep()
        out_dir = Path(cfg.output_dir or hc.runtime.output_dir)
        with user_errors("gym-llm-eval"):  # a bad env or dataset: a message and status 2
            outcome = _run(cfg, out_dir)
        _print_summary(outcome, out_dir)
        if outcome.failed_tasks and hc.mode == RunMode.RUN:
            sys.exit(1)
        rewards = [r["mean_reward"] for r in outcome.results.values()]
        return statistics.fmean(rewards) if rewards else None  # a sweeper's objective

    from gym_llm.apps.hydra_app import check_overrides, user_errors

    with user_errors("gym-llm-eval"):  # a misspelt key, named with the closest one, before Hydra's bare error
        check_overrides(CONFIG_DIR, "eval", sys.argv[1:])
    app()
