"""The sandbox's rows in ``gym-llm doctor``, reported through the
``gym_llm_doctor`` hook like any plugin's (the core distribution declares this
module as its plugin ``sandbox``): :mod:`gym_llm_sandbox` stands alone and
imports nothing of gym-llm."""

from __future__ import annotations

from typing import Any

from gym_llm.envs.hookspecs import hookimpl


@hookimpl
def gym_llm_doctor() -> list[dict[str, Any]]:
    """Which isolation is in force and why, cgroups, and each language's runtime."""
    from gym_llm_sandbox import diagnose

    return diagnose()
