"""Tool-use environments: gold-replay throughput of tool/FunctionCalling-v0,
tool/Orders-v0 and tool/Shell-v0 on one process, beside the core's
SingleTurnEnv with a trivial reward (the anchor, measured in the same run);
and the latency of one sandboxed ``bash`` call in a Shell session beside a
plain host ``bash -c`` subprocess (the isolation anchor).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import time

from _common import header  # noqa: I001  (benchmarks/ is the script dir)

import gym_llm
from gym_llm import SingleTurnEnv, Task


def hermes(call: dict) -> str:
    return f"<tool_call>{json.dumps(call)}</tool_call>"


def episodes_per_s(env_id: str, n: int, **kwargs) -> tuple[float, float]:
    """(gold episodes per second, env steps per second), all rewards checked."""
    env = gym_llm.make(env_id, **kwargs)
    steps = 0
    t = time.perf_counter()
    for i in range(n):
        env.reset(options={"task_index": i})
        task = env.unwrapped.task
        if env.unwrapped.max_turns == 1:
            reward = env.step("".join(hermes(c) for c in task.answer))[1]
            steps += 1
        else:
            for call in task.answer:
                env.step(hermes(call))
            reward = env.step("Done: " + ", ".join(task.metadata.get("required_outputs", [])))[1]
            steps += len(task.answer) + 1
        assert reward == 1.0, (env_id, i)
    dt = time.perf_counter() - t
    env.close()
    return n / dt, steps / dt


def anchor_rate(n: int) -> float:
    tasks = [Task(f"t{i}", f"Say {i}", str(i)) for i in range(1000)]
    env = SingleTurnEnv(tasks, reward_fn=lambda task, response: float(response == task.answer))
    env.reset(seed=0)
    t = time.perf_counter()
    for _ in range(n):
        env.reset()
        env.step("7")
    return n / (time.perf_counter() - t)


def bash_latency(n: int) -> tuple[float, float]:
    """(median ms of one sandboxed bash call in a session, of a host ``bash -c``)."""
    env = gym_llm.make("tool/Shell-v0", difficulty=0.0, max_turns=n + 1)
    env.reset(options={"task_index": 0})
    jailed, host = [], []
    for _ in range(n):
        t = time.perf_counter()
        obs, *_ = env.step(hermes({"name": "bash", "arguments": {"command": "ls -l | wc -l"}}))
        jailed.append(time.perf_counter() - t)
        assert obs[0]["content"].startswith("exit code: 0")
        t = time.perf_counter()
        subprocess.run(["bash", "-c", "ls -l | wc -l"], capture_output=True, check=True)
        host.append(time.perf_counter() - t)
    env.close()
    return statistics.median(jailed) * 1e3, statistics.median(host) * 1e3


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=300, help="FunctionCalling and Orders episodes")
    ap.add_argument("--shell-episodes", type=int, default=60)
    ap.add_argument("--bash-calls", type=int, default=60)
    args = ap.parse_args()
    anchor = anchor_rate(20_000)
    rows = [
        ("tool/FunctionCalling-v0, difficulty 0.5", *episodes_per_s("tool/FunctionCalling-v0", args.episodes)),
        ("tool/Orders-v0, difficulty 0.5", *episodes_per_s("tool/Orders-v0", args.episodes)),
        ("tool/Shell-v0, difficulty 0.5", *episodes_per_s("tool/Shell-v0", args.shell_episodes)),
    ]
    jailed_ms, host_ms = bash_latency(args.bash_calls)
    print(header("Tool use: gold-replay throughput and sandboxed bash latency"))
    print("| env | gold episodes/s | env steps/s | steps/s vs core SingleTurnEnv |")
    print("|---|---|---|---|")
    for name, eps, sps in rows:
        print(f"| {name} | {eps:,.1f} | {sps:,.0f} | {sps / anchor:.4f} |")
    print(f"| core SingleTurnEnv, trivial reward (anchor) | {anchor:,.0f} | {anchor:,.0f} | 1.0000 |")
    print("\n| one `bash` call | median ms | ratio |")
    print("|---|---|---|")
    print(f"| tool/Shell-v0 step (fresh nsjail, session work dir) | {jailed_ms:.1f} | {jailed_ms / host_ms:.1f} |")
    print(f"| host `bash -c` subprocess, no isolation (anchor) | {host_ms:.1f} | 1.0 |")
    print("\nEvery replayed episode is checked to earn 1.0. One process, synchronous `step`.\n")


if __name__ == "__main__":
    main()
