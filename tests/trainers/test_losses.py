"""Losses and advantages against values computed by hand."""

from __future__ import annotations

import math

import pytest
import torch
from gym_llm_trainers.losses import (
    Denominators,
    aggregate,
    entropy_from_logits,
    gae_advantages,
    group_advantages,
    kl_estimate,
    overlong_penalty,
    policy_loss,
    value_loss,
)


def test_group_advantages_std_normalised_and_dr_grpo():
    rewards = torch.tensor([1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.5])
    groups = ["a", "a", "a", "a", "b", "b", "c"]
    adv = group_advantages(rewards, groups, std_normalize=True, eps=0.0)
    # group a: mean 0.5, unbiased std sqrt(4 * 0.25 / 3)
    std = math.sqrt(1 / 3)
    assert adv[:4].tolist() == pytest.approx([0.5 / std, -0.5 / std, -0.5 / std, 0.5 / std])
    assert adv[4:].tolist() == [0.0, 0.0, 0.0]  # equal rewards and a group of one carry no signal
    dr = group_advantages(rewards, groups, std_normalize=False)
    assert dr[:4].tolist() == pytest.approx([0.5, -0.5, -0.5, 0.5])


def test_group_advantages_eps_bounds_tiny_std():
    adv = group_advantages(torch.tensor([1.0, 1.0 + 1e-7]), [0, 0], eps=1e-4)
    assert adv.abs().max() < 1e-2


def test_kl_estimators_by_hand():
    logp = torch.tensor([math.log(0.5)])
    ref = torch.tensor([math.log(0.25)])
    assert kl_estimate(logp, ref, "k1").item() == pytest.approx(math.log(2))
    assert kl_estimate(logp, ref, "k2").item() == pytest.approx(0.5 * math.log(2) ** 2)
    assert kl_estimate(logp, ref, "k3").item() == pytest.approx(0.5 - 1 - math.log(0.5))
    same = kl_estimate(logp, logp, "k3")
    assert same.item() == 0.0
    with pytest.raises(ValueError):
        kl_estimate(logp, ref, "k4")


def test_k1_and_k3_are_unbiased_estimates_of_the_true_kl():
    torch.manual_seed(0)
    p = torch.tensor([0.6, 0.3, 0.1])
    q = torch.tensor([0.2, 0.5, 0.3])
    true_kl = (p * (p / q).log()).sum().item()
    samples = torch.multinomial(p, 200_000, replacement=True)
    logp, logq = p.log()[samples], q.log()[samples]
    for est in ("k1", "k3"):
        assert kl_estimate(logp, logq, est).mean().item() == pytest.approx(true_kl, abs=0.01)
    assert (kl_estimate(logp, logq, "k3") >= 0).all()


def test_policy_loss_clip_low_high_and_dual_clip():
    ratio = torch.tensor([1.5, 0.5, 1.0, 5.0, 1.1])
    adv = torch.tensor([1.0, -1.0, 2.0, -1.0, 1.0])
    old = torch.zeros(5)
    logp = ratio.log()
    loss, stats = policy_loss(logp, old, adv, clip_low=0.2, clip_high=0.28)
    # max(-A r, -A clip(r)): 1.5 -> clipped to 1.28; 0.5 with A<0 -> clipped to 0.8
    assert loss.tolist() == pytest.approx([-1.28, 0.8, -2.0, 5.0, -1.1])
    assert stats["clip_high"].tolist() == [1, 0, 0, 0, 0]
    assert stats["clip_low"].tolist() == [0, 1, 0, 0, 0]
    dual, dstats = policy_loss(logp, old, adv, clip_low=0.2, clip_high=0.28, dual_clip=3.0)
    assert dual.tolist() == pytest.approx([-1.28, 0.8, -2.0, 3.0, -1.1])
    assert dstats["clip_dual"].tolist() == [0, 0, 0, 1, 0]


def test_policy_loss_gradient_is_the_policy_gradient_inside_the_trust_region():
    logp = torch.tensor([-1.0, -2.0], requires_grad=True)
    adv = torch.tensor([0.7, -0.3])
    loss, _ = policy_loss(logp, logp.detach(), adv, clip_low=0.2, clip_high=0.2)
    loss.sum().backward()
    assert logp.grad.tolist() == pytest.approx([-0.7, 0.3])  # d(-A r)/dlogp = -A at r = 1


