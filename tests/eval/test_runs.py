"""A training run's directory as gym_llm.apps.runs reads it (and the trainers'
checkpoint.py writes it): checkpoints, the LoRA merged rule, the run's
mixture as an eval env set. No model is loaded."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import gym_llm.apps.evaluate
from gym_llm.apps import runs
from gym_llm.apps.evaluate import EvalEnv, env_set
from gym_llm.apps.runs import resolve_checkpoint, training_mixture


def test_resolve_checkpoint_reads_the_trainers_layout(tmp_path: Path, tiny_path: str) -> None:
    """The trainer's own save_checkpoint writes the run; we find its model."""
    from gym_llm_trainers.checkpoint import save_checkpoint

    run = tmp_path / "run"
    for step in (5, 10):
        save_checkpoint(run / "checkpoints", step, lambda d: shutil.copytree(tiny_path, d), {"step": step})
    latest = run / "checkpoints" / "step_000010"
    assert resolve_checkpoint(run) == (latest / "model", run)
    assert resolve_checkpoint(run / "checkpoints" / "step_000005") == (
        run / "checkpoints" / "step_000005" / "model", run)
    assert resolve_checkpoint(latest / "model") == (latest / "model", run)
    assert resolve_checkpoint(tiny_path) == (Path(tiny_path).resolve(), None)
    with pytest.raises(FileNotFoundError, match="no config.json"):
        resolve_checkpoint(tmp_path)
    (tmp_path / "empty" / "checkpoints").mkdir(parents=True)
    with pytest.raises(FileNotFoundError, match="no complete checkpoint"):
        resolve_checkpoint(tmp_path / "empty")


def test_resolve_checkpoint_prefers_merged_lora_weights(tmp_path: Path) -> None:
    model = tmp_path / "checkpoints" / "step_000001" / "model"
    (model / "merged").mkdir(parents=True)
    (model / "adapter_config.json").write_text("{}")
    (model / "merged" / "config.json").write_text("{}")
    assert resolve_checkpoint(tmp_path)[0] == model / "merged"


def test_training_mixture_becomes_an_env_set(tmp_path: Path) -> None:
    """env_ids=mixture: the run's environments with their held-out kwargs."""
    (tmp_path / "config.yaml").write_text(
        "mixture:\n  envs:\n"
        "    arithmetic: {id: math/Arithmetic-v0, weight: 1.0, kwargs: {difficulty: 0.0, max_turns: 1},"
        " sft_examples: 512, eval_tasks: 64, turn_credit: turn, turn_discount: 0.0}\n"  # trainer-only keys
        "    retry: {id: math/Arithmetic-v0, weight: 0.5, kwargs: {max_turns: 2},"
        " heldout_kwargs: {max_turns: 3}}\n"
        "    functions: {id: code/PythonFunctions-v0, weight: 1.0}\n"
        "  weights: {code: 0.0}\n")
    assert env_set(training_mixture(tmp_path)) == [
        EvalEnv("math/Arithmetic-v0", {"difficulty": 0.0, "max_turns": 1}, "math/Arithmetic-v0#arithmetic"),
        EvalEnv("math/Arithmetic-v0", {"max_turns": 3}, "math/Arithmetic-v0#retry"),
    ]
    assert training_mixture(tmp_path / "missing") == {}


def test_the_shipped_default_mixture_is_an_env_set(tmp_path: Path) -> None:
    """`make demo` evaluates its run with env_ids=mixture: every key the trainer's
    default mixture carries must be one the env set understands or drops."""
    import yaml
    from gym_llm_trainers.train import CONFIG_DIR

    mixture = yaml.safe_load((Path(CONFIG_DIR) / "mixture" / "default.yaml").read_text())
    (tmp_path / "config.yaml").write_text(yaml.safe_dump({"mixture": mixture}))
    envs = env_set(training_mixture(tmp_path))
    assert {e.id for e in envs} == {entry["id"] for entry in mixture["envs"].values()}



def test_one_owner_of_the_layout() -> None:
    """The evaluator's and the trainers' names are gym_llm.apps.runs' own functions."""
    from gym_llm_trainers import checkpoint

    assert checkpoint.list_checkpoints is runs.list_checkpoints
    assert checkpoint.latest_checkpoint is runs.latest_checkpoint
    assert gym_llm.apps.evaluate.resolve_checkpoint is runs.resolve_checkpoint
    assert gym_llm.apps.evaluate.training_mixture is runs.training_mixture
    assert gym_llm.apps.evaluate.run_config is runs.run_config


