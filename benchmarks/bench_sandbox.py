"""Sandbox cost vs a bare subprocess; prints a markdown section for benchmarks/RESULTS.md.

    python benchmarks/bench_sandbox.py [--n 60] [--throughput-runs 240] [--rounds 5]

    python benchmarks/bench_sandbox.py --languages-only   # just the per-language table

Latency: a trivial Python program (``pass``), jailed via ``Sandbox.run_code`` (default:
a fresh jail cloned by the resident nsjail; and the per-run nsjail path) and bare
(``<same python3> -c pass`` via subprocess), measured interleaved so both see the same
machine state; the same for a program that prints one line (its output frame and its
exit frame reach the host as two small TCP writes). Throughput: many concurrent runs
(pool = cores) vs the same number of bare subprocesses with the same concurrency. Per language: throughput of trivial
programs (and Python with a file in and out) jailed vs the same sandbox code with
``isolation="none"`` (plain subprocesses: the same commands, compilers included,
without the jail). Breakdown: where the jail's time goes, measured on raw nsjail
command lines (no Python-side sandbox code), as latency and as throughput at the
pool's concurrency with one jail feature at a time taken away.
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
import tempfile
import time
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from _common import cpu_seconds
from gym_llm_sandbox import Limits, Sandbox, _nsjail
from gym_llm_sandbox._nsjail import find_nsjail, python_executable, top_level_symlinks
from gym_llm_sandbox.doctor import HELLO
from gym_llm_sandbox.languages import get_language, resolve


def _ms(xs: list[float]) -> str:
    return f"{statistics.median(xs) * 1000:.1f}"


def _p90(xs: list[float]) -> str:
    return f"{sorted(xs)[int(0.9 * (len(xs) - 1))] * 1000:.1f}"


def latency(sb: Sandbox, py: str, n: int, code: str = "pass") -> tuple[list[float], list[float]]:
    """Interleaved wall times of bare and jailed trivial runs of ``code``."""
    bare, jailed = [], []
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run([py, "-c", code], check=True, stdout=subprocess.DEVNULL)
        bare.append(time.perf_counter() - t0)
        t1 = time.perf_counter()
        r = sb.run_code("python", code)
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
            c0 = cpu_seconds()
            for _ in range(n):
                run()
            time.sleep(0.3)
            samples[i].append((cpu_seconds() - c0) / n)
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


def _busy() -> tuple[int, int]:
    """(busy, total) jiffies of all cores so far, from /proc/stat."""
    with open("/proc/stat") as f:
        ticks = [int(x) for x in f.readline().split()[1:]]
    return sum(ticks) - ticks[3] - ticks[4], sum(ticks)  # less idle and iowait


@dataclass
class Paired:
    """Alternating rounds of a bare and a jailed side: each side's median runs/s, the
    median of the rounds' jailed/bare ratios, every ratio, and the median share of the
    cores that were busy on each side. A round's two sides see the same machine state,
    so the ratio of a pair is steadier than a ratio of independent best-ofs (where one
    side's lucky round decides: on this 2-core VM those moved 0.81-0.92x run to run)."""

    bare: float
    jailed: float
    ratio: float
    ratios: list[float]
    busy_bare: float
    busy_jailed: float


def paired(run_bare: Callable[[], None], run_jailed: Callable[[], None], runs: int,
           rounds: int) -> Paired:
    rates: list[list[float]] = [[], []]
    busy: list[list[float]] = [[], []]
    for _ in range(rounds):
        for i, run in enumerate((run_bare, run_jailed)):
            b0, t0s = _busy()
            t0 = time.perf_counter()
            run()
            rates[i].append(runs / (time.perf_counter() - t0))
            b1, t1s = _busy()
            busy[i].append((b1 - b0) / max(1, t1s - t0s))
    ratios = [j / b for b, j in zip(*rates, strict=True)]
    return Paired(statistics.median(rates[0]), statistics.median(rates[1]),
                  statistics.median(ratios), ratios, statistics.median(busy[0]),
                  statistics.median(busy[1]))


def _blocking(coroutine_fn: Callable[..., Any], *args: Any) -> Callable[[], None]:
    """A call that runs ``coroutine_fn(*args)`` to its end in an event loop of its own."""
    return lambda: asyncio.run(coroutine_fn(*args))


def throughput(sb: Sandbox, py: str, runs: int, rounds: int) -> Paired:
    conc = sb.pool.max_concurrency
    return paired(_blocking(_bare_many, py, runs, conc), _blocking(_jailed_many, sb, runs), runs, rounds)


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


#: (row label, language, code, run_code keywords) of the per-language table.
LANGUAGE_CASES = [
    ("python", "python", "pass", {}),
    ("python, a file in and out", "python", "open('o', 'w').write(open('i').read())",
     {"files": {"i": "x"}, "output_files": ["o"]}),
    ("bash", "bash", "true", {}),
    ("javascript", "javascript", HELLO["javascript"], {}),
    ("c (compile + run)", "c", HELLO["c"], {}),
    ("cpp (compile + run)", "cpp", HELLO["cpp"], {}),
]


async def _many(sb: Sandbox, lang: str, code: str, kw: dict, runs: int) -> None:
    if sb.isolation == "none" and get_language(lang).compiled:
        return await _bare_compiled(sb, lang, code, runs)
    rs = await asyncio.gather(*(sb.arun_code(lang, code, **kw) for _ in range(runs)))
    assert all(r.ok for r in rs), [r for r in rs if not r.ok][:1]


async def _bare_compiled(sb: Sandbox, lang: str, code: str, runs: int) -> None:
    """The unjailed reference of a compiled language: the same compiler command line
    (source on stdin) into a temp dir, then the binary, ``sb``'s concurrency at once
    (``isolation="none"`` does not compile: its compile step writes to the jail's /src)."""
    spec = get_language(lang)
    assert spec.compile_argv
    exe = resolve(lang)
    sem = asyncio.Semaphore(sb.pool.max_concurrency)

    async def one() -> None:
        async with sem:
            with tempfile.TemporaryDirectory() as d:
                prog = os.path.join(d, "prog")
                p = await asyncio.create_subprocess_exec(
                    *spec.compile_argv(exe, prog), stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
                await p.communicate(code.encode())
                q = await asyncio.create_subprocess_exec(prog, stdout=asyncio.subprocess.DEVNULL)
                assert p.returncode == 0 and await q.wait() == 0

    await asyncio.gather(*(one() for _ in range(runs)))


def languages(runs: int, rounds: int = 3) -> list[Paired]:
    """Per case: unjailed vs jailed throughput in alternating rounds (:func:`paired`)."""
    jailed = Sandbox()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        # RLIMIT_AS is the only memory limit unjailed: V8 reserves far more address
        # space than it uses, so the reference gets a large one.
        bare = Sandbox(isolation="none", limits=Limits(memory_mb=1 << 16))
    out = []
    for _, lang, code, kw in LANGUAGE_CASES:
        n = max(4, runs // 4) if lang in ("c", "cpp") else runs
        out.append(paired(_blocking(_many, bare, lang, code, kw, n),
                          _blocking(_many, jailed, lang, code, kw, n), n, rounds))
    return out


def variant_throughput(runs: int, conc: int) -> list[tuple[str, float, float]]:
    """(variant, runs/s, CPU ms per run of our children) of raw per-run nsjail command
    lines (``python3 -S -c pass``) with one jail feature at a time removed. CPU of
    kernel work done in workqueues (network namespace teardown) is not a child's:
    it shows in runs/s only."""
    nsjail, _ = find_nsjail()
    assert nsjail
    py = python_executable()
    full = _nsjail.build_argv(nsjail, [py, "-S", "-c", "pass"], limits=Limits(),
                              ro_mounts=["/usr"], env={"PATH": "/usr/bin"}, tmpfs_work=True,
                              log_path="/dev/null")

    def without(argv: list[str], *opts: str) -> list[str]:
        out = list(argv)
        for o in opts:
            i = out.index(o)
            del out[i:i + (1 if o == "--iface_no_lo" else 2)]
        return out

    cg = ("--cgroup_mem_max", "--cgroup_mem_mount", "--cgroup_mem_parent", "--cgroup_pids_max",
          "--cgroup_pids_mount", "--cgroup_pids_parent")
    no_cg = without(full, *cg) if "--cgroup_mem_max" in full else full
    variants = {
        "bare `python3 -S -c pass`": [py, "-S", "-c", "pass"],
        "per-run nsjail, every feature": full,
        "  without seccomp": without(full, "--seccomp_string"),
        "  without cgroups": no_cg,
        "  without cgroups and a network namespace": [no_cg[0], "--disable_clone_newnet",
                                                      *without(no_cg, "--iface_no_lo")[1:]],
    }
    out = []
    for name, argv in variants.items():
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        with ThreadPoolExecutor(conc) as ex:
            list(ex.map(lambda a: subprocess.run(a, stdout=subprocess.DEVNULL,
                                                 stderr=subprocess.DEVNULL), [argv] * runs))
        dt = time.perf_counter() - t0
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime) / runs
        out.append((name, runs / dt, cpu * 1000))
    return out


def print_languages(runs: int) -> None:
    print(f"\nPer language: throughput of trivial programs, {os.cpu_count()} concurrent, "
          f"jailed vs the same `Sandbox` code with `isolation=\"none\"` (plain subprocesses, "
          f"compilers included; {runs} runs, {max(4, runs // 4)} for C/C++; 3 alternating "
          "rounds, medians; the ratio is the median of the rounds' ratios):\n")
    print("| program | unjailed runs/s | jailed runs/s | ratio | path |")
    print("|---|---|---|---|---|")
    for (label, *_), t in zip(LANGUAGE_CASES, languages(runs), strict=True):
        path = "resident nsjail" + (" (compile jail + run jail)" if "compile" in label else "")
        print(f"| {label} | {t.bare:.1f} | {t.jailed:.1f} | {t.ratio:.2f}x | {path} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=60, help="latency samples per side")
    ap.add_argument("--throughput-runs", type=int, default=240,
                    help="trivial runs per throughput round")
    ap.add_argument("--rounds", type=int, default=5,
                    help="alternating bare/jailed throughput rounds")
    ap.add_argument("--language-runs", type=int, default=60,
                    help="runs per round of the per-language table (C/C++: a quarter)")
    ap.add_argument("--languages-only", action="store_true",
                    help="only the per-language table")
    args = ap.parse_args()
    if args.languages_only:
        print_languages(args.language_runs)
        return
    py = python_executable()
    sb = Sandbox()
    sb.run_code("python", "pass")  # warm caches (ldd, stdlib paths)
    bare, jailed = latency(sb, py, args.n)
    ratio = statistics.median(jailed) / statistics.median(bare)
    bare_out, jailed_out = latency(sb, py, args.n, "print(1)")
    tput = throughput(sb, py, args.throughput_runs, args.rounds)
    per_run = Sandbox(resident=False)
    per_run.run_code("python", "pass")
    bare_p, jailed_p = latency(per_run, py, max(10, args.n // 2))
    ratio_p = statistics.median(jailed_p) / statistics.median(bare_p)
    tput_p = throughput(per_run, py, args.throughput_runs, args.rounds)
    cold = Sandbox(prespawn=False, resident=False)
    bare_c, cold_c = latency(cold, py, max(10, args.n // 2))
    cpu_bare, cpu_jailed, cpu_jailed_p = cpu_per_run([sb, per_run], py)
    ratio_c = statistics.median(cold_c) / statistics.median(bare_c)
    rows = breakdown(py, max(10, args.n // 3))
    print("## Sandbox (gym_llm_sandbox)\n")
    print(f"Machine: {os.cpu_count()} cores, {platform.platform()}, nsjail "
          f"`{find_nsjail()[0]}`, python `{py}`. Command: "
          f"`python benchmarks/bench_sandbox.py --n {args.n} "
          f"--throughput-runs {args.throughput_runs} --rounds {args.rounds} "
          f"--language-runs {args.language_runs}`.\n")
    print("| metric | bare subprocess | sandbox | ratio | target | met |")
    print("|---|---|---|---|---|---|")
    print(f"| trivial Python, median latency (ms, interleaved n={args.n}) | {_ms(bare)} | "
          f"{_ms(jailed)} | {ratio:.2f}x | <= 1.5x | {'yes' if ratio <= 1.5 else 'NO'} |")
    print(f"| same, a program that prints a line (`print(1)`; p90 {_p90(bare_out)} / "
          f"{_p90(jailed_out)} ms) | {_ms(bare_out)} | {_ms(jailed_out)} | "
          f"{statistics.median(jailed_out) / statistics.median(bare_out):.2f}x | | |")
    print(f"| same, per-run nsjail + pre-spawned jail (`resident=False`, n={len(jailed_p)}) "
          f"| {_ms(bare_p)} | {_ms(jailed_p)} | {ratio_p:.2f}x | | |")
    print(f"| same, per-run nsjail, `prespawn=False` (n={len(cold_c)}) | {_ms(bare_c)} | "
          f"{_ms(cold_c)} | {ratio_c:.2f}x | | |")
    cr = cpu_jailed / cpu_bare
    print(f"| CPU per trivial Python run, host + jail (ms, median of 4 blocks of 20) | "
          f"{cpu_bare * 1000:.1f} | "
          f"{cpu_jailed * 1000:.1f} | {cr:.2f}x | <= 1.2x | "
          f"{'yes' if cr <= 1.2 else 'NO'} |")
    print(f"| same, per-run nsjail (`resident=False`) | {cpu_bare * 1000:.1f} | "
          f"{cpu_jailed_p * 1000:.1f} | {cpu_jailed_p / cpu_bare:.2f}x | | |")
    tr = tput.ratio
    print(f"| throughput, {args.throughput_runs} runs, {sb.pool.max_concurrency} concurrent "
          f"(runs/s, medians of {args.rounds} alternating rounds; ratio: median of the "
          f"rounds' ratios) | {tput.bare:.1f} | {tput.jailed:.1f} | {tr:.2f}x | >= 0.85x | "
          f"{'yes' if tr >= 0.85 else 'NO'} |")
    print(f"| same, per-run nsjail (`resident=False`) | {tput_p.bare:.1f} | "
          f"{tput_p.jailed:.1f} | {tput_p.ratio:.2f}x | | |")
    print(f"\nThroughput rounds, jailed/bare: {', '.join(f'{r:.2f}' for r in tput.ratios)}; "
          f"cores busy (median): bare {tput.busy_bare:.0%}, jailed {tput.busy_jailed:.0%}. "
          f"Per-run nsjail: {', '.join(f'{r:.2f}' for r in tput_p.ratios)}.")
    print(f"\nLoad average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores.")
    print(f"\nDate: {time.strftime('%Y-%m-%d %H:%M')}. Wall-clock ratios move with other load on "
          "the machine; the CPU ratio is the steadier figure.")
    print("\nWhere the time goes (raw nsjail command lines, median ms, interleaved):\n")
    print("| variant | ms |")
    print("|---|---|")
    for k, v in rows:
        print(f"| {k} | {v:.1f} |")
    conc = os.cpu_count() or 1
    print(f"\nThroughput of raw per-run nsjail variants ({args.throughput_runs} runs, {conc} "
          "concurrent; CPU = our children's, so kernel work in workqueues such as network "
          "namespace teardown shows in runs/s only):\n")
    print("| variant | runs/s | CPU ms/run |")
    print("|---|---|---|")
    for k, rate, cpu in variant_throughput(args.throughput_runs, conc):
        print(f"| {k} | {rate:.1f} | {cpu:.1f} |")
    print_languages(args.language_runs)


if __name__ == "__main__":
    main()
