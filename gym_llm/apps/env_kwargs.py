"""Env kwargs on a command line, ``KEY=VALUE``: the one reader behind
``gym-llm play``, ``gym-llm describe`` and ``gym-llm serve``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import yaml

__all__ = ["parse_env_kwargs"]


def parse_env_kwargs(items: Iterable[str]) -> dict[str, Any]:
    """``["difficulty=0.3", "max_turns=2"]`` as kwargs, each value read as a
    YAML scalar (``0.3`` a float, ``true`` a bool, ``[1, 2]`` a list, ``KEY=``
    the empty string); ``ValueError`` naming an item that is not ``KEY=VALUE``
    with ``KEY`` a Python identifier."""
    kwargs: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.isidentifier():
            raise ValueError(f"env kwarg {item!r} is not KEY=VALUE")
        kwargs[key] = yaml.safe_load(value) if value else ""
    return kwargs
