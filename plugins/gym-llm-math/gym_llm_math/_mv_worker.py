"""The math-verify worker process (``python -m gym_llm_math._mv_worker``).

Protocol: one JSON object per line. On start it prints ``{"ready": true}``
(or ``{"ready": false, "error": ...}`` if math-verify cannot be imported);
then for each request ``{"gold": str, "pred": str}`` it prints
``{"gold_parsed": bool, "equal": bool}`` or ``{"error": str}``.

math-verify runs with its own (signal-based) timeouts disabled: the parent
kills this process when a request overruns, which works from any thread.
"""

from __future__ import annotations

import json
import logging
import os
import resource
import signal
import sys

_WARM_UP = [
    ("x^2 - 1", "(x - 1)(x + 1)"),
    ("\\begin{pmatrix}1 & 2\\\\3 & 4\\end{pmatrix}", "[1, 2)"),
    ("\\{1, 2\\}", "x = 1 \\text{ or } x = 2"),
]


def _protocol_channel():
    """Keep the real stdout for replies and send fd 1 to stderr, so that a
    stray print() in a library cannot corrupt the protocol."""
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return channel


_channel = sys.stdout


def _emit(obj: dict) -> None:
    _channel.write(json.dumps(obj) + "\n")
    _channel.flush()


def _limit_memory() -> None:
    # An answer like 9^{9^{9^9}} must not take the machine's memory with it.
    mb = int(os.environ.get("GYM_LLM_MATH_WORKER_MEMORY_MB", "2048"))
    if mb > 0:
        limit = mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _die_with_parent() -> None:
    # A hung comparison must not outlive a parent killed with SIGKILL (the
    # parent's stdin closing is only noticed between requests). The parent
    # starts workers from a thread that lives as long as it does: the signal
    # is sent when that *thread* exits.
    parent = os.getppid()
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:
        os._exit(0)


def main() -> None:
    global _channel
    _channel = _protocol_channel()
    logging.disable(logging.CRITICAL)  # math-verify warns on every timeout-less call
    try:
        _die_with_parent()
        _limit_memory()
        from math_verify import parse, verify

        def parse_boxed(answer: str) -> list:
            return parse("\\boxed{" + answer + "}", parsing_timeout=None)

        # The first comparisons pay for sympy's and the LaTeX parser's lazy
        # set-up (about a second): pay it here, under the startup time limit,
        # not under the first request's.
        for gold, pred in _WARM_UP:
            verify(parse_boxed(gold), parse_boxed(pred), timeout_seconds=None)
    except Exception as e:
        _emit({"ready": False, "error": f"{type(e).__name__}: {e}"})
        return
    _emit({"ready": True})

    for line in sys.stdin:
        try:
            request = json.loads(line)
            gold = parse_boxed(request["gold"])
            # A bare string is math-verify's fallback when nothing parsed.
            if not any(not isinstance(g, str) for g in gold):
                _emit({"gold_parsed": False, "equal": False})
                continue
            pred = parse_boxed(request["pred"])
            _emit({"gold_parsed": True, "equal": bool(verify(gold, pred, timeout_seconds=None))})
        except Exception as e:  # MemoryError, RecursionError included: report, stay alive
            _emit({"error": f"{type(e).__name__}: {e}"[:500]})


if __name__ == "__main__":
    main()
