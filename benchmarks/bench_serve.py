"""``gym-llm serve`` on loopback against the same env called in-process.

For math/Arithmetic-v0 and code/PythonFunctions-v0: a real server subprocess
holds ``--idle`` open, reset, silent sessions (each its own env) while
``--active`` sessions play episodes (reset, then one step with the gold answer
or, every other episode, a wrong one) as fast as replies come; each step's
latency is taken on the client from send to reply. The in-process rows run the
same episodes through ``env.astep`` with the same concurrency in this process
(the anchor). The 1-active rows give the server's overhead per step (p50
served minus p50 in-process: JSON, WebSocket frames, loopback, the
server's own event loop); the many-active rows give throughput under load.
Client and server share the machine's cores, so the served figures include
the client's own cost.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx
from _common import episode_actions, header  # noqa: I001  (benchmarks/ is the script dir)
from websockets.asyncio.client import connect

import gym_llm
from gym_llm.apps.serve import EnvServer, Session

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
import servers  # noqa: E402  (free_port, shared with the tests)


def summary(latencies: list[float], wall: float) -> dict[str, float]:
    """p50/p99 step latency and steps/s (``wall``: the time the steps took, resets included)."""
    ordered = sorted(latencies)
    return {
        "steps": len(ordered),
        "p50_ms": statistics.median(ordered) * 1e3,
        "p99_ms": ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] * 1e3,
        "steps_per_s": len(ordered) / wall,
    }


def reset_message(index: int) -> str:
    return json.dumps({"type": "reset", "data": {"seed": 0, "task_index": index}})


def step_message(action: str) -> str:
    return json.dumps({"type": "step", "data": {"message": action}})


async def ask(ws, message: str) -> dict:
    await ws.send(message)
    reply = json.loads(await ws.recv())
    if reply["type"] != "observation":
        raise RuntimeError(f"the server answered {reply}")
    return reply


async def one_active(env_id: str, url: str, episodes: list[tuple[int, str]]) -> dict[str, dict[str, float]]:
    """One session at a time, the three ways interleaved episode by episode
    (in turn first), so the machine's load falls on all three alike."""
    env = gym_llm.make(env_id)
    server = EnvServer(env_id)
    session = Session(server.make_env())

    async def local(index: int, action: str) -> float:
        await env.areset(seed=0, options={"task_index": index})
        t = time.perf_counter()
        await env.astep(action)
        return time.perf_counter() - t

    async def handled(index: int, action: str) -> float:
        await server.handle(session, reset_message(index))
        t = time.perf_counter()
        reply = await server.handle(session, step_message(action))
        dt = time.perf_counter() - t
        if reply is None or json.loads(reply)["type"] != "observation":
            raise RuntimeError(f"step failed: {reply}")
        return dt

    ways = {"in-process env.astep": local, "in-process EnvServer.handle (no socket)": handled}
    latencies: dict[str, list[float]] = {**{mode: [] for mode in ways}, "gym-llm serve": []}
    walls = dict.fromkeys(latencies, 0.0)
    async with connect(url) as ws:

        async def remote(index: int, action: str) -> float:
            await ask(ws, reset_message(index))
            t = time.perf_counter()
            await ask(ws, step_message(action))
            return time.perf_counter() - t

        order = [*ways.items(), ("gym-llm serve", remote)]
        for i, (index, action) in enumerate(episodes):
            for mode, play in order[i % 3:] + order[:i % 3]:
                t = time.perf_counter()
                latencies[mode].append(await play(index, action))
                walls[mode] += time.perf_counter() - t
    env.close()
    session.env.close()
    results = {mode: summary(latencies[mode], walls[mode]) for mode in latencies}
    anchor = latencies["in-process env.astep"]
    for mode in list(latencies)[1:]:
        results[mode]["paired_overhead_ms"] = statistics.median(
            (x - y) * 1e3 for x, y in zip(latencies[mode], anchor, strict=True))
    return results


async def many_active(env_id: str, url: str, episodes: list[tuple[int, str]], active: int) -> dict[str, dict]:
    """``active`` sessions at once, in-process then served."""
    results = {}
    for mode in ("in-process env.astep", "gym-llm serve"):
        latencies: list[float] = []
        queue = list(reversed(episodes))

        async def worker(mode: str = mode, latencies: list[float] = latencies, queue: list = queue) -> None:
            if mode == "gym-llm serve":
                async with connect(url) as ws:
                    while queue:
                        index, action = queue.pop()
                        await ask(ws, reset_message(index))
                        t = time.perf_counter()
                        await ask(ws, step_message(action))
                        latencies.append(time.perf_counter() - t)
            else:
                env = gym_llm.make(env_id)
                while queue:
                    index, action = queue.pop()
                    await env.areset(seed=0, options={"task_index": index})
                    t = time.perf_counter()
                    await env.astep(action)
                    latencies.append(time.perf_counter() - t)
                env.close()

        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(active)))
        results[mode] = summary(latencies, time.perf_counter() - t0)
    return results


