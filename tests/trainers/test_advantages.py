"""gym_llm_trainers.advantages without a model: trained rewards, shaping,
GRPO episode and turn credit, PPO token rewards, GAE and whitening."""

from __future__ import annotations

import pytest
import torch
from gym_llm_trainers.advantages import (
    explained_variance,
    grpo_advantages,
    ppo_advantages,
    ppo_token_rewards,
    shaped_rewards,
    trained_rewards,
    turn_credit,
    was_cut,
)
from gym_llm_trainers.config import EnvEntry, TrainerConfig

from gym_llm.runtime.rollout import Trajectory


def traj(group: str, turn_rewards: list[float], mask: list[int], spans: list[list[int]] | None = None,
         finish: str = "stop") -> Trajectory:
    """A finished episode: ``mask`` marks policy tokens; one policy turn per span."""
    spans = spans if spans is not None else [[0, len(mask)]]
    return Trajectory(env_id="test/X-v0", task_id="t", group_id=group, response_token_ids=list(range(len(mask))),
                      loss_mask=list(mask), turn_rewards=list(turn_rewards), reward=float(sum(turn_rewards)),
                      turn_spans=spans, num_turns=len(spans),
                      info={"policy_turns": [{"finish_reason": finish} for _ in spans]})


EPISODE = ("episode", 1.0)


def test_trained_rewards_zero_a_cut_episode_only_when_penalized():
    cut = traj("g", [0.5, 1.0], [1, 1, 0, 1], [[0, 2], [3, 4]], finish="length")
    assert was_cut(cut) and not was_cut(traj("g", [1.0], [1, 1]))
    assert trained_rewards(cut, "penalize") == ([0.0, 0.0], 0.0)
    assert trained_rewards(cut, "keep") == ([0.5, 1.0], 1.5)
    assert trained_rewards(cut, "mask") == ([0.5, 1.0], 1.5)  # masking drops it earlier, in collection


def test_overlong_penalty_is_added_to_the_shaped_reward():
    trajs = [traj("g", [1.0], [1] * 4), traj("g", [1.0], [1] * 10)]
    base = [trained_rewards(t, "keep") for t in trajs]
    shaped, penalty = shaped_rewards(trajs, base, max_new_tokens=10, overlong_buffer=4, overlong_penalty_max=0.5)
    assert penalty.tolist() == pytest.approx([0.0, -0.5])  # 4 tokens: before the buffer; 10: at the limit
    assert shaped.tolist() == pytest.approx([1.0, 0.5])
    shaped, penalty = shaped_rewards(trajs, base, max_new_tokens=10, overlong_buffer=0, overlong_penalty_max=0.5)
    assert penalty.tolist() == [0.0, 0.0] and shaped.tolist() == [1.0, 1.0]


def test_grpo_episode_credit_is_the_group_normalised_reward_on_every_token():
    rewards = [1.0, 0.0, 0.0, 1.0, 0.3, 0.3]
    trajs = [traj("a" if i < 4 else "b", [r], [1, 1, 0, 1]) for i, r in enumerate(rewards)]
    base = [trained_rewards(t, "keep") for t in trajs]
    shaped = torch.tensor(rewards)
    tokens, units = grpo_advantages(trajs, shaped, base, [EPISODE] * 6, std_normalize=True, eps=1e-4)
    r = torch.tensor(rewards[:4])
    expected = ((r - r.mean()) / (r.std() + 1e-4)).tolist()
    for i in range(4):
        assert tokens[i] == pytest.approx([expected[i]] * 4)  # every response token, env tokens included
    assert tokens[4] == tokens[5] == [0.0] * 4  # a group with equal rewards has no signal
    assert units == pytest.approx([abs(a) for a in expected] + [0.0, 0.0])
    dr, _ = grpo_advantages(trajs, shaped, base, [EPISODE] * 6, std_normalize=False, eps=1e-4)
    assert [row[0] for row in dr[:4]] == pytest.approx([0.5, -0.5, -0.5, 0.5])  # Dr.GRPO: centred only


