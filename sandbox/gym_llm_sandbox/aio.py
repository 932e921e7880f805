"""Running coroutines from synchronous code: the one bridge between gym-llm's
sync and async APIs.

gym-llm writes its work once, as coroutines (an env's ``arespond``, a
rollout, a sandboxed run), and drives it synchronously through this module:

* :func:`run_sync` runs one coroutine to completion. With no event loop
  running in the calling thread it runs on ``runner``'s loop when one is
  given (an :class:`asyncio.Runner` the caller keeps, so repeated calls share
  one loop instead of paying a loop's set-up and tear-down each time) or on
  a fresh loop (``asyncio.run``; Ctrl-C cancels it cleanly). Called from
  inside a running loop (a notebook, a sync API used from async code), it
  runs on a private loop in a worker thread rather than deadlock the caller's
  loop.
* :class:`BackgroundLoop` is one daemon thread running an event loop for
  the life of the process; :func:`background_loop` is the shared one. Work
  whose state is bound to one loop (the sandbox's concurrency limits, its
  resident interpreters) runs there whichever thread asks.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["run_sync", "BackgroundLoop", "background_loop"]

T = TypeVar("T")


def run_sync(coro: Coroutine[Any, Any, T], runner: asyncio.Runner | None = None) -> T:
    """Run ``coro`` to completion from synchronous code (see the module doc)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return runner.run(coro) if runner is not None else asyncio.run(coro)
    return _in_worker_thread(coro)


def _in_worker_thread(coro: Coroutine[Any, Any, T]) -> T:
    result: dict[str, Any] = {}

    def target() -> None:
        try:
            result["value"] = asyncio.run(coro)
        except BaseException as e:  # re-raised in the caller's thread
            result["error"] = e

    t = threading.Thread(target=target, name="gym_llm-run_sync")
    t.start()
    t.join()
    if "error" in result:
        raise result["error"]
    return result["value"]


class BackgroundLoop:
    """An event loop running in a daemon thread, started on first use.

    :meth:`run` blocks the calling thread until ``coro`` finishes on that
    loop, so callers in many threads share the loop's state. A call made on
    the loop's own thread (a coroutine there calling a sync API) would wait
    on itself; it runs on a worker thread's loop instead.
    """

    def __init__(self, name: str = "gym_llm-loop"):
        self.name = name
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The running loop (started now if it was not)."""
        with self._lock:
            if self._loop is None or self._loop.is_closed():
                loop = asyncio.new_event_loop()
                self._thread = threading.Thread(target=loop.run_forever, name=self.name, daemon=True)
                self._thread.start()
                self._loop = loop
            return self._loop

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the background loop and return its result."""
        loop = self.loop
        if threading.current_thread() is self._thread:
            return _in_worker_thread(coro)
        return asyncio.run_coroutine_threadsafe(coro, loop).result()


_shared = BackgroundLoop()


def background_loop() -> BackgroundLoop:
    """The process-wide :class:`BackgroundLoop`."""
    return _shared
