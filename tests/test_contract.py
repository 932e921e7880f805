"""The environment contract, checked for every registered id: whatever plugin
adds an environment, it is checked here with no further step."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import warnings

import pytest
from gymnasium.utils.env_checker import check_env

import gym_llm

# every environment an installed plugin registers (ids registered by test code,
# such as deliberately failing envs in tests/trainers, are not plugins)
ENV_IDS = [i for i in gym_llm.list_envs() if gym_llm.spec(i).plugin]
RESET_KEYS = {"task_id", "env_id", "domain", "split", "difficulty", "max_turns", "tools"}
PROBE_ACTIONS = ["", "\\boxed{1}"]
BAD_ACTIONS = {
    "empty": "",
    "huge": "x" * 200_000,
    "binary": b"\x00\xff\xfe binary \x80",
    "nul_text": "\x00" * 100,
    "malformed_markup": "\\boxed{ ```python\nprint( <tool_call>{",
    "malformed_tool_call": '<tool_call>{"name": "x", "arguments": {oops}</tool_call>',
    "malformed_openai_calls": {"role": "assistant", "content": None,
                               "tool_calls": [{"function": {"name": 7, "arguments": "{bad"}}, "junk"]},
    "not_a_message": {"unexpected": ["fields"]},
    "wrong_type": 12345,
}


def fingerprint(env_id: str, seed: int) -> dict:
    """What must be equal in any process: tasks, prompts and rewards."""
    out = {}
    for action in PROBE_ACTIONS:
        env = gym_llm.make(env_id, seed=seed)
        obs, info = env.reset()
        _, reward, term, trunc, step_info = env.step(action)
        out[action] = [info["task_id"], obs, reward, term, trunc, step_info.get("reward_components")]
        env.close()
    return out


def _episode(env, action, limit=64):
    """Play ``action`` every turn until the episode ends."""
    total = 0.0
    for _ in range(limit):
        _, reward, term, trunc, info = env.step(action)
        assert isinstance(reward, float) and math.isfinite(reward)
        total += reward
        if term or trunc:
            return total, info
    raise AssertionError(f"episode did not end within {limit} turns (max_turns={env.unwrapped.max_turns})")


@pytest.fixture(scope="module")
def other_process_fingerprints(tmp_path_factory):
    # its own empty cache: tasks an env caches on disk (reasoning's entries) are generated there, so the
    # comparison is of two generations (or of one with what an earlier process cached), never a copy
    cache = tmp_path_factory.mktemp("other_process_cache")
    code = (
        "import json, sys, gym_llm\n"
        "from tests.test_contract import fingerprint\n"
        "from tests.test_contract import ENV_IDS\n"
        "print(json.dumps({i: fingerprint(i, 7) for i in ENV_IDS}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONHASHSEED": "123", "PATH": "/usr/bin:/bin", "GYM_LLM_CACHE": str(cache)})
    return json.loads(out.stdout)


def test_some_environments_are_registered():
    assert ENV_IDS, "no environment registered: are the plugins installed?"


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_check_env(env_id):
    env = gym_llm.make(env_id)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*render modes.*")
        check_env(env.unwrapped)
    env.close()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_spec_and_reset_info(env_id):
    spec = gym_llm.spec(env_id)
    assert spec.id == env_id and spec.domain == env_id.split("/")[0] and spec.description
    for split in ("train", "heldout"):
        env = gym_llm.make(env_id, split=split, seed=0)
        obs, info = env.reset()
        assert set(info) >= RESET_KEYS, RESET_KEYS - set(info)
        assert info["env_id"] == env_id and info["split"] == split and info["domain"] == spec.domain
        assert env.unwrapped.task.id == info["task_id"] and env.unwrapped.task.split == split
        assert obs and env.observation_space.contains(obs)
        assert info["tools"] is None or all(t["type"] == "function" for t in info["tools"])
        assert 0.0 <= info["difficulty"] <= 1.0


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_determinism_across_processes(env_id, other_process_fingerprints):
    here = json.loads(json.dumps(fingerprint(env_id, 7)))
    assert here == other_process_fingerprints[env_id]


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_splits_are_disjoint(env_id):
    sets = {}
    for split in ("train", "heldout"):
        env = gym_llm.make(env_id, split=split, seed=0).unwrapped
        n = min(env.num_tasks, 40)
        sets[split] = {env.task_set.get(split, i).id for i in range(n)}
        sets[split] |= {env.reset(seed=s)[1]["task_id"] for s in range(10)}
    assert sets["train"] and sets["heldout"] and not (sets["train"] & sets["heldout"])


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_max_turns_truncates(env_id):
    env = gym_llm.make(env_id, max_turns=1)
    _, info = env.reset(seed=0)
    assert info["max_turns"] == 1
    _, _, term, trunc, _ = env.step("I am not sure.")
    assert term or trunc


@pytest.mark.parametrize("kind", list(BAD_ACTIONS))
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_bad_actions_earn_the_lowest_reward_with_a_reason(env_id, kind):
    env = gym_llm.make(env_id, seed=0)
    env.reset(seed=0)
    total, info = _episode(env, BAD_ACTIONS[kind])
    assert total <= 0.0, f"{kind!r} earned {total}"
    assert "reward_error" not in info, f"{kind!r} was taken for an environment failure: {info['reward_error']}"
    assert info.get("reason"), f"no reason given for {kind!r}: {sorted(info)}"
