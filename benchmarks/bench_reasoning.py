"""Reasoning envs: reset+step per second for every ``reasoning/`` id on one
core, beside ``math/Arithmetic-v0`` (the anchor) in the same run.

Each id: the env is made and reset once (reasoning-gym imported, the split's
first tasks enumerated: not timed), then ``--episodes`` episodes on fresh
train tasks (``reset()`` draws a task index from the seed, so nearly every
one is a task not generated before; the step answers the reference, which
is scored in full). ``--repeat`` replays the same tasks (a GRPO group resets
one task ``group_size`` times; the task memo serves those).

Goal (issue 33): the median id at least as fast as math/Arithmetic-v0, none
below 20 episodes/s.

    python benchmarks/bench_reasoning.py [--episodes 20] [--ids reasoning/Sudoku-v0 ...]
"""

from __future__ import annotations

import argparse
import statistics
import time

from _common import header  # noqa: I001  (benchmarks/ is the script dir)

import gym_llm


def rate(env_id: str, episodes: int, repeat: int) -> float:
    """Episodes per second (reset + one step with the reference answer)."""
    env = gym_llm.make(env_id, seed=0)
    env.reset()
    t = time.perf_counter()
    for i in range(episodes):
        for _ in range(repeat):
            env.reset(seed=1000 + i)
            answer = env.unwrapped.task.answer
            env.step(f"\\boxed{{{answer}}}" if env_id.startswith("math/") else f"<answer>{answer}</answer>")
    return episodes * repeat / (time.perf_counter() - t)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=1, help="resets of each task (a GRPO group's size)")
    ap.add_argument("--ids", nargs="*", default=None)
    args = ap.parse_args()
    ids = args.ids or [i for i in gym_llm.list_envs() if i.startswith("reasoning/")]
    anchor = rate("math/Arithmetic-v0", args.episodes, args.repeat)
    rates = {}
    for env_id in ids:
        rates[env_id] = rate(env_id, args.episodes, args.repeat)
        print(f"{env_id}: {rates[env_id]:.1f}/s", flush=True)
    print(header("Reasoning: reset+step per second per id"))
    median = statistics.median(rates.values())
    slow = sorted((r, i) for i, r in rates.items() if r < 20)
    print(f"- episodes per id: {args.episodes} fresh train tasks x {args.repeat} resets each\n")
    print(f"math/Arithmetic-v0 (anchor): {anchor:,.0f}/s; reasoning median {median:,.0f}/s "
          f"(ratio {median / anchor:.2f}); {len(slow)} of {len(rates)} ids below 20/s\n")
    print("| id | episodes/s |\n|---|---:|")
    for env_id, r in sorted(rates.items(), key=lambda kv: kv[1]):
        print(f"| `{env_id}` | {r:,.1f} |")


if __name__ == "__main__":
    main()
