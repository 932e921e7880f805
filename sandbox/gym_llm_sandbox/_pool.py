"""Bounded concurrency: a pool of run slots that many sandboxes may share."""

from __future__ import annotations

import asyncio
import functools
import os
import threading
import weakref


class SandboxPool:
    """A bounded number of concurrent runs; callers beyond it wait in FIFO order.

    One pool may be shared by many sandboxes (the default pool is), so that a vector
    of environments never oversubscribes the CPUs. Waiting callers cost an asyncio
    future each, not a thread or a process.
    """

    def __init__(self, max_concurrency: int | None = None) -> None:
        self.max_concurrency = max_concurrency or os.cpu_count() or 1
        if self.max_concurrency < 1:
            raise ValueError("max_concurrency must be >= 1")
        self._sems: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary())
        self._lock = threading.Lock()

    def slot(self) -> asyncio.Semaphore:
        """The semaphore for the running event loop (each loop has its own)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            sem = self._sems.get(loop)
            if sem is None:
                sem = self._sems[loop] = asyncio.Semaphore(self.max_concurrency)
            return sem


@functools.lru_cache(maxsize=1)
def default_pool() -> SandboxPool:
    """The process-wide pool (``os.cpu_count()`` slots) used unless one is given."""
    return SandboxPool()
