"""Shared by the benchmark scripts: the machine line every section states,
and scripted episodes of the env benchmarks."""

from __future__ import annotations

import contextlib
import datetime
import os
import platform
import resource
import shlex
import subprocess
import sys
import time

import psutil

import gym_llm
from gym_llm.apps.evaluate.report import cpu_model


def machine() -> str:
    return f"{os.cpu_count()} cores, {cpu_model()}, Python {platform.python_version()}, {platform.system()}"


def header(title: str) -> str:
    """A Markdown section header with the command, machine and date."""
    cmd = " ".join(shlex.quote(a) for a in [os.path.relpath(sys.argv[0])] + sys.argv[1:])
    return (
        f"## {title}\n\n"
        f"- command: `python {cmd}`\n"
        f"- machine: {machine()}\n"
        f"- date: {datetime.date.today().isoformat()}\n"
    )


def episode_actions(env_id: str, n: int) -> list[tuple[int, str]]:
    """``n`` episodes as (task index, action): gold answers, every other one wrong."""
    env = gym_llm.make(env_id).unwrapped
    size = min(env.num_tasks, 500)
    episodes = []
    for i in range(n):
        task = env.task_set.get("train", i % size)
        if env_id.startswith("math/"):
            action = f"\\boxed{{{task.answer}}}" if i % 2 == 0 else "\\boxed{none}"
        else:
            action = f"```python\n{task.answer}\n```" if i % 2 == 0 else "```python\ndef f():\n    pass\n```"
        episodes.append((i % size, action))
    return episodes


@contextlib.contextmanager
def busy_loops(n: int):
    """``n`` competing ``python -c 'while 1: pass'`` processes for the ``with``
    block, killed when it ends (however it ends): CPU contention on demand."""
    busy = [subprocess.Popen([sys.executable, "-c", "while 1: pass"]) for _ in range(n)]
    try:
        yield
    finally:
        for p in busy:
            p.kill()
            p.wait()


def cpu_seconds() -> float:
    """CPU seconds of this process (all threads), its reaped descendants, and the
    sandbox's resident nsjail daemons with the jails they reaped (not our children, so
    ``RUSAGE_CHILDREN`` misses them): what the sandbox runs of a benchmark cost."""
    from gym_llm_sandbox import _resident

    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    total = me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
    for d in _resident.DAEMONS.all():
        try:
            with open(f"/proc/{d.proc.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # utime, stime, cutime, cstime (fields 14-17 of stat(5))
        total += sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    return total


def process_tree(root: psutil.Process) -> list[psutil.Process]:
    """``root`` and its live descendants; only ``root`` when it has exited meanwhile."""
    try:
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return [root]


def run_with_peak_memory(cmd: list[str], **kwargs) -> tuple[int, float, int]:
    """Run ``cmd`` to the end; ``(exit status, wall seconds, peak RSS bytes)``,
    the RSS summed over the process and all its descendants (an in-process
    vLLM engine, sandbox jails), sampled every 0.2 s."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, **kwargs)
    root, peak = psutil.Process(proc.pid), 0
    while proc.poll() is None:
        total = 0
        for p in process_tree(root):
            with contextlib.suppress(psutil.Error):  # a child may exit between the listing and the read
                total += p.memory_info().rss
        peak = max(peak, total)
        time.sleep(0.2)
    return proc.returncode, time.perf_counter() - t0, peak
