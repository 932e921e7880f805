"""The mixture presets of the reasoning issue: `mixture=reasoning` (every
reasoning id, equal weight) and `mixture=everything` (every registered id),
through the pattern rule of :func:`gym_llm.runtime.mixture.expand_ids`."""

from __future__ import annotations

import pytest
from gym_llm_trainers.train import compose, run_config

import gym_llm
from gym_llm.runtime.mixture import expand_ids

REASONING = [i for i in gym_llm.list_envs() if i.startswith("reasoning/")]


def test_patterns_name_every_matching_id():
    assert expand_ids("reasoning/*") == REASONING
    assert expand_ids("*") == gym_llm.list_envs()
    assert expand_ids("math/Arithmetic-v0") == ["math/Arithmetic-v0"]
    assert expand_ids("not/AnId-v0") == ["not/AnId-v0"]  # looked up later, where unknown ids are reported
    with pytest.raises(ValueError, match="matches no registered"):
        expand_ids("nodomain/*")


def test_reasoning_preset_is_every_family_at_equal_weight():
    mixture = run_config(compose(["mixture=reasoning"])).mixture
    probabilities = mixture.mixture().by_env_id()
    assert sorted(probabilities) == REASONING
    assert max(probabilities.values()) == pytest.approx(min(probabilities.values()))
    entry = mixture.entries()["all:reasoning/Maze-v0"]
    assert entry.kwargs == {"difficulty": 0.0, "max_turns": 1}


def test_everything_preset_is_every_registered_id():
    probabilities = run_config(compose(["mixture=everything"])).mixture.mixture().by_env_id()
    assert sorted(probabilities) == gym_llm.list_envs()
