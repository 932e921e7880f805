"""The rollout engine: groups, continuous batching across turns, limits,
failures that mark a trajectory instead of losing it, JSONL."""

from __future__ import annotations

import asyncio
import dataclasses
import json

import pytest

import gym_llm
from gym_llm.envs.taskref import TaskRef
from gym_llm.runtime.policies import SamplingParams
from gym_llm.runtime.rollout import (
    EpisodeSpec,
    RolloutStats,
    Trajectory,
    acollect,
    append_jsonl,
    collect,
    plan_groups,
    read_jsonl,
    write_jsonl,
)

from .conftest import SlowEnv

FAST = SamplingParams(max_new_tokens=8)
DESIGN_FIELDS = ["env_id", "task_id", "group_id", "messages", "prompt_token_ids", "response_token_ids",
                 "loss_mask", "logprobs", "turn_rewards", "reward", "reward_components", "num_turns",
                 "terminated", "truncated"]


def test_groups_share_a_task_and_plans_are_deterministic(hf_policy):
    mixture = {"rollouttest/Echo-v0": 0.5, "rollouttest/Observe-v0": 0.5}
    plan = plan_groups(mixture, num_groups=6, group_size=3, seed=11)
    assert plan == plan_groups(mixture, num_groups=6, group_size=3, seed=11)
    assert plan != plan_groups(mixture, num_groups=6, group_size=3, seed=12)
    trajs = collect(hf_policy, mixture, num_groups=6, group_size=3, seed=11, sampling=FAST)
    assert [(t.env_id, t.group_id, t.sample_index) for t in trajs] == \
        [(s.env_id, s.group_id, s.sample_index) for s in plan]
    groups: dict[str, set] = {}
    for t in trajs:
        groups.setdefault(t.group_id, set()).add((t.env_id, t.task_id))
    assert len(groups) == 6
    assert all(len(members) == 1 for members in groups.values())  # one task per group
    assert len({next(iter(m)) for m in groups.values()}) > 1  # groups differ
    assert {t.env_id for t in trajs} == set(mixture)
    again = collect(hf_policy, mixture, num_groups=6, group_size=3, seed=11, sampling=FAST)
    assert [t.task_id for t in again] == [t.task_id for t in trajs]


def test_explicit_episodes_pick_tasks_and_split(hf_policy):
    specs = [EpisodeSpec(TaskRef("rollouttest/Echo-v0", "heldout", task_index=i), group_id=f"eval-{i}")
             for i in range(3)]
    trajs = collect(hf_policy, "rollouttest/Echo-v0", episodes=specs, sampling=FAST)
    env = gym_llm.make("rollouttest/Echo-v0", split="heldout")
    assert [t.task_id for t in trajs] == [env.task_set.get("heldout", i).id for i in range(3)]
    assert all(t.split == "heldout" for t in trajs)
    assert [t.group_id for t in trajs] == ["eval-0", "eval-1", "eval-2"]


def test_no_lockstep_fast_episodes_finish_while_a_slow_one_waits(hf_policy):
    """One environment takes 1.5 s per step, the others none: the fast
    episodes run all their turns while the slow one is still in its first."""
    SlowEnv.events.clear()
    vec = gym_llm.make_vec("rollouttest/Slow-v0", num_envs=4, seed=0,
                           env_kwargs={"max_turns": 3, "slow_delay": 1.5})
    specs = [EpisodeSpec(TaskRef("rollouttest/Slow-v0", kwargs={"max_turns": 3, "slow_delay": 1.5}, task_index=i),
                         group_id=str(i)) for i in range(4)]
    finished: list[str] = []
    trajs = collect(hf_policy, vec, episodes=specs, sampling=FAST, on_trajectory=lambda t: finished.append(t.task_id))
    assert all(t.num_turns == 3 and t.truncated for t in trajs)
    slow = trajs[0].task_id
    first_slow_end = min(ts for tid, turn, kind, ts in SlowEnv.events if tid == slow and kind == "end")
    fast_last_ends = [ts for tid, turn, kind, ts in SlowEnv.events if tid != slow and turn == 2 and kind == "end"]
    assert len(fast_last_ends) == 3
    assert max(fast_last_ends) < first_slow_end
    assert finished[-1] == slow


def test_turn_and_token_limits_truncate_and_say_why(hf_policy):
    trajs = collect(hf_policy, "rollouttest/Observe-v0", num_groups=2, max_turns=1, sampling=FAST)
    for t in trajs:
        assert t.num_turns == 1 and t.truncated and not t.terminated
        assert "rollout max_turns=1" in t.truncated_reason
    limit = 110
    trajs = collect(hf_policy, "rollouttest/Observe-v0", num_groups=3, max_tokens=limit,
                    sampling=SamplingParams(max_new_tokens=40, ignore_eos=True))
    for t in trajs:
        t.check()
        assert len(t.token_ids) <= limit
        assert t.truncated and t.truncated_reason == "max_tokens=110 reached"
        assert t.num_turns == 2 and t.info["dropped_env_tokens"] > 0
        # the second turn was cut to the room left
        assert t.turn_spans[1][1] - t.turn_spans[1][0] == limit - len(t.prompt_token_ids) - t.turn_spans[1][0]


