"""Token-budget batching, mixture configs, dynamic sampling, curriculum, checkpoints."""

from __future__ import annotations

import os

import pytest
import torch
from gym_llm_trainers.batching import Sample, collate, padding_fraction, plan_micro_batches
from gym_llm_trainers.checkpoint import (
    latest_checkpoint,
    list_checkpoints,
    resolve_resume,
    save_checkpoint,
)
from gym_llm_trainers.collection import zero_variance_groups
from gym_llm_trainers.config import CurriculumConfig, MixtureConfig, TrainerConfig, from_dict
from gym_llm_trainers.curriculum import Curriculum
from hypothesis import given, settings
from hypothesis import strategies as st


def _cost(samples, batch):
    prompts = {tuple(samples[i].prompt_ids) for i in batch}
    return (len(prompts) * max(len(p) for p in prompts)
            + len(batch) * max(len(samples[i].response_ids) for i in batch))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(1, 40), st.integers(0, 3000)), min_size=1, max_size=60),
       st.integers(1, 4096))
def test_micro_batches_cover_everything_within_budget(spec, budget):
    prompts = {g: [g] * (1 + 97 * g) for g in range(6)}
    samples = [Sample(prompts[g], [1] * r, [1] * r, index=i) for i, (g, r, _) in enumerate(spec)]
    batches = plan_micro_batches(samples, budget)
    assert sorted(i for b in batches for i in b) == list(range(len(samples)))  # each exactly once
    for b in batches:
        assert _cost(samples, b) <= budget or len(b) == 1  # only a lone over-long sample may exceed it
    assert plan_micro_batches(samples, budget) == batches


def test_groups_share_their_prompt_and_long_context_travels_alone():
    long_prompt, short = list(range(600)), list(range(50))
    group = [Sample(long_prompt, [1] * 30, [1] * 30, index=i) for i in range(8)]
    others = [Sample(short + [i], [2] * 10, [1] * 10, index=8 + i) for i in range(4)]
    huge = Sample(list(range(5000)), [3] * 20, [1] * 20, index=12)
    samples = group + others + [huge]
    batches = plan_micro_batches(samples, budget=1024)
    assert [12] in batches  # the long-context episode gets its own micro-batch
    assert list(range(8)) in [sorted(b) for b in batches]  # the group stays whole: 600 + 8 x 30 tokens
    assert _cost(samples, next(b for b in batches if 0 in b)) == 600 + 8 * 30
    assert padding_fraction(samples, batches) < 0.05
    # the same sequences one per row, four at a time in arrival order, waste far more
    naive = [Sample(s.prompt_ids + [s.index], s.response_ids, s.loss_mask, index=s.index) for s in samples]
    assert padding_fraction(naive, [[0, 8, 1, 9], [2, 10, 3, 11], [4, 12, 5], [6, 7]]) > 0.5
    # a group larger than the budget is split, never dropped
    parts = plan_micro_batches(group, budget=700)
    assert sorted(i for b in parts for i in b) == list(range(8)) and len(parts) > 1


def test_collate_layout():
    a = Sample([1, 2, 3], [4, 5], [1, 1], {"lp": [-0.1, -0.2]}, index=0)
    b = Sample([1, 2, 3], [6, 7, 8, 9], [1, 0, 0, 1], {"lp": [-1, 0, 0, -4]}, index=1)
    c = Sample([7], [8], [1], {"lp": [-0.5]}, index=2)
    mb = collate([a, b, c], pad_id=0)
    assert mb.prompt_ids.tolist() == [[1, 2, 3], [0, 0, 7]]  # each distinct prompt once, left padded
    assert mb.prompt_attention.tolist() == [[1, 1, 1], [0, 0, 1]]
    assert mb.prompt_positions.tolist() == [[0, 1, 2], [0, 0, 0]]
    assert mb.prompt_index.tolist() == [0, 0, 1]
    assert mb.response_ids.tolist() == [[4, 5, 0, 0], [6, 7, 8, 9], [8, 0, 0, 0]]  # right padded
    assert mb.response_positions.tolist() == [[3, 4, 5, 6], [3, 4, 5, 6], [1, 2, 3, 4]]
    assert mb.mask.tolist() == [[1, 1, 0, 0], [1, 0, 0, 1], [1, 0, 0, 0]]
    assert torch.allclose(mb.fields["lp"], torch.tensor([[-0.1, -0.2, 0, 0], [-1, 0, 0, -4], [-0.5, 0, 0, 0]]))
    assert [r.tolist() for r in mb.rows(mb.response_ids)] == [[4, 5], [6, 7, 8, 9], [8]]


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
