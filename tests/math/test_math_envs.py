"""The procedural math environments: gold answers earn full reward, difficulty,
splits, attempts, reward shape and registration."""

from __future__ import annotations

import re
import subprocess
import sys
import time

import pytest
from gym_llm_math.envs import resolve_attempts
from gym_llm_math.plugin import ENVIRONMENTS, gym_llm_doctor

import gym_llm

PROCEDURAL = ["math/Arithmetic-v0", "math/Algebra-v0", "math/WordProblems-v0"]
DIFFICULTIES = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]


@pytest.mark.parametrize("difficulty", DIFFICULTIES)
@pytest.mark.parametrize("env_id", PROCEDURAL)
def test_boxed_gold_answer_earns_full_reward_and_never_leaks(env_id, difficulty):
    for split in ("train", "heldout"):
        env = gym_llm.make(env_id, split=split, difficulty=difficulty)
        # every task the split has, up to 12 (math/Algebra-v0's easiest rung holds 8 held-out)
        for index in range(env.unwrapped.task_set.distinct_count(split, 12)):
            obs, info = env.reset(options={"task_index": index})
            task = env.unwrapped.task
            assert info["difficulty"] == difficulty and task.split == split
            assert all(task.answer not in m["content"] for m in obs), (task.prompt, task.answer)
            _, reward, term, _, step_info = env.step(f"Working... so the answer is \\boxed{{{task.answer}}}.")
            assert (reward, term) == (1.0, True), (task.prompt, task.answer, step_info)


def test_difficulty_zero_arithmetic_is_one_digit_addition_or_subtraction():
    env = gym_llm.make("math/Arithmetic-v0").unwrapped
    for i in range(200):
        task = env.task_set.get("train", i)
        m = re.fullmatch(r"What is (\d) ([+-]) (\d)\?", task.prompt)
        assert m, task.prompt
        a, op, b = int(m[1]), m[2], int(m[3])
        assert int(task.answer) == (a + b if op == "+" else a - b) >= 0


def test_place_value_rung_is_two_digit_plus_one_digit_without_carrying():
    env = gym_llm.make("math/Arithmetic-v0", difficulty=0.1).unwrapped
    seen = {}
    for split, n in (("train", 3000), ("heldout", 500)):
        for i in range(n):
            task = env.task_set.get(split, i)
            m = re.fullmatch(r"What is ([1-9]\d) \+ ([1-9])\?", task.prompt)
            assert m, task.prompt
            a, b = int(m[1]), int(m[2])
            assert a % 10 + b <= 9 and int(task.answer) == a + b
            seen.setdefault(split, set()).add((a, b))
    # the whole space (9 tens x 45 digit sums) is reachable, split by content
    assert len(seen["train"] | seen["heldout"]) == 9 * 45
    assert not seen["train"] & seen["heldout"]
    # every digit sum of a held-out problem also occurs in train (with other tens)
    train_sums = {(a % 10, b) for a, b in seen["train"]}
    assert {(a % 10, b) for a, b in seen["heldout"]} <= train_sums


def test_difficulty_scales_the_problems():
    def mean_numbers(difficulty):
        env = gym_llm.make("math/Arithmetic-v0", difficulty=difficulty).unwrapped
        prompts = [env.task_set.get("train", i).prompt for i in range(100)]
        return sum(len(re.findall(r"\d+", p)) for p in prompts) / 100, sum(map(len, prompts)) / 100

    counts = [mean_numbers(d) for d in (0.0, 0.5, 1.0)]
    assert counts[0] < counts[1] < counts[2]
    kinds = {d: {gym_llm.make("math/Algebra-v0", difficulty=d).unwrapped.task_set.get("train", i).metadata["kind"]
                 for i in range(100)} for d in (0.0, 1.0)}
    assert kinds[0.0] == {"linear"} and kinds[1.0] == {"linear", "expand", "quadratic", "system", "simplify"}
    steps = {gym_llm.make("math/WordProblems-v0", difficulty=d).unwrapped.task_set.get("train", 0).metadata["steps"]
             for d in (0.0, 1.0)}
    assert steps == {1, 4}


@pytest.mark.parametrize("env_id", PROCEDURAL)
def test_splits_are_disjoint_by_content_and_deterministic(env_id):
    envs = {s: gym_llm.make(env_id, split=s, difficulty=0.5).unwrapped for s in ("train", "heldout")}
    prompts = {s: {e.task_set.get(s, i).prompt for i in range(300)} for s, e in envs.items()}
    assert not prompts["train"] & prompts["heldout"]
    again = gym_llm.make(env_id, split="heldout", difficulty=0.5).unwrapped
    assert again.task_set.get("heldout", 17) == envs["heldout"].task_set.get("heldout", 17)


