"""A real ``gym-llm serve`` subprocess on a free loopback port, and the
process and sandbox checks the server tests make on it."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/servers.py, shared
import servers  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def descendants(pid: int) -> dict[int, str]:
    """``{pid: command line}`` of every live descendant of ``pid``."""
    children: dict[int, list[int]] = {}
    cmdlines: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdlines[int(entry)] = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    found: dict[int, str] = {}
    todo = list(children.get(pid, []))
    while todo:
        p = todo.pop()
        found[p] = cmdlines.get(p, "")
        todo.extend(children.get(p, []))
    return found


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _reading_stdin(pid: int) -> bool:
    """True while ``pid`` is blocked in ``read(0, ...)`` (``/proc/PID/syscall``)."""
    try:
        with open(f"/proc/{pid}/syscall") as f:
            return f.read().startswith("0 0x0 ")
    except OSError:
        return False


def busy_jails(pid: int) -> dict[int, str]:
    """The jailed processes under server ``pid`` that are running something.

    Left out by design: the nsjail supervisors themselves, and the sandbox's
    spares (one interpreter per jail configuration started ahead of its run,
    blocked reading its program from stdin; the process keeps them for its life)."""
    return {p: cmd for p, cmd in descendants(pid).items()
            if os.path.basename(cmd.split(" ", 1)[0]) != "nsjail" and not _reading_stdin(p)}


#: How the server is started: ``python -m gym_llm.apps.serve``.
SERVE_COMMAND = ("-m", "gym_llm.apps.serve")


class ServeProcess:
    """``python -m gym_llm.apps.serve ENV_ID ARGS...`` (or ``python COMMAND...
    ENV_ID ARGS...``) on a free port, its sandbox staging dir private
    (``sandbox_dir``), stopped with SIGTERM on exit."""

    def __init__(self, env_id: str, *args: str, tmp: Path, command: Sequence[str] = SERVE_COMMAND):
        self.port = servers.free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.ws_url = f"ws://127.0.0.1:{self.port}/ws"
        # not under tmp: pytest's dirs are 0700, and the jails' uid must pass through
        self.sandbox_dir = Path(tempfile.mkdtemp(prefix="gym_llm_serve_test-"))
        self.sandbox_dir.chmod(0o711)
        self.log_path = tmp / "serve.log"
        self._log = open(self.log_path, "w")  # noqa: SIM115 (open for the process's life)
        env = {**os.environ, "GYM_LLM_SANDBOX_DIR": str(self.sandbox_dir), "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, *command, env_id, "--port", str(self.port), *args],
            cwd=REPO, env=env, stdout=self._log, stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"gym-llm serve exited {self.proc.returncode}:\n{self.log()}")
            try:
                if httpx.get(self.url + "/health", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"gym-llm serve did not answer /health in 60 s:\n{self.log()}")

    def log(self) -> str:
        if not self._log.closed:
            self._log.flush()
        return self.log_path.read_text()

    def get(self, path: str) -> Any:
        response = httpx.get(self.url + path, timeout=10)
        response.raise_for_status()
        return response.json()

    def sessions(self) -> int:
        return self.get("/sessions")["active_sessions"]

    def wait_sessions(self, n: int, timeout_s: float = 10) -> int:
        """Wait until ``n`` sessions are open (or ``timeout_s``); the count."""
        deadline = time.monotonic() + timeout_s
        while (count := self.sessions()) != n and time.monotonic() < deadline:
            time.sleep(0.05)
        return count

    def session_dirs(self) -> list[str]:
        """Sandbox session work dirs still on the host."""
        return [str(p) for p in self.sandbox_dir.rglob("session-*")]

    def stop(self, timeout_s: float = 30) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
        shutil.rmtree(self.sandbox_dir, ignore_errors=True)
        return self.proc.returncode


@pytest.fixture
def serve(tmp_path_factory) -> Iterator[Any]:
    """``serve(env_id, *args, command=...)``: a started :class:`ServeProcess`, stopped at the test's end."""
    started: list[ServeProcess] = []

    def start(env_id: str, *args: str, command: Sequence[str] = SERVE_COMMAND) -> ServeProcess:
        server = ServeProcess(env_id, *args, tmp=tmp_path_factory.mktemp("serve"), command=command)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def module_server(env_id: str, *args: str):
    """A module-scoped fixture of one server (startup costs seconds of CPU)."""

    @pytest.fixture(scope="module")
    def fixture(tmp_path_factory) -> Iterator[ServeProcess]:
        server = ServeProcess(env_id, *args, tmp=tmp_path_factory.mktemp("serve"))
        yield server
        rc = server.stop()
        assert rc == 0, f"exit status {rc}:\n{server.log()}"

    return fixture


math_server = module_server("math/Arithmetic-v0", "--max-sessions", "8")
code_server = module_server("code/PythonFunctions-v0", "--max-sessions", "8")


def loads(raw: str | bytes) -> dict[str, Any]:
    return json.loads(raw)
