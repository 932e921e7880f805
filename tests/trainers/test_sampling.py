"""Token-budget batching, mixture allocation, dynamic sampling, curriculum, checkpoints."""

from __future__ import annotations

import os

import pytest
import torch
from gym_llm_trainers.batching import Sample, collate, padding_fraction, token_budget_batches
from gym_llm_trainers.checkpoint import (
    latest_checkpoint,
    list_checkpoints,
    resolve_resume,
    save_checkpoint,
)
from gym_llm_trainers.config import CurriculumConfig, MixtureConfig, TrainerConfig, from_dict
from gym_llm_trainers.sampling import Curriculum, allocate, step_rng, zero_variance_groups
from hypothesis import given, settings
from hypothesis import strategies as st


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 3000), min_size=1, max_size=60), st.integers(1, 4096))
def test_token_budget_batches_cover_everything_within_budget(lengths, budget):
    batches = token_budget_batches(lengths, budget)
    flat = sorted(i for b in batches for i in b)
    assert flat == list(range(len(lengths)))  # every sequence exactly once
    for b in batches:
        padded = len(b) * max(lengths[i] for i in b)
        assert padded <= budget or len(b) == 1  # only a lone over-long sequence may exceed it


def test_token_budget_groups_similar_lengths_and_isolates_long_context():
    lengths = [10, 500, 12, 11, 490, 4000, 9]
    batches = token_budget_batches(lengths, budget=1024)
    assert [5] in batches  # the long-context episode travels alone
    assert sorted(map(sorted, batches)) == [[0, 2, 3, 6], [1, 4], [5]]
    assert padding_fraction(lengths, batches) < 0.05
    # a fixed count of 4 sequences per batch in arrival order wastes far more
    naive = [[0, 1, 2, 3], [4, 5, 6]]
    assert padding_fraction(lengths, naive) > 0.5


def test_collate_right_aligns_responses_and_masks():
    a = Sample([1, 2, 3], [4, 5], [1, 1], {"lp": [-0.1, -0.2]}, index=0)
    b = Sample([1], [6, 7, 8, 9], [1, 0, 0, 1], {"lp": [-1, 0, 0, -4]}, index=1)
    mb = collate([a, b], pad_id=0)
    assert mb.input_ids.tolist() == [[1, 2, 3, 4, 5], [1, 6, 7, 8, 9]]
    assert mb.targets.tolist() == [[2, 3, 4, 5], [6, 7, 8, 9]]
    assert mb.mask.tolist() == [[0, 0, 1, 1], [1, 0, 0, 1]]
    assert torch.allclose(mb.fields["lp"], torch.tensor([[0, 0, -0.1, -0.2], [-1, 0, 0, -4]]))
    c = Sample([1, 2, 3, 4, 5, 6], [7], [1], {"lp": [-0.5]}, index=2)
    mb = collate([a, c], pad_id=0)
    assert mb.input_ids.tolist() == [[0, 0, 1, 2, 3, 4, 5], [1, 2, 3, 4, 5, 6, 7]]
    assert mb.attention_mask.tolist() == [[0, 0, 1, 1, 1, 1, 1], [1] * 7]
    assert mb.position_ids.tolist() == [[0, 0, 0, 1, 2, 3, 4], list(range(7))]
    assert mb.mask.tolist() == [[1, 1], [0, 1]]


def test_allocate_is_low_variance_and_reproducible():
    probs = {"a": 0.5, "b": 0.25, "c": 0.25}
    draw = allocate(probs, 8, step_rng(0, 3))
    assert sorted(draw) == ["a"] * 4 + ["b"] * 2 + ["c"] * 2
    assert allocate(probs, 8, step_rng(0, 3)) == draw
    odd = allocate({"a": 0.5, "b": 0.3, "c": 0.2}, 3, step_rng(1, 0))
    assert len(odd) == 3 and odd.count("a") >= 1


def test_mixture_probabilities_by_env_and_domain_weights():
    mix = from_dict(MixtureConfig, {
        "envs": {"arith": {"id": "math/Arithmetic-v0", "weight": 1.0},
                 "tool": {"id": "math/PythonTool-v0", "weight": 1.0},
                 "code": {"id": "code/PythonFunctions-v0", "weight": 2.0}},
        "weights": {"math": 0.5},
    })
    assert mix.probabilities() == pytest.approx({"arith": 0.5 / 3, "tool": 0.5 / 3, "code": 2 / 3})


def test_config_rejects_unknown_keys_with_hint_and_bad_values():
    with pytest.raises(KeyError, match="total_steps"):
        from_dict(TrainerConfig, {"total_step": 3})
    with pytest.raises(ValueError, match="loss_agg"):
        TrainerConfig(loss_agg="sum")
    assert from_dict(TrainerConfig, {"sft": {"epochs": 1}}).sft.epochs == 1


def test_zero_variance_groups():
    assert zero_variance_groups([0, 0, 1, 1, 2], [1, 1, 0, 1, 0.3]) == {0, 2}


def test_curriculum_moves_difficulty_towards_target():
    cfg = CurriculumConfig(enabled=True, target_success=0.5, window=8, step_size=0.1, tolerance=0.1)
    cur = Curriculum(cfg, {"easy": 0.2, "hard": 0.5, "top": 1.0})
    assert not cur.update("easy", [1.0] * 7)  # window not full yet
    assert cur.update("easy", [1.0])  # 100% success: harder
    assert cur.difficulty("easy") == pytest.approx(0.3)
    assert cur.update("hard", [0.0] * 8)  # 0% success: easier
    assert cur.difficulty("hard") == pytest.approx(0.4)
    assert not cur.update("hard", [1, 0] * 4)  # on target: unchanged
    assert not cur.update("top", [1.0] * 8)  # already at the maximum
    m = cur.metrics()
    assert m["curriculum/easy/difficulty"] == pytest.approx(0.3)
    state = cur.state_dict()
    other = Curriculum(cfg, {"easy": 0.0, "hard": 0.0, "top": 0.0})
    other.load_state_dict(state)
    assert other.metrics() == m


def test_checkpoints_atomic_keep_last_and_resume_auto(tmp_path):
    root = tmp_path / "checkpoints"

    def write_model(d):
        d.mkdir()
        (d / "weights.bin").write_bytes(b"x")

    assert resolve_resume("auto", root) is None
    for step in (1, 2, 3):
        save_checkpoint(root, step, write_model, {"step": step}, keep_last=2)
    assert [p.name for p in list_checkpoints(root)] == ["step_000002", "step_000003"]
    # a half-written checkpoint of a killed run is invisible and cleaned next time
    (root / f".tmp-step_000004-{os.getpid() + 1}").mkdir()
    assert latest_checkpoint(root).name == "step_000003"
    assert resolve_resume("auto", root) == root / "step_000003"
    assert torch.load(root / "step_000003" / "trainer_state.pt")["step"] == 3
    save_checkpoint(root, 4, write_model, {"step": 4}, keep_last=2)
    assert not list(root.glob(".tmp-*"))
    assert resolve_resume("never", root) is None
    with pytest.raises(FileNotFoundError):
        resolve_resume(str(tmp_path / "nope"), root)