def test_grpo_turn_credit_compares_each_turn_with_the_same_turn_of_its_group():
    # two attempts: tokens 0-1 the first answer, 2 the environment's reply, 3-4 the second answer
    spans = [[0, 2], [3, 5]]
    mask = [1, 1, 0, 1, 1]
    trajs = [traj("g", [0.0, 1.0], mask, spans), traj("g", [0.0, 0.0], mask, spans), traj("g", [1.0], [1, 1])]
    base = [trained_rewards(t, "keep") for t in trajs]
    shaped = torch.tensor([t.reward for t in trajs])
    tokens, units = grpo_advantages(trajs, shaped, base, [("turn", 0.0)] * 3, std_normalize=False, eps=1e-4)
    # turn 1: rewards 0, 0, 1 -> centred -1/3, -1/3, 2/3; turn 2 (two members reached it): 1, 0 -> +-0.5
    assert tokens[0] == pytest.approx([-1 / 3, -1 / 3, 0.0, 0.5, 0.5])
    assert tokens[1] == pytest.approx([-1 / 3, -1 / 3, 0.0, -0.5, -0.5])
    assert tokens[2] == pytest.approx([2 / 3, 2 / 3])
    assert len(units) == 5  # one per turn
    # with discount 1 the second attempt's success counts for the first answer too
    full, _ = grpo_advantages(trajs, shaped, base, [("turn", 1.0)] * 3, std_normalize=False, eps=1e-4)
    assert full[0][0] == pytest.approx(1.0 - 2 / 3)


def test_turn_credit_of_an_entry_falls_back_to_the_trainer():
    tc = TrainerConfig(turn_credit="episode", turn_discount=0.7)
    assert turn_credit(EnvEntry(id="x/Y-v0"), tc) == ("episode", 0.7)
    assert turn_credit(EnvEntry(id="x/Y-v0", turn_credit="turn", turn_discount=0.0), tc) == ("turn", 0.0)


def test_ppo_token_rewards_land_on_the_last_policy_token_of_each_turn():
    t = traj("g", [0.25, 1.0], [1, 1, 0, 1, 1, 0], [[0, 2], [3, 5]])
    r = ppo_token_rewards(t, trained_rewards(t, "keep"), shaped=1.25 - 0.5)  # an overlong penalty of 0.5
    assert r.tolist() == pytest.approx([0.0, 0.25, 0.0, 0.0, 0.5, 0.0])
    kl = [-0.1, -0.1, 0.0, -0.1, -0.1, 0.0]
    with_kl = ppo_token_rewards(t, trained_rewards(t, "keep"), shaped=1.25, kl_reward=kl)
    assert with_kl.tolist() == pytest.approx([-0.1, 0.15, 0.0, -0.1, 0.9, 0.0])
    unpaired = traj("g", [1.0], [1, 0, 1], [[0, 1], [2, 3]])  # two turns, one reward: it goes on the last
    assert ppo_token_rewards(unpaired, trained_rewards(unpaired, "keep"), 1.0).tolist() == [0.0, 0.0, 1.0]


def test_ppo_advantages_are_gae_then_whitened_over_policy_tokens():
    rewards = [torch.tensor([0.0, 0.0, 1.0]), torch.tensor([0.0, 0.0, 0.0, 0.0])]
    values = [torch.zeros(3), torch.zeros(4)]
    masks = [torch.tensor([1.0, 0.0, 1.0]), torch.tensor([1.0, 1.0, 1.0, 1.0])]
    advs, rets = ppo_advantages(rewards, values, masks, gamma=1.0, lam=1.0, whiten=False, eps=1e-8)
    assert advs[0].tolist() == [1.0, 0.0, 1.0] and rets[0].tolist() == [1.0, 0.0, 1.0]  # return-to-go, 0 off-policy
    assert advs[1].tolist() == [0.0] * 4
    white, _ = ppo_advantages(rewards, values, masks, gamma=1.0, lam=1.0, whiten=True, eps=1e-8)
    flat, m = torch.cat(white), torch.cat(masks)
    on = flat[m > 0]
    assert float(on.mean()) == pytest.approx(0.0, abs=1e-6)
    assert float((on ** 2).mean().sqrt()) == pytest.approx(1.0, rel=1e-5)  # the population std over policy tokens
    assert float(flat[m == 0].abs().sum()) == 0.0
    assert explained_variance(torch.cat(rets), torch.cat(rets), m) == pytest.approx(1.0)
    assert explained_variance(torch.cat(rets), torch.zeros(7), m) < 0.5