def test_truncated_is_weight_scales_each_token():
    logp = torch.zeros(2)
    loss, _ = policy_loss(logp, logp, torch.tensor([1.0, 1.0]), clip_low=0.2, clip_high=0.2,
                          is_weight=torch.tensor([0.5, 2.0]))
    assert loss.tolist() == pytest.approx([-0.5, -2.0])


LOSS = torch.tensor([[1.0, 2.0, 3.0], [4.0, 9.0, 9.0]])
MASK = torch.tensor([[1.0, 1.0, 1.0], [1.0, 0.0, 0.0]])


@pytest.mark.parametrize(("mode", "expected"), [
    ("token-mean", (1 + 2 + 3 + 4) / 4),
    ("seq-mean-token-mean", (2 + 4) / 2),
    ("seq-mean-token-sum-norm", (6 / 4 + 4 / 4) / 2),
])
def test_aggregation_modes_by_hand(mode, expected):
    den = Denominators(tokens=4, seqs=2, norm_len=4)
    assert aggregate(LOSS, MASK, mode, den).item() == pytest.approx(expected)
    # split into two micro-batches: the shares add up to the same loss
    parts = aggregate(LOSS[:1], MASK[:1], mode, den) + aggregate(LOSS[1:], MASK[1:], mode, den)
    assert parts.item() == pytest.approx(expected)


def test_masked_positions_get_no_gradient():
    x = LOSS.clone().requires_grad_(True)
    for mode in ("token-mean", "seq-mean-token-mean", "seq-mean-token-sum-norm"):
        x.grad = None
        aggregate(x, MASK, mode, Denominators(4, 2, 4)).backward()
        assert (x.grad[MASK == 0] == 0).all() and (x.grad[MASK == 1] != 0).all()


def test_gae_by_hand_skips_environment_tokens():
    # one row: policy token, env token, policy token; reward 1 after the last
    rewards = torch.tensor([[0.0, 0.0, 1.0]])
    values = torch.tensor([[0.5, 9.0, 0.8]])  # the env token's value must be ignored
    mask = torch.tensor([[1.0, 0.0, 1.0]])
    gamma, lam = 0.9, 0.5
    adv, ret = gae_advantages(rewards, values, mask, gamma=gamma, lam=lam)
    d2 = 1.0 + 0.0 - 0.8
    d0 = 0.0 + gamma * 0.8 - 0.5
    a0 = d0 + gamma * lam * d2
    assert adv.tolist()[0] == pytest.approx([a0, 0.0, d2])
    assert ret.tolist()[0] == pytest.approx([a0 + 0.5, 0.0, d2 + 0.8])


def test_gae_with_lambda_one_is_return_minus_value():
    rewards = torch.tensor([[0.0, 0.0, 0.0, 2.0]])
    values = torch.tensor([[0.1, 0.2, 0.3, 0.4]])
    adv, ret = gae_advantages(rewards, values, torch.ones(1, 4), gamma=1.0, lam=1.0)
    assert adv.tolist()[0] == pytest.approx([1.9, 1.8, 1.7, 1.6])
    assert ret.tolist()[0] == pytest.approx([2.0] * 4)


def test_value_loss_clipping():
    v = torch.tensor([1.0, 0.0])
    old = torch.tensor([0.0, 0.0])
    ret = torch.tensor([0.0, 1.0])
    # v moved 1.0 from old; clipped to 0.2: max((1-0)^2, (0.2-0)^2) = 1
    assert value_loss(v, old, ret, clip=0.2).tolist() == pytest.approx([0.5, 0.5])
    v2 = torch.tensor([0.5])
    # unclipped (0.5-1)^2 = .25 ; clipped v = 0.2 -> (0.2-1)^2 = .64 -> max = .64
    assert value_loss(v2, torch.zeros(1), torch.ones(1), clip=0.2).item() == pytest.approx(0.32)
    assert value_loss(v2, torch.zeros(1), torch.ones(1), clip=0.0).item() == pytest.approx(0.125)