def test_env_failures_mark_trajectories_and_lose_none(hf_policy):
    stats = RolloutStats()
    trajs = collect(hf_policy, "rollouttest/Crash-v0",
                    episodes=[EpisodeSpec(TaskRef("rollouttest/Crash-v0", task_index=i)) for i in range(8)],
                    num_envs=2, sampling=FAST, stats=stats)
    assert len(trajs) == 8 and stats.episodes == 8
    crashed = [t for t in trajs if t.error]
    unscored = [t for t in trajs if t.reward_error]
    assert crashed and unscored
    for t in crashed:
        assert t.error == "RuntimeError: sandbox crashed" and not t.ok
        assert t.num_turns == 2 and t.turn_rewards == [0.5]  # what happened before the crash is kept
        t.check()
    for t in unscored:
        assert t.reward_error == "verifier unavailable" and t.error is None and not t.ok
    assert stats.failed == len(crashed)


def test_env_timeout_is_an_error_not_a_hang(hf_policy):
    trajs = collect(hf_policy, "rollouttest/Slow-v0",
                    episodes=[EpisodeSpec(TaskRef("rollouttest/Slow-v0", task_index=i, kwargs={"slow_delay": 30.0}))
                              for i in range(2)],
                    env_timeout_s=0.5, sampling=FAST)
    assert trajs[0].error is not None and "TimeoutError" in trajs[0].error
    assert trajs[1].error is None


def test_collect_runs_inside_a_running_loop(hf_policy):
    async def main():
        inner = await acollect(hf_policy, "rollouttest/Echo-v0", num_groups=2, sampling=FAST)
        outer = collect(hf_policy, "rollouttest/Echo-v0", num_groups=2, sampling=FAST)  # nested: own thread
        return inner, outer

    inner, outer = asyncio.run(main())
    assert len(inner) == len(outer) == 2
    assert [t.task_id for t in inner] == [t.task_id for t in outer]


def test_jsonl_round_trip(hf_policy, tmp_path):
    trajs = collect(hf_policy, {"rollouttest/Echo-v0": 1, "rollouttest/Crash-v0": 1}, num_groups=4,
                    group_size=2, sampling=FAST)
    for name in ("t.jsonl", "t.jsonl.gz"):
        path = tmp_path / name
        assert write_jsonl(trajs, path) == len(trajs)
        back = list(read_jsonl(path))
        assert back == trajs
    first = json.loads((tmp_path / "t.jsonl").read_text().splitlines()[0])
    assert [k for k in first if k in DESIGN_FIELDS] == DESIGN_FIELDS
    assert set(first) == {f.name for f in dataclasses.fields(Trajectory)}
    assert len(first["logprobs"]) == sum(first["loss_mask"])
    # Unknown keys (a newer writer) survive in info instead of failing.
    newer = Trajectory.from_dict({**first, "new_field": 1})
    assert newer.info["new_field"] == 1
    # A jailed program's file name that is not UTF-8 reaches info as lone surrogates
    # (os.fsdecode): the file is still written, as ASCII escapes, and reads back the same.
    odd = dataclasses.replace(trajs[0], info={**trajs[0].info, "reason": "unexpected \udcff\udcfe"})
    plain = dataclasses.replace(trajs[1], info={**trajs[1].info, "reason": "déjà vu"})
    for name in ("odd.jsonl", "odd.jsonl.gz"):
        assert write_jsonl([odd, plain], tmp_path / name) == 2
        assert list(read_jsonl(tmp_path / name)) == [odd, plain]
    assert append_jsonl([odd], tmp_path / "odd.jsonl") == 1
    assert list(read_jsonl(tmp_path / "odd.jsonl"))[-1] == odd
    assert "déjà vu" in (tmp_path / "odd.jsonl").read_text().splitlines()[1]  # other lines stay UTF-8


def test_bad_arguments_are_refused(hf_policy):
    with pytest.raises(ValueError):
        collect(hf_policy, "rollouttest/Echo-v0")  # neither num_groups nor episodes
    with pytest.raises(gym_llm.UnknownEnvError):
        collect(hf_policy, "rollouttest/Nope-v0", num_groups=1)
    with pytest.raises(ValueError):
        SamplingParams(top_p=0)


def test_a_long_lived_vector_env_reuses_its_instances(hf_policy):
    vec = gym_llm.make_vec("rollouttest/Echo-v0", num_envs=4, seed=0)
    first = collect(hf_policy, vec, num_groups=4, group_size=2, seed=1, sampling=FAST)
    made = vec.instances_made
    assert made <= 4  # at most one per slot running at once
    second = collect(hf_policy, vec, num_groups=4, group_size=2, seed=2, sampling=FAST)
    assert vec.instances_made == made
    assert {t.group_id for t in first}.isdisjoint({t.group_id for t in second})
    vec.close()
