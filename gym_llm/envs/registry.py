"""The environment registry and plugin discovery.

Plugins are found through the ``gym_llm`` entry-point group and loaded with
pluggy. Every hook is called plugin by plugin (:func:`call_each`), so a broken
plugin is reported by name (a warning, ``plugin_errors`` and ``gym-llm doctor``)
and never takes the others down. Every registered id is also registered with
Gymnasium, so ``gymnasium.make(id)`` works after ``import gym_llm`` — in worker
processes too, since importing ``gym_llm`` there runs the same discovery.
"""

from __future__ import annotations

import difflib
import functools
import importlib
import re
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any

import gymnasium
import pluggy

from gym_llm.envs import hookspecs
from gym_llm.envs.core import LLMEnv

__all__ = [
    "EnvSpec", "Registry", "UnknownEnvError", "registry", "register", "make", "spec",
    "list_envs", "load_plugins", "with_sandbox", "load_attr", "ENTRY_POINT_GROUP",
    "plugin_manager", "call_each", "PluginCalls",
]

ENTRY_POINT_GROUP = "gym_llm"
_ID_RE = re.compile(r"^(?P<domain>[a-z][a-z0-9_]*)/(?P<name>[A-Za-z][\w.-]*)-v(?P<version>\d+)$")


class UnknownEnvError(LookupError):
    """No environment is registered under the requested id."""


def load_attr(target: str) -> Any:
    """The object a ``"module:attr"`` string names (``attr`` may be dotted),
    imported now: how entry points and pluggable classes are written down."""
    module, _, attr = target.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


@dataclass(frozen=True)
class EnvSpec:
    """A registered environment: ``make(id)`` calls ``entry_point`` with
    ``kwargs`` (the defaults) updated by the caller's, plus ``split`` and ``seed``.
    ``plugin`` is the distribution that registered it (``None`` for ids
    registered from user code)."""

    id: str
    entry_point: str | Callable[..., LLMEnv]
    domain: str
    description: str = ""
    kwargs: dict[str, Any] = field(default_factory=dict)
    plugin: str | None = None

    def resolve(self) -> Callable[..., LLMEnv]:
        """Import the entry point (``"module:attr"``) if it is a string."""
        if not isinstance(self.entry_point, str):
            return self.entry_point
        return load_attr(self.entry_point)

    def accepts(self, kwarg: str) -> bool:
        """Whether the environment takes keyword ``kwarg``: one of its default
        kwargs, or a keyword its entry point declares (not one swallowed by
        ``**kwargs``). How a run finds the envs its ``sandbox`` config applies to."""
        if kwarg in self.kwargs:
            return True
        import inspect

        try:
            params = inspect.signature(self.resolve()).parameters
        except (TypeError, ValueError):
            return False
        p = params.get(kwarg)
        return p is not None and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)


def _gymnasium_entry(env_id: str, **kwargs: Any) -> LLMEnv:
    return make(env_id, **kwargs)


