"""Env-only throughput of a sandbox-heavy mixture: local vs Ray workers on 1
and on 2 nodes of a real local cluster (``ray.cluster_utils.Cluster``).

The same scripted episodes (``code/PythonFunctions-v0``: every step runs the
answer against the tests in an nsjail jail; ``math/Arithmetic-v0``: no
sandbox; gold answers, every other one wrong) are played through
``gym_llm.make_vec`` with ``--slots`` episodes in flight, by the local backend
(the anchor) and by ``backend="ray"`` with 2 workers on a one-node cluster
(2 CPUs) and on a two-node cluster (1 CPU each). Each way must give every
episode the same reward (checked). CPU is the whole process tree's: this
process (the driver) and every child (Ray's daemons, the workers, their nsjail
daemons and jails), user + system, including reaped children.

The cluster's nodes share this machine's 2 cores, so Ray cannot add
throughput here: the rows measure what Ray costs per step, and the last table
projects throughput on real nodes from the measured per-step CPU costs.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any

import psutil
from _common import episode_actions, header, process_tree  # noqa: I001  (benchmarks/ is the script dir)

import gym_llm

MIXTURE = {"code/PythonFunctions-v0": 3.0, "math/Arithmetic-v0": 1.0}
NO_SANDBOX = {"math/Arithmetic-v0": 1.0}  # Ray's cost per step alone, with no jail in it
WORKERS = 2
LOCAL = "local (make_vec, this process)"
IDLE_WINDOW_S = 3.0


def plan(mixture: dict[str, float], n: int) -> list[tuple[str, int, str]]:
    """``n`` episodes (entry, task index, action) in the mixture's proportions, interleaved."""
    total = sum(mixture.values())
    per_env = {e: episode_actions(e, round(n * w / total)) for e, w in mixture.items()}
    out = []
    for i in range(max(len(v) for v in per_env.values())):
        out += [(e, *eps[i]) for e, eps in per_env.items() if i < len(eps)]
    return out


def tree_cpu_s() -> float:
    """CPU seconds of this process and every live descendant, reaped children included."""
    total = 0.0
    for p in process_tree(psutil.Process()):
        try:
            t = p.cpu_times()
        except psutil.Error:  # exited meanwhile: its CPU went to its parent's reaped children
            continue
        total += t.user + t.system + t.children_user + t.children_system
    return total


def own_cpu_s() -> float:
    t = psutil.Process().cpu_times()
    return t.user + t.system


async def play(vec: Any, episodes: list[tuple[str, int, str]]) -> list[float]:
    """Each episode in the first free slot; the rewards in plan order."""
    rewards = [0.0] * len(episodes)
    todo = list(enumerate(episodes))[::-1]

    async def slot_loop(slot: int) -> None:
        while todo:
            i, (entry, index, action) = todo.pop()
            await vec.areset_at(slot, entry=entry, seed=0, options={"task_index": index})
            _, reward, *_ = await vec.astep_at(slot, {"role": "assistant", "content": action})
            rewards[i] = float(reward)

    await asyncio.gather(*(slot_loop(s) for s in range(vec.num_envs)))
    return rewards


def measure(make: Callable[[], Any], episodes: list[tuple[str, int, str]], warmup: int) -> dict[str, Any]:
    with make() as vec:
        asyncio.run(play(vec, episodes[:warmup]))  # envs made, workers started, sandboxes warm
        # what the processes burn with no step in flight (Ray's daemons poll): a rate, charged by time
        cpu0, t0 = tree_cpu_s(), time.perf_counter()
        time.sleep(IDLE_WINDOW_S)
        idle_rate = (tree_cpu_s() - cpu0) / (time.perf_counter() - t0)
        cpu0, own0, t0 = tree_cpu_s(), own_cpu_s(), time.perf_counter()
        rewards = asyncio.run(play(vec, episodes))
        wall = time.perf_counter() - t0
        cpu, own = tree_cpu_s() - cpu0, own_cpu_s() - own0
        nodes = len({n for n in vec.worker_nodes() if n}) if hasattr(vec, "worker_nodes") else 1
    n = len(episodes)
    idle = min(cpu, idle_rate * wall)
    return {"rewards": rewards, "steps_per_s": n / wall, "cpu_ms": 1e3 * cpu / n, "idle_cpu_ms": 1e3 * idle / n,
            "step_cpu_ms": 1e3 * (cpu - idle) / n, "driver_cpu_ms": 1e3 * own / n, "nodes": nodes}


@contextmanager
def cluster(cpus_per_node: list[int]):
    import ray
    from ray.cluster_utils import Cluster

    c = Cluster(initialize_head=True, connect=True,
                head_node_args={"num_cpus": cpus_per_node[0], "include_dashboard": False})
    for cpus in cpus_per_node[1:]:
        c.add_node(num_cpus=cpus)
    c.wait_for_nodes()
    try:
        yield c
    finally:
        ray.shutdown()
        c.shutdown()


