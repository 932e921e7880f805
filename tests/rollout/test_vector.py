"""make_vec: ids, lists and mixtures; deterministic draws; sync and async
stepping; same-step autoreset; per-slot stats."""

from __future__ import annotations

import time

import numpy as np
import pytest

import gym_llm
from gym_llm.runtime.vector import AsyncVectorLLMEnv, SyncVectorLLMEnv, make_vec, normalize_mixture

ECHO, OBSERVE, SLOW = "rollouttest/Echo-v0", "rollouttest/Observe-v0", "rollouttest/Slow-v0"


def test_mixture_forms_and_validation():
    assert normalize_mixture(ECHO) == {ECHO: 1.0}
    assert normalize_mixture([ECHO, OBSERVE, ECHO]) == pytest.approx({ECHO: 2 / 3, OBSERVE: 1 / 3})
    assert normalize_mixture({ECHO: 3, OBSERVE: 1}) == {ECHO: 0.75, OBSERVE: 0.25}
    assert normalize_mixture({ECHO: 1, OBSERVE: 0}) == {ECHO: 1.0}
    for bad in ({ECHO: -1}, {ECHO: float("nan")}, {ECHO: 0}, {}, []):
        with pytest.raises(ValueError):
            normalize_mixture(bad)
    with pytest.raises(gym_llm.UnknownEnvError):
        make_vec("rollouttest/Ech-v0", 2)
    with pytest.raises(ValueError):
        make_vec(ECHO, 2, vectorization_mode="threads")
    assert isinstance(gym_llm.make_vec(ECHO, 2), AsyncVectorLLMEnv)
    assert isinstance(make_vec(ECHO, 2, vectorization_mode="sync"), SyncVectorLLMEnv)


def test_mixture_draws_follow_weights_and_seed():
    mix = {ECHO: 0.8, OBSERVE: 0.2}
    vec = make_vec(mix, num_envs=4, seed=3)
    draws = [vec.draw_env_id(slot) for _ in range(500) for slot in range(4)]
    assert draws.count(ECHO) / len(draws) == pytest.approx(0.8, abs=0.04)
    again = make_vec(mix, num_envs=4, seed=3)
    assert [again.draw_env_id(slot) for _ in range(500) for slot in range(4)] == draws
    other = make_vec(mix, num_envs=4, seed=4)
    assert [other.draw_env_id(slot) for _ in range(500) for slot in range(4)] != draws


def play(vec, rounds: int):
    """Step every slot ``rounds`` times with a fixed answer; record what happened."""
    obs, infos = vec.reset()
    log = [[(i["env_id"], i["task_id"]) for i in infos]]
    for _ in range(rounds):
        obs, rewards, term, trunc, infos = vec.step(["apple"] * vec.num_envs)
        log.append([(i.get("env_id"), i.get("task_id"), float(r), bool(a), bool(b))
                    for i, r, a, b in zip(infos, rewards, term, trunc, strict=True)])
    return log


def test_sync_and_async_agree_and_are_deterministic():
    mix = {ECHO: 0.5, OBSERVE: 0.5}
    a = play(make_vec(mix, num_envs=3, seed=5, vectorization_mode="async"), 7)
    b = play(make_vec(mix, num_envs=3, seed=5, vectorization_mode="sync"), 7)
    c = play(make_vec(mix, num_envs=3, seed=5), 7)
    assert a == b == c
    assert play(make_vec(mix, num_envs=3, seed=6), 7) != a
    assert {entry[0] for row in a for entry in row} == set(mix)  # both domains in one batch


def test_autoreset_same_step_and_stats():
    vec = make_vec(ECHO, num_envs=2, seed=0, env_kwargs={"max_turns": 2})
    obs, infos = vec.reset()
    assert all(o[-1]["role"] == "user" for o in obs)
    obs, rewards, term, trunc, infos = vec.step(["wrong", "wrong"])
    assert not term.any() and not trunc.any()
    assert [o[0]["content"] for o in obs] == ["Incorrect, try again."] * 2
    answer = vec.envs[0].unwrapped.task.answer
    obs, rewards, term, trunc, infos = vec.step([answer, "wrong"])
    assert term.all() and rewards.tolist() == [1.0, 0.0]  # the last attempt ends the episode
    for slot in (0, 1):
        info = infos[slot]
        assert "final_info" in info and "final_obs" in info and info["final_obs"] == []
        assert info["task_id"] == vec.envs[slot].unwrapped.task.id  # the new episode's reset info
        assert obs[slot][-1]["role"] == "user" and "Repeat the word" in obs[slot][-1]["content"]
    assert isinstance(rewards, np.ndarray) and term.dtype == bool
    stats = vec.episode_stats()
    assert [s["episodes"] for s in stats] == [1, 1]
    assert [s["steps"] for s in stats] == [2, 2]
    assert stats[0]["mean_episode_reward"] == 1.0 and stats[1]["mean_episode_reward"] == 0.0
    assert stats[0]["episodes_by_env"] == {ECHO: 1}
    # None leaves a slot untouched.
    turn_before = vec.envs[1].unwrapped.turn
    _, _, _, _, infos = vec.step(["x", None])
    assert infos[1] == {"skipped": True} and vec.envs[1].unwrapped.turn == turn_before
    with pytest.raises(ValueError):
        vec.step(["x"])


def test_async_steps_environments_concurrently():
    kwargs = {"delay": 0.4, "slow_delay": 0.4}
    timings = {}
    for mode in ("async", "sync"):
        vec = make_vec(SLOW, num_envs=6, seed=0, env_kwargs=kwargs, vectorization_mode=mode)
        vec.reset()
        t0 = time.perf_counter()
        _, rewards, _, _, infos = vec.step(["go"] * 6)
        assert rewards.tolist() == [1.0] * 6 and not any("reward_error" in i for i in infos)
        timings[mode] = time.perf_counter() - t0
        assert sum(s["step_time_s"] for s in vec.episode_stats()) >= 6 * 0.4 * 0.9
    assert timings["async"] < 1.2 < 2.4 * 0.9 < timings["sync"]
