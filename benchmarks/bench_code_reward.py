"""Code-reward throughput: bundled Python function solutions verified per second
through the nsjail sandbox; prints a Markdown section for benchmarks/RESULTS.md.

    python benchmarks/bench_code_reward.py [--solutions 179] [--anchor-solutions 30]

Solutions are the reference answers of the bundled ``code/PythonFunctions-v0``
tasks (every test runs to the end, the worst case), verified concurrently with
``gym_llm_code.verify.averify`` (the path ``env.astep`` takes), at the sandbox
pool's concurrency (= cores). Each solution faces its public examples, fixed
hidden tests and 10 randomized tests (``tests="both"``):

* *cached rotation*: the random tests' expected outputs are already known (the
  GRPO case: k samples of one task share a rotation) -- one jail per solution;
* *fresh rotation*: every solution draws new random inputs, so the reference
  solution runs first in a jail of its own -- two jails per solution.

Anchor, measured in the same run on the same sandbox: the naive harness that
runs each test case in a jail of its own (same isolation, same checks).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import cpu_seconds, header  # noqa: E402
from gym_llm_code.harness import Job, arun_job, default_sandbox  # noqa: E402
from gym_llm_code.jail.plain import decode, encode, plain_equal  # noqa: E402
from gym_llm_code.problems import function_problems  # noqa: E402
from gym_llm_code.verify import GradingPolicy, averify, function_steps  # noqa: E402

TARGET = 25.0


def _answer(problem) -> str:
    return f"```python\n{problem.reference}```"


async def _ours(sb, problems, rotation_of, policy) -> tuple[float, float, int]:
    """(solutions/s, CPU s per solution, number that scored 1.0)."""
    c0, t0 = cpu_seconds(), time.perf_counter()
    results = await asyncio.gather(*(averify(function_steps(p, _answer(p), rotation_of(i), policy), sb)
                                     for i, p in enumerate(problems)))
    wall, cpu = time.perf_counter() - t0, cpu_seconds() - c0
    return len(problems) / wall, cpu / len(problems), sum(r.score == 1.0 for r in results)


async def _per_test_anchor(sb, problems, policy) -> tuple[float, float, int]:
    """One jail per test case: the solution plus one call, compared on the host."""
    async def one(problem) -> bool:
        cases = list(problem.examples) + list(problem.tests)
        # the random tests' inputs and outputs, as ours uses them (cached: not timed)
        gen = await arun_job(sb, Job(kind="call", program=problem.reference, entry=problem.name,
                                     generator={"source": problem.generator, "kind": "args",
                                                "seeds": [f"anchor|{i}" for i in range(policy.random_tests)]}))
        cases += [(tuple(decode(a) for a in args), decode(r["value"]))
                  for args, r in zip(gen.generated, gen.results, strict=True)]
        return cases

    all_cases = await asyncio.gather(*(one(p) for p in problems))

    async def run_case(problem, args, expected) -> bool:
        out = await arun_job(sb, Job(kind="call", program=problem.reference, entry=problem.name,
                                     inputs=[[encode(a) for a in args]]))
        return bool(out.results) and "value" in out.results[0] and plain_equal(expected, decode(out.results[0]["value"]))

    c0, t0 = cpu_seconds(), time.perf_counter()
    oks = await asyncio.gather(*(run_case(p, a, e) for p, cases in zip(problems, all_cases, strict=True)
                                 for a, e in cases))
    wall, cpu = time.perf_counter() - t0, cpu_seconds() - c0
    per_solution = [len(c) for c in all_cases]
    passed, k = 0, 0
    for n in per_solution:
        passed += all(oks[k:k + n])
        k += n
    return len(problems) / wall, cpu / len(problems), passed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--solutions", type=int, default=len(function_problems()))
    ap.add_argument("--anchor-solutions", type=int, default=30)
    args = ap.parse_args()
    problems = list(function_problems())[: args.solutions]
    policy = GradingPolicy(tests="both", random_tests=10)
    sb = default_sandbox()
    tests_per = sum(len(p.examples) + len(p.tests) + policy.random_tests for p in problems) / len(problems)

    async def run():
        # fresh rotations first (they also fill the cache the next run uses)
        fresh = await _ours(sb, problems, lambda i: 1000 + i, policy)
        cached = await _ours(sb, problems, lambda i: 1000 + i, policy)
        anchor = await _per_test_anchor(sb, problems[: args.anchor_solutions], policy)
        cached_again = await _ours(sb, problems[: args.anchor_solutions], lambda i: 1000 + i, policy)
        return fresh, cached, anchor, cached_again

    load = os.getloadavg()[0]
    fresh, cached, anchor, cached_same = asyncio.run(run())
    load = max(load, os.getloadavg()[0])
    conc = sb.pool.max_concurrency
    cores = os.cpu_count() or 1
    print(header("Code reward (gym_llm_code): solutions verified per second"))
    print(f"\n{len(problems)} reference solutions of code/PythonFunctions-v0, {tests_per:.1f} tests each "
          f"on average (public + fixed hidden + 10 random), {conc} concurrent jails; 1-minute load "
          f"average up to {load:.1f} during the run.\n")
    print(f"| harness | solutions/s | CPU ms / solution (host + jails) | {cores} idle cores / CPU (solutions/s) "
          "| all tests passed | vs anchor | target | met |")
    print("|---|---|---|---|---|---|---|---|")

    def row(label, figures, n, ratio="", target=""):
        rate, cpu, ok = figures
        met = ("yes" if rate >= TARGET else "NO") if target else ""
        print(f"| {label} | {rate:.1f} | {cpu * 1000:.0f} | {cores / cpu:.0f} | {ok}/{n} | {ratio} | {target} | {met} |")

    row("ours, cached rotation (1 jail / solution)", cached, len(problems), target=f">= {TARGET:.0f}/s")
    row("ours, fresh rotation (2 jails / solution)", fresh, len(problems))
    row(f"ours, cached rotation, first {args.anchor_solutions} solutions", cached_same, args.anchor_solutions,
        f"{cached_same[0] / anchor[0]:.1f}x")
    row(f"anchor: one jail per test case, same {args.anchor_solutions} solutions", anchor, args.anchor_solutions, "1.0x")
    print("\nWall-clock rates move with other load on the machine; CPU per solution (this process and "
          "the jail processes it reaped) is the steadier figure, and cores / CPU is the rate the "
          "verifier sustains on otherwise idle cores.")


if __name__ == "__main__":
    main()
