"""What gym-llm's Hydra applications (``gym-llm-train``, ``gym-llm-eval``)
share: the config groups both compose (:data:`CONFIG_DIR`), thread counts in
sweeps, and the errors of a config a run cannot start with
(:class:`ConfigError`, :class:`UnknownKeyError` with its did-you-mean),
raised before anything expensive runs: :func:`check_overrides` checks the
command line's keys and group choices before Hydra starts, :func:`closest`
names the nearest valid choice, :func:`user_errors` prints them (and an
unknown environment id) without a traceback, exit status 2; and how a run
stopped by a signal exits (:class:`Interrupted`)."""

from __future__ import annotations

import contextlib
import difflib
import os
import shutil
import signal
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

__all__ = ["CONFIG_DIR", "threads_for_sweep", "ConfigError", "UnknownKeyError", "closest", "unknown_key",
           "check_overrides", "import_modules", "Interrupted", "user_errors"]

#: ``gym_llm/apps/conf``, package data found by file path (it needs no ``__init__.py``):
#: ``eval.yaml`` and the groups both apps compose (model, policy, sandbox, env_workers,
#: hydra/launcher) or that gym-llm-eval reads (envs). The training-only configs are the
#: trainers' own (``gym_llm_trainers/conf``), which put these on their search path.
CONFIG_DIR = str(Path(__file__).resolve().parent / "conf")


def threads_for_sweep() -> None:
    """Parallel sweep jobs (the joblib launcher with ``n_jobs > 1``) share the
    machine: give each ``cores / n_jobs`` torch threads rather than
    oversubscribing. Does nothing outside a Hydra multirun."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode
    from omegaconf import OmegaConf

    if not HydraConfig.initialized():
        return
    hc = HydraConfig.get()
    n_jobs = OmegaConf.select(hc, "launcher.n_jobs")
    if hc.mode == RunMode.MULTIRUN and n_jobs and int(n_jobs) > 1:
        import torch

        torch.set_num_threads(max(1, (os.cpu_count() or 1) // int(n_jobs)))


class ConfigError(ValueError):
    """A config value or key a run cannot start with, found before anything
    expensive runs. ``key`` is the dotted key (``trainer.total_steps``); the
    message names it and says what was expected. The Hydra apps print the
    message (no traceback) and exit with status 2."""

    def __init__(self, key: str, message: str):
        super().__init__(f"{key}: {message}" if key else message)
        self.key = key
        self.detail = message

    def under(self, prefix: str) -> ConfigError:
        """The same error for a key nested under ``prefix`` (``trainer``)."""
        key = f"{prefix}.{self.key}" if prefix and self.key else prefix or self.key
        return type(self)(key, self.detail)


class UnknownKeyError(ConfigError, KeyError):
    """A key no config declares; ``suggestion`` is the closest declared key
    (dotted like ``key``), or ``None``."""

    def __init__(self, key: str, suggestion: str | None = None):
        hint = f" (did you mean {suggestion!r}?)" if suggestion else ""
        super().__init__(key, f"unknown config key{hint}")
        self.suggestion = suggestion

    def __str__(self) -> str:  # KeyError would print the repr of the message
        return ValueError.__str__(self)

    def under(self, prefix: str) -> UnknownKeyError:
        return UnknownKeyError(f"{prefix}.{self.key}", self.suggestion and f"{prefix}.{self.suggestion}")


def closest(word: str, choices: Iterable[str]) -> str | None:
    """The choice nearest to ``word`` (``difflib``, similarity >= 0.6), or
    ``None``: the one did-you-mean rule of unknown keys and group options."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return close[0] if close else None


def unknown_key(key: str, known: Iterable[str]) -> UnknownKeyError:
    """The error of unknown dotted ``key`` whose siblings are ``known`` (full
    dotted keys too), naming the closest one: "trainer.totl_steps: unknown
    config key (did you mean 'trainer.total_steps'?)". The one wording of both
    spellings of a typo: an override of a missing key, and a ``+key`` that the
    typed config rejects."""
    return UnknownKeyError(key, closest(key, known))


