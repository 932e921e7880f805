"""Plugin hooks (pluggy project ``gym_llm``).

A plugin is a module named in the ``gym_llm`` entry-point group of its
distribution::

    [options.entry_points]
    gym_llm =
        myplugin = my_pkg.plugin

that implements one or more of these hooks with ``@gym_llm.hookimpl``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from .registry import Registry

PROJECT = "gym_llm"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def gym_llm_register(registry: Registry) -> None:
    """Register this plugin's environments: ``registry.register(id, entry_point, **kwargs)``.

    Keep it cheap: pass entry points as ``"module:attr"`` strings so that heavy
    imports happen only when an environment is made.
    """


@hookspec
def gym_llm_doctor() -> list[dict[str, Any]]:
    """Health checks for ``gym-llm doctor``: rows of
    ``{"name", "ok", "detail", "fix"}`` (for example, a verifier's dependency)."""
