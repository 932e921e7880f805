"""``recipe=smollm2_instruct_cpu`` and ``make demo-instruct``: the real-model
recipe on the instruct mixture, and its held-out evaluation strict and loose."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from gym_llm_trainers.train import compose, run_config

ROOT = Path(__file__).resolve().parents[2]


def test_recipe_is_the_real_model_run_on_the_instruct_mixture():
    base = run_config(compose(["recipe=smollm2_cpu"]))
    cfg = run_config(compose(["recipe=smollm2_instruct_cpu"]))
    assert cfg.model.name == base.model.name == "smollm2-135m-instruct"
    assert (cfg.trainer.num_groups, cfg.trainer.group_size, cfg.trainer.total_steps) == (8, 8, 20)
    assert cfg.policy.backend == "vllm" and cfg.policy.max_new_tokens == 160
    entries = cfg.mixture.entries()
    assert {e.id for e in entries.values()} == {"instruct/Single-v0", "instruct/Multi-v0"}
    assert entries["multi"].kwargs["reward"] == "partial" and entries["multi"].heldout_kwargs["reward"] == "strict"
    assert run_config(compose(["recipe=smollm2_instruct_cpu", "trainer.seed=1"])).trainer.seed == 1


def test_make_demo_instruct_trains_then_evaluates_strict_and_loose():
    if shutil.which("make") is None:
        pytest.fail("make is not installed: the Makefile is the documented set-up")
    planned = subprocess.run(["make", "-n", "demo-instruct", "RUN_DIR=/tmp/ri", "ARGS=trainer.seed=1"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout
    train = planned.index("gym-llm-train recipe=smollm2_instruct_cpu hydra.run.dir=/tmp/ri trainer.seed=1")
    evaluate = planned.index("gym-llm-eval checkpoint=/tmp/ri envs=instruct")
    assert train < evaluate and "hydra.run.dir=/tmp/ri/eval" in planned
    envs = (ROOT / "gym_llm" / "apps" / "conf" / "envs" / "instruct.yaml").read_text()
    assert "loose: true" in envs
