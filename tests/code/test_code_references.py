"""Every bundled reference solution earns full reward through the real
sandbox: on its public examples, fixed hidden tests and randomized tests (whose
expected outputs come from running the reference itself, so what is checked
there is that every generator works and the harness round-trips its inputs)."""

from __future__ import annotations

import asyncio

import pytest
from gym_llm_code.problems import function_problems, stdio_problems
from gym_llm_code.verify import GradingPolicy, averify, function_steps, stdio_steps

pytestmark = pytest.mark.slow


def _fence(code: str) -> str:
    return f"```python\n{code}```"


def _run_all(sandbox, steps_list):
    async def main():
        return await asyncio.gather(*(averify(steps, sandbox) for steps in steps_list))

    return asyncio.run(main())


def _failures(problems, results):
    return {p.name: (r.score, r.info) for p, r in zip(problems, results, strict=True)
            if r.score != 1.0 or r.info.get("public_passed") != r.info.get("public_total")}


def test_every_function_reference_passes_fixed_and_random_tests(sandbox):
    policy = GradingPolicy(tests="both", random_tests=10)
    problems = function_problems()
    results = _run_all(sandbox, [function_steps(p, _fence(p.reference), 1, policy) for p in problems])
    assert not _failures(problems, results)
    assert all(r.info["hidden_total"] == len(p.tests) + 10 for p, r in zip(problems, results, strict=True))


def test_every_stdio_reference_passes_fixed_and_random_tests(sandbox):
    policy = GradingPolicy(tests="both", random_tests=10)
    problems = stdio_problems()
    results = _run_all(sandbox, [stdio_steps(p, _fence(p.reference), 1, policy) for p in problems])
    assert not _failures(problems, results)
