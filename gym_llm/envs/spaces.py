"""Gymnasium spaces for chat: observations are lists of messages, actions are
assistant turns (a string or an OpenAI assistant message dict)."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

__all__ = ["ChatMessages", "AssistantTurn"]

_ROLES = ("system", "user", "assistant", "tool")
_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789 .,{}\\<>/_\n"


def _random_text(rng: np.random.Generator, max_length: int) -> str:
    n = int(rng.integers(0, max_length + 1))
    return "".join(_ALPHABET[i] for i in rng.integers(0, len(_ALPHABET), size=n))


class ChatMessages(spaces.Space[list]):
    """A list of chat messages, each a dict with a ``role`` among system, user,
    assistant, tool and a string ``content`` (``None`` allowed for assistant
    turns that only call tools)."""

    def __init__(self, max_sample_messages: int = 3, seed: int | None = None):
        super().__init__(shape=None, dtype=None, seed=seed)
        self.max_sample_messages = max_sample_messages

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def contains(self, x: Any) -> bool:
        if not isinstance(x, list):
            return False
        for m in x:
            if not isinstance(m, dict) or m.get("role") not in _ROLES:
                return False
            content = m.get("content")
            if not (isinstance(content, str) or (content is None and m["role"] == "assistant")):
                return False
        return True

    def sample(self, mask: Any = None, probability: Any = None) -> list[dict[str, Any]]:
        n = int(self.np_random.integers(0, self.max_sample_messages + 1))
        return [
            {
                "role": _ROLES[int(self.np_random.integers(1, 3))],
                "content": _random_text(self.np_random, 40),
            }
            for _ in range(n)
        ]

    def __repr__(self) -> str:
        return "ChatMessages()"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ChatMessages)


class AssistantTurn(spaces.Space[Any]):
    """An assistant turn: a string, or a message dict with a string (or
    ``None``) ``content`` and optional OpenAI ``tool_calls``. Environments
    accept *any* value at ``step`` (bad input earns the lowest reward); this
    space says what a well-formed turn looks like."""

    def __init__(self, max_sample_length: int = 64, seed: int | None = None):
        super().__init__(shape=None, dtype=None, seed=seed)
        self.max_sample_length = max_sample_length

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def contains(self, x: Any) -> bool:
        if isinstance(x, str):
            return True
        return (
            isinstance(x, dict)
            and x.get("role", "assistant") == "assistant"
            and (x.get("content") is None or isinstance(x.get("content"), str))
            and isinstance(x.get("tool_calls", []) or [], list)
        )

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        return _random_text(self.np_random, self.max_sample_length)

    def __repr__(self) -> str:
        return "AssistantTurn()"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AssistantTurn)
