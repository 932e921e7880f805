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
    from gym_llm.envs.registry import Registry
    from gym_llm.runtime.monitoring import HackSignal

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



@hookspec
def gym_llm_hack_signals() -> list[HackSignal]:
    """The signatures of gaming a grader this plugin can see in a finished
    episode: :class:`gym_llm.runtime.monitoring.HackSignal` objects (a name, the env
    ids they apply to, a description, a default alarm threshold and a pure
    ``detect(trajectory) -> bool``). The trainer logs the fraction of each
    env's episodes that show each signal (``hacks/<env_id>/<signal>``). A
    plugin whose hook raises is skipped with a warning naming it; the others
    and the run go on."""
