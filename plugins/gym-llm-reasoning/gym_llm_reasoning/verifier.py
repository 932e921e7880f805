"""reasoning-gym's sympy-backed verifiers, run with a deadline.

sympy's ``simplify`` can take minutes on a short answer (``sin(sin(...(x)))``
twelve deep took 21 s here), and a verifier runs inside a rollout. The
families of :data:`gym_llm_reasoning.scoring.EXPRESSIONS` are therefore
scored in a worker process (this module's ``_serve``, started on first use
and kept): a verdict that takes longer than :data:`TIMEOUT_S`
kills the worker, the answer scores 0 with the reason, and the next call
starts a new one. The worker's address space is capped at
:data:`MEMORY_LIMIT` bytes, so a verdict cannot take the trainer's memory.

The answer reaching the worker has passed :func:`~gym_llm_reasoning.scoring.is_expression`
(no answer runs as code); the deadline bounds what is left, the time.

Protocol: length-prefixed pickles on the worker's stdin/stdout, one request
``(family, difficulty, answer, entry)`` and one reply
``("ok", score)`` or ``("error", "<exception type>: <message>")`` at a time.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pickle
import resource
import select
import struct
import subprocess
import sys
import threading
from typing import IO, Any

__all__ = ["TIMEOUT_S", "MEMORY_LIMIT", "VerifierTimeout", "verify"]

#: Seconds a verdict may take (wall time, the worker's start not counted).
TIMEOUT_S = 10.0
#: The worker's address-space limit in bytes.
MEMORY_LIMIT = 4 * 2**30

_HEADER = struct.Struct("!I")


class VerifierTimeout(Exception):
    """A verdict ran past :data:`TIMEOUT_S`; the worker was killed."""


def _write(stream: IO[bytes], obj: Any) -> None:
    data = pickle.dumps(obj)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _read(stream: IO[bytes]) -> Any:
    head = stream.read(_HEADER.size)
    if len(head) < _HEADER.size:
        raise EOFError
    size = _HEADER.unpack(head)[0]
    data = stream.read(size)
    if len(data) < size:
        raise EOFError
    return pickle.loads(data)


class _Worker:
    """One worker process at a time, used by one caller at a time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._pid = os.getpid()
        atexit.register(self._stop)

    def _start(self) -> subprocess.Popen[bytes]:
        if self._pid != os.getpid():  # a forked child: the parent's worker and pipes are not its own
            self._proc, self._pid = None, os.getpid()
        if self._proc is None or self._proc.poll() is not None:
            # stderr inherited: what reasoning-gym prints goes where the env's own output goes
            self._proc = subprocess.Popen([sys.executable, "-c", "from gym_llm_reasoning.verifier import _serve; _serve()"],
                                          stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            with contextlib.suppress(EOFError):
                _read(self._proc.stdout)  # "ready": imports done, so the deadline times the verdict only
        return self._proc

    def _stop(self) -> None:
        if self._pid != os.getpid():
            return
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()
        self._proc = None

    def verify(self, request: tuple[Any, ...]) -> float:
        with self._lock:
            proc = self._start()
            try:
                _write(proc.stdin, request)
                if not select.select([proc.stdout], [], [], TIMEOUT_S)[0]:
                    self._stop()
                    raise VerifierTimeout(f"the verifier ran past {TIMEOUT_S:g} s")
                status, value = _read(proc.stdout)
            except (EOFError, BrokenPipeError, pickle.UnpicklingError) as e:
                self._stop()
                raise RuntimeError(f"the verifier process died ({type(e).__name__}; out of memory?)") from e
        if status == "error":
            raise RuntimeError(value)
        return float(value)


_WORKER = _Worker()


def verify(family: str, difficulty: float, answer: str, entry: dict[str, Any]) -> float:
    """reasoning-gym's ``score_answer`` of ``answer`` for ``entry`` of ``family``
    at ``difficulty`` (:func:`~gym_llm_reasoning.families.verifier`), computed in the worker.
    :class:`VerifierTimeout` past :data:`TIMEOUT_S`; ``RuntimeError`` when the
    verifier raised (its type and message) or the worker died."""
    return _WORKER.verify((family, difficulty, answer, entry))


def _serve() -> None:
    os.environ.setdefault("OMP_NUM_THREADS", "1")  # before numpy loads: one verdict at a time needs no pool
    from gym_llm_reasoning import families

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    # the replies get their own descriptor; fd 1 and sys.stdout go to stderr, so nothing a
    # verifier prints (from Python or C) lands in the protocol
    inp, out = sys.stdin.buffer, os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    import reasoning_gym  # noqa: F401  (the slow import, before "ready")

    _write(out, "ready")
    while True:
        try:
            family, difficulty, answer, entry = _read(inp)
        except EOFError:
            return
        try:
            reply = ("ok", float(families.verifier(family, difficulty)(answer, entry)))
        except Exception as e:
            reply = ("error", f"{type(e).__name__}: {e}")
        _write(out, reply)