def run_rows(mixture: dict[str, float], episodes: list[tuple[str, int, str]], slots: int, warmup: int,
             clusters: tuple[tuple[str, list[int]], ...]) -> dict[str, dict[str, Any]]:
    """The local anchor, then Ray on each cluster shape; raises if any reward differs."""
    rows = {LOCAL: measure(lambda: gym_llm.make_vec(mixture, num_envs=slots, seed=0), episodes, warmup)}
    for label, cpus in clusters:
        with cluster(cpus) as c:
            rows[f"{label}, {WORKERS} workers"] = measure(
                lambda c=c: gym_llm.make_vec(mixture, num_envs=slots, seed=0, backend="ray",
                                             num_workers=WORKERS, address=c.address),
                episodes, warmup)
    for label, r in rows.items():
        if r["rewards"] != rows[LOCAL]["rewards"]:
            raise SystemExit(f"{label}: rewards differ from the local backend's")
    return rows


def print_rows(rows: dict[str, dict[str, Any]]) -> None:
    anchor = rows[LOCAL]
    print("| where the envs run | nodes used | steps/s | ratio | CPU ms/step, all processes | of which idle daemons "
          "| driver CPU ms/step |")
    print("|---|---|---|---|---|---|---|")
    for label, r in rows.items():
        print(f"| {label} | {r['nodes']} | {r['steps_per_s']:.1f} | {r['steps_per_s'] / anchor['steps_per_s']:.2f}x "
              f"| {r['cpu_ms']:.1f} | {r['idle_cpu_ms']:.1f} | {r['driver_cpu_ms']:.1f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=240)
    ap.add_argument("--slots", type=int, default=8, help="episodes in flight")
    args = ap.parse_args()
    os.environ.setdefault("RAY_DEDUP_LOGS", "0")
    episodes = plan(MIXTURE, args.episodes)
    warmup = min(len(episodes), 4 * args.slots)
    two_nodes = ("ray, 2 nodes (1 CPU each)", [1, 1])
    rows = run_rows(MIXTURE, episodes, args.slots, warmup, (("ray, 1 node (2 CPUs)", [2]), two_nodes))
    bare = run_rows(NO_SANDBOX, plan(NO_SANDBOX, args.episodes), args.slots, warmup, (two_nodes,))

    print(header("Scale-out: env-only throughput, local vs Ray workers"))
    print(f"\n{len(episodes)} single-step episodes ({', '.join(f'{e} x{w:g}' for e, w in MIXTURE.items())}; "
          f"gold answers, every other one wrong), {args.slots} in flight, after {warmup} warm-up episodes; "
          f"the same reward for every episode in every row (checked; mean "
          f"{sum(rows[LOCAL]['rewards']) / len(episodes):.2f}). Load average at the end: "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores.\n")
    print_rows(rows)
    print(f"\nThe same with no sandbox in the step ({', '.join(NO_SANDBOX)} alone): Ray's own cost per step.\n")
    print_rows(bare)

    two = rows[f"{two_nodes[0]}, {WORKERS} workers"]
    env_ms = rows[LOCAL]["step_cpu_ms"]
    overhead_ms = two["step_cpu_ms"] - env_ms  # Ray's CPU per step, wherever it is spent
    bare_ms = bare[f"{two_nodes[0]}, {WORKERS} workers"]["step_cpu_ms"] - bare[LOCAL]["step_cpu_ms"]
    driver_ms = two["driver_cpu_ms"]  # stays on the trainer's node
    worker_ms = two["step_cpu_ms"] - driver_ms  # spread over the env nodes
    print(f"\nPer step, idle daemons' share taken out: the mixture's own work {env_ms:.1f} ms CPU (local row); "
          f"Ray adds {overhead_ms:.1f} ms ({overhead_ms / env_ms:.0%}) on two nodes, {bare_ms:.1f} ms with no "
          f"sandbox; of the 2-node row's {two['step_cpu_ms']:.1f} ms, {worker_ms:.1f} ms run on the env nodes and "
          f"{driver_ms:.1f} ms in the driver. The idle daemons' CPU is a rate per node "
          f"({two['idle_cpu_ms'] * two['steps_per_s'] / 1e3:.2f} cores for the 2-node cluster here), not a cost "
          f"per step.\n")
    print("Projection on real nodes (each node's cores busy only with its own workers' steps; the driver on "
          "its own core): steps/s = min(nodes x cores / env-node CPU per step, 1 / driver CPU per step).\n")
    print("| nodes x cores | projected steps/s | bound by |")
    print("|---|---|---|")
    driver_cap = 1e3 / driver_ms if driver_ms > 0 else float("inf")
    for nodes, cores in ((1, 16), (2, 16), (4, 16), (16, 16)):
        env_cap = 1e3 * nodes * cores / worker_ms
        bound = "env nodes" if env_cap < driver_cap else "one driver core"
        print(f"| {nodes} x {cores} | {min(env_cap, driver_cap):,.0f} | {bound} |")


if __name__ == "__main__":
    main()