def test_complete_checkpoints_only_in_step_order(tmp_path: Path) -> None:
    """A checkpoint is complete once it has its final name: temporary
    directories, stray files and other names are never listed."""
    root = tmp_path / "checkpoints"
    assert runs.list_checkpoints(root) == [] and runs.latest_checkpoint(root) is None
    for step in (9, 10, 123):
        (root / runs.checkpoint_name(step)).mkdir(parents=True)
    (root / runs.temporary_name(200, pid=1)).mkdir()
    (root / "step_000300").write_text("not a directory")
    (root / "step_x").mkdir()
    assert runs.checkpoint_name(10) == "step_000010"
    assert [p.name for p in runs.list_checkpoints(root)] == ["step_000009", "step_000010", "step_000123"]
    assert runs.latest_checkpoint(root) == root / "step_000123"
    assert runs.checkpoint_step(root / "step_000123") == 123
    assert runs.checkpoint_step(root / runs.temporary_name(200, pid=1)) is None
    assert [p.name for p in root.glob(runs.TEMPORARY_GLOB)] == [runs.temporary_name(200, pid=1)]


def test_save_checkpoint_names_and_lists_through_runs(tmp_path: Path) -> None:
    """checkpoint.py writes what runs.py reads: the final name, the model dir,
    no temporary directory left, keep_last by step order."""
    from gym_llm_trainers.checkpoint import save_checkpoint

    root = tmp_path / "checkpoints"
    (root / runs.temporary_name(7, pid=99999)).mkdir(parents=True)  # a killed writer's leftover
    for step in (7, 8, 9):
        path = save_checkpoint(root, step, lambda d: (d.mkdir(), (d / "config.json").write_text("{}")),
                               {"step": step}, keep_last=2)
        assert path == root / runs.checkpoint_name(step)
    assert runs.list_checkpoints(root) == [root / "step_000008", root / "step_000009"]
    assert not list(root.glob(runs.TEMPORARY_GLOB))
    assert runs.checkpoint_model(root / "step_000009") == root / "step_000009" / runs.MODEL_DIR
    assert resolve_checkpoint(tmp_path) == (root / "step_000009" / "model", tmp_path)


def test_a_named_lora_model_dir_still_knows_its_run(tmp_path: Path) -> None:
    """checkpoint=<run>/checkpoints/step_N/model of a LoRA run: the merged
    weights are evaluated and the run (for the contamination guard) is known."""
    model = tmp_path / "checkpoints" / "step_000001" / "model"
    (model / "merged").mkdir(parents=True)
    (model / "merged" / "config.json").write_text("{}")
    assert resolve_checkpoint(model) == (model / "merged", tmp_path)


def test_training_mixture_weighs_entries_by_their_domain(tmp_path: Path) -> None:
    """The run's entries with a positive probability in its Mixture (entry
    weight x domain weight), keyed as gym-llm-train names their metrics."""
    (tmp_path / ".hydra").mkdir()
    (tmp_path / ".hydra" / "config.yaml").write_text(
        "mixture:\n  name: mine\n  envs:\n"
        "    a: {id: math/Arithmetic-v0, weight: 0.0}\n"          # weight 0: not trained on
        "    b: {id: math/Arithmetic-v0, weight: 2.0}\n"
        "    c: {id: tool/Orders-v0, weight: 1.0}\n"
        "    d: {id: longctx/Needle-v0, weight: 1.0}\n"
        "    nameless: {weight: 1.0}\n"                            # no id: not an environment
        "  weights: {longctx: 0.0, tool: 0.5}\n")
    entries = training_mixture(tmp_path)
    assert entries == {"b": {"id": "math/Arithmetic-v0", "weight": 2.0},  # one entry left of that id
                       "c": {"id": "tool/Orders-v0", "weight": 1.0}}
    (tmp_path / "config.yaml").write_text("mixture:\n  envs: {}\n")  # config.yaml wins over .hydra's
    assert training_mixture(tmp_path) == {}
