"""Sandbox cost vs a bare subprocess; prints a markdown section for benchmarks/RESULTS.md.

    python benchmarks/bench_sandbox.py [--n 60] [--throughput-runs 120]

Latency: a trivial Python program (``pass``), jailed via ``Sandbox.run_code`` (default:
a fresh jail cloned by the resident nsjail; and the per-run nsjail path) and bare
(``<same python3> -c pass`` via subprocess), measured interleaved so both see the same
machine state. Throughput: many concurrent runs (pool = cores) vs the same number of
bare subprocesses with the same concurrency. Breakdown: where the jail's time goes,
measured on raw nsjail command lines (no Python-side sandbox code).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import platform
import resource
import statistics
import subprocess
import time

from gym_llm.sandbox import Sandbox, _resident
from gym_llm.sandbox._nsjail import find_nsjail, python_executable, top_level_symlinks


def _ms(xs: list[float]) -> str:
    return f"{statistics.median(xs) * 1000:.1f}"


def _cpu() -> float:
    """CPU seconds of this process (all threads), its reaped descendants, and the
    resident nsjail daemons with their reaped jails (which are not our children)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    total = me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
    for d in list(_resident.DAEMONS._daemons.values()):
        try:
            with open(f"/proc/{d.proc.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # utime, stime, cutime, cstime (fields 14-17 of stat(5))
        total += sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    return total


def latency(sb: Sandbox, py: str, n: int) -> tuple[list[float], list[float]]:
    """Interleaved wall times of bare and jailed trivial runs."""
    bare, jailed = [], []
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run([py, "-c", "pass"], check=True)
        bare.append(time.perf_counter() - t0)
        t1 = time.perf_counter()
        r = sb.run_code("python", "pass")
        jailed.append(time.perf_counter() - t1)
        assert r.ok, r
    return bare, jailed


def cpu_per_run(sandboxes: list[Sandbox], py: str, n: int = 20, rounds: int = 4
                ) -> list[float]:
    """Mean CPU seconds per trivial run (host side + jail, every process), bare first,
    then each sandbox: alternating blocks of ``n`` runs, medians over ``rounds``.

    CPU is what bounds throughput on saturated cores and, unlike wall time, barely
    moves with other load on the machine. Blocks (not single runs) with a pause
    before each reading, because jails are reaped (and their CPU accounted) after
    the run returns: by the daemon for resident jails, in the background for spares."""
    runners = [lambda: subprocess.run([py, "-c", "pass"], check=True)] + [
        functools.partial(sb.run_code, "python", "pass") for sb in sandboxes]
    samples: list[list[float]] = [[] for _ in runners]
    for _ in range(rounds):
        for i, run in enumerate(runners):
            time.sleep(0.3)
            c0 = _cpu()
            for _ in range(n):
                run()
            time.sleep(0.3)
            samples[i].append((_cpu() - c0) / n)
    return [statistics.median(x) for x in samples]


async def _bare_many(py: str, runs: int, conc: int) -> None:
    sem = asyncio.Semaphore(conc)

    async def one() -> None:
        async with sem:
            p = await asyncio.create_subprocess_exec(py, "-c", "pass")
            await p.wait()

    await asyncio.gather(*(one() for _ in range(runs)))


async def _jailed_many(sb: Sandbox, runs: int) -> None:
    rs = await asyncio.gather(*(sb.arun_code("python", "pass") for _ in range(runs)))
    assert all(r.ok for r in rs)


def throughput(sb: Sandbox, py: str, runs: int, rounds: int = 3) -> tuple[float, float]:
    conc = sb.pool.max_concurrency
    bare, jailed = [], []
    for _ in range(rounds):  # interleaved rounds, best of each
        t0 = time.perf_counter()
        asyncio.run(_bare_many(py, runs, conc))
        bare.append(runs / (time.perf_counter() - t0))
        t0 = time.perf_counter()
        asyncio.run(_jailed_many(sb, runs))
        jailed.append(runs / (time.perf_counter() - t0))
    return max(bare), max(jailed)


def breakdown(py: str, n: int) -> list[tuple[str, float]]:
    """Median ms of raw nsjail variants, interleaved, to see what costs time."""
    nsjail, _ = find_nsjail()
    assert nsjail
    links = [a for t, link in top_level_symlinks() for a in ("-s", f"{t}:{link}")]
    base = [nsjail, "-Mo", "-Q", "-u", "65534:65534:1", "-g", "65534:65534:1",
            "-m", "none:/work:tmpfs:size=67108864", "--cwd", "/work", *links]
    narrow = ["-R", py, "-R", os.path.dirname(os.__file__) if py.startswith(
        os.path.dirname(os.path.dirname(os.__file__))) else "/usr/lib/python3.11",
        "-R", "/usr/lib/x86_64-linux-gnu", "-R", "/usr/lib64"]
    narrow = [a for a in narrow if a == "-R" or os.path.exists(a)]
    variants = {
        "bare `/bin/true`": ["/bin/true"],
        "nsjail `--help` (binary start-up only)": [nsjail, "--help"],
        "nsjail, no namespaces, `/bin/true`": [
            nsjail, "-Mo", "-Q", "--disable_proc", "--disable_clone_newnet",
            "--disable_clone_newuser", "--disable_clone_newns", "--disable_clone_newpid",
            "--disable_clone_newipc", "--disable_clone_newuts", "--disable_clone_newcgroup",
            "--", "/bin/true"],
        "nsjail, all namespaces + /usr, `/bin/true`": [*base, "-R", "/usr", "--", "/bin/true"],
        "nsjail, + `--iface_no_lo`": [*base, "--iface_no_lo", "-R", "/usr", "--", "/bin/true"],
        "nsjail, + seccomp policy": [*base, "--iface_no_lo", "-R", "/usr", "--seccomp_string",
                                     "KILL_PROCESS { ptrace, bpf, mount } DEFAULT ALLOW",
                                     "--", "/bin/true"],
        "bare `python3 -c pass`": [py, "-c", "pass"],
        "nsjail, python, /usr mounted": [*base, "--iface_no_lo", "-R", "/usr", "--", py, "-c",
                                         "pass"],
        "nsjail, python, narrow mounts (no dist-packages)": [*base, "--iface_no_lo", *narrow,
                                                             "--", py, "-c", "pass"],
        "bare `python3 -S -c pass`": [py, "-S", "-c", "pass"],
        "nsjail, python -S, narrow mounts": [*base, "--iface_no_lo", *narrow, "--", py, "-S",
                                             "-c", "pass"],
    }
    times: dict[str, list[float]] = {k: [] for k in variants}
    for _ in range(n):
        for k, argv in variants.items():
            t0 = time.perf_counter()
            subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            times[k].append(time.perf_counter() - t0)
    return [(k, statistics.median(v) * 1000) for k, v in times.items()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=60, help="latency samples per side")
    ap.add_argument("--throughput-runs", type=int, default=120)
    args = ap.parse_args()
    py = python_executable()
    sb = Sandbox()
    sb.run_code("python", "pass")  # warm caches (ldd, stdlib paths)
    bare, jailed = latency(sb, py, args.n)
    ratio = statistics.median(jailed) / statistics.median(bare)
    tb, tj = throughput(sb, py, args.throughput_runs)
    per_run = Sandbox(resident=False)
    per_run.run_code("python", "pass")
    bare_p, jailed_p = latency(per_run, py, max(10, args.n // 2))
    ratio_p = statistics.median(jailed_p) / statistics.median(bare_p)
    tb_p, tj_p = throughput(per_run, py, args.throughput_runs)
    cold = Sandbox(prespawn=False, resident=False)
    bare_c, cold_c = latency(cold, py, max(10, args.n // 2))
    cpu_bare, cpu_jailed, cpu_jailed_p = cpu_per_run([sb, per_run], py)
    ratio_c = statistics.median(cold_c) / statistics.median(bare_c)
    rows = breakdown(py, max(10, args.n // 3))
    print("## Sandbox (gym_llm.sandbox)\n")
    print(f"Machine: {os.cpu_count()} cores, {platform.platform()}, nsjail "
          f"`{find_nsjail()[0]}`, python `{py}`. Command: "
          f"`python benchmarks/bench_sandbox.py --n {args.n} "
          f"--throughput-runs {args.throughput_runs}`.\n")
    print("| metric | bare subprocess | sandbox | ratio | target | met |")
    print("|---|---|---|---|---|---|")
    print(f"| trivial Python, median latency (ms, interleaved n={args.n}) | {_ms(bare)} | "
          f"{_ms(jailed)} | {ratio:.2f}x | <= 1.5x | {'yes' if ratio <= 1.5 else 'NO'} |")
    print(f"| same, per-run nsjail + pre-spawned jail (`resident=False`, n={len(jailed_p)}) "
          f"| {_ms(bare_p)} | {_ms(jailed_p)} | {ratio_p:.2f}x | | |")
    print(f"| same, per-run nsjail, `prespawn=False` (n={len(cold_c)}) | {_ms(bare_c)} | "
          f"{_ms(cold_c)} | {ratio_c:.2f}x | | |")
    cr = cpu_jailed / cpu_bare
    print(f"| CPU per trivial Python run, host + jail (ms, median of 4 blocks of 20) | "
          f"{cpu_bare * 1000:.1f} | "
          f"{cpu_jailed * 1000:.1f} | {cr:.2f}x | <= 1.25x (= 0.8x throughput) | "
          f"{'yes' if cr <= 1.25 else 'NO'} |")
    print(f"| same, per-run nsjail (`resident=False`) | {cpu_bare * 1000:.1f} | "
          f"{cpu_jailed_p * 1000:.1f} | {cpu_jailed_p / cpu_bare:.2f}x | | |")
    tr = tj / tb
    print(f"| throughput, {args.throughput_runs} runs, {sb.pool.max_concurrency} concurrent "
          f"(runs/s) | {tb:.1f} | {tj:.1f} | {tr:.2f}x | >= 0.8x | "
          f"{'yes' if tr >= 0.8 else 'NO'} |")
    print(f"| same, per-run nsjail (`resident=False`) | {tb_p:.1f} | {tj_p:.1f} | "
          f"{tj_p / tb_p:.2f}x | | |")
    print(f"\nLoad average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores.")
    print(f"\nDate: {time.strftime('%Y-%m-%d %H:%M')}. Wall-clock ratios move with other load on "
          "the machine; the CPU ratio is the steadier figure.")
    print("\nWhere the time goes (raw nsjail command lines, median ms, interleaved):\n")
    print("| variant | ms |")
    print("|---|---|")
    for k, v in rows:
        print(f"| {k} | {v:.1f} |")


if __name__ == "__main__":
    main()
