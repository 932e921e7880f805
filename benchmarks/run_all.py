"""Run every ``benchmarks/bench_*.py`` and rewrite ``benchmarks/RESULTS.md``.

    python benchmarks/run_all.py                       # all, rewrite RESULTS.md
    python benchmarks/run_all.py --only rollout,core   # a subset (by name after bench_)
    python benchmarks/run_all.py --timeout 1800 --out /tmp/RESULTS.md
    python benchmarks/run_all.py --only serve --update # rerun some, keep the other sections

Each benchmark runs alone (one at a time: concurrent runs would skew each
other's timings) as ``python benchmarks/bench_<name>.py`` and prints its
Markdown section on stdout; this script pastes the sections, in a fixed order,
under a header that records the command, the machine and the date. A benchmark
that fails, times out or prints nothing is kept in the file as a failure with
its exit status and the tail of its stderr, so a broken benchmark is visible
instead of silently dropped. The exit status is 1 when any benchmark failed
(after RESULTS.md is written), else 0. With ``--update`` the benchmarks run
replace their own sections and summary rows in the existing file and the
others stay as they were; the header then lists each run that wrote a part.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import re
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from gym_llm.apps.evaluate.report import cpu_model

HERE = Path(__file__).resolve().parent

#: Sections appear in this order (the layers of the stack, bottom up), a
#: benchmark placed by the first entry its name starts with (``math_verify``
#: goes with ``math``); any other ``bench_*.py`` follows; ties by name.
ORDER = ("core", "sandbox", "math", "code", "tool", "longctx", "rollout", "trainer")

#: Lines of stderr kept in RESULTS.md for a failed benchmark.
STDERR_TAIL_LINES = 30


@dataclass
class BenchRun:
    """The outcome of one benchmark script."""

    name: str
    path: Path
    returncode: int | None  # None: killed at the timeout
    stdout: str
    stderr: str
    wall_s: float
    load_before: float  # 1-minute load average when it started: timings under load are suspect

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and bool(self.stdout.strip())

    @property
    def status(self) -> str:
        if self.returncode is None:
            return "timed out"
        if self.returncode != 0:
            return f"failed (exit {self.returncode})"
        if not self.stdout.strip():
            return "failed (no output)"
        return "ok"


def discover(bench_dir: Path, only: list[str] | None = None) -> list[Path]:
    """``bench_*.py`` files of ``bench_dir`` in :data:`ORDER`, then by name;
    ``only`` keeps the names listed (``core`` or ``bench_core``). Unknown names
    in ``only`` raise ``ValueError``."""
    found = {p.stem.removeprefix("bench_"): p for p in bench_dir.glob("bench_*.py")}
    if only:
        wanted = [n.removeprefix("bench_") for n in only]
        missing = sorted(set(wanted) - set(found))
        if missing:
            raise ValueError(f"no benchmark named {missing}; found {sorted(found)}")
        found = {n: p for n, p in found.items() if n in wanted}

    return [found[n] for n in sorted(found, key=_order_key)]


def _order_key(name: str) -> tuple[int, str]:
    rank = next((i for i, layer in enumerate(ORDER) if name.startswith(layer)), len(ORDER))
    return (rank, name)


def run_one(path: Path, timeout_s: float, cwd: Path) -> BenchRun:
    """Run one benchmark script with this interpreter; never raises."""
    load = os.getloadavg()[0]
    start = time.perf_counter()
    try:
        # vLLM logs to stdout by default, and a benchmark's stdout is its Markdown section
        env = {**os.environ, "VLLM_LOGGING_STREAM": "ext://sys.stderr"}
        proc = subprocess.run(
            [sys.executable, str(path)], cwd=cwd, capture_output=True, text=True,
            timeout=timeout_s, errors="replace", env=env,
        )
        code, out, err = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as e:
        code = None
        out = _text(e.stdout)
        err = _text(e.stderr) + f"\n[run_all] killed after {timeout_s:.0f} s"
    except OSError as e:
        code, out, err = 127, "", f"[run_all] could not start: {e}"
    return BenchRun(path.stem.removeprefix("bench_"), path, code, out, err,
                    time.perf_counter() - start, load)


def _text(data: bytes | str | None) -> str:
    if data is None:
        return ""
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else data


def machine() -> str:
    """One line describing this machine: cores, CPU model, memory, GPU, OS."""
    cpu = cpu_model()
    mem = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {kb / 2**20:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    gpu = "no GPU"
    try:
        import torch

        if torch.cuda.is_available():
            gpu = f"{torch.cuda.device_count()}x {torch.cuda.get_device_name(0)}"
    except Exception:  # torch absent or broken: the header still gets written
        pass
    return (f"{os.cpu_count()} cores (`nproc`), {cpu}{mem}, {gpu}, "
            f"{platform.system()} {platform.release()}, Python {platform.python_version()}")


def render(runs: list[BenchRun], command: str, when: datetime.datetime, host: str) -> str:
    """RESULTS.md: header, a summary table, then each benchmark's section."""
    lines = [
        "# Benchmark results",
        "",
        "Generated by `benchmarks/run_all.py`; do not edit by hand (rerun it).",
        "",
        f"- Command: `{command}`",
        f"- Machine: {host}",
        f"- Date: {when.strftime('%Y-%m-%d %H:%M %Z').strip()}",
        "",
        "Load average is the machine's 1-minute load when each benchmark started: above the core "
        "count, other work shared the CPUs and the timings are pessimistic.",
        "",
        "| benchmark | status | wall time (s) | load average before |",
        "|---|---|---|---|",
    ]
    lines += [f"| [{r.name}](#{r.name}) | {r.status} | {r.wall_s:.1f} | {r.load_before:.2f} |"
              for r in runs]
    for r in runs:
        lines += ["", "---", "", f'<a id="{r.name}"></a>', ""]
        if r.ok:
            lines.append(r.stdout.strip())
            continue
        lines += [
            f"## {r.name}: {r.status.upper()}",
            "",
            f"`python {r.path.relative_to(r.path.parent.parent)}` {r.status} after {r.wall_s:.1f} s.",
        ]
        if r.stdout.strip():
            lines += ["", "Output before the failure:", "", r.stdout.strip()]
        tail = "\n".join(r.stderr.strip().splitlines()[-STDERR_TAIL_LINES:])
        if tail:
            lines += ["", "stderr (last lines):", "", "```", tail, "```"]
    return "\n".join(lines) + "\n"


