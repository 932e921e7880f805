"""Pre-spawned per-run jails: one started jail kept ready per configuration and loop."""

from __future__ import annotations

import asyncio
import atexit
import logging
import threading
import time

from gym_llm_sandbox import _nsjail
from gym_llm_sandbox._jail import Jail, JailSpec, reap_cgroups
from gym_llm_sandbox._types import SandboxError

log = logging.getLogger("gym_llm_sandbox")


class Spares:
    """Pre-spawned jails: at most one idle jail per configuration and event loop.

    Taking a jail (``take``) starts its replacement in the background, so the next run
    with the same configuration finds its jail already set up and its interpreter
    already started, blocked reading its program from stdin. Each jail is used once.
    Bounded: ``MAX_CONFIGS`` configurations per loop (least recently used dropped);
    a spare older than ``MAX_IDLE_S`` is discarded rather than used. Spares end with
    their loop when ``asyncio.run`` finishes it (it cancels the guard task), by
    themselves on EOF when this process ends, or now with ``release_spares()``.
    """

    #: Configurations that keep a spare, per event loop.
    MAX_CONFIGS = 4
    #: A spare idle longer than this is replaced (it extends nsjail's backstop limit).
    MAX_IDLE_S = 30.0

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: dict[asyncio.AbstractEventLoop, dict[JailSpec, Jail]] = {}
        self._filling: dict[asyncio.AbstractEventLoop, dict[JailSpec, asyncio.Task[None]]] = {}
        self._guards: dict[asyncio.AbstractEventLoop, asyncio.Task[None]] = {}

    async def take(self, spec: JailSpec) -> Jail:
        """A started jail for ``spec``: the idle spare if there is a fresh one, else a
        new one; either way a replacement spare is started in the background."""
        loop = asyncio.get_running_loop()
        with self._lock:
            jail = self._idle.setdefault(loop, {}).pop(spec, None)
        if jail is not None and (jail.proc.returncode is not None
                                 or time.monotonic() - jail.born > self.MAX_IDLE_S):
            await jail.discard()
            jail = None
        self._refill(loop, spec)
        return jail or await Jail.start(spec)

    def _refill(self, loop: asyncio.AbstractEventLoop, spec: JailSpec) -> None:
        filling = self._filling.setdefault(loop, {})
        if spec in filling:
            return

        async def fill() -> None:
            try:
                jail = await Jail.start(spec, idle_s=self.MAX_IDLE_S)
            except asyncio.CancelledError:
                # The loop is ending: asyncio killed nsjail mid-spawn, maybe after it
                # made cgroups for its child.
                await reap_cgroups(_nsjail.stale_cgroup_pids())
                raise
            except (OSError, SandboxError) as e:
                log.debug("could not pre-spawn a jail: %s", e)
                return
            finally:
                filling.pop(spec, None)
            with self._lock:
                idle = self._idle.setdefault(loop, {})
                old = idle.pop(spec, None)
                idle[spec] = jail  # most recently used last
                evicted = []
                while len(idle) > self.MAX_CONFIGS:
                    evicted.append(idle.pop(next(iter(idle))))
            for j in [old, *evicted]:
                if j is not None:
                    await j.discard()

        filling[spec] = loop.create_task(fill())
        if loop not in self._guards:
            self._guards[loop] = loop.create_task(self._guard(loop))

    async def _guard(self, loop: asyncio.AbstractEventLoop) -> None:
        """Discards the loop's spares when it ends: ``asyncio.run`` cancels every task
        left and runs the loop until they finish, so this cleans up before it closes."""
        try:
            await asyncio.Event().wait()
        finally:
            self._guards.pop(loop, None)
            await self.drain()
            self._idle.pop(loop, None)
            self._filling.pop(loop, None)

    async def drain(self) -> None:
        """Discard every spare of the running loop (and wait for pending ones)."""
        loop = asyncio.get_running_loop()
        while pending := list(self._filling.get(loop, {}).values()):
            await asyncio.gather(*pending, return_exceptions=True)
        with self._lock:
            jails = list(self._idle.pop(loop, {}).values())
        await asyncio.gather(*(j.discard() for j in jails))

    def loops(self) -> list[asyncio.AbstractEventLoop]:
        with self._lock:
            return [lp for lp, idle in self._idle.items() if idle] + [
                lp for lp, f in self._filling.items() if f]

    def remove_all_stages(self) -> None:
        """At exit: the spares end on EOF by themselves; their staging dirs must go."""
        with self._lock:
            for idle in self._idle.values():
                for j in idle.values():
                    j.remove_stage()


SPARES = Spares()
atexit.register(SPARES.remove_all_stages)