async def bench_env(env_id: str, url: str, steps_one: int, steps_many: int, active: int, idle: int) -> list[dict]:
    idle_sockets = []
    for _ in range(idle):  # open, reset, then silent for the whole measurement
        ws = await connect(url)
        await ask(ws, reset_message(0))
        idle_sockets.append(ws)
    await one_active(env_id, url, episode_actions(env_id, 12))  # warm-up: first-use costs, sandbox spares
    rows = []
    for mode, result in (await one_active(env_id, url, episode_actions(env_id, steps_one))).items():
        rows.append({"env": env_id, "active": 1, "mode": mode, **result})
    for mode, result in (await many_active(env_id, url, episode_actions(env_id, steps_many), active)).items():
        rows.append({"env": env_id, "active": active, "mode": mode, **result})
    for ws in idle_sockets:
        await ws.close()
    return rows


def start_server(env_id: str, max_sessions: int) -> tuple[subprocess.Popen, str]:
    port = servers.free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "gym_llm.apps.serve", env_id, "--port", str(port), "--max-sessions", str(max_sessions)],
        cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited {proc.returncode}: {proc.stderr.read().decode()[-2000:]}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return proc, f"ws://127.0.0.1:{port}/ws"
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("server did not start in 60 s")


def run_env(env_id: str, steps_one: int, steps_many: int, active: int, idle: int) -> list[dict]:
    proc, url = start_server(env_id, idle + active + 2)
    try:
        return asyncio.run(bench_env(env_id, url, steps_one, steps_many, active, idle))
    finally:
        proc.terminate()
        proc.wait(30)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--idle", type=int, default=256, help="open, silent sessions during the served runs")
    p.add_argument("--active", type=int, default=16, help="concurrent playing sessions in the loaded runs")
    p.add_argument("--math-steps", type=int, default=2000)
    p.add_argument("--code-steps", type=int, default=200)
    args = p.parse_args()
    load_before = os.getloadavg()[0]
    rows = run_env("math/Arithmetic-v0", args.math_steps, args.math_steps * 2, args.active, args.idle)
    rows += run_env("code/PythonFunctions-v0", args.code_steps, args.code_steps * 2, args.active, args.idle)

    print(header("Environment server: `gym-llm serve` on loopback vs in-process"))
    print()
    print(f"{args.idle} idle sessions open on the server throughout (reset, then silent; each its own env). "
          f"1-minute load average {load_before:.1f} before the run, {os.getloadavg()[0]:.1f} after "
          f"(other work on the machine shows in every row alike).")
    print()
    print("| env | active sessions | mode | steps | p50 ms | p99 ms | steps/s | steps/s vs in-process | "
          "p50 minus in-process p50 (ms) | overhead per step, paired p50 (ms) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    anchors: dict[tuple[str, int], dict] = {}
    for row in rows:
        anchor = anchors.setdefault((row["env"], row["active"]), row)
        paired = f"{row['paired_overhead_ms']:.2f}" if "paired_overhead_ms" in row else "-"
        p50_gap = "-" if row is anchor else f"{row['p50_ms'] - anchor['p50_ms']:.2f}"
        print(f"| {row['env']} | {row['active']} | {row['mode']} | {row['steps']} | {row['p50_ms']:.2f} | "
              f"{row['p99_ms']:.2f} | {row['steps_per_s']:,.0f} | {row['steps_per_s'] / anchor['steps_per_s']:.2f} | "
              f"{p50_gap} | {paired} |")
    print()
    for row in rows:
        if row["mode"] == "gym-llm serve" and row["active"] == 1:
            target = " (target <= 2 ms)" if row["env"].startswith("math/") else ""
            gap = row["p50_ms"] - anchors[(row["env"], 1)]["p50_ms"]
            print(f"- {row['env']}: server overhead per step **{row['paired_overhead_ms']:.2f} ms** paired p50 "
                  f"({gap:.2f} ms between the p50s){target}")
    print("- overhead, paired: the median over episodes of (served step latency - in-process `env.astep` "
          "latency of the same episode); the 1-session rows interleave the three ways episode by episode, so "
          "the machine's other load falls on all alike. `EnvServer.handle` is the server's message handling "
          "(JSON in, the env's `astep`, OpenEnv's JSON out) without a socket; the rest of the served overhead "
          "is WebSocket framing, loopback and the two processes' event loops.")
    print("- a served step's latency is send to reply on the client (raw `websockets` client, JSON text frames). "
          "Half the episodes are answered right, half wrong. Client and server share the machine's cores: "
          "the loaded rows include the client's own cost.")

if __name__ == "__main__":
    main()
