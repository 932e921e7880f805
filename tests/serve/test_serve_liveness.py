"""Slow or silent clients and session starts never stall ``gym-llm serve``:
a client that stops reading its replies loses its session at the idle
timeout (its slot freed) while the server is blocked sending to it, and a
session whose env takes a second to make (``code/Dataset-v0`` of a big file)
leaves the other sessions' round trips fast. Real sockets on loopback."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from importlib import resources
from pathlib import Path

import pytest
from conftest import loads
from websockets.asyncio.client import connect
from websockets.client import ClientProtocol
from websockets.protocol import State
from websockets.uri import parse_uri

import gym_llm

DATASET = "code/Dataset-v0"
#: The bundled rows code/Dataset-v0 loads by default.
SAMPLE = resources.files("gym_llm_code") / "data" / "sample-train.jsonl"


def _dataset(path: Path, rows: int, prompt_chars: int = 0) -> str:
    """``rows`` HumanEval rows (the bundled sample's, repeated), each prompt
    padded with a docstring comment of ``prompt_chars``; the file's path."""
    sample = [row for row in map(json.loads, SAMPLE.read_text().splitlines()) if row.get("entry_point")]
    with path.open("w") as f:
        for i in range(rows):
            row = dict(sample[i % len(sample)], task_id=f"big/{i}")
            row["prompt"] = "# " + "x" * prompt_chars + "\n" + row["prompt"] if prompt_chars else row["prompt"]
            f.write(json.dumps(row) + "\n")
    return str(path)


async def _ask(ws, message: dict) -> dict:
    await ws.send(json.dumps(message))
    return loads(await ws.recv())


class SilentClient:
    """A WebSocket client on a blocking socket that reads nothing after the
    handshake (its receive buffer 4 KiB): the server's replies pile up."""

    def __init__(self, port: int):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        self.sock.settimeout(10)
        self.sock.connect(("127.0.0.1", port))
        self.client_port, self.server_port = self.sock.getsockname()[1], port
        self.protocol = ClientProtocol(parse_uri(f"ws://127.0.0.1:{port}/ws"))
        self.protocol.send_request(self.protocol.connect())
        self.sock.sendall(b"".join(self.protocol.data_to_send()))
        response = b""
        while not response.endswith(b"\r\n\r\n"):  # the 101 and nothing after it
            response += self.sock.recv(1)
        self.protocol.receive_data(response)
        assert self.protocol.state is State.OPEN, response

    def send(self, message: dict) -> None:
        self.protocol.send_text(json.dumps(message).encode())
        self.sock.sendall(b"".join(self.protocol.data_to_send()))

    def server_end_states(self) -> list[str]:
        """The TCP states (hex, as /proc/net/tcp gives them) of the server's end of this
        connection; none once the server has let go of it."""
        states = []
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            with open(table) as f:
                for line in list(f)[1:]:
                    local, remote, state = line.split()[1:4]
                    if (int(local.rsplit(":", 1)[1], 16) == self.server_port
                            and int(remote.rsplit(":", 1)[1], 16) == self.client_port):
                        states.append(state)
        return states


def test_a_client_that_reads_nothing_loses_its_session_at_the_idle_timeout(serve, tmp_path):
    # every reset answers with a 1 MB prompt
    path = _dataset(tmp_path / "big-prompts.jsonl", rows=4, prompt_chars=1024 * 1024)
    server = serve(DATASET, f"path={path}", "--idle-timeout-s", "1", "--max-sessions", "2")
    silent = SilentClient(server.port)
    try:
        for i in range(24):  # 24 MB of replies asked for, none read
            silent.send({"type": "reset", "data": {"task_index": i % 4}})
        t0 = time.monotonic()
        assert server.sessions() == 1
        freed = server.wait_sessions(0, timeout_s=15) == 0
        waited = time.monotonic() - t0

        async def other_session():  # the slot is free again, and served at once
            async with connect(server.ws_url, max_size=None) as other:
                t = time.monotonic()
                reply = await _ask(other, {"type": "reset", "data": {"task_index": 0}})
                return reply, time.monotonic() - t

        reply, other_s = asyncio.run(other_session())
        # The connection goes with the session: closing it politely would wait for ever
        # for the client to take the ~64 KiB still queued for it.
        deadline = time.monotonic() + 5
        while (lingering := silent.server_end_states()) and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        silent.sock.close()
    assert freed, "the silent client kept its session past the idle timeout"
    assert not lingering, f"the server still holds the silent client's connection (TCP states {lingering})"
    assert waited < 10
    assert reply["type"] == "observation" and other_s < 5
    assert "took no reply in 1 s" in server.log()
    assert server.get("/health") == {"status": "healthy"}


def test_a_slow_env_construction_does_not_stall_other_sessions(serve, tmp_path):
    path = _dataset(tmp_path / "many-rows.jsonl", rows=8000)
    t = time.monotonic()
    gym_llm.make(DATASET, path=path).close()
    make_s = time.monotonic() - t
    if make_s < 0.5:
        pytest.fail(f"the env is made in {make_s:.2f} s: too fast to show a stall; use more rows")
    server = serve(DATASET, f"path={path}", "--max-sessions", "8")

    async def play():
        async with connect(server.ws_url) as probe:
            await _ask(probe, {"type": "reset", "data": {"task_index": 0}})

            async def newcomer() -> dict:  # its env is made on connecting
                async with connect(server.ws_url) as ws:
                    return await _ask(ws, {"type": "reset", "data": {"task_index": 1}})

            newcomers = asyncio.gather(*(newcomer() for _ in range(2)))
            round_trips = []
            deadline = time.monotonic() + 60
            while not newcomers.done() and time.monotonic() < deadline:
                t = time.monotonic()
                assert (await _ask(probe, {"type": "state"}))["type"] == "state"
                round_trips.append(time.monotonic() - t)
                await asyncio.sleep(0.01)
            return round_trips, await newcomers, time.monotonic()

    round_trips, replies, _ = asyncio.run(play())
    assert all(reply["type"] == "observation" for reply in replies), replies
    assert len(round_trips) >= 10, round_trips  # the probe kept talking while two envs were made
    assert max(round_trips) < max(0.3, make_s / 2), (max(round_trips), make_s)  # was make_s and more
    assert server.wait_sessions(0) == 0


def test_sessions_being_made_hold_their_slots(serve, tmp_path):
    path = _dataset(tmp_path / "many-rows.jsonl", rows=3000)
    server = serve(DATASET, f"path={path}", "--max-sessions", "2")

    async def play():
        async def newcomer() -> dict:
            async with connect(server.ws_url) as ws:
                return await _ask(ws, {"type": "reset", "data": {"task_index": 1}})

        return await asyncio.gather(*(newcomer() for _ in range(3)))

    replies = asyncio.run(play())
    kinds = sorted(reply["type"] if reply["type"] == "observation" else reply["data"]["code"] for reply in replies)
    assert kinds == ["CAPACITY_REACHED", "observation", "observation"], replies
    assert server.wait_sessions(0) == 0
