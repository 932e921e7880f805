"""Sessions of ``gym-llm serve`` in time: a slow sandboxed step never holds
up another session, a disconnect in the middle of a step kills its jail, and
SIGTERM closes every session, env, jail and work dir before the process
exits 0."""

from __future__ import annotations

import asyncio
import json
import signal
import time

from conftest import alive, busy_jails, code_server, descendants, loads  # noqa: F401  (code_server is a fixture)
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

import gym_llm

CODE = "code/PythonFunctions-v0"


def _slow_answer(task_index: int, sleep_s: float = 1.5) -> str:
    """A right answer that sleeps ``sleep_s`` in every test: a step of seconds."""
    task = gym_llm.make(CODE).unwrapped.task_set.get("train", task_index)
    name = task.metadata["entry_point"]
    return (f"```python\n{task.answer}\n_real = {name}\n"
            f"def {name}(*args, **kwargs):\n    import time\n    time.sleep({sleep_s})\n"
            f"    return _real(*args, **kwargs)\n```")


async def _ask(ws, message: dict) -> dict:
    await ws.send(json.dumps(message))
    return loads(await ws.recv())


async def _wait_for(predicate, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


def test_a_slow_sandboxed_step_does_not_hold_up_other_sessions(code_server):  # noqa: F811
    task = gym_llm.make(CODE).unwrapped.task_set.get("train", 1)

    async def play():
        async with connect(code_server.ws_url) as slow, connect(code_server.ws_url) as fast:
            await _ask(slow, {"type": "reset", "data": {"task_index": 1}})
            await _ask(fast, {"type": "reset", "data": {"task_index": 1}})
            t0 = time.monotonic()
            await slow.send(json.dumps({"type": "step", "data": {"message": _slow_answer(1)}}))
            assert await _wait_for(lambda: busy_jails(code_server.proc.pid), 10), "the slow step never started a jail"
            times = []
            for _ in range(3):
                t = time.monotonic()
                reply = await _ask(fast, {"type": "step", "data": {"message": f"```python\n{task.answer}\n```"}})
                times.append(time.monotonic() - t)
                assert reply["data"]["reward"] == 1.0, reply
                await _ask(fast, {"type": "reset", "data": {"task_index": 1}})
            fast_done = time.monotonic() - t0
            slow_reply = loads(await slow.recv())
            return times, fast_done, time.monotonic() - t0, slow_reply

    times, fast_done, slow_done, slow_reply = asyncio.run(play())
    # its tests sleep past the answer's time budget: scored (0), not lost
    assert slow_reply["type"] == "observation" and slow_reply["data"]["done"] is True, slow_reply
    assert slow_done > 3.0
    assert fast_done < slow_done and max(times) < 2.0, (times, slow_done)


def _disconnect_mid_step(server, abrupt: bool) -> tuple[bool, float]:
    async def play():
        ws = await connect(server.ws_url)
        await _ask(ws, {"type": "reset", "data": {"task_index": 4}})
        await ws.send(json.dumps({"type": "step", "data": {"message": _slow_answer(4, sleep_s=3)}}))
        started = await _wait_for(lambda: busy_jails(server.proc.pid), 10)
        t0 = time.monotonic()
        if abrupt:
            ws.transport.abort()  # a dropped TCP connection, no close frame
        else:
            await ws.close()
        gone = await _wait_for(lambda: not busy_jails(server.proc.pid), 5)
        return started and gone, time.monotonic() - t0

    return asyncio.run(play())


def test_a_disconnect_mid_step_cancels_the_step_and_kills_its_jail(code_server):  # noqa: F811
    for abrupt in (False, True):
        ok, seconds = _disconnect_mid_step(code_server, abrupt)
        assert ok, f"jails still running after a {'dropped' if abrupt else 'closed'} connection: {busy_jails(code_server.proc.pid)}"
        assert seconds < 2.5  # well before the 3 s sleep of the first test could end
        assert code_server.wait_sessions(0) == 0
    assert code_server.get("/health") == {"status": "healthy"}


def test_sigterm_closes_every_session_env_jail_and_work_dir(serve):
    server = serve("tool/Shell-v0")
    call = {"id": "c0", "type": "function", "function": {"name": "bash", "arguments": json.dumps(
        {"command": "sleep 8; echo late"})}}
    touch = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": json.dumps(
        {"command": "touch kept.txt"})}}

    async def play():
        busy, idle, fresh = [await connect(server.ws_url) for _ in range(3)]
        await _ask(busy, {"type": "reset", "data": {"seed": 0}})
        await _ask(idle, {"type": "reset", "data": {"seed": 1}})
        assert (await _ask(idle, {"type": "step", "data": {"tool_calls": [touch]}}))["type"] == "observation"
        await busy.send(json.dumps({"type": "step", "data": {"tool_calls": [call]}}))
        assert await _wait_for(lambda: busy_jails(server.proc.pid), 10), "the busy step never started a jail"
        assert len(server.session_dirs()) == 2  # the two reset episodes' work dirs
        assert server.sessions() == 3
        before = descendants(server.proc.pid)
        t0 = time.monotonic()
        server.proc.send_signal(signal.SIGTERM)
        codes = []
        for ws in (busy, idle, fresh):
            try:
                await ws.recv()
                codes.append("answered")
            except ConnectionClosed as e:
                codes.append(e.rcvd.code if e.rcvd is not None else None)
        return before, codes, t0

    before, codes, t0 = asyncio.run(play())
    rc = server.proc.wait(20)
    assert rc == 0, server.log()
    assert time.monotonic() - t0 < 8  # the 8 s command was cut short, not waited for
    assert codes == [1012, 1012, 1012]  # service restart: every session told
    assert "stopped by SIGTERM" in server.log()
    assert before and not [p for p in before if alive(p)], {p: c for p, c in before.items() if alive(p)}
    assert server.session_dirs() == []