def test_expanded_form_is_required_where_asked():
    env = gym_llm.make("math/Algebra-v0", difficulty=0.5)
    for i in range(200):
        env.reset(options={"task_index": i})
        if env.unwrapped.task.metadata["kind"] == "expand":
            break
    task = env.unwrapped.task
    echo = task.prompt.removeprefix("Expand ").removesuffix(" and simplify.")
    _, reward, _, _, info = env.step(f"\\boxed{{{echo}}}")  # equivalent, but not expanded
    assert reward == 0.0 and "form" in info["reason"]


def test_attempts_feedback_and_discount():
    env = gym_llm.make("math/Arithmetic-v0", max_attempts=3)
    obs, info = env.reset(seed=3)
    answer = env.unwrapped.task.answer
    assert info["max_turns"] == 3
    obs, reward, term, trunc, info = env.step("I think it is 1000")
    assert (reward, term, trunc) == (0.0, False, False)
    assert obs == [{"role": "user", "content": "No final answer found. Write your final answer inside \\boxed{}, then try again."}]
    obs, reward, term, _, _ = env.step("\\boxed{1000}")
    assert (reward, term) == (0.0, False) and obs[0]["content"] == "Incorrect, try again."
    assert answer not in obs[0]["content"]
    _, reward, term, _, info = env.step(f"\\boxed{{{answer}}}")
    assert (reward, term, info["attempts"]) == (0.25, True, 3)


def test_attempts_run_out_and_custom_feedback():
    env = gym_llm.make("math/Arithmetic-v0", max_turns=2, feedback="Nope.", attempt_discount=1.0)
    env.reset(seed=0)
    assert env.step("\\boxed{1000}")[0][0]["content"] == "Nope."
    _, reward, term, trunc, info = env.step("\\boxed{1001}")
    assert reward == 0.0 and term and not trunc and info["reason"] == "wrong answer"


def test_max_attempts_and_max_turns_are_one_knob():
    assert resolve_attempts(None, None) == 1
    assert resolve_attempts(2, None) == resolve_attempts(None, 2) == resolve_attempts(2, 2) == 2
    with pytest.raises(ValueError, match="disagree"):
        gym_llm.make("math/Arithmetic-v0", max_attempts=2, max_turns=3)
    with pytest.raises(ValueError):
        gym_llm.make("math/Arithmetic-v0", max_attempts=0)


def test_format_weight():
    env = gym_llm.make("math/Arithmetic-v0", format_weight=0.1)
    env.reset(seed=0)
    answer = env.unwrapped.task.answer
    assert env.step("\\boxed{1000}")[1] == pytest.approx(0.1)
    env.reset(seed=0)
    assert env.step("1000")[1] == 0.0
    env.reset(seed=0)
    _, reward, _, _, info = env.step(f"\\boxed{{{answer}}}")
    assert reward == 1.0 and info["reward_components"] == {"format": 1.0, "correct": 1.0}


@pytest.mark.parametrize("difficulty", [-0.1, 1.5])
def test_difficulty_out_of_range_is_refused(difficulty):
    with pytest.raises(ValueError, match="difficulty"):
        gym_llm.make("math/Arithmetic-v0", difficulty=difficulty)


def test_registration_descriptions_defaults_and_fast_make():
    assert set(ENVIRONMENTS) <= set(gym_llm.list_envs())
    for env_id, (_, description, kwargs) in ENVIRONMENTS.items():
        spec = gym_llm.spec(env_id)
        assert spec.plugin == "gym-llm-math" and spec.description == description and spec.kwargs == kwargs
        start = time.perf_counter()
        gym_llm.make(env_id).reset(seed=0)
        assert time.perf_counter() - start < 0.5, env_id


def test_system_prompt_asks_for_a_boxed_answer():
    obs, _ = gym_llm.make("math/WordProblems-v0").reset(seed=0)
    assert obs[0]["role"] == "system" and "\\boxed{}" in obs[0]["content"]
    assert not re.search(r"\d", obs[0]["content"])


def test_making_and_stepping_on_numbers_never_imports_sympy():
    code = (
        "import sys, gym_llm\n"
        "for i in ['math/Arithmetic-v0', 'math/Algebra-v0', 'math/WordProblems-v0', 'math/Dataset-v0',"
        " 'math/PythonTool-v0']:\n"
        "    env = gym_llm.make(i); env.reset(seed=0); env.step('\\\\boxed{1}')\n"
        "print(sorted(m for m in ('sympy', 'math_verify', 'torch') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_doctor_row():
    (row,) = gym_llm_doctor()
    assert row["name"] == "math: math-verify worker" and row["ok"], row
