"""Why a program died, exactly, on every path (issue 37, item 8).

RLIMIT_CPU's kill and the memory cgroup's OOM kill are both SIGKILL. The jail's init
(``_init.c``) reads the program's CPU clock before reaping it, and the verdict follows
that clock on the resident path, in per-run jails and in sessions alike: the per-run
path used to infer it from the wall time, which misreads threads (CPU faster than the
clock), a pre-started interpreter, the tick-sampled count on a busy machine, and a
program killed for memory after ``cpu_time_s`` of mostly idle wall time.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest
from gym_llm_sandbox import ExecResult, Limits, Sandbox

PATHS = ["resident", "per-run", "session"]


@pytest.fixture(scope="module", params=PATHS)
def run(request, sb_limits: Limits) -> Iterator:
    """``run(language, code, **limits)`` on one path (``limits`` replace those of
    ``sb_limits``): a jail cloned by a resident nsjail, a per-run nsjail (pre-spawned),
    or a session's per-run jail with its host work dir."""
    sb = Sandbox(limits=sb_limits, resident=request.param == "resident")
    if request.param != "session":
        yield lambda language, code, **kw: sb.run_code(language, code, limits=sb_limits.replace(**kw))
        return
    with sb.session() as session:
        yield lambda language, code, **kw: session.run_code(language, code,
                                                            limits=sb_limits.replace(**kw))


def _killed(r: ExecResult) -> bool:
    return r.signal == signal.SIGKILL and r.exit_code == -9


_TOUCH_150MB = "import mmap\nn = 150 << 20\nm = mmap.mmap(-1, n)\nfor i in range(0, n, 4096): m[i] = 1\n"
_CHILD_SPINS = ("import subprocess, sys\n"
                "child = subprocess.run([sys.executable, '-c', 'while True: pass'])\n"
                "print(child.returncode, flush=True)\n")
_TWO_SPINNING_THREADS = r"""
#include <pthread.h>
static void *spin(void *arg) { for (volatile unsigned long i = 0;; i++) {} return arg; }
int main(void) { pthread_t t; pthread_create(&t, 0, spin, 0); spin(0); }
"""


@pytest.mark.slow
def test_a_cpu_loop_under_equal_wall_and_cpu_limits_is_timed_out(run, host):
    # Whichever kill lands first, ours at the wall deadline or the kernel's at the CPU
    # limit (a pre-started interpreter and tick sampling put it just before), the
    # verdict is the same; it came back memory_exceeded in 1 of 4-5 runs under load.
    r = run("python", f"# {host.marker}\nwhile True: pass", wall_time_s=5, cpu_time_s=5)
    assert _killed(r) and r.timed_out and not r.memory_exceeded, r


# The wall limits are far above what the runs take (a second or two) so that only the
# kernel kills them, however busy the machine: under a load average of 33 one second of
# CPU took 15 s of wall time here.


def test_threads_spending_cpu_faster_than_the_clock_are_timed_out(run, host):
    # Two threads reach 1 s of CPU in about 0.5 s of wall time: the wall-time rule
    # called that an OOM kill.
    r = run("c", _TWO_SPINNING_THREADS, wall_time_s=60, cpu_time_s=1)
    assert _killed(r) and r.timed_out and not r.memory_exceeded, r


def test_sleep_then_burn_is_timed_out_by_the_cpu_limit(run, host):
    r = run("python", f"import time  # {host.marker}\ntime.sleep(0.5)\nwhile True: pass",
            wall_time_s=60, cpu_time_s=1)
    assert _killed(r) and r.timed_out and not r.memory_exceeded and r.wall_time_s < 50, r


def test_idle_program_killed_at_the_wall_time_is_timed_out(run, host):
    r = run("python", f"import time  # {host.marker}\ntime.sleep(100)",
            wall_time_s=1, cpu_time_s=5)
    assert _killed(r) and r.timed_out and not r.memory_exceeded, r
    assert 1 <= r.wall_time_s < 3


def test_oom_after_a_child_spent_the_cpu_limit_is_not_a_timeout(run, host):
    # The child is killed at its own CPU limit (RLIMIT_CPU counts per process); the
    # program itself, idle meanwhile, then dies of memory after more than cpu_time_s of
    # wall time: the wall-time rule called that a timeout.
    r = run("python", f"# {host.marker}\n" + _CHILD_SPINS + _TOUCH_150MB,
            wall_time_s=60, cpu_time_s=1, memory_mb=128)
    assert r.stdout.strip() == "-9", r  # the child's kill
    assert _killed(r) and r.memory_exceeded and not r.timed_out, r
    assert r.wall_time_s >= 1, r


def test_oom_after_more_than_cpu_time_s_of_sleep_is_not_a_timeout(run, host):
    r = run("python", f"import time  # {host.marker}\ntime.sleep(1.2)\n" + _TOUCH_150MB,
            wall_time_s=60, cpu_time_s=1, memory_mb=128)
    assert _killed(r) and r.memory_exceeded and not r.timed_out, r