_ROW = re.compile(r"^\| \[(\w+)\]\(#\1\) \|")
_ANCHOR = re.compile(r'^<a id="(\w+)"></a>$', re.M)


def _parts(text: str) -> tuple[list[str], dict[str, str], dict[str, str]]:
    """A RESULTS.md as (its header lines but the summary rows, the summary row
    of each benchmark, the section of each benchmark)."""
    head, _, body = text.partition("\n---\n")
    rows = {m.group(1): line for line in head.splitlines() if (m := _ROW.match(line))}
    chunks = _ANCHOR.split("\n---\n" + body)
    sections = {chunks[i]: chunks[i + 1].strip().removesuffix("---").strip() for i in range(1, len(chunks) - 1, 2)}
    return [line for line in head.splitlines() if not _ROW.match(line)], rows, sections


def merge(old: str, new: str) -> str:
    """``new`` (the render of a few benchmarks) laid over ``old`` (a whole
    RESULTS.md): the benchmarks of ``new`` replace or join those of ``old``,
    in :data:`ORDER`; ``old``'s header stays, with a line naming ``new``'s run."""
    head, rows, sections = _parts(old)
    new_head, new_rows, new_sections = _parts(new)

    def field(lines: list[str], key: str) -> str:
        return next((line.removeprefix(key) for line in lines if line.startswith(key)), "")

    update = f"- Updated by: {field(new_head, '- Command: ')}, {field(new_head, '- Date: ')}"
    if field(new_head, "- Machine: ") != field(head, "- Machine: "):
        update += f", on {field(new_head, '- Machine: ')}"
    at = max(i for i, line in enumerate(head) if line.startswith(("- Date: ", "- Updated by: ")))
    head.insert(at + 1, update)
    rows.update(new_rows)
    sections.update(new_sections)
    names = sorted(rows, key=_order_key)
    lines = head + [rows[n] for n in names]
    for n in names:
        lines += ["", "---", "", f'<a id="{n}"></a>', "", sections.get(n, "")]
    return "\n".join(lines) + "\n"


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temp file and a rename, so an
    interrupted run never leaves a half-written RESULTS.md."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, default=HERE, help="folder holding bench_*.py")
    parser.add_argument("--out", type=Path, default=None,
                        help="file to write (default: <dir>/RESULTS.md)")
    parser.add_argument("--only", default=None,
                        help="comma-separated benchmark names to run (default: all)")
    parser.add_argument("--update", action="store_true",
                        help="replace only the sections of the benchmarks run in the existing file")
    parser.add_argument("--timeout", type=float, default=3600.0,
                        help="seconds after which one benchmark is killed and reported")
    args = parser.parse_args(argv)
    bench_dir = args.dir.resolve()
    out = args.out or bench_dir / "RESULTS.md"
    only = [n.strip() for n in args.only.split(",") if n.strip()] if args.only else None
    try:
        paths = discover(bench_dir, only)
    except ValueError as e:
        parser.error(str(e))
    if not paths:
        parser.error(f"no bench_*.py in {bench_dir}")
    command = shlex.join(["python", "benchmarks/run_all.py", *(sys.argv[1:] if argv is None else argv)])
    runs = []
    for path in paths:
        print(f"[run_all] {path.name} ...", file=sys.stderr, flush=True)
        run = run_one(path, args.timeout, cwd=bench_dir.parent)
        print(f"[run_all] {path.name}: {run.status} in {run.wall_s:.1f} s", file=sys.stderr, flush=True)
        runs.append(run)
    when = datetime.datetime.now().astimezone()
    text = render(runs, command, when, machine())
    if args.update and out.exists():
        text = merge(out.read_text(), text)
    write_atomic(out, text)
    failed = [r.name for r in runs if not r.ok]
    print(f"[run_all] wrote {out}; {len(runs) - len(failed)} ok, {len(failed)} failed"
          + (f": {', '.join(failed)}" if failed else ""), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
