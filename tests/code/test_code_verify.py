"""Verification behaviour: wrong answers, randomized tests, limits, C++,
multi-turn feedback, determinism and the async path."""

from __future__ import annotations

import asyncio
import os
import tempfile
import time

import pytest
from gym_llm_code.problems import function_problems, stdio_problems
from gym_llm_code.verify import (
    GradingPolicy,
    averify,
    function_steps,
    rotation_seeds,
    stdio_steps,
    verify,
)

import gym_llm

FUNCTIONS = {p.name: p for p in function_problems()}
STDIO = {p.name: p for p in stdio_problems()}
FAST = GradingPolicy(tests="both", random_tests=8, test_timeout_s=2.0, budget_s=6.0)


def _answer(code: str, lang: str = "python") -> str:
    return f"Sure:\n```{lang}\n{code.strip()}\n```"


def _verify_many(sandbox, items, policy=FAST):
    """``items``: (problem, code, lang) triples, verified concurrently."""
    async def main():
        return await asyncio.gather(*(
            averify((function_steps(p, _answer(c), 5, policy) if p.name in FUNCTIONS and lang == "python"
                     else stdio_steps(p, _answer(c, lang), 5, policy)), sandbox)
            for p, c, lang in items))

    return asyncio.run(main())


PLAUSIBLY_WRONG = [
    ("second_largest", "def second_largest(xs):\n    s = sorted(xs)\n    return s[-2] if len(s) > 1 else None"),
    ("rotate_list", "def rotate_list(xs, k):\n    return xs[-k:] + xs[:-k]"),
    ("is_prime", "def is_prime(n):\n    return n > 1 and all(n % k for k in range(2, int(n ** 0.5)))"),
    ("most_common_char", "def most_common_char(s):\n    return max(sorted(set(s)), key=s.count) if s else ''"),
    ("median", "def median(xs):\n    return sorted(xs)[len(xs) // 2] if xs else None"),
    ("edit_distance", "def edit_distance(a, b):\n    return abs(len(a) - len(b)) + sum(x != y for x, y in zip(a, b)) - 1"),
    ("merge_intervals", "def merge_intervals(iv):\n    out = []\n    for s, e in sorted(iv):\n"
                        "        if out and s < out[-1][1]:\n            out[-1][1] = max(out[-1][1], e)\n"
                        "        else:\n            out.append([s, e])\n    return out"),
    ("count_primes", "def count_primes(n):\n    return sum(all(k % d for d in range(2, k)) for k in range(2, n + 1))"),
]


def test_plausible_wrong_solutions_fail(sandbox):
    results = _verify_many(sandbox, [(FUNCTIONS[name], code, "python") for name, code in PLAUSIBLY_WRONG])
    for (name, _), r in zip(PLAUSIBLY_WRONG, results, strict=True):
        assert r.score == 0.0 and r.components["passed"] == 0.0 and "reward_error" not in r.info, (name, r.info)
        assert r.info["reason"].endswith("hidden tests failed")


def test_hard_coding_the_fixed_tests_fails_the_randomized_ones(sandbox):
    add = FUNCTIONS["add"]
    table = {args: expected for args, expected in add.examples + add.tests}
    code = f"TABLE = {table!r}\ndef add(a, b):\n    return TABLE.get((a, b), 0)"
    fixed_only, both, rnd = (
        verify(function_steps(add, _answer(code), 0, GradingPolicy(tests=mode, random_tests=8)), sandbox)
        for mode in ("fixed", "both", "random"))
    assert fixed_only.score == 1.0  # the memorised tests alone would be fooled ...
    assert both.score == 0.0 and both.components["pass_rate"] == len(add.tests) / (len(add.tests) + 8)
    assert rnd.components["pass_rate"] == 0.0  # ... the fresh inputs are not


def test_rotations_draw_fresh_inputs_deterministically():
    from gym_llm_code.verify import _reference_generation

    p = FUNCTIONS["reverse_words"]
    assert rotation_seeds(p.name, 1, 3) == rotation_seeds(p.name, 1, 3) != rotation_seeds(p.name, 2, 3)
    jobs = [next(_reference_generation("call", p, r, FAST)) for r in (11, 11, 12)]
    assert jobs[0].generator == jobs[1].generator != jobs[2].generator
    assert "world hello" not in str(jobs[0].spec())  # reference jobs carry no expected output either


