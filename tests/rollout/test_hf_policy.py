"""HFPolicy: continuous batching that changes no result, exact sampling
log-probs, stop semantics, sharing a model with a trainer."""

from __future__ import annotations

import asyncio
import time

import pytest
import torch

from gym_llm.runtime.chat import ChatFormat
from gym_llm.runtime.policies import HFPolicy, SamplingParams, make_policy
from gym_llm.runtime.policies.base import GenerationRequest
from gym_llm.runtime.policies.hf import pick_attn_implementation, sample_logits

from .conftest import processed_logprobs

GREEDY = SamplingParams(temperature=0, max_new_tokens=12, ignore_eos=True)


def chats(tokenizer):
    texts = ["Hi", "What is 1234 + 5678? Think step by step and box the answer.", "Name three rivers of Europe."]
    return [ChatFormat(tokenizer).prompt_ids([{"role": "user", "content": t}]) for t in texts]


def test_batching_and_joining_change_no_result(base_model, tiny_tokenizer):
    """Greedy outputs of prompts of different lengths are the same alone, in
    one batch, and when they join a batch already decoding."""
    policy = HFPolicy(base_model, tiny_tokenizer)
    prompts = chats(tiny_tokenizer)
    alone = [policy.generate([p], GREEDY)[0] for p in prompts]
    together = policy.generate(prompts, GREEDY)

    async def staggered():
        async def ask(p, delay, n):
            await asyncio.sleep(delay)
            return await policy.agenerate(GenerationRequest(
                prompt_token_ids=p, params=SamplingParams(temperature=0, max_new_tokens=n, ignore_eos=True)))
        return await asyncio.gather(ask(prompts[0], 0.0, 60), ask(prompts[1], 0.05, 12), ask(prompts[2], 0.1, 12))

    joined = asyncio.run(staggered())
    for a, b, c in zip(alone, together, joined, strict=True):
        assert a.token_ids == b.token_ids == c.token_ids[:12]
        assert torch.allclose(torch.tensor(a.logprobs), torch.tensor(b.logprobs), atol=1e-4)
        assert torch.allclose(torch.tensor(a.logprobs), torch.tensor(c.logprobs[:12]), atol=1e-4)
    # and they are what teacher forcing gives
    for p, g in zip(prompts, alone, strict=True):
        expected = processed_logprobs(base_model, p + g.token_ids, list(range(len(p), len(p) + 12)), GREEDY)
        assert torch.allclose(torch.tensor(expected), torch.tensor(g.logprobs), atol=1e-4)
        assert g.finish_reason == "length" and len(g.token_ids) == 12


def test_short_requests_do_not_wait_for_long_ones(base_model, tiny_tokenizer):
    policy = HFPolicy(base_model, tiny_tokenizer)
    prompt = chats(tiny_tokenizer)[0]

    async def main():
        order = []

        async def ask(name, n, delay=0.0):
            await asyncio.sleep(delay)
            await policy.agenerate(GenerationRequest(prompt_token_ids=prompt,
                                                     params=SamplingParams(max_new_tokens=n, ignore_eos=True)))
            order.append(name)

        await asyncio.gather(ask("long", 300), ask("late-short", 5, delay=0.2))
        return order

    assert asyncio.run(main()) == ["late-short", "long"]


def test_stop_tokens_end_a_turn_and_are_kept(base_model, tiny_tokenizer):
    policy = HFPolicy(base_model, tiny_tokenizer)
    prompt = chats(tiny_tokenizer)[1]
    free = policy.generate([prompt], GREEDY)[0]
    stop_at = free.token_ids[4]
    first = free.token_ids.index(stop_at)
    gen = policy.generate([prompt], SamplingParams(temperature=0, max_new_tokens=12, stop_token_ids=(stop_at,)))[0]
    assert gen.finish_reason == "stop" and gen.token_ids == free.token_ids[:first + 1]
    assert policy.stop_token_ids == (tiny_tokenizer.convert_tokens_to_ids("<|im_end|>"),
                                     tiny_tokenizer.convert_tokens_to_ids("<|endoftext|>"))


def test_sample_logits_distribution():
    gen = torch.Generator().manual_seed(0)
    logits = torch.tensor([[2.0, 1.0, 0.5, -1.0, -3.0]]).repeat(20000, 1)
    params = SamplingParams(temperature=0.5, top_k=3, top_p=0.9)
    tokens, logps = sample_logits(logits, params, gen)
    probs = torch.softmax(logits[0, :3] / 0.5, -1)
    keep = int(((probs.cumsum(0) - probs) < 0.9).sum())  # nucleus of the top-3
    target = torch.zeros(5)
    target[:keep] = probs[:keep] / probs[:keep].sum()
    freq = torch.bincount(tokens, minlength=5).float() / len(tokens)
    assert torch.allclose(freq, target, atol=0.015)
    assert torch.allclose(logps, target[tokens].log(), atol=1e-5)
    greedy, glp = sample_logits(logits[:2], SamplingParams(temperature=0), gen)
    assert greedy.tolist() == [0, 0] and torch.allclose(glp, torch.log_softmax(logits[0], -1)[0])


def test_shares_a_training_model(tiny_path, tiny_tokenizer):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_path)
    model.train()
    policy = make_policy("hf", model, tiny_tokenizer)
    prompt = chats(tiny_tokenizer)[0]
    before = policy.generate([prompt], GREEDY)[0]
    assert model.training  # the trainer's mode is restored
    with torch.no_grad():
        model.lm_head.weight.mul_(-1)  # an optimizer step, as far as the policy can tell
    after = policy.generate([prompt], GREEDY)[0]
    assert after.token_ids != before.token_ids  # samples from the current weights
    policy.close()
    with pytest.raises(ValueError):
        policy.generate([[]], GREEDY)


def test_attention_choice_and_path_loading(tiny_path):
    assert pick_attn_implementation("cpu") == "sdpa"
    policy = HFPolicy(tiny_path)
    assert policy.model.config._attn_implementation == "sdpa"
    t0 = time.perf_counter()
    gens = policy.generate([[1, 2, 3]] * 4, SamplingParams(max_new_tokens=8, ignore_eos=True))
    assert [len(g.token_ids) for g in gens] == [8] * 4 and time.perf_counter() - t0 < 30
