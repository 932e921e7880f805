"""gym_llm.runtime.schedule and gym_llm.runtime.heldout: task ratios that adapt,
held-out evals that rotate, the forgetting alarm (pure: no env is run)."""

from __future__ import annotations

import math
import random

import pytest

from gym_llm.runtime.heldout import HeldoutCurves, eval_subset, rotation
from gym_llm.runtime.mixture import Mixture
from gym_llm.runtime.schedule import AdaptiveSchedule, EnvObservation, StaticSchedule, fit, observe

#: 3 domains, 6 envs; math weighs twice the others, code is one env
IDS = {"a1": "math/A-v0", "a2": "math/B-v0", "a3": "math/C-v0", "t1": "tool/A-v0", "t2": "tool/B-v0",
       "c1": "code/A-v0"}


def _mixture(**weights: float) -> Mixture:
    w = {k: weights.get(k, 1.0) for k in IDS}
    return Mixture(w, env_ids=IDS, domain_weights={"math": 2.0}, validate=False, name="m")


def _step(rng: random.Random, solved: dict[str, float]) -> dict[str, EnvObservation]:
    """One step's groups of 4: entry ``e`` solves each episode with probability ``solved[e]``."""
    groups = [(e, [float(rng.random() < p) for _ in range(4)]) for e, p in solved.items() for _ in range(3)]
    return observe(groups)


def test_observe_counts_flat_groups_and_measures_learnability_as_p_one_minus_p():
    seen = observe([("x", [1.0, 0.0, 1.0, 0.0]), ("x", [1.0, 1.0, 1.0, 1.0]), ("y", [0.0, 0.0]), ("y", [0.3])])
    assert seen["x"] == EnvObservation(groups=2, no_signal=1, learnability=0.25)
    assert seen["y"] == EnvObservation(groups=2, no_signal=1, learnability=0.0)  # a lone reward is not compared


def test_fit_clips_a_scaled_target_into_its_bounds_and_sums_to_the_total():
    rng = random.Random(0)
    for _ in range(200):
        keys = [f"k{i}" for i in range(rng.randrange(1, 12))]
        target = {k: rng.random() ** 3 + 1e-9 for k in keys}
        low = {k: rng.random() * 0.5 / len(keys) for k in keys}
        high = {k: low[k] + rng.random() * 3 / len(keys) for k in keys}
        total = rng.uniform(sum(low.values()), min(1.0, sum(high.values())))
        p = fit(target, low, high, total)
        assert sum(p.values()) == pytest.approx(total)
        assert all(low[k] - 1e-12 <= p[k] <= high[k] + 1e-12 for k in keys)
        free = [p[k] / target[k] for k in keys if low[k] + 1e-12 < p[k] < high[k] - 1e-12]
        assert max(free, default=1) == pytest.approx(min(free, default=1))  # one lambda for every free entry


def test_static_schedule_plans_exactly_the_mixture():
    mix = _mixture()
    static = StaticSchedule(mix)
    static.update(1, _step(random.Random(0), {k: 0.5 for k in IDS}))
    assert static.mixture(7) is mix and static.weights(7) == mix.probabilities
    plan = static.mixture(3).plan_groups(16, 4, seed=5, keys=("plan", 3, 0, 0))
    assert plan == mix.plan_groups(16, 4, seed=5, keys=("plan", 3, 0, 0))


def test_adaptive_follows_the_signal_within_floors_and_caps():
    mix = _mixture()
    prior = mix.probabilities
    sched = AdaptiveSchedule(mix, temperature=0.1, env_floor=0.25, domain_floor=0.5, env_cap=3.0)
    assert sched.weights(1) == pytest.approx(prior)  # every env equally optimistic: the prior
    rng = random.Random(0)
    # math and code never have a signal (always solved / never solved); tool is half solved
    solved = {"a1": 1.0, "a2": 1.0, "a3": 0.0, "t1": 0.5, "t2": 0.5, "c1": 0.0}
    for step in range(1, 30):
        sched.update(step, _step(rng, solved))
        w = sched.weights(step + 1)
        assert sum(w.values()) == pytest.approx(1.0)
        assert all(0.25 * prior[e] - 1e-12 <= w[e] <= 3.0 * prior[e] + 1e-12 for e in IDS)
        math_share = sum(w[e] for e in ("a1", "a2", "a3"))
        assert math_share >= 0.5 * sum(prior[e] for e in ("a1", "a2", "a3")) - 1e-12  # the domain floor
    # tool takes what the flat domains give up, down to their domain floors (code is one env: its floor)
    assert w["t1"] > 2 * prior["t1"] and w["c1"] == pytest.approx(0.5 * prior["c1"])
    assert math_share == pytest.approx(0.5 * sum(prior[e] for e in ("a1", "a2", "a3")))
    assert sched.scores()["t1"] > 0.5 > sched.scores()["a1"]


