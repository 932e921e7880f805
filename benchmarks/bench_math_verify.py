"""Math verifier throughput: ``gym_llm_math.verify`` beside math-verify alone
(the anchor: ``verify(parse(gold), parse(response))`` in-process, its default
settings) on the same GSM8K-style numeric answers, in the same run; and the
accuracy of both on the equivalence table of tests/math.

Target: >= 2x math-verify on numeric answers, no loss of accuracy on the table.
"""

from __future__ import annotations

import argparse
import logging
import random
import sys
import time
from pathlib import Path

from _common import header  # noqa: I001  (benchmarks/ is the script dir)
from gym_llm_math import Verifier, verify

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "math"))
from math_equivalence_table import TABLE  # noqa: E402


def numeric_pairs(n: int, seed: int = 0) -> list[tuple[str, str, bool]]:
    """(gold, response, is correct): GSM8K-style golds, responses with some
    reasoning and a boxed answer in the formats models write; 30% wrong."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        gold = rng.randint(1, 100_000)
        correct = rng.random() < 0.7
        value = gold if correct else gold + rng.choice([-1, 1]) * rng.randint(1, 50)
        shown = rng.choice([str(value), f"{value:,}", f"\\${value:,}", f"{value}.00", f"{value} \\text{{ dollars}}"])
        steps = " ".join(f"Step {k}: {rng.randint(1, 99)} + {rng.randint(1, 99)} = {rng.randint(2, 198)}." for k in range(3))
        out.append((str(gold), f"{steps} So the answer is $\\boxed{{{shown}}}$.", correct))
    return out


def math_verify_alone():
    from math_verify import parse
    from math_verify import verify as mv_verify

    def check(gold: str, response: str) -> bool:
        return bool(mv_verify(parse(gold), parse(response)))

    return check


def rate(check, pairs) -> tuple[float, int]:
    t = time.perf_counter()
    right = sum(bool(check(g, r)) == ok for g, r, ok in pairs)
    return len(pairs) / (time.perf_counter() - t), right


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000, help="numeric answers per round")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    logging.disable(logging.WARNING)  # math-verify logs every call without timeouts
    mv = math_verify_alone()
    slow = Verifier(fast_path=False)
    checks = {
        "gym_llm_math.verify (fast path + math-verify worker)": lambda g, r: verify(g, r).score == 1.0,
        "gym_llm_math, fast path off (all through the worker)": lambda g, r: slow(g, r).score == 1.0,
        "math-verify 0.9 alone, in-process (anchor)": mv,
    }
    for check in checks.values():  # warm up: imports, worker start
        rate(check, numeric_pairs(50, seed=-1))
    best: dict[str, tuple[float, int]] = {name: (0.0, 0) for name in checks}
    for round_ in range(args.rounds):  # interleaved, best of rounds
        pairs = numeric_pairs(args.n, seed=round_)  # fresh answers: no cache sees them twice
        for name, check in checks.items():
            r, right = rate(check, pairs)
            best[name] = (max(best[name][0], r), best[name][1] + right)
    anchor = best["math-verify 0.9 alone, in-process (anchor)"][0]

    table_ours = [verify(g, f"\\boxed{{{a}}}").score == float(e) for _, g, a, e in TABLE]
    table_mv = [mv(f"\\boxed{{{g}}}", f"\\boxed{{{a}}}") == e for _, g, a, e in TABLE]
    slow.close()

    print(header("Math: verifier throughput and accuracy"))
    print(f"{args.n} GSM8K-style numeric answers (70% correct; formats `1234`, `1,234`, `\\$1,234`, "
          f"`1234.00`, `1234 \\text{{ dollars}}`), best of {args.rounds} interleaved rounds, "
          "fresh answers each round.\n")
    print("| verifier | answers per second | ratio to math-verify | right on the numeric set |")
    print("|---|---|---|---|")
    for name, (r, right) in best.items():
        print(f"| {name} | {r:,.0f} | {r / anchor:.2f} | {right}/{args.n * args.rounds} |")
    ours = best["gym_llm_math.verify (fast path + math-verify worker)"][0]
    print(f"\nEquivalence table (tests/math/math_equivalence_table.py, {len(TABLE)} rows): "
          f"gym_llm_math {sum(table_ours)}/{len(TABLE)} right, math-verify alone {sum(table_mv)}/{len(TABLE)}.")
    missed = [f"`{g}` vs `{a}`" for (_, g, a, _), ok in zip(TABLE, table_mv, strict=True) if not ok]
    if missed:
        print(f"math-verify alone gets wrong: {', '.join(missed)}.")
    met = ours >= 2 * anchor and all(table_ours)
    print(f"\nTarget >= 2x math-verify on numeric answers with no loss on the table: {'met' if met else 'NOT met'}.\n")


if __name__ == "__main__":
    main()
