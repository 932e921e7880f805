"""``gym-llm-train`` as users run it: kill and resume, torchrun data
parallelism, Hydra multirun sweeps, the async pipeline, and the configs
shipped in the package."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from gym_llm_trainers.checkpoint import list_checkpoints
from gym_llm_trainers.metrics import read_metrics
from gym_llm_trainers.train import CONFIG_DIR, compose, run_config
from trainer_support import BASE, cli_env, gym_llm_train

#: Metrics that depend only on the seed and the weights, never on timing.
DETERMINISTIC = ["reward/mean", "loss", "entropy", "grad_norm", "kl", "response_length/mean",
                 "clip/high_fraction", "groups/kept"]


def test_configs_ship_in_the_package_and_compose():
    assert Path(CONFIG_DIR, "train.yaml").is_file()
    cfg = run_config(compose([]))
    assert cfg.trainer.algorithm == "grpo" and cfg.model.path is None and cfg.policy.backend == "hf"
    ids = {e.id for e in cfg.mixture.entries().values()}
    assert {"math/Arithmetic-v0", "code/PythonFunctions-v0", "tool/FunctionCalling-v0", "longctx/Needle-v0"} <= ids
    assert any(e.kwargs.get("max_turns", 1) > 1 for e in cfg.mixture.entries().values())  # a multi-turn env
    for group, options in {"model": ["tiny", "qwen2.5-0.5b-instruct"], "trainer": ["grpo", "ppo", "dr_grpo"],
                           "mixture": ["default", "math_only", "code_only", "tool_only", "longctx_only"],
                           "policy": ["hf", "vllm"], "logging": ["default", "quiet"]}.items():
        for option in options:
            run_config(compose([f"{group}={option}"]))
    only = run_config(compose(["mixture=math_only"])).mixture.probabilities()
    assert {cfg.mixture.entries()[k].id.split("/")[0] for k in only} == {"math"}
    with pytest.raises(KeyError, match="did you mean 'trainer.total_steps'"):
        run_config(compose(["+trainer.total_step=3"]))


def test_each_config_ships_with_the_app_that_reads_it():
    """train.yaml and the training-only groups are the trainers' package data; what gym-llm-eval
    reads stays the core's, and gym-llm-train composes those groups from there, also when the
    command line replaces ``hydra.searchpath`` (as BASE does) and when it checks override keys."""
    from gym_llm.apps.hydra_app import CONFIG_DIR as SHARED_CONFIG_DIR
    from gym_llm.apps.hydra_app import check_overrides

    assert {p.name for p in Path(CONFIG_DIR).iterdir()} == {"train.yaml", "trainer", "mixture", "schedule", "recipe",
                                                             "logging"}
    assert {p.name for p in Path(SHARED_CONFIG_DIR).iterdir()} == {
        "eval.yaml", "model", "policy", "sandbox", "env_workers", "envs", "hydra"}
    cfg = run_config(compose([*BASE, "model=smollm2-135m-instruct", "sandbox=strict", "env_workers=ray"]))
    assert cfg.mixture.name == "vowels" and cfg.model.name == "smollm2-135m-instruct"
    assert cfg.sandbox["isolation"] == "nsjail" and cfg.env_workers.backend == "ray"
    check_overrides(CONFIG_DIR, "train", [*BASE, "hydra/launcher=local", "sandbox=strict", "sandbox.memory_mb=64"])
    with pytest.raises(KeyError, match="did you mean 'sandbox.memory_mb'"):
        check_overrides(CONFIG_DIR, "train", [*BASE, "sandbox=strict", "sandbox.memroy_mb=64"])


def _comparable(rows: list[dict], step: int) -> dict:
    row = next(r for r in rows if r["step"] == step)
    return {k: row.get(k) for k in DETERMINISTIC}


@pytest.mark.slow
def test_kill_and_resume_matches_the_uninterrupted_run(tmp_path):
    # one row per decoding step: HF sampling then does not depend on request timing
    common = ["trainer.total_steps=3", "trainer.save_every=1", "trainer.keep_last=2", "policy.max_batch_size=1"]
    full = tmp_path / "full"
    gym_llm_train(*common, f"hydra.run.dir={full}")
    reference = read_metrics(full)

    killed = tmp_path / "killed"
    exe = Path(sys.executable).with_name("gym-llm-train")
    proc = subprocess.Popen([str(exe), *BASE, *common, f"hydra.run.dir={killed}"], env=cli_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None:
        if any(p.name == "step_000001" for p in list_checkpoints(killed / "checkpoints")):
            os.killpg(proc.pid, signal.SIGKILL)
            break
        time.sleep(0.02)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the run finished before it could be killed"
    last = list_checkpoints(killed / "checkpoints")[-1]
    done = int(last.name.split("_")[1])
    assert done < 3

    gym_llm_train(*common, f"hydra.run.dir={killed}", "trainer.resume=auto")
    resumed = read_metrics(killed)
    assert [r["step"] for r in resumed] == [r["step"] for r in reference]  # no duplicated or missing step
    for step in range(done + 1, 4):
        assert _comparable(resumed, step) == pytest.approx(_comparable(reference, step), rel=1e-5, abs=1e-7)
    assert [p.name for p in list_checkpoints(killed / "checkpoints")] == ["step_000002", "step_000003"]


@pytest.mark.slow
def test_torchrun_two_cpu_processes_stay_in_sync(tmp_path):
    run = tmp_path / "ddp"
    torchrun = Path(sys.executable).with_name("torchrun")
    env = cli_env()
    env["OMP_NUM_THREADS"] = "1"
    proc = subprocess.run(
        [str(torchrun), "--nproc-per-node", "2", "--master-port", str(29500 + os.getpid() % 1000),
         "-m", "gym_llm_trainers.train", *BASE, "trainer.total_steps=3", "trainer.eval_every=1",
         "trainer.eval_tasks=4", f"hydra.run.dir={run}"],
        env=env, capture_output=True, text=True, timeout=400,
    )
    assert proc.returncode == 0, proc.stderr[-5000:]
    rows = read_metrics(run)
    divergence = [r["dist/param_divergence"] for r in rows if "dist/param_divergence" in r]
    assert len(divergence) == 3 and all(d == 0.0 for d in divergence)
    assert all(r["grad_norm"] > 0 for r in rows if r["step"] > 0)  # they did train
    # held-out tasks were sharded: 4 tasks across 2 ranks, all counted
    assert all("heldout/test/Vowels-v0/reward/mean" in r for r in rows)


@pytest.mark.slow
def test_multirun_sweeps_mixtures_and_domain_weights(tmp_path):
    sweep = tmp_path / "sweep"
    gym_llm_train("-m", "mixture=vowels,vowels_multi", "mixture.weights.test=0.2,0.5", "trainer.total_steps=1",
                  f"hydra.sweep.dir={sweep}", timeout=400)
    jobs = sorted(p for p in sweep.iterdir() if (p / "metrics.jsonl").exists())
    assert len(jobs) == 4  # the joblib launcher ran every combination
    configs = [yaml.safe_load((j / "config.yaml").read_text())["mixture"] for j in jobs]
    assert sorted((c["name"], c["weights"]["test"]) for c in configs) == [
        ("vowels", 0.2), ("vowels", 0.5), ("vowels_multi", 0.2), ("vowels_multi", 0.5)]
    assert all(any("reward/mean" in r for r in read_metrics(j)) for j in jobs)


@pytest.mark.slow
def test_async_pipeline_overlaps_with_bounded_staleness(tmp_path):
    run = tmp_path / "async"
    gym_llm_train("trainer.async_rollout=true", "trainer.max_staleness=1", "trainer.total_steps=4",
                  f"hydra.run.dir={run}")
    rows = [r for r in read_metrics(run) if r["step"] > 0]
    staleness = [r["async/staleness"] for r in rows]
    assert all(0 <= s <= 1 for s in staleness)
    assert max(staleness) == 1  # generation really ran ahead of the update
    assert all("offpolicy/is_weight_mean" in r and "async/trainer_idle_s" in r for r in rows)
def test_yaml_defaults_match_the_documented_dataclasses():
    """The grpo, hf and default-logging presets are the dataclass defaults, so
    the knob tables in docs/training.md tell the truth about a bare run."""
    from dataclasses import asdict

    from gym_llm_trainers.config import LoggingConfig, PolicyConfig, ScheduleConfig, TrainerConfig

    cfg = run_config(compose([]))
    assert asdict(cfg.trainer) == asdict(TrainerConfig())
    assert asdict(cfg.schedule) == asdict(ScheduleConfig())
    assert asdict(cfg.policy) == asdict(PolicyConfig())
    assert asdict(cfg.logging) == asdict(LoggingConfig())


def test_presets_hold_only_what_they_change():
    """Defaults are written once, in the dataclasses: a trainer or logging
    preset sets a key only to a value other than its dataclass default."""
    from dataclasses import asdict

    from gym_llm_trainers.config import DEFAULTS_OF_GROUP

    for group, cls in DEFAULTS_OF_GROUP.items():
        defaults = asdict(cls())
        for path in sorted(Path(CONFIG_DIR, group).glob("*.yaml")):
            preset = yaml.safe_load(path.read_text()) or {}
            assert "base" in preset.pop("defaults", []), path
            repeated = [k for k, v in preset.items() if defaults[k] == v]
            assert not repeated, f"{path.name} repeats dataclass defaults: {repeated}"
    assert asdict(run_config(compose(["trainer=base"])).trainer) == asdict(run_config(compose([])).trainer)


def test_every_knob_is_documented():
    import dataclasses

    from gym_llm_trainers import config

    doc = (Path(__file__).resolve().parents[2] / "docs" / "training.md").read_text()
    for cls in (config.TrainerConfig, config.SFTConfig, config.CurriculumConfig, config.MonitoringConfig,
                config.ModelConfig, config.LoraConfig, config.PolicyConfig, config.EnvEntry, config.MixtureConfig,
                config.ScheduleConfig, config.LoggingConfig, config.EnvWorkersConfig):
        for f in dataclasses.fields(cls):
            assert f.metadata.get("help"), f"{cls.__name__}.{f.name} has no help"
            nested = f.name in ("sft", "curriculum", "monitoring", "lora")  # sections of their own
            key = f".{f.name}`" if nested else f"`{f.name}`"
            assert key in doc, f"{cls.__name__}.{f.name} is missing from docs/training.md"
