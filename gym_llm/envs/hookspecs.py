"""Plugin hooks (pluggy project ``gym_llm``).

A plugin is a module named in the ``gym_llm`` entry-point group of its
distribution::

    [options.entry_points]
    gym_llm =
        myplugin = my_pkg.plugin

that implements one or more of these hooks with ``@gym_llm.hookimpl``.
gym-llm calls every hook plugin by plugin
(:func:`gym_llm.envs.registry.call_each`): a plugin whose hook raises is
reported by name and the other plugins' answers still count.
"""

from __future__ import annotations

from typing import Any

import pluggy

# The registry calls these hooks, so this module names its classes (Registry,
# EnvSpec) in docstrings only: importing them, even for type checking, would
# close an import cycle.

PROJECT = "gym_llm"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def gym_llm_register(registry: Any) -> None:
    """Register this plugin's environments on ``registry`` (the
    :class:`gym_llm.envs.registry.Registry`): ``registry.register(id,
    entry_point, **kwargs)`` or ``registry.register_all(table)``.

    Keep it cheap: pass entry points as ``"module:attr"`` strings so that heavy
    imports happen only when an environment is made.
    """


@hookspec
def gym_llm_doctor() -> list[dict[str, Any]]:
    """Health checks for ``gym-llm doctor``: rows of
    ``{"name", "ok", "detail", "fix"}`` (for example, a verifier's dependency).
    A hook that raises shows as a failing row naming its plugin."""


@hookspec(historic=True)
def gym_llm_env_registered(spec: Any) -> None:
    """``spec`` (a :class:`gym_llm.envs.registry.EnvSpec`): its id was registered (or registered again, replacing it). A
    historic hook: a plugin registered later (``plugin_manager().register(...)``)
    is called at once for every registration made before it, in order, then
    for each one after. How a peer's registry mirrors ours (skyrl_gym's, by
    :mod:`gym_llm.apps.integrations.skyrl`) without gym-llm importing the
    peer. Ids of a plugin that then fails to load are withdrawn from gym-llm
    but were announced here."""
