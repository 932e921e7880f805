"""tool/FunctionCalling-v0: the catalog, task generation by difficulty, gold
replay in both formats, prompt/tools contract, bad input."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time

import pytest
from gym_llm_tools.catalog import CASES, schema_of
from gym_llm_tools.function_calling import generate_request

import gym_llm
from gym_llm.envs.tools import validate_arguments

ENV_ID = "tool/FunctionCalling-v0"


def tasks(difficulty, n=60, split="train"):
    env = gym_llm.make(ENV_ID, difficulty=difficulty, split=split).unwrapped
    return [env.task_set.get(split, i) for i in range(n)]


def test_registered_by_the_plugin_and_fast_to_make():
    spec = gym_llm.spec(ENV_ID)
    assert spec.plugin == "gym-llm-tools" and spec.kwargs == {"difficulty": 0.5, "max_turns": 1}
    start = time.perf_counter()
    env = gym_llm.make(ENV_ID)
    env.reset(seed=0)
    assert time.perf_counter() - start < 0.5


def test_catalog_spans_everyday_domains_and_every_draw_is_valid():
    assert len(CASES) >= 30 and len({c.name for c in CASES}) == len(CASES)
    assert len({c.domain for c in CASES}) >= 8
    rng = random.Random(0)
    for case in CASES:
        schema = schema_of(case.name)["function"]
        assert schema["description"] and all(p.get("description") for p in schema["parameters"]["properties"].values())
        assert 1 <= case.templates[0].count("{") <= 4
        for t in range(len(case.templates)):
            for _ in range(5):
                text, args = case.draw(rng, t)
                assert "{" not in text and validate_arguments(schema["parameters"], args) == []


def test_difficulty_zero_is_one_obvious_call():
    for task in tasks(0.0):
        assert task.metadata["kind"] == "single" and len(task.metadata["tools"]) == 1
        assert len(task.answer) == 1 and 1 <= len(task.answer[0]["arguments"]) <= 2


def test_higher_difficulty_brings_distractors_and_parallel_calls():
    hard = tasks(1.0, n=80)
    kinds = {t.metadata["kind"] for t in hard}
    assert kinds == {"multiple", "parallel"}
    assert min(len(t.metadata["tools"]) for t in hard) >= 7
    parallel = [t for t in hard if t.metadata["kind"] == "parallel"]
    assert max(len(t.answer) for t in parallel) == 3
    assert any(len({c["name"] for c in t.answer}) == 1 for t in parallel)  # same tool, several values
    assert {t.metadata["kind"] for t in tasks(0.4)} == {"multiple", "parallel"}


def test_prompt_renders_the_tools_and_never_the_answer():
    env = gym_llm.make(ENV_ID, difficulty=0.8, seed=3)
    for i in range(10):
        obs, info = env.reset(options={"task_index": i})
        task = env.unwrapped.task
        assert info["tools"] == task.metadata["tools"] and info["difficulty"] == 0.8
        assert obs[0]["role"] == "system" and obs[1]["role"] == "user"
        for schema in info["tools"]:
            assert json.dumps(schema, sort_keys=True) in obs[0]["content"]
        assert json.dumps(task.answer) not in json.dumps(obs)


@pytest.mark.parametrize("difficulty", [0.0, 0.5, 1.0])
def test_gold_calls_earn_one_in_both_formats_and_nothing_earns_zero(formats, difficulty):
    env = gym_llm.make(ENV_ID, difficulty=difficulty)
    for i in range(40):
        env.reset(options={"task_index": i})
        gold = env.unwrapped.task.answer
        for encode in formats.values():
            env.reset(options={"task_index": i})
            shuffled = random.Random(i).sample(gold, len(gold))  # parallel calls are order-free
            _, r, term, _, info = env.step(encode(shuffled))
            assert r == 1.0 and term, info
        env.reset(options={"task_index": i})
        _, r, _, _, info = env.step("I would call a tool for that.")
        assert r == 0.0 and info["reason"] == "no tool call"


def test_retries_with_feedback_when_max_turns_allows(formats):
    env = gym_llm.make(ENV_ID, difficulty=0.0, max_turns=2, attempt_discount=0.5)
    env.reset(options={"task_index": 0})
    obs, r, term, trunc, _ = env.step("hmm")
    assert r == 0.0 and not term and not trunc and obs[0]["role"] == "user"
    _, r, term, _, info = env.step(formats["openai"](env.unwrapped.task.answer))
    assert r == 0.5 and term and info["attempts"] == 2


def test_same_task_and_reward_in_another_process(formats):
    env = gym_llm.make(ENV_ID, seed=11)
    obs, info = env.reset()
    action = formats["hermes"](env.unwrapped.task.answer[:1])
    _, reward, *_ = env.step(action)
    code = (
        "import json, sys, gym_llm\n"
        f"env = gym_llm.make({ENV_ID!r}, seed=11)\n"
        "obs, info = env.reset()\n"
        "r = env.step(sys.argv[1])[1]\n"
        "print(json.dumps([info['task_id'], obs, env.unwrapped.task.answer, r]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code, action], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == [info["task_id"], obs, env.unwrapped.task.answer, reward]


def test_generation_is_a_pure_function_of_the_seed():
    a = generate_request(random.Random("x"), 0.7)
    b = generate_request(random.Random("x"), 0.7)
    assert (a.prompt, a.answer, a.metadata) == (b.prompt, b.answer, b.metadata)
