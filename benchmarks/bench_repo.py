"""``code/Repo-v0``: tool-call latency, hidden-test scoring time, parallel episodes,
and bring-your-own projects from the package registry; prints a Markdown section
for benchmarks/RESULTS.md.

    python benchmarks/bench_repo.py [--calls 40] [--episodes 12] [--packages six inflection ...]
                                    [--max-mutants 20] [--zero-shot-n 4]

* latency: a tool call in the episode's session jail (``run("true")``, the
  ``python`` tool's first cell, which also imports ``json`` and ``ast`` for the
  kernel, ``read_file``) against a bare ``subprocess`` of the same command on the
  host (``bash -c true``; the jail's interpreter with the jail's flags ``-S -s -B``),
  interleaved, median and 90th percentile;
* scoring: the hidden-test run of one episode (a fresh jail on the source files),
  over reference and untouched submissions of every task kind;
* parallel: scripted episodes (list, read, grep, run the visible tests, write the
  reference, submit) at 1 and 2 concurrent episodes on the event loop;
* bring your own: each package's sdist, fetched with ``pip download --no-binary
  :all: --no-deps`` (the benchmark fetches; the library never does), built into
  tasks with ``max_mutants``: tests, mutants tried, tasks kept, build time, and
  each task's reference earning 1.0 / the untouched project 0.0 (first 3 tasks);
* zero-shot (``--zero-shot-n`` > 0): SmolLM2-135M-Instruct through gym-llm-eval
  (``model=smollm2-135m-instruct``, vLLM), held-out split.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import header  # noqa: E402
from gym_llm_code.repo.byo import BuildReport, build_repo_tasks  # noqa: E402
from gym_llm_code.repo.projects import KINDS  # noqa: E402

import gym_llm  # noqa: E402

#: The interpreter the jail runs (the sandbox's), started the way the jail starts it.
PYTHON = os.environ.get("GYM_LLM_SANDBOX_PYTHON", "/usr/bin/python3")


def calls(*pairs: tuple[str, dict]) -> str:
    return "".join(f"<tool_call>{json.dumps({'name': n, 'arguments': a})}</tool_call>" for n, a in pairs)


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def latency(n: int) -> list[str]:
    env = gym_llm.make("code/Repo-v0", kind="bug").unwrapped
    env.reset(seed=0)
    ws = env.workspace
    runs: dict[str, list[float]] = {k: [] for k in ("session run", "bare bash", "session python", "bare python",
                                                    "read_file (host side)")}
    loop = asyncio.new_event_loop()
    for _ in range(n):
        t = time.perf_counter()
        loop.run_until_complete(ws.run("true"))
        runs["session run"].append(time.perf_counter() - t)
        t = time.perf_counter()
        subprocess.run(["bash", "-c", "true"], check=True)
        runs["bare bash"].append(time.perf_counter() - t)
        ws.kernel.reset()
        t = time.perf_counter()
        loop.run_until_complete(ws.python("print(1)"))
        runs["session python"].append(time.perf_counter() - t)
        t = time.perf_counter()
        subprocess.run([PYTHON, "-S", "-s", "-B", "-c", "print(1)"], check=True, stdout=subprocess.DEVNULL)
        runs["bare python"].append(time.perf_counter() - t)
        t = time.perf_counter()
        ws.read_file("README.md")
        runs["read_file (host side)"].append(time.perf_counter() - t)
    loop.close()
    env.close()
    rows = ["| call | median ms | p90 ms |", "|---|---:|---:|"]
    rows += [f"| {k} | {1000 * statistics.median(v):.1f} | {1000 * pct(v, 0.9):.1f} |" for k, v in runs.items()]
    return rows


def scoring(per_kind: int) -> list[str]:
    rows = ["| kind | episodes | reference reward | untouched reward | scoring ms median | p90 |",
            "|---|---:|---:|---:|---:|---:|"]
    for kind in KINDS:
        env = gym_llm.make("code/Repo-v0", kind=kind, difficulty=0.5).unwrapped
        times, ref, untouched = [], [], []
        for seed in range(per_kind):
            for solve in (True, False):
                env.reset(seed=seed)
                if solve:
                    for path, content in env.task.answer.items():
                        env.workspace.write_file(path, content)
                t = time.perf_counter()
                result = env.step(calls(("submit", {})))
                times.append(time.perf_counter() - t)
                (ref if solve else untouched).append(result[1])
        rows.append(f"| {kind} | {2 * per_kind} | {statistics.mean(ref):.2f} | {statistics.mean(untouched):.2f} | "
                    f"{1000 * statistics.median(times):.0f} | {1000 * pct(times, 0.9):.0f} |")
        env.close()
    return rows


async def _episode(env, seed: int) -> float:
    await env.areset(seed=seed)
    task = env.unwrapped.task
    pkg = task.metadata["package"]
    await env.astep(calls(("list_files", {}), ("read_file", {"path": f"{pkg}/cli.py"}),
                          ("grep", {"pattern": "def group_total"})))
    await env.astep(calls(("run", {"command": "python3 -m unittest discover -s tests"})))
    _, reward, *_ = await env.astep(calls(*[("write_file", {"path": p, "content": c})
                                            for p, c in task.answer.items()], ("submit", {})))
    return reward


async def _episodes(envs: list, episodes: int) -> list[float]:
    """``episodes`` scripted episodes, env ``i`` playing seeds ``i, i + len(envs), ...``."""
    async def worker(i: int) -> list[float]:
        return [await _episode(envs[i], s) for s in range(i, episodes, len(envs))]

    return [r for rs in await asyncio.gather(*(worker(i) for i in range(len(envs)))) for r in rs]


def parallel(episodes: int) -> list[str]:
    rows = ["| concurrent episodes | episodes | wall s | episodes/s | mean reward |", "|---:|---:|---:|---:|---:|"]
    for conc in (1, 2):
        envs = [gym_llm.make("code/Repo-v0", difficulty=0.5) for _ in range(conc)]
        t = time.perf_counter()
        rewards = asyncio.run(_episodes(envs, episodes))
        wall = time.perf_counter() - t
        rows.append(f"| {conc} | {episodes} | {wall:.1f} | {episodes / wall:.2f} | {statistics.mean(rewards):.2f} |")
        for e in envs:
            e.close()
    return rows


def fetch_sdist(name: str, into: Path) -> Path:
    """The unpacked sdist of ``name`` (``pip download --no-binary :all: --no-deps``)."""
    dl = into / f"{name}-dl"
    dl.mkdir(exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-binary", ":all:", "--no-deps",
                    "-d", str(dl), name], check=True)
    archive = next(p for p in dl.iterdir() if p.name.endswith((".tar.gz", ".zip")))
    with tarfile.open(archive) as tar:
        tar.extractall(into / f"{name}-src", filter="data")
    return next((into / f"{name}-src").iterdir())


def byo(packages: list[str], max_mutants: int, work: Path) -> list[str]:
    rows = ["| package | source roots | tests (pass) | mutants tried | tasks | build s | cached rebuild s | "
            "reference / untouched (first 3) |", "|---|---|---:|---:|---:|---:|---:|---|"]
    for name in packages:
        try:
            root = fetch_sdist(name, work)
            report = BuildReport()
            tasks = build_repo_tasks(root, max_mutants=max_mutants, cache_dir=str(work / "cache"), report=report)
            again = BuildReport()
            build_repo_tasks(root, max_mutants=max_mutants, cache_dir=str(work / "cache"), report=again)
        except (ValueError, subprocess.CalledProcessError) as e:
            rows.append(f"| {name} | | | | 0 | | | {str(e).splitlines()[0][:100]} |")
            continue
        env = gym_llm.make("code/Repo-v0", repo=str(root), max_mutants=max_mutants,
                           cache_dir=str(work / "cache")).unwrapped
        checks = []
        for task in tasks[:3]:
            split = task.split
            env.split = split
            index = [t.id for t in env.task_set.by_split[split]].index(task.id)
            env.reset(options={"task_index": index})
            for path, content in task.answer.items():
                env.workspace.write_file(path, content)
            ref = env.step(calls(("submit", {})))[1]
            env.reset(options={"task_index": index})
            untouched = env.step(calls(("submit", {})))[1]
            checks.append(f"{ref:.1f}/{untouched:.1f}")
        env.close()
        rows.append(f"| {name} | {', '.join(tasks[0].metadata['roots'])} | {report.project_tests} "
                    f"({report.passing_tests}) | {report.mutants_tried} | {report.tasks} | {report.seconds:.0f} | "
                    f"{again.seconds:.1f} | {' '.join(checks)} |")
    return rows


def zero_shot(n: int, out: Path) -> list[str]:
    cmd = [sys.executable, "-m", "gym_llm.apps.evaluate", "model=smollm2-135m-instruct", "policy=vllm",
           "env_ids=[code/Repo-v0]", f"num_tasks={n}", "k=1", "policy.temperature=0.7",
           "policy.max_new_tokens=512", "policy.max_episode_tokens=8192", "+policy.vllm_kwargs.max_model_len=8192",
           "policy.gpu_memory_utilization=0.2", "plots=false", f"hydra.run.dir={out}"]
    t = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        return [f"zero-shot eval failed (exit {proc.returncode}): {proc.stdout[-400:]!r}"]
    results = json.loads((out / "results.json").read_text())
    return [f"zero-shot SmolLM2-135M-Instruct, held-out, n={n}, k=1, 512 new tokens per turn: "
            f"{json.dumps(results.get('envs', results).get('code/Repo-v0', results))[:600]} (wall {wall:.0f} s)"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=40)
    ap.add_argument("--per-kind", type=int, default=8)
    ap.add_argument("--episodes", type=int, default=12)
    ap.add_argument("--packages", nargs="*", default=["six", "inflection", "toolz", "more-itertools"])
    ap.add_argument("--max-mutants", type=int, default=20)
    ap.add_argument("--zero-shot-n", type=int, default=0)
    args = ap.parse_args()
    load = os.getloadavg()[0]
    print(header("Repository tasks (code/Repo-v0)"))
    print(f"- load average at start: {load:.1f} (the machine is shared: other jobs ran meanwhile)\n")
    print("### Tool-call latency: session jail vs bare subprocess\n")
    print("\n".join(latency(args.calls)) + "\n")
    print("### Hidden-test scoring per episode\n")
    print("\n".join(scoring(args.per_kind)) + "\n")
    print("### Scripted episodes in parallel (2 cores)\n")
    print("\n".join(parallel(args.episodes)) + "\n")
    with tempfile.TemporaryDirectory() as tmp:
        print("### Bring your own project: registry sdists into tasks\n")
        print("\n".join(byo(args.packages, args.max_mutants, Path(tmp))) + "\n")
        if args.zero_shot_n:
            print("### Zero-shot\n")
            print("\n".join(zero_shot(args.zero_shot_n, Path(tmp) / "zs")) + "\n")


if __name__ == "__main__":
    main()