@pytest.mark.parametrize("code", [
    "def add(a, b):\n    while True:\n        pass",
    "while True:\n    pass",
    "def add(a, b):\n    import time\n    time.sleep(3600)",
    "def add(a, b):\n    x = []\n    while True:\n        x.append(' ' * 10**7)",
    "def add(a, b):\n    return bytearray(1 << 40)",
    "import os\ndef add(a, b):\n    while True:\n        try:\n            os.fork()\n        except OSError:\n            pass",
], ids=["loop", "loop_at_import", "sleep", "memory_growth", "huge_alloc", "fork_bomb"])
def test_runaway_programs_score_zero_within_the_limit(sandbox, code):
    policy = GradingPolicy(tests="both", random_tests=3, test_timeout_s=0.5, budget_s=2.0)
    start = time.monotonic()
    r = verify(function_steps(FUNCTIONS["add"], _answer(code), 0, policy), sandbox)
    assert r.score == 0.0 and "reward_error" not in r.info, r.info
    assert time.monotonic() - start < 20.0


@pytest.mark.slow
def test_default_limits_bound_an_infinite_loop(sandbox):
    env = gym_llm.make("code/PythonFunctions-v0", seed=0)
    env.reset(seed=0)
    start = time.monotonic()
    _, reward, term, _, info = env.step(_answer("import itertools\nfor _ in itertools.count():\n    pass"))
    assert reward == 0.0 and term and "reward_error" not in info
    assert time.monotonic() - start < env.unwrapped.policy.budget_s + 15.0


CPP_SUM = """
#include <iostream>
int main() { long long a, b; std::cin >> a >> b; std::cout << a + b << "\\n"; }
"""


def test_cpp_answers_compile_and_run_in_the_sandbox(sandbox):
    items = [
        (STDIO["sum_two"], CPP_SUM, "cpp"),
        (STDIO["sum_two"], "int main() { return undefined_name; }", "cpp"),
        (STDIO["sum_two"], "#include <cstdio>\nint main() { int *p = nullptr; *p = 1; }", "c++"),
        (STDIO["sum_two"], "int main() { for (;;) {} }", "cpp"),
        (STDIO["sum_two"], "#include <cstdio>\nint main() { long long a, b; scanf(\"%lld %lld\", &a, &b); printf(\"%lld\\n\", a - b); }", "cpp"),
    ]
    ok, compile_error, segfault, loop, wrong = _verify_many(sandbox, items)
    assert ok.score == 1.0 and ok.info["language"] == "cpp"
    assert compile_error.score == 0.0 and "undefined_name" in compile_error.info["compile_error"]
    assert compile_error.info["reason"] == "the code does not compile"
    assert "does not compile" in compile_error.info["feedback"] and "reward_error" not in compile_error.info
    assert segfault.score == 0.0 and "signal 11" in segfault.info["feedback"]
    assert loop.score == 0.0 and loop.info["failures"].get("timed out")
    assert wrong.score == 0.0 and "wrong answer" in wrong.info["feedback"]


def test_stdio_python_tolerance_and_runtime_errors(sandbox):
    avg = STDIO["average"]
    items = [
        (avg, "import sys\nd = sys.stdin.read().split()\nprint(round(sum(map(int, d[1:])) / int(d[0]), 7))", "python"),
        (avg, "import sys\nd = sys.stdin.read().split()\nprint(sum(map(int, d[1:])) // int(d[0]))", "python"),
        (avg, "raise ValueError('boom')", "python"),
        (avg, "print(1/0)", "py"),
    ]
    close, floor_div, crash, zero_div = _verify_many(sandbox, items)
    assert close.score == 1.0
    assert floor_div.score == 0.0
    assert crash.score == 0.0 and "ValueError: boom" in crash.info["feedback"]
    assert zero_div.score == 0.0 and "ZeroDivisionError" in zero_div.info["feedback"]


def test_missing_or_wrong_language_fence_earns_zero_with_a_reason():
    env = gym_llm.make("code/PythonFunctions-v0", seed=0)
    env.reset(seed=0)
    answer = env.unwrapped.task.answer
    for action in (answer, f"```cpp\n{answer}```", "```python\n```"):
        env.reset(seed=0)
        _, reward, *_, info = env.step(action)
        assert reward == 0.0 and info["reason"] and "reward_error" not in info


def test_multi_turn_feedback_then_success():
    env = gym_llm.make("code/PythonFunctions-v0", seed=1, max_turns=3, attempt_discount=0.5)
    names = [t.metadata["problem"] for t in env.unwrapped.task_set.iter_split("train")]
    env.reset(seed=1, options={"task_index": names.index("reverse_words")})
    obs, reward, term, trunc, info = env.step(_answer("def reverse_words(s):\n    return s[::-1]"))
    assert (reward, term, trunc) == (0.0, False, False)
    (feedback,) = obs
    assert feedback["role"] == "user"
    assert "reverse_words('hello world') should return 'world hello', but returned 'dlrow olleh'" in feedback["content"]
    assert "fox brown quick The" not in feedback["content"]  # hidden tests stay hidden
    obs, reward, term, trunc, info = env.step(_answer("def reverse_words(s) return 1"))
    assert reward == 0.0 and not term and "does not compile" in obs[0]["content"] and "SyntaxError" in obs[0]["content"]
    obs, reward, term, trunc, info = env.step(_answer(env.unwrapped.task.answer))
    assert term and reward == pytest.approx(0.25) and info["attempts"] == 3 and obs == []


