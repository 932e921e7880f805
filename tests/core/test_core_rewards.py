import pytest

from gym_llm.envs.rewards import Gate, RewardResult, WeightedSum, as_result, call_reward


def has_box(task, response):
    return float("\\boxed" in response)


def is_right(task, response):
    return RewardResult(float(task in response), {"exact": 1.0}, {"why": "checked"})


def broken(task, response):
    raise ValueError("verifier crashed")


def test_weighted_sum_names_every_part():
    rubric = WeightedSum({"format": has_box, "correct": is_right}, weights={"format": 0.25, "correct": 0.75})
    r = rubric("42", "\\boxed{42}")
    assert r.score == pytest.approx(1.0)
    assert r.components == {"format": 1.0, "correct": 1.0, "exact": 1.0}
    assert r.info["why"] == "checked"
    r = rubric("42", "\\boxed{41}")
    assert r.score == pytest.approx(0.25) and r.components["correct"] == 0.0


def test_weighted_sum_rejects_unknown_weights_and_empty():
    with pytest.raises(ValueError, match="unknown parts"):
        WeightedSum({"a": has_box}, weights={"b": 1.0})
    with pytest.raises(ValueError):
        WeightedSum({})


def test_gate_blocks_correctness_until_format_holds():
    gate = Gate(has_box, then=lambda t, r: float(t in r), name="format")
    assert gate("42", "42").score == 0.0
    r = gate("42", "42")
    assert r.components == {"format": 0.0, "correct": 0.0} and "gated" in r.info
    r = gate("42", "\\boxed{42}")
    assert r.score == 1.0 and r.components == {"format": 1.0, "correct": 1.0}


def test_errors_become_reward_error_not_exceptions():
    r = call_reward(broken, "t", "r", "v")
    assert r.score == 0.0 and "verifier crashed" in r.error
    r = WeightedSum({"format": has_box, "v": broken})("t", "\\boxed{t}")
    assert r.score == 1.0 and r.error.startswith("v: ValueError")
    r = Gate(broken, then=has_box)("t", "x")
    assert r.score == 0.0 and r.error


def test_as_result():
    assert as_result(True).score == 1.0
    assert as_result(0.5, "x").components == {"x": 0.5}
    rr = RewardResult(1.0)
    assert as_result(rr) is rr
