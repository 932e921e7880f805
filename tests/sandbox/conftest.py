"""Fixtures for the sandbox suite: a real nsjail sandbox and a host-health check.

Every test here runs real jails (no mocks). ``host`` is asserted after each attack:
the host can still spawn processes promptly, no process of the test's own tree or
carrying its marker survives, and no staging directory or cgroup leaks.
"""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from gym_llm_sandbox import Limits, Sandbox
from gym_llm_sandbox.core import release_spares


def processes_matching(marker: str) -> list[int]:
    """Host pids whose command line contains ``marker``."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    pids.append(int(entry))
        except OSError:
            continue
    return pids


def descendants(pid: int) -> list[int]:
    """All live descendants of ``pid`` (by walking /proc's ppid links)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


@dataclass
class Host:
    """Handle for asserting the host survived an attack."""

    marker: str

    def assert_healthy(self) -> None:
        # Pre-spawned jails never ran anything; end them so that what is left of our
        # process tree must be the sandbox's event-loop machinery only, no jails.
        release_spares()
        deadline = time.monotonic() + 2.0
        while True:
            leftover = [p for p in descendants(os.getpid()) if "nsjail" in _cmd(p)]
            leftover += processes_matching(self.marker)
            if not leftover or time.monotonic() > deadline:
                break
            time.sleep(0.02)
        assert not leftover, f"processes survived the run: {[_cmd(p) for p in leftover]}"
        while (stale := _stale_cgroups()) and time.monotonic() < deadline + 1:
            time.sleep(0.02)
        assert not stale, f"cgroups of dead jails left behind: {stale}"
        t0 = time.monotonic()
        out = subprocess.run(["/bin/echo", "alive"], capture_output=True, text=True, timeout=10)
        assert out.stdout == "alive\n"
        assert time.monotonic() - t0 < 2.0, "host too slow to spawn a process after the attack"


def _stale_cgroups() -> list[str]:
    """NSJAIL.<pid> cgroups whose jail process no longer exists."""
    out = []
    for mount in ("/sys/fs/cgroup/memory/NSJAIL", "/sys/fs/cgroup/pids/NSJAIL"):
        try:
            names = os.listdir(mount)
        except OSError:
            continue
        out += [f"{mount}/{n}" for n in names
                if n.startswith("NSJAIL.") and not os.path.exists(f"/proc/{n[7:]}")]
    return out


def _cmd(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


@pytest.fixture
def host() -> Iterator[Host]:
    """A unique marker to put in attack programs; health is asserted after the test."""
    h = Host(marker=f"gymllm-{uuid.uuid4().hex[:12]}")
    yield h
    h.assert_healthy()


@pytest.fixture(scope="session")
def sb_limits() -> Limits:
    """Default-like limits with fast-failing wall time for attacks."""
    return Limits(wall_time_s=5, cpu_time_s=5, memory_mb=256, max_processes=32,
                  max_output_bytes=200_000, max_file_mb=8, tmpfs_mb=32)


@pytest.fixture(scope="session")
def sb(sb_limits: Limits) -> Sandbox:
    """A sandbox with the default execution paths and :func:`sb_limits`."""
    return Sandbox(limits=sb_limits)
