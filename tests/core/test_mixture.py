"""gym_llm.runtime.mixture: the one planner of the vector envs, the trainer and the evaluator."""

from __future__ import annotations

from gym_llm.runtime.mixture import allocate, step_rng


def test_allocate_is_low_variance_and_reproducible():
    probs = {"a": 0.5, "b": 0.25, "c": 0.25}
    draw = allocate(probs, 8, step_rng(0, 3))
    assert sorted(draw) == ["a"] * 4 + ["b"] * 2 + ["c"] * 2
    assert allocate(probs, 8, step_rng(0, 3)) == draw
    odd = allocate({"a": 0.5, "b": 0.3, "c": 0.2}, 3, step_rng(1, 0))
    assert len(odd) == 3 and odd.count("a") >= 1
