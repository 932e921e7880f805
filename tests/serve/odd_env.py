"""``test/OddValues-v0``: an env whose step info and messages hold what JSON
and UTF-8 cannot carry as they are (lone surrogates, NaN and infinity,
non-text keys, bytes that are not UTF-8, nesting hundreds deep, a cycle, an
integer too long to print, objects).

``python tests/serve/odd_env.py test/OddValues-v0 [serve options]`` is
``gym-llm serve`` with it registered (in that process only)."""

from __future__ import annotations

from typing import Any

import gym_llm
from gym_llm.apps.serve import main
from gym_llm.envs.core import LLMEnv, Turn
from gym_llm.envs.tasks import Task

ENV_ID = "test/OddValues-v0"
#: Levels of nesting in ``info["deep"]``: beyond what pydantic's serializer takes.
DEEP = 300


class Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no text for this one")


def odd_info() -> dict[Any, Any]:
    deep: Any = "bottom"
    for _ in range(DEEP):
        deep = {"down": deep}
    loop: list[Any] = ["loop"]
    loop.append(loop)
    return {
        "surrogates": "lone \udcff high \ud800 pair-halves \ud83d",
        "\udcfe key": 1,
        "nan": float("nan"), "inf": float("inf"), "-inf": float("-inf"),
        7: "an int key", None: "a None key", (1, 2): "a tuple key",
        "nested": {8: {"x": float("nan")}},
        "bytes": b"\xff\xfeok", "bytearray": bytearray(b"fine"),
        "deep": deep,
        "loop": loop,
        "huge": 10 ** 5000,
        "set": {3},
        "object": Unprintable(),
    }


class OddValuesEnv(LLMEnv):
    """Two turns, 0.5 each; every step's info is :func:`odd_info`, its message odd too."""

    def __init__(self, **kwargs: Any):
        super().__init__([Task(id="odd-0", prompt="Say anything.", answer=None)], max_turns=2, **kwargs)

    def respond(self, message: dict[str, Any]) -> Turn:
        reply = {"role": "user", "content": "again \udcff", "name": "\udcfd", "extra": b"\xff"}
        return Turn(messages=[reply], reward=0.5, info=odd_info())


if __name__ == "__main__":
    gym_llm.register(ENV_ID, OddValuesEnv)
    raise SystemExit(main())