def test_adaptive_with_a_huge_temperature_is_the_prior_and_boosts_and_curriculum_hints_move_it():
    mix = _mixture()
    flat = AdaptiveSchedule(mix, temperature=1e9)
    flat.update(1, _step(random.Random(1), {"a1": 0.5, "t1": 0.0}))
    assert flat.weights(2) == pytest.approx(mix.probabilities)
    sched = AdaptiveSchedule(mix, forgetting_boost=3.0, env_cap=4.0)
    sched.update(1, {}, boosted=["t1"])
    w = sched.weights(2)
    assert w["t1"] / mix.probabilities["t1"] == pytest.approx(3 * w["t2"] / mix.probabilities["t2"])
    # an env the curriculum moves is kept at its prior; one at its hardest and unsolved no higher
    starved = AdaptiveSchedule(mix, temperature=0.05)
    for step in range(1, 10):
        starved.update(step, _step(random.Random(step), {"a1": 0.5, "a2": 0.0, "a3": 0.0}), steered=["a2"],
                       unsolved=["a3"], boosted=["a3"])
    w = starved.weights(10)
    assert w["a2"] >= mix.probabilities["a2"] - 1e-12 and w["a3"] <= mix.probabilities["a3"] + 1e-12
    with pytest.raises(ValueError, match="env_cap"):
        AdaptiveSchedule(mix, env_cap=0.5)


def test_adaptive_weights_apply_after_the_delay_and_a_restored_schedule_chooses_the_same():
    mix = _mixture()
    solved = {"a1": 0.9, "a2": 0.5, "t1": 0.2, "c1": 0.0}
    observed = {s: _step(random.Random(s), solved) for s in range(1, 9)}

    def run(sched: AdaptiveSchedule, steps: range) -> dict[int, tuple]:
        """Each step's weights and plan, then the step's update (the curriculum moves a2 every other step)."""
        chosen = {}
        for step in steps:
            chosen[step] = (sched.weights(step), sched.mixture(step).plan_groups(8, 2, seed=0, keys=(step,)))
            sched.update(step, observed[step], steered=["a2"] if step % 2 else [])
        return chosen

    whole = AdaptiveSchedule(mix, delay=1)
    uninterrupted = run(whole, range(1, 9))
    assert uninterrupted[2][0] == uninterrupted[1][0] != uninterrupted[3][0]  # update(1) applies from step 3
    before = AdaptiveSchedule(mix, delay=1)
    run(before, range(1, 5))
    after = AdaptiveSchedule(mix, delay=1)
    after.load_state_dict(before.state_dict())
    assert run(after, range(5, 9)) == {s: uninterrupted[s] for s in range(5, 9)}
    assert after.state_dict() == whole.state_dict()
    assert run(AdaptiveSchedule(mix, delay=1), range(5, 9)) != {s: uninterrupted[s] for s in range(5, 9)}


def test_rotation_covers_every_env_every_k_evals_and_the_full_evals_cover_all():
    costs = {f"e{i}": c for i, c in enumerate([16, 16, 40, 16, 100, 8, 8, 8])}
    chunks = rotation(costs, 48)
    assert [n for c in chunks for n in c] == list(costs)  # in order, each once
    assert all(sum(costs[n] for n in c) <= 48 or len(c) == 1 for c in chunks)
    k = len(chunks)
    seen: dict[str, list[int]] = {n: [] for n in costs}
    for index in range(3 * k):
        for n in eval_subset(chunks, index, full=False):
            seen[n].append(index)
    assert all(b - a == k for idx in seen.values() for a, b in zip(idx, idx[1:], strict=False))
    assert eval_subset(chunks, 1, full=True) == list(costs)
    assert rotation(costs, None) == [list(costs)]


def test_forgetting_alarm_fires_once_per_fall_for_envs_and_domains_and_survives_a_restore():
    curves = HeldoutCurves(["math/A-v0", "math/B-v0", "tool/A-v0"], threshold=0.1, window=2)
    curves.record({"math/A-v0": 0.5, "math/B-v0": 0.5, "tool/A-v0": 0.2})
    curves.record({"math/A-v0": 0.6, "tool/A-v0": 0.2})  # math/B-v0 keeps its last value
    assert curves.latest() == {"math/A-v0": 0.6, "math/B-v0": 0.5, "tool/A-v0": 0.2}
    metrics, alerts = curves.record({"math/A-v0": 0.3, "math/B-v0": 0.5})
    assert metrics["heldout_domain/math/reward/mean"] == pytest.approx(0.4)
    assert metrics["forgetting/math/A-v0/drop"] == pytest.approx(0.6 - 0.45)
    assert [a.metric for a in alerts] == ["heldout/math/A-v0/reward/mean"]
    assert "fell from its best 0.600 to 0.450" in alerts[0].message()
    restored = HeldoutCurves(curves.keys, threshold=0.1, window=2)
    restored.load_state_dict(curves.state_dict())
    for c in (curves, restored):
        metrics, alerts = c.record({"math/A-v0": 0.2, "math/B-v0": 0.3})
        # the env's alarm fired already; the domain's mean fell (0.55 -> 0.35 / 0.25) and fires now
        assert [a.metric for a in alerts] == ["heldout_domain/math/reward/mean"]
        assert c.forgetting() == ["math/A-v0", "math/B-v0"]
    _, alerts = curves.record({"math/A-v0": 0.6, "math/B-v0": 0.55})  # back within the threshold...
    _, alerts = curves.record({"math/A-v0": 0.6, "math/B-v0": 0.55})
    assert not alerts and curves.forgetting() == []
    _, alerts = curves.record({"math/A-v0": 0.1})  # ...and a new fall fires again, once
    assert "heldout/math/A-v0/reward/mean" in [a.metric for a in alerts]
    _, alerts = curves.record({"math/A-v0": 0.1})
    assert "heldout/math/A-v0/reward/mean" not in [a.metric for a in alerts]
    assert math.isfinite(curves.drop("heldout/tool/A-v0/reward/mean") or 0.0)
