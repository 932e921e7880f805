"""Running one process to completion: capped incremental output, exact wall time, cleanup.

This layer knows nothing about jails: it runs an argv (nsjail's or, for
``isolation="none"``, the program's own) as an asyncio subprocess in a new session,
feeds stdin, reads stdout/stderr as they come and kills the whole process group on
timeout or overflow. No thread is created per run (Python 3.11's default child watcher
waits in one thread per *running* child, bounded by the pool).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

_CHUNK = 64 * 1024


@dataclass
class RawResult:
    """What the process did, before the jail's log is interpreted."""

    pid: int
    returncode: int
    stdout: bytes
    stderr: bytes
    timed_out: bool
    output_truncated: bool
    killed: bool  # we killed it (timeout or output overflow)
    wall_time_s: float
    killed_children: list[int]  # its direct children at the moment we killed it


class _Capture:
    """Reads a stream to EOF, keeping at most ``cap`` bytes; calls ``overflow`` once."""

    def __init__(self, cap: int, overflow: Callable[[], None]) -> None:
        self.cap = cap
        self.buf = bytearray()
        self.truncated = False
        self._overflow = overflow

    async def drain(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(_CHUNK):
            room = self.cap - len(self.buf)
            if len(chunk) > room:
                self.buf += chunk[:max(room, 0)]
                if not self.truncated:
                    self.truncated = True
                    self._overflow()
                # Keep reading (and discarding) so the writer is never blocked on a full
                # pipe while it is being killed.
            else:
                self.buf += chunk


class _Decoded:
    """Reads a stream to EOF through ``decode`` (which keeps what it needs; False: the
    run is cut), calls ``cut`` once then and drops the rest, as :class:`_Capture` does."""

    def __init__(self, decode: Callable[[bytes], bool], cut: Callable[[], None]) -> None:
        self.buf = bytearray()  # nothing is kept here
        self.truncated = False  # the decoder knows
        self._decode = decode
        self._cut = cut
        self._reading = True

    async def drain(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(_CHUNK):
            if self._reading and not self._decode(chunk):
                self._reading = False
                self._cut()


async def _feed(stdin: asyncio.StreamWriter, data: bytes) -> None:
    try:
        for i in range(0, len(data), _CHUNK):
            stdin.write(data[i:i + _CHUNK])
            await stdin.drain()
    except (BrokenPipeError, ConnectionResetError):
        pass  # the program exited or closed stdin without reading it all: its choice
    finally:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            stdin.close()


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


async def spawn(
    argv: Sequence[str],
    *,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    preexec_fn: Callable[[], None] | None = None,
) -> asyncio.subprocess.Process:
    """Start ``argv`` in a new session with piped stdin/stdout/stderr (for :func:`drive`)."""
    return await asyncio.create_subprocess_exec(
        *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=env if env is not None else {}, cwd=cwd,
        start_new_session=True, preexec_fn=preexec_fn,
    )


async def run_process(
    argv: Sequence[str],
    *,
    stdin: bytes,
    wall_time_s: float,
    max_output_bytes: int,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    preexec_fn: Callable[[], None] | None = None,
    on_cancel_kill: Callable[[list[int]], None] | None = None,
) -> RawResult:
    """:func:`spawn` ``argv`` and :func:`drive` it (the clock starts at the spawn)."""
    t0 = time.perf_counter()
    proc = await spawn(argv, env=env, cwd=cwd, preexec_fn=preexec_fn)
    return await drive(proc, stdin=stdin, wall_time_s=wall_time_s,
                       max_output_bytes=max_output_bytes, on_cancel_kill=on_cancel_kill, t0=t0)


async def drive(
    proc: asyncio.subprocess.Process,
    *,
    stdin: bytes,
    wall_time_s: float,
    max_output_bytes: int,
    on_cancel_kill: Callable[[list[int]], None] | None = None,
    t0: float | None = None,
    decode_stdout: Callable[[bytes], bool] | None = None,
) -> RawResult:
    """Feed, read and wait for a :func:`spawn`-ed process; never returns before the
    process (group) is dead and reaped.

    The wall-time clock starts at ``t0`` (default: now; a pre-spawned process's run
    starts when it gets its input). On timeout or when either output stream exceeds
    ``max_output_bytes`` the process group gets SIGKILL. If the caller is cancelled
    the group is killed too, and ``on_cancel_kill`` gets the pids of the process's
    children at that moment (for cleanup) before the error propagates.
    ``decode_stdout`` reads stdout instead of keeping it (then ``stdout`` is empty):
    it gets each chunk, and its False cuts the run (the group is killed), as overflow
    does; its own end (the process exits by itself) is no kill.
    """
    t0 = time.perf_counter() if t0 is None else t0
    assert proc.stdin and proc.stdout and proc.stderr
    killed = asyncio.Event()
    killed_children: list[int] = []

    def kill() -> None:
        if not killed.is_set():
            killed.set()
            # nsjail names its cgroups after its child's pid; remember it so the caller
            # can remove what a SIGKILLed nsjail leaves behind.
            with contextlib.suppress(OSError), open(
                    f"/proc/{proc.pid}/task/{proc.pid}/children") as f:
                killed_children.extend(int(p) for p in f.read().split())
            _kill_group(proc.pid)

    out = (_Capture(max_output_bytes, kill) if decode_stdout is None
           else _Decoded(decode_stdout, kill))
    err = _Capture(max_output_bytes, kill)
    tasks = [
        asyncio.ensure_future(_feed(proc.stdin, stdin)),
        asyncio.ensure_future(out.drain(proc.stdout)),
        asyncio.ensure_future(err.drain(proc.stderr)),
    ]
    timed_out = False
    try:
        await asyncio.wait_for(proc.wait(), timeout=wall_time_s)
    except TimeoutError:
        timed_out = not killed.is_set()
        kill()
        await proc.wait()
    except BaseException:  # cancelled: the caller gave up, the process must not outlive it
        kill()
        await asyncio.shield(proc.wait())
        for t in tasks:
            t.cancel()
        if on_cancel_kill:
            on_cancel_kill(killed_children)
        raise
    wall = time.perf_counter() - t0
    # Readers end at EOF. Under nsjail every writer is dead once nsjail exits; an
    # unjailed daemon may still hold the pipes, so give them a moment and then kill the
    # group (which the daemon inherited unless it called setsid itself).
    _, pending = await asyncio.wait(tasks, timeout=0.5)
    if pending:
        _kill_group(proc.pid)
        for t in pending:
            t.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
    assert proc.returncode is not None
    return RawResult(
        pid=proc.pid, returncode=proc.returncode, stdout=bytes(out.buf), stderr=bytes(err.buf),
        timed_out=timed_out, output_truncated=out.truncated or err.truncated,
        killed=killed.is_set(), wall_time_s=wall, killed_children=killed_children,
    )