class Registry:
    """Ids to :class:`EnvSpec`, plus what plugin loading found."""

    def __init__(self) -> None:
        self.specs: dict[str, EnvSpec] = {}
        self.plugins: dict[str, str] = {}  # plugin name -> module
        self.plugin_errors: dict[str, str] = {}
        self._current_plugin: str | None = None

    def register(
        self,
        id: str,
        entry_point: str | Callable[..., LLMEnv],
        *,
        description: str | None = None,
        **kwargs: Any,
    ) -> EnvSpec:
        """Register ``id`` (``<domain>/<Name>-v<N>``); ``kwargs`` are the defaults
        ``make`` passes to ``entry_point``. Re-registering an id replaces it.
        Plugins hear of it through the historic ``gym_llm_env_registered``
        hook (one that raises is warned about by name; registration goes on)."""
        m = _ID_RE.match(id)
        if m is None:
            raise ValueError(f"environment id {id!r} is not of the form '<domain>/<Name>-v<N>'")
        if description is None:
            doc = getattr(entry_point, "__doc__", None) if not isinstance(entry_point, str) else None
            description = (doc or "").strip().split("\n")[0]
        spec = EnvSpec(
            id=id,
            entry_point=entry_point,
            domain=m.group("domain"),
            description=description,
            kwargs=dict(kwargs),
            plugin=self._current_plugin,
        )
        self.specs[id] = spec
        if id not in gymnasium.registry:
            gymnasium.register(
                id=id,
                entry_point=functools.partial(_gymnasium_entry, id),
                disable_env_checker=True,
            )
        for name, error in call_each("gym_llm_env_registered", {"spec": spec}).errors.items():
            warnings.warn(f"gym_llm plugin {name!r} failed on the registration of {id!r}: {error}",
                          RuntimeWarning, stacklevel=2)
        return spec

    def register_all(self, environments: Mapping[str, tuple[str | Callable[..., LLMEnv], str, Mapping[str, Any]]]) -> None:
        """Register a plugin's table ``{id: (entry point, description, default
        kwargs)}``, the one way the bundled domains declare their environments."""
        for env_id, (entry_point, description, defaults) in environments.items():
            self.register(env_id, entry_point, description=description, **defaults)

    def spec(self, env_id: str) -> EnvSpec:
        try:
            return self.specs[env_id]
        except KeyError:
            close = difflib.get_close_matches(env_id, list(self.specs), n=3, cutoff=0.5)
            hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
            broken = f" (plugins that failed to load: {', '.join(self.plugin_errors)})" if self.plugin_errors else ""
            raise UnknownEnvError(f"no environment registered as {env_id!r}{hint}{broken}") from None

    def list(self) -> list[str]:
        return sorted(self.specs)

    def make(self, env_id: str, split: str = "train", seed: int | None = None, **kwargs: Any) -> LLMEnv:
        spec = self.spec(env_id)
        factory = spec.resolve()
        env = factory(**{**spec.kwargs, **kwargs, "split": split, "seed": seed})
        base = getattr(env, "unwrapped", env)
        if not isinstance(base, LLMEnv):
            raise TypeError(f"entry point of {env_id!r} returned {type(env).__name__}, not an LLMEnv")
        base.env_id = spec.id
        base.domain = spec.domain
        return env

    # --------------------------------------------------------- plugin loading
    def load_plugins(self) -> None:
        """Import every ``gym_llm`` entry point, register it with the plugin
        manager under its distribution's name and call its ``gym_llm_register``
        hook, one plugin at a time; failures are recorded by plugin name
        (``plugin_errors``) and warned."""
        pm = plugin_manager()
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            name = ep.dist.name if ep.dist is not None else ep.name
            if name in self.plugins:
                continue
            before = set(self.specs)
            try:
                # pm.register also replays the historic hooks' past calls to the plugin
                pm.register(ep.load(), name=name)
                self._current_plugin = name
                error = call_each("gym_llm_register", {"registry": self}, plugin=name).errors.get(name)
            except Exception as e:
                error = f"{type(e).__name__}: {e}"
            finally:
                self._current_plugin = None
            if error is None:
                self.plugins[name] = ep.value
                self.plugin_errors.pop(name, None)
                continue
            # all or nothing: half a plugin's ids would fail later, far from the cause
            for env_id in set(self.specs) - before:
                del self.specs[env_id]
                gymnasium.registry.pop(env_id, None)
            if pm.has_plugin(name):
                pm.unregister(name=name)
            self.plugin_errors[name] = error
            warnings.warn(f"gym_llm plugin {name!r} ({ep.value}) failed to load and was skipped: {error}",
                          RuntimeWarning, stacklevel=2)


@functools.cache
def plugin_manager() -> pluggy.PluginManager:
    """The process-wide pluggy manager (hooks of ``gym_llm.envs.hookspecs``)."""
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    return pm


@dataclass(frozen=True)
class PluginCalls:
    """One hook call's answers, plugin by plugin: ``results`` holds
    ``(plugin name, what its hook returned)`` in pluggy's call order (``None``
    answers left out, as pluggy does), ``errors`` maps each plugin whose hook
    raised to ``"<exception type>: <message>"``."""

    results: list[tuple[str, Any]]
    errors: dict[str, str]


