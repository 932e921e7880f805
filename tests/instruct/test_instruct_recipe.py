"""``recipe=smollm2_instruct_cpu``: the real-model recipe on the instruct
mixture, and its held-out evaluation strict and loose (``make
demo-instruct`` is checked beside ``make demo-real`` in tests/trainers/test_recipe.py)."""

from __future__ import annotations

from pathlib import Path

from gym_llm_trainers.train import compose, run_config

ROOT = Path(__file__).resolve().parents[2]


def test_recipe_is_the_real_model_run_on_the_instruct_mixture():
    base = run_config(compose(["recipe=smollm2_cpu"]))
    cfg = run_config(compose(["recipe=smollm2_instruct_cpu"]))
    assert cfg.model.name == base.model.name == "smollm2-135m-instruct"
    assert (cfg.trainer.num_groups, cfg.trainer.group_size) == (base.trainer.num_groups, base.trainer.group_size) == (8, 8)
    assert (cfg.trainer.total_steps, cfg.trainer.eval_every, cfg.trainer.lr) == (28, 7, 2e-5)
    assert cfg.policy.backend == "vllm" and cfg.policy.max_new_tokens == 160
    entries = cfg.mixture.entries()
    assert {e.id for e in entries.values()} == {"instruct/Single-v0", "instruct/Multi-v0"}
    assert entries["multi"].kwargs["reward"] == "partial" and entries["multi"].heldout_kwargs["reward"] == "strict"
    assert run_config(compose(["recipe=smollm2_instruct_cpu", "trainer.seed=1"])).trainer.seed == 1


def test_the_instruct_eval_reads_strict_and_loose():
    # make demo-instruct evaluates envs=instruct (tests/trainers/test_recipe.py checks the target)
    envs = (ROOT / "gym_llm" / "apps" / "conf" / "envs" / "instruct.yaml").read_text()
    assert "loose: true" in envs
