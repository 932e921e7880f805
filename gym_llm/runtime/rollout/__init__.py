"""Rollouts: drive a policy through vectorised environments and keep
token-exact trajectories.

    from gym_llm.runtime.rollout import collect, write_jsonl
    from gym_llm.runtime.policies import HFPolicy, SamplingParams
    policy = HFPolicy(gym_llm.runtime.models.tiny_model_path())
    trajs = collect(policy, {"math/Arithmetic-v0": 1.0}, num_groups=8, group_size=4,
                    sampling=SamplingParams(temperature=1.0, max_new_tokens=128))
    write_jsonl(trajs, "rollouts.jsonl")
"""

from gym_llm.runtime.chat import ChatFormat
from gym_llm.runtime.rollout.engine import EpisodeSpec, RolloutStats, acollect, collect, plan_groups
from gym_llm.runtime.rollout.trajectory import Trajectory, append_jsonl, read_jsonl, write_jsonl

__all__ = [
    "Trajectory", "write_jsonl", "read_jsonl", "append_jsonl", "ChatFormat", "EpisodeSpec",
    "RolloutStats", "plan_groups", "collect", "acollect",
]