def check_overrides(config_dir: str, config_name: str, argv: list[str]) -> None:
    """Check the command line's overrides before Hydra starts (whose own
    errors name no alternative and exit with status 1):

    - a group choice that is no option of its group (``mixture=mathonly``,
      also each value of a sweep ``-m trainer=grpo,ppoo`` and
      ``hydra/launcher=...``): :class:`ConfigError` naming the closest option
      and listing them all. Groups and options are read from the whole search
      path (the config dirs, ``hydra.searchpath``, the ConfigStore), so a new
      group is checked without being listed anywhere;
    - an override that sets a key the composed config does not have
      (``trainer.totl_steps=3``): :class:`UnknownKeyError` naming the closest
      key. ``+key=...`` adds keys on purpose and ``hydra.*`` is Hydra's; both
      are left to the app's own checks. Group choices are composed first, so
      a key of a chosen option is known; keys under a swept group
      (``-m mixture=a,b``) are not checked."""
    from hydra import compose, initialize_config_dir
    from hydra._internal.utils import get_args_parser
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.object_type import ObjectType
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from omegaconf import DictConfig, OmegaConf

    args = get_args_parser().parse_args(argv)
    if args.help or args.hydra_help or args.shell_completion or args.info:
        return
    overrides = OverridesParser.create().parse_overrides(args.overrides)
    if all(o.key_or_group.startswith("hydra.") or o.is_delete() for o in overrides):
        return  # nothing that could be a mistyped key or option: no need to start Hydra for the groups
    name = args.config_name or config_name
    searchpath = [o.input_line for o in overrides if o.key_or_group == "hydra.searchpath"]
    with initialize_config_dir(config_dir=config_dir, version_base="1.3"):
        loader = GlobalHydra.instance().config_loader()
        try:  # the groups of the whole search path: config_dir's, those it adds, hydra.searchpath's
            groups = set(loader.get_group_options(
                "", results_filter=ObjectType.GROUP, config_name=name, overrides=searchpath))
        except Exception:  # noqa: BLE001 - a bad hydra.searchpath: Hydra's own run reports it
            return

        def choice(o: Any) -> bool:  # a group choice such as model=tiny, or hydra/launcher=joblib
            return o.key_or_group.split("/")[0] in groups or o.key_or_group == "hydra.searchpath"

        for o in overrides:
            if choice(o) and o.key_or_group != "hydra.searchpath" and not o.is_delete():
                options = loader.get_group_options(o.key_or_group, results_filter=ObjectType.CONFIG,
                                                   config_name=name, overrides=searchpath)
                _check_choice(o, options)

        swept = {o.key_or_group for o in overrides if o.is_sweep_override()}
        # the group choices (and hydra.searchpath, which can add options) decide which keys exist
        base = [o.input_line for o in overrides if choice(o) and not o.is_sweep_override()]
        to_check = [o.key_or_group for o in overrides
                    if not choice(o) and not (o.is_add() or o.is_force_add() or o.is_delete())
                    and not o.key_or_group.startswith("hydra.")
                    and not any(o.key_or_group.startswith(g + ".") for g in swept)]
        if not to_check:
            return
        try:
            cfg = compose(config_name=name, overrides=base)
        except Exception:  # noqa: BLE001 - a bad group choice: Hydra's own run reports it
            return
    for key in to_check:
        node: Any = cfg
        parts = key.split(".")
        for i, part in enumerate(parts):
            if not isinstance(node, DictConfig):
                break  # a value or a list is being indexed: OmegaConf's own error is clear
            if part not in node:
                parent = ".".join(parts[:i])
                rest = ".".join(parts[i + 1:])
                known = [".".join(filter(None, (parent, k, rest))) for k in node]
                raise unknown_key(key, known)
            node = OmegaConf.select(node, part, throw_on_missing=False)


def import_modules(modules: Iterable[str]) -> None:
    """Import the config's ``imports`` (modules that register environments);
    one that does not exist is a :class:`ConfigError` of key ``imports``. A
    module that exists but fails inside keeps its traceback: it says where."""
    import importlib

    for module in modules:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as e:
            if e.name != module:
                raise
            raise ConfigError("imports", f"no module named {module!r}") from None


def _check_choice(override: Any, options: list[str]) -> None:
    """Raise :class:`ConfigError` for a value of group choice ``override``
    that is not among the group's ``options`` (a group without options of
    its own, such as ``hydra``, and glob sweeps are left to Hydra)."""
    from hydra.core.override_parser.types import Glob

    value = override.value()
    if not options or value is None or isinstance(value, Glob):
        return
    values = list(override.sweep_string_iterator()) if override.is_sweep_override() else [
        override.get_value_element_as_str()]
    for v in values:
        if v not in options:
            near = closest(v, options)
            hint = f" (did you mean {near!r}?)" if near else ""
            raise ConfigError(override.key_or_group, f"no option {v!r}{hint}; the options are: {', '.join(options)}")


class Interrupted(KeyboardInterrupt):
    """A run stopped by signal ``signum`` (SIGINT, SIGTERM); the message says
    what was kept. The apps exit with status ``128 + signum`` (130 for Ctrl-C,
    143 for SIGTERM), the shell's convention for a death by that signal.

    A :class:`KeyboardInterrupt`, not an ``Exception``: raised from a signal
    handler it may surface anywhere, and asyncio's callbacks, worker loops
    and ``except Exception`` handlers would swallow anything else."""

    def __init__(self, signum: int, message: str):
        super().__init__(message)
        self.signum = signum
        self.exit_code = 128 + signum


def _discard_unused_run_dir() -> None:
    """Remove the Hydra job's output directory when it holds only what a job
    writes as it starts (``.hydra/``, the run's ``config.yaml``, empty log
    files): a run stopped by a config error leaves no directory to be taken
    for a run. A directory with anything else (an earlier run's checkpoints)
    is kept."""
    from hydra.core.hydra_config import HydraConfig

    from gym_llm.apps.runs import CONFIG_FILE, HYDRA_CONFIG_FILE

    if not HydraConfig.initialized():
        return
    at_start = (Path(HYDRA_CONFIG_FILE).parts[0], CONFIG_FILE)
    run_dir = Path(HydraConfig.get().runtime.output_dir)
    try:
        unused = all(e.name in at_start or (e.suffix == ".log" and e.is_file() and e.stat().st_size == 0)
                     for e in run_dir.iterdir())
    except OSError:
        return
    if unused:
        shutil.rmtree(run_dir, ignore_errors=True)


@contextlib.contextmanager
def user_errors(prog: str) -> Iterator[None]:
    """Turn what a user caused into a message and an exit status instead of a
    traceback: :class:`ConfigError` and an unknown environment id
    (:class:`~gym_llm.envs.registry.UnknownEnvError`, which names the closest
    ids) -> status 2 (and a run directory that holds nothing yet is removed),
    :class:`Interrupted` -> ``128 + signum``, a Ctrl-C outside any handler -> 130."""
    from gym_llm.envs.registry import UnknownEnvError

    try:
        yield
    except (ConfigError, UnknownEnvError) as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        _discard_unused_run_dir()
        raise SystemExit(2) from None
    except Interrupted as e:
        print(f"{prog}: {e}", file=sys.stderr)
        raise SystemExit(e.exit_code) from None
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        raise SystemExit(128 + signal.SIGINT) from None