def call_each(hook_name: str, kwargs: Mapping[str, Any] | None = None, *, plugin: str | None = None) -> PluginCalls:
    """Call the hook ``hook_name`` of :func:`plugin_manager` with keyword
    arguments ``kwargs``, plugin by plugin in pluggy's call order, each
    through a pluggy subset caller of that plugin alone: a plugin whose hook
    raises lands in ``errors`` under its name and the others still answer
    (one pluggy call stops at the first raise). ``plugin`` (a name) calls that
    plugin only, of a hook that is not historic. A historic hook is recorded
    once, through ``call_historic`` on a subset caller of no plugin, for
    plugins registered later, which pluggy calls alone with each past record
    when they register (a raise there comes out of
    ``plugin_manager().register``); the plugins registered now are called
    through their ``HookImpl.function`` each, as pluggy itself calls a
    historic hook's implementations (pluggy refuses wrappers on historic
    hooks), so nothing else is recorded. The one way gym-llm calls its hooks."""
    pm = plugin_manager()
    hook = getattr(pm.hook, hook_name)
    kwargs = dict(kwargs or {})
    registered = pm.get_plugins()
    results: list[tuple[str, Any]] = []
    errors: dict[str, str] = {}
    historic = hook.is_historic()
    if historic and plugin is not None:
        raise ValueError(f"{hook_name} is historic: it is called for every plugin, those registered later too")
    if historic:
        # the one record for plugins registered later: a subset caller of no plugin calls nobody now
        # (a subset caller shares its hook's history: calling one per plugin recorded each call)
        pm.subset_hook_caller(hook_name, remove_plugins=registered).call_historic(kwargs=kwargs)
    for impl in reversed(hook.get_hookimpls()):  # pluggy's call order
        if plugin is not None and impl.plugin_name != plugin:
            continue
        try:
            if historic:
                impl.function(*[kwargs[arg] for arg in impl.argnames])
            else:
                alone = pm.subset_hook_caller(hook_name, remove_plugins=registered - {impl.plugin})
                results += [(impl.plugin_name, answer) for answer in alone(**kwargs)]
        except Exception as e:
            errors[impl.plugin_name] = f"{type(e).__name__}: {e}"
    return PluginCalls(results, errors)


registry = Registry()


def register(id: str, entry_point: str | Callable[..., LLMEnv], **kwargs: Any) -> EnvSpec:
    """Register an environment from user code (see :meth:`Registry.register`)."""
    return registry.register(id, entry_point, **kwargs)


def make(env_id: str, split: str = "train", seed: int | None = None, **kwargs: Any) -> LLMEnv:
    """Make the environment ``env_id`` on ``split`` with ``seed``; other kwargs
    override the registered defaults. Unknown ids raise :class:`UnknownEnvError`
    naming close matches."""
    return registry.make(env_id, split=split, seed=seed, **kwargs)


def spec(env_id: str) -> EnvSpec:
    """The :class:`EnvSpec` of ``env_id``."""
    return registry.spec(env_id)



def with_sandbox(env_id: str, kwargs: Mapping[str, Any], sandbox: Mapping[str, Any] | None) -> dict[str, Any]:
    """``kwargs`` for making ``env_id`` in a run whose ``sandbox`` config (the
    Hydra group of gym-llm-train and gym-llm-eval) is ``sandbox``: an env that
    takes a ``sandbox`` kwarg (:meth:`EnvSpec.accepts`) gets the config's
    non-null values (null keeps the domain's own) unless ``kwargs`` sets
    ``sandbox`` itself; any other env gets ``kwargs`` as they are. Unknown ids
    raise :class:`UnknownEnvError`, looked up even when nothing is added."""
    takes = spec(env_id).accepts("sandbox")
    overrides = {k: v for k, v in dict(sandbox or {}).items() if v is not None}
    if overrides and takes and "sandbox" not in kwargs:
        return {**kwargs, "sandbox": overrides}
    return dict(kwargs)


def list_envs() -> list[str]:
    """Every registered id, sorted."""
    return registry.list()


def load_plugins() -> None:
    """(Re)discover plugins installed since import."""
    registry.load_plugins()
