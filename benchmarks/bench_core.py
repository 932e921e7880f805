"""Core overhead: reset+step throughput of a SingleTurnEnv with a trivial
reward on one core, beside gymnasium's CartPole (the anchor: a classic-control
env with no framework around it) in the same run.

Target: >= 20,000 reset+step pairs per second.
"""

from __future__ import annotations

import argparse
import time

import gymnasium
from _common import header  # noqa: I001  (benchmarks/ is the script dir)

from gym_llm import SingleTurnEnv, Task


def rate(env, action, n: int) -> float:
    env.reset(seed=0)
    t = time.perf_counter()
    for _ in range(n):
        env.reset()
        env.step(action)
    return n / (time.perf_counter() - t)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=50_000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    tasks = [Task(f"t{i}", f"Say {i}", str(i)) for i in range(1000)]
    ours = SingleTurnEnv(tasks, reward_fn=lambda task, response: float(response == task.answer))
    cart = gymnasium.make("CartPole-v1").unwrapped
    r_ours, r_cart = [], []
    for _ in range(args.rounds):  # interleaved, best of rounds
        r_ours.append(rate(ours, "7", args.steps))
        r_cart.append(rate(cart, 0, args.steps))
    best, anchor = max(r_ours), max(r_cart)
    print(header("Core: SingleTurnEnv reset+step throughput"))
    print("| what | reset+step per second | ratio to CartPole |")
    print("|---|---|---|")
    print(f"| gym_llm SingleTurnEnv, trivial reward | {best:,.0f} | {best / anchor:.2f} |")
    print(f"| gymnasium CartPole-v1 (anchor) | {anchor:,.0f} | 1.00 |")
    print(f"\nTarget >= 20,000/s on one core: {'met' if best >= 20_000 else 'NOT met'}.\n")


if __name__ == "__main__":
    main()
