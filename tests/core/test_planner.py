"""gym_llm.runtime.mixture.Mixture: mixture forms, domain weights, group and held-out plans."""

from __future__ import annotations

import asyncio
from collections import Counter

import numpy as np
import pytest

import gym_llm
from gym_llm.envs.taskref import TaskRef
from gym_llm.runtime.mixture import EpisodeSpec, Mixture, heldout_plan
from gym_llm.runtime.rollout import plan_groups

ARITH, ALG, CODE = "math/Arithmetic-v0", "math/Algebra-v0", "code/PythonFunctions-v0"


def test_entries_weigh_entry_weight_times_domain_weight():
    mix = Mixture({"a": 1.0, "b": 1.0, "c": 2.0, "off": 0.0},
                  env_ids={"a": ARITH, "b": ALG, "c": CODE, "off": ARITH}, domain_weights={"math": 0.5})
    assert mix.probabilities == pytest.approx({"a": 0.5 / 3, "b": 0.5 / 3, "c": 2 / 3})
    assert mix.entries == ["a", "b", "c"]  # weight 0: not part of the mixture
    assert mix.env_ids == [ARITH, ALG, CODE]
    assert mix.by_env_id() == pytest.approx({ARITH: 0.5 / 3, ALG: 0.5 / 3, CODE: 2 / 3})
    assert mix.env_id("c") == CODE and mix.env_id(ALG) == ALG  # a non-entry names an id itself


def test_entries_sharing_an_id_report_under_distinct_keys():
    mix = Mixture({"easy": 1, "hard": 1, "code": 1}, env_ids={"easy": ARITH, "hard": ARITH, "code": CODE})
    assert mix.metric_keys() == {"easy": f"{ARITH}#easy", "hard": f"{ARITH}#hard", "code": CODE}
    assert mix.by_env_id() == pytest.approx({ARITH: 2 / 3, CODE: 1 / 3})


def test_bad_mixtures_fail_early():
    for bad in ({ARITH: -1}, {ARITH: float("inf")}, {ARITH: 0}, {}):
        with pytest.raises(ValueError):
            Mixture(bad)
    with pytest.raises(ValueError, match="'mine'"):
        Mixture({"x": 1.0}, env_ids={"x": ARITH}, domain_weights={"math": 0}, name="mine")
    with pytest.raises(gym_llm.UnknownEnvError):
        Mixture({"math/Arithmetc-v0": 1.0})
    Mixture({"later/Registered-v0": 1.0}, validate=False)  # a training config's ids may register later


def test_of_accepts_every_form_and_passes_a_mixture_through():
    mix = Mixture.of({ARITH: 3, CODE: 1})
    assert Mixture.of(mix) is mix
    assert Mixture.of([ARITH, CODE, ARITH]).probabilities == pytest.approx({ARITH: 2 / 3, CODE: 1 / 3})
    assert Mixture.of(ARITH).probabilities == {ARITH: 1.0}


def test_group_plans_are_counter_based_low_variance_and_share_a_task_per_group():
    mix = Mixture({"a": 0.5, "b": 0.25, "c": 0.25}, env_ids={"a": ARITH, "b": ALG, "c": CODE})
    plan = mix.plan_groups(8, 3, seed=0, keys=("plan", 4, 0, 0), group_prefix="s4-g")
    assert plan == mix.plan_groups(8, 3, seed=0, keys=("plan", 4, 0, 0), group_prefix="s4-g")
    assert plan != mix.plan_groups(8, 3, seed=0, keys=("plan", 5, 0, 0), group_prefix="s4-g")
    groups = [plan[i:i + 3] for i in range(0, len(plan), 3)]
    assert Counter(g[0].entry for g in groups) == {"a": 4, "b": 2, "c": 2}  # floor(p * n) each
    for g, members in enumerate(groups):
        assert {(s.task, s.group_id, s.entry) for s in members} == \
            {(TaskRef(mix.env_id(members[0].entry), "train", members[0].task.seed), f"s4-g{g}", members[0].entry)}
        assert [s.sample_index for s in members] == [0, 1, 2]
    with pytest.raises(ValueError):
        mix.plan_groups(1, 0, seed=0)


def test_rollout_plan_groups_is_the_mixture_plan_with_seed_named_groups():
    plan = plan_groups({ARITH: 0.5, CODE: 0.5}, 4, 2, seed=7)
    assert [s.group_id for s in plan] == [f"7-{g}" for g in range(4) for _ in range(2)]
    assert Counter(s.env_id for s in plan) == {ARITH: 4, CODE: 4}
    assert plan == Mixture.of({ARITH: 0.5, CODE: 0.5}).plan_groups(4, 2, seed=7, group_prefix="7-")


def test_plans_name_the_split_and_each_entrys_kwargs():
    mix = Mixture({"easy": 1.0, "hard": 1.0}, env_ids={"easy": ARITH, "hard": ARITH})
    plan = mix.plan_groups(4, 1, seed=0, split="heldout", kwargs={"hard": {"difficulty": 0.9}})
    assert {(s.entry, s.task.split, dict(s.task.kwargs).get("difficulty")) for s in plan} == \
        {("easy", "heldout", None), ("hard", "heldout", 0.9)}


def test_heldout_plan_is_task_i_with_seed_plus_i():
    plan = heldout_plan(ARITH, [0, 2], seed=10, samples=2, group_id=lambda i: f"eval-{i}", entry="arith",
                        kwargs={"difficulty": 0.5})
    task_0, task_2 = (TaskRef(ARITH, "heldout", 10 + i, i, {"difficulty": 0.5}) for i in (0, 2))
    assert plan == [
        EpisodeSpec(task_0, group_id="eval-0", sample_index=0, entry="arith"),
        EpisodeSpec(task_0, group_id="eval-0", sample_index=1, entry="arith"),
        EpisodeSpec(task_2, group_id="eval-2", sample_index=0, entry="arith"),
        EpisodeSpec(task_2, group_id="eval-2", sample_index=1, entry="arith"),
    ]


def test_draws_follow_the_probabilities():
    mix = Mixture.of({ARITH: 0.8, CODE: 0.2})
    rng = np.random.default_rng(0)
    draws = Counter(mix.draw(rng) for _ in range(2000))
    assert draws[ARITH] / 2000 == pytest.approx(0.8, abs=0.04)


def test_a_vector_env_over_named_entries_makes_each_with_its_own_kwargs():
    mix = Mixture({"easy": 1.0, "hard": 1.0}, env_ids={"easy": ARITH, "hard": ARITH})
    vec = gym_llm.make_vec(mix, num_envs=2, seed=0,
                           env_kwargs={"easy": {"difficulty": 0.0}, "hard": {"difficulty": 0.9}})
    vec.reset()  # a drawn entry per slot

    async def play() -> tuple[float, float]:
        _, easy = await vec.areset_at(0, entry="easy", seed=1)
        _, hard = await vec.areset_at(1, entry="hard", seed=1)
        return easy["difficulty"], hard["difficulty"]

    easy, hard = asyncio.run(play())
    assert easy < hard
    vec.release(1)
    vec.set_entry_kwargs("hard", {"difficulty": 0.0})  # the pooled "hard" instances are dropped
    _, info = asyncio.run(vec.areset_at(1, entry="hard", seed=1))
    assert info["difficulty"] == easy
    vec.close()
