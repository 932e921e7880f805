"""The wire protocol of ``gym-llm serve`` spoken in raw WebSocket messages:
OpenEnv's message and error shapes, bad input of every kind answered without
losing the session or the server, the session cap and idle expiry."""

from __future__ import annotations

import asyncio
import json
import time

import httpx
from conftest import loads, math_server  # noqa: F401  (math_server is a fixture)
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

import gym_llm


async def _ask(ws, message) -> dict:
    await ws.send(message if isinstance(message, str | bytes) else json.dumps(message))
    return loads(await ws.recv())


def test_http_endpoints_are_openenvs(math_server):  # noqa: F811
    assert math_server.get("/health") == {"status": "healthy"}
    schema = math_server.get("/schema")
    assert set(schema) == {"action", "observation", "state"}
    assert {"message", "tool_calls"} <= set(schema["action"]["properties"])
    assert {"messages", "info", "truncated", "reward", "done"} <= set(schema["observation"]["properties"])
    meta = math_server.get("/metadata")
    assert meta["name"] == "math/Arithmetic-v0"
    assert meta["description"] == gym_llm.spec("math/Arithmetic-v0").description
    assert math_server.get("/sessions") == {"active_sessions": 0, "max_sessions": 8}


def test_reset_and_step_messages_and_replies(math_server):  # noqa: F811
    local = gym_llm.make("math/Arithmetic-v0")
    prompt, info = local.reset(seed=5, options={"task_index": 7})
    answer = local.unwrapped.task.answer

    reset, step, state = asyncio.run(_play_until_close(math_server.ws_url, answer))
    assert reset["type"] == "observation"
    assert reset["data"]["observation"]["messages"] == prompt
    assert reset["data"]["observation"]["info"]["task_id"] == info["task_id"]
    assert reset["data"]["reward"] is None and reset["data"]["done"] is False
    assert step["type"] == "observation"
    assert step["data"]["reward"] == 1.0 and step["data"]["done"] is True
    assert step["data"]["observation"]["info"]["turn"] == 1
    assert state["type"] == "state"
    assert state["data"]["task_id"] == info["task_id"] and state["data"]["step_count"] == 1
    assert state["data"]["done"] is True and state["data"]["episode_id"]


async def _play_until_close(url: str, answer: str):
    async with connect(url) as ws:
        reset = await _ask(ws, {"type": "reset", "data": {"seed": 5, "task_index": 7}})
        step = await _ask(ws, {"type": "step", "data": {"message": f"\\boxed{{{answer}}}"}})
        state = await _ask(ws, {"type": "state"})
        await ws.send(json.dumps({"type": "close"}))
        try:
            await ws.recv()
            raise AssertionError("the server answered a close message")
        except ConnectionClosed as e:
            assert e.rcvd is not None and e.rcvd.code == 1000
    return reset, step, state


def test_bad_messages_get_error_replies_and_the_session_goes_on(math_server):  # noqa: F811
    async def play():
        async with connect(math_server.ws_url) as ws:
            replies = {
                "not json": await _ask(ws, "{not json"),
                "binary not json": await _ask(ws, b"\xff\xfe"),
                "json array": await _ask(ws, "[1, 2]"),
                "unknown type": await _ask(ws, {"type": "teleport"}),
                "no type": await _ask(ws, {"data": {}}),
                "step before reset": await _ask(ws, {"type": "step", "data": {"message": "4"}}),
                "bad step field": await _ask(ws, {"type": "reset"}) and await _ask(
                    ws, {"type": "step", "data": {"message": 4, "colour": "red"}}),
                "bad reset field": await _ask(ws, {"type": "reset", "data": {"seed": -1}}),
            }
            # the session survived all of it
            reset = await _ask(ws, {"type": "reset", "data": {"seed": 1}})
            step = await _ask(ws, {"type": "step", "data": {"message": ""}})
        return replies, reset, step

    replies, reset, step = asyncio.run(play())
    codes = {name: r["data"]["code"] for name, r in replies.items()}
    assert all(r["type"] == "error" for r in replies.values()), replies
    assert codes == {
        "not json": "INVALID_JSON", "binary not json": "INVALID_JSON", "json array": "INVALID_JSON",
        "unknown type": "UNKNOWN_TYPE", "no type": "UNKNOWN_TYPE",
        "step before reset": "EXECUTION_ERROR",
        "bad step field": "VALIDATION_ERROR", "bad reset field": "VALIDATION_ERROR",
    }
    assert "step before reset" in replies["step before reset"]["data"]["message"]
    assert "teleport" in replies["unknown type"]["data"]["message"]
    bad_step = replies["bad step field"]["data"]
    assert "message" in bad_step["message"] and "colour" in bad_step["message"]
    assert {tuple(e["loc"]) for e in bad_step["errors"]} >= {("message",), ("colour",)}
    assert reset["type"] == "observation"
    # an empty turn is a move, not a protocol error: the lowest reward with its reason
    assert step["type"] == "observation" and step["data"]["reward"] == 0.0
    assert "empty response" in step["data"]["observation"]["info"]["reason"]
    assert math_server.wait_sessions(0) == 0


