"""Every reply of ``gym-llm serve`` encodes, whatever an env put in its info
and messages: ``test/OddValues-v0`` (tests/serve/odd_env.py) answers with lone
surrogates, NaN, non-text keys, bytes, nesting 300 deep, a cycle, an integer
too long to print and an unprintable object, and the client still gets the
reward the env gave, with each value in its JSON form."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import odd_env
from conftest import loads
from openenv.core import GenericEnvClient
from websockets.asyncio.client import connect

ODD_SERVER = (str(Path(odd_env.__file__)),)


def _local_rewards() -> list[float]:
    env = odd_env.OddValuesEnv()
    env.reset(seed=0)
    rewards = [env.step({"role": "assistant", "content": text})[1] for text in ("one", "two")]
    env.close()
    return rewards


def test_a_step_info_of_every_odd_shape_arrives_with_its_reward(serve):
    server = serve(odd_env.ENV_ID, command=ODD_SERVER)

    async def play():
        async with connect(server.ws_url, max_size=None) as ws:
            replies = []
            for message in ({"type": "reset", "data": {"seed": 0}},
                            {"type": "step", "data": {"message": "one"}},
                            {"type": "step", "data": {"message": "two"}},
                            {"type": "state"}):
                await ws.send(json.dumps(message))
                raw = await ws.recv(decode=False)
                raw.decode("utf-8")  # strict: valid UTF-8
                replies.append(loads(raw))
            return replies

    reset, first, second, state = asyncio.run(play())
    assert reset["type"] == "observation" and state["type"] == "state" and state["data"]["step_count"] == 2
    for reply in (first, second):
        assert reply["type"] == "observation", reply
    assert [first["data"]["reward"], second["data"]["reward"]] == _local_rewards() == [0.5, 0.5]
    assert (first["data"]["done"], second["data"]["done"]) == (False, True)

    info = first["data"]["observation"]["info"]
    assert info["surrogates"] == "lone \ufffd high \ufffd pair-halves \ufffd"
    assert info["\ufffd key"] == 1
    assert info["nan"] is None and info["inf"] is None and info["-inf"] is None
    assert info["7"] == "an int key" and info["None"] == "a None key" and info["nested"] == {"8": {"x": None}}
    assert any(key.startswith(("(1", "[1")) for key in info)  # the tuple key, as text
    assert info["bytes"] == "\ufffd\ufffdok" and info["bytearray"] == "fine"
    assert info["loop"] == ["loop", "<cycle>"]
    assert info["huge"].startswith("<an integer of") and info["set"] == [3]
    assert info["object"] == "<Unprintable>"
    depth, deep = 0, info["deep"]
    while isinstance(deep, dict):
        depth, deep = depth + 1, deep["down"]
    assert 50 <= depth < odd_env.DEEP and deep.startswith("<cut: nested deeper than")
    [message] = first["data"]["observation"]["messages"]
    assert message == {"role": "user", "content": "again \ufffd", "name": "\ufffd", "extra": "\ufffd"}
    # OpenEnv's own client, which raised on the old EXECUTION_ERROR, gets the rewards
    with GenericEnvClient(base_url=server.url).sync() as client:
        client.reset(seed=0)
        assert [client.step({"message": text}).reward for text in ("one", "two")] == [0.5, 0.5]
    assert server.wait_sessions(0) == 0