def test_multi_turn_stdio_feedback_until_the_last_attempt():
    env = gym_llm.make("code/Stdio-v0", seed=0, max_turns=2, tests="fixed")
    names = [t.metadata["problem"] for t in env.unwrapped.task_set.iter_split("train")]
    env.reset(options={"task_index": names.index("sum_two")})
    obs, reward, term, trunc, _ = env.step(_answer("print(0)"))
    assert reward == 0.0 and not term and "example 1" in obs[0]["content"]
    obs, reward, term, trunc, info = env.step(_answer("print(0)"))
    assert reward == 0.0 and term and obs == [] and info["attempts"] == 2  # the last attempt ends it


def test_reference_answer_earns_full_reward_and_info_is_deterministic():
    infos = []
    for _ in range(2):
        env = gym_llm.make("code/Stdio-v0", seed=4)
        env.reset()
        _, reward, term, _, info = env.step(_answer(env.unwrapped.task.answer))
        assert reward == 1.0 and term
        infos.append(info)
        assert "verify_s" in env.unwrapped.last_timings and "verify_s" not in info
    assert infos[0] == infos[1]


def test_rotation_seed_kwarg_and_tests_kwarg():
    env = gym_llm.make("code/PythonFunctions-v0", seed=0, rotation_seed=42, tests="random", random_tests=4)
    rotations = {env.reset()[1]["rotation"] for _ in range(3)}
    assert rotations == {42}
    env = gym_llm.make("code/PythonFunctions-v0", seed=0)
    assert len({env.reset()[1]["rotation"] for _ in range(5)}) == 5
    assert env.reset(seed=3)[1]["rotation"] == env.reset(seed=3)[1]["rotation"]
    with pytest.raises(ValueError):
        gym_llm.make("code/PythonFunctions-v0", tests="sometimes")


def test_async_steps_run_concurrently_on_the_event_loop():
    async def main():
        envs = [gym_llm.make("code/PythonFunctions-v0", seed=s) for s in range(6)]
        for env in envs:
            await env.areset()
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        tick = asyncio.create_task(ticker())
        results = await asyncio.gather(*(env.astep(_answer(env.unwrapped.task.answer)) for env in envs))
        tick.cancel()
        return results, ticks

    results, ticks = asyncio.run(main())
    assert all(r[1] == 1.0 for r in results)
    assert ticks > 5  # the loop kept running while the sandbox worked


def test_sandbox_failure_is_an_environment_error_not_a_zero():
    from gym_llm_sandbox import Sandbox

    # a source the jail reaches as it is (a private one would be staged as a copy)
    mount = tempfile.mkdtemp(dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    os.chmod(mount, 0o755)
    broken = Sandbox(extra_ro_mounts=[mount])
    os.rmdir(mount)  # the jail can no longer be set up
    env = gym_llm.make("code/PythonFunctions-v0", seed=0, sandbox=broken)
    env.reset(seed=0)
    _, reward, *_, info = env.step(_answer(env.unwrapped.task.answer))
    assert reward == 0.0 and "sandbox failure" in info["reward_error"]


def test_sandbox_overrides_from_a_mapping():
    env = gym_llm.make("code/PythonFunctions-v0", sandbox={"memory_mb": 256, "max_processes": 8})
    assert env.unwrapped.sandbox.limits.memory_mb == 256 and env.unwrapped.sandbox.limits.max_processes == 8


def test_a_sandbox_config_is_built_on_the_first_answer_not_at_make(monkeypatch):
    from gym_llm_sandbox import core

    monkeypatch.setenv("GYM_LLM_NSJAIL", "/nonexistent/nsjail")
    core._check_isolation.cache_clear()  # the probe is cached per process
    try:
        env = gym_llm.make("code/PythonFunctions-v0", sandbox={"memory_mb": 256})  # no probe yet
        env.reset(seed=0)
        _, reward, terminated, _, info = env.step("```python\ndef f():\n    return 1\n```")
    finally:
        monkeypatch.delenv("GYM_LLM_NSJAIL")
        core._check_isolation.cache_clear()
    assert reward == 0.0 and terminated and "sandbox" in info["reward_error"]