def test_a_50_mb_message_closes_only_its_connection(math_server):  # noqa: F811
    big = json.dumps({"type": "step", "data": {"message": "x" * (50 * 1024 * 1024)}})

    async def play():
        async with connect(math_server.ws_url, max_size=None) as other:
            await _ask(other, {"type": "reset", "data": {"seed": 0}})
            async with connect(math_server.ws_url, max_size=None) as ws:
                await _ask(ws, {"type": "reset", "data": {"seed": 0}})
                try:
                    await ws.send(big)
                    await ws.recv()
                    raise AssertionError("a 50 MB message was answered")
                except ConnectionClosed as e:
                    code = e.rcvd.code if e.rcvd is not None else None
            # the other session is untouched
            step = await _ask(other, {"type": "step", "data": {"message": "\\boxed{0}"}})
        return code, step

    code, step = asyncio.run(play())
    assert code == 1009  # message too big
    assert step["type"] == "observation" and step["data"]["done"] is True
    assert math_server.get("/health") == {"status": "healthy"}
    assert math_server.wait_sessions(0) == 0


def test_sessions_beyond_the_cap_are_refused_clearly(serve):
    server = serve("math/Arithmetic-v0", "--max-sessions", "2")

    async def play():
        async with connect(server.ws_url) as a, connect(server.ws_url) as b:
            for ws in (a, b):
                assert (await _ask(ws, {"type": "reset"}))["type"] == "observation"
            async with connect(server.ws_url) as c:
                refusal = loads(await c.recv())
                try:
                    await c.recv()
                    raise AssertionError("a refused connection stayed open")
                except ConnectionClosed as e:
                    close_code = e.rcvd.code if e.rcvd is not None else None
        # both closed: room again
        async with connect(server.ws_url) as d:
            again = await _ask(d, {"type": "reset"})
        return refusal, close_code, again

    refusal, close_code, again = asyncio.run(play())
    assert refusal["type"] == "error" and refusal["data"]["code"] == "CAPACITY_REACHED"
    assert refusal["data"]["active_sessions"] == 2 and refusal["data"]["max_sessions"] == 2
    assert "2/2 sessions" in refusal["data"]["message"]
    assert close_code == 1013  # try again later
    assert again["type"] == "observation"
    assert server.wait_sessions(0) == 0


def test_an_idle_session_is_told_and_closed(serve):
    server = serve("math/Arithmetic-v0", "--idle-timeout-s", "1")

    async def play():
        async with connect(server.ws_url) as ws:
            await _ask(ws, {"type": "reset"})
            t0 = time.monotonic()
            notice = loads(await ws.recv())
            waited = time.monotonic() - t0
            try:
                await ws.recv()
                raise AssertionError("an expired session stayed open")
            except ConnectionClosed as e:
                return notice, waited, e.rcvd.code if e.rcvd is not None else None

    notice, waited, code = asyncio.run(play())
    assert notice["type"] == "error" and notice["data"]["code"] == "SESSION_ERROR"
    assert "1 s without a message" in notice["data"]["message"]
    assert 0.9 <= waited < 5
    assert code == 1001
    assert server.wait_sessions(0) == 0
    assert httpx.get(server.url + "/health").status_code == 200