def test_overlong_penalty_soft_ramp():
    lengths = torch.tensor([5, 6, 8, 10, 12])
    pen = overlong_penalty(lengths, max_len=10, buffer=4, penalty=1.0)
    assert pen.tolist() == pytest.approx([0.0, 0.0, -0.5, -1.0, -1.0])
    assert overlong_penalty(lengths, max_len=10, buffer=0, penalty=1.0).tolist() == [0.0] * 5


def test_entropy_from_logits():
    uniform = torch.zeros(1, 4)
    assert entropy_from_logits(uniform).item() == pytest.approx(math.log(4))
    peaked = torch.tensor([[100.0, 0.0, 0.0]])
    assert entropy_from_logits(peaked).item() == pytest.approx(0.0, abs=1e-6)


def test_shared_prompt_forward_equals_full_sequences():
    """Each prompt runs once with a gathered KV cache: same log-probs and
    gradients as running every prompt + response sequence on its own."""
    from gym_llm_trainers.batching import Sample, collate
    from gym_llm_trainers.modeling import forward_logprobs
    from transformers import AutoModelForCausalLM

    from gym_llm.runtime.models import tiny_model_path

    model = AutoModelForCausalLM.from_pretrained(tiny_model_path())
    g = torch.Generator().manual_seed(0)
    prompts = [torch.randint(5, 4000, (n,), generator=g).tolist() for n in (30, 22)]
    samples = [Sample(prompts[k % 2], torch.randint(5, 4000, (n,), generator=g).tolist(), [1] * n, index=k)
               for k, n in enumerate((5, 9, 3, 7, 1))]
    mb = collate(samples, pad_id=0)
    assert mb.prompt_ids.shape[0] == 2
    logp, entropy = forward_logprobs(model, mb, temperature=0.7, with_entropy=True)
    logp.sum().backward()
    shared = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    total = 0
    for s, row in zip(samples, mb.rows(logp), strict=True):
        ids = torch.tensor([s.prompt_ids + s.response_ids])
        logits = model(ids).logits[0, len(s.prompt_ids) - 1 : -1].float() / 0.7
        full = torch.log_softmax(logits, -1).gather(-1, torch.tensor(s.response_ids)[:, None])[:, 0]
        assert torch.allclose(row, full, atol=1e-5)
        total = total + full.sum()
    total.backward()
    for a, p in zip(shared, model.parameters(), strict=True):
        assert torch.allclose(a, p.grad, atol=1e-4, rtol=1e-3)
    assert (entropy[mb.response_attention > 0] > 0).all()


def test_turn_advantages_by_hand():
    from gym_llm_trainers.losses import turn_advantages

    # a retry group: right at once (1), wrong then right (0, 0.5), wrong twice (0, 0)
    rewards = [[1.0], [0.0, 0.5], [0.0, 0.0], [0.0, 0.5]]
    own = turn_advantages(rewards, ["g"] * 4, discount=0.0, std_normalize=False)
    # turn 1 judged alone: mean 0.25; turn 2 among the three that reached it: mean 1/3
    assert own == [pytest.approx([0.75]), pytest.approx([-0.25, 0.5 - 1 / 3]),
                   pytest.approx([-0.25, -1 / 3]), pytest.approx([-0.25, 0.5 - 1 / 3])]
    full = turn_advantages(rewards, ["g"] * 4, discount=1.0, std_normalize=False)
    # with the whole return, the wrong first answer that was later fixed is credited
    assert full[1][0] == pytest.approx(0.5 - 0.5) and full[0][0] == pytest.approx(0.5)
    # one-turn episodes: the same as group_advantages
    flat = turn_advantages([[1.0], [0.0], [0.5]], [0, 0, 0])
    assert [a[0] for a in flat] == pytest.approx(group_advantages(torch.tensor([1.0, 0.0, 0.5]), [0, 0, 0]).tolist())
    # a turn nobody else reached has no baseline
    assert turn_advantages([[0.0, 1.0], [1.0]], [0, 0], discount=0.0)[0][1] == 0.0
