"""The gym-llm plugin: registers the ``longctx/*`` environments.

Entry points are ``"module:attr"`` strings, so ``import gym_llm`` does not
import the environments until one is made.
"""

from __future__ import annotations

from typing import Any

import gym_llm

#: id -> (entry point, description, default kwargs). Defaults are the easy
#: setting (difficulty 0, ``context_tokens=None``: 1024 prompt tokens, 2048
#: document tokens for DocNavigator) so the default env is quick for tiny models.
ENVIRONMENTS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "longctx/Needle-v0": (
        "gym_llm_longctx.envs:Needle",
        "Needle in a haystack sized in tokens: recall the magic number(s) of a key "
        "(variants single, multikey, multivalue, multiquery; controllable depth)",
        {"variant": "single", "context_tokens": None, "tokenizer": None, "difficulty": 0.0, "depth": None},
    ),
    "longctx/VariableTracking-v0": (
        "gym_llm_longctx.envs:VariableTracking",
        "Track chains of variable assignments hidden in long prose; name every variable holding a value",
        {"context_tokens": None, "tokenizer": None, "difficulty": 0.0},
    ),
    "longctx/WordFrequency-v0": (
        "gym_llm_longctx.envs:WordFrequency",
        "Name the most frequent words of a long list with a controlled frequency distribution",
        {"context_tokens": None, "tokenizer": None, "difficulty": 0.0},
    ),
    "longctx/MultiHopQA-v0": (
        "gym_llm_longctx.envs:MultiHopQA",
        "Two- or three-hop questions over facts about invented people, organizations and cities "
        "scattered through long prose",
        {"context_tokens": None, "tokenizer": None, "difficulty": 0.0},
    ),
    "longctx/DocNavigator-v0": (
        "gym_llm_longctx.navigator:DocNavigator",
        "Multi-turn retrieval: answer about a long document that is not in the prompt with "
        "search(query) and read(page) tools within a turn budget",
        {"context_tokens": None, "tokenizer": None, "difficulty": 0.0, "max_turns": 8},
    ),
}


@gym_llm.hookimpl
def gym_llm_register(registry: Any) -> None:
    """Register every ``longctx/*`` environment with its default kwargs."""
    registry.register_all(ENVIRONMENTS)


@gym_llm.hookimpl
def gym_llm_doctor() -> list[dict[str, Any]]:
    """Report whether exact token counting (``tokenizer=`` a path) is available."""
    try:
        import transformers  # noqa: F401
    except ImportError:
        return [{
            "name": "longctx: tokenizers",
            "ok": True,
            "detail": "transformers not installed: context_tokens uses the built-in approximation",
            "fix": "pip install 'gym-llm-longctx[tokenizers]' for tokenizer=<local path>",
        }]
    return [{"name": "longctx: tokenizers", "ok": True,
             "detail": "transformers available: tokenizer=<local path> counts exactly", "fix": ""}]
