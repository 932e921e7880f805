"""``gym-llm-train``: the Hydra app. Its configs are package data of two
distributions: ``train.yaml`` and the training-only groups (trainer, mixture,
recipe, logging) of this one (``gym_llm_trainers/conf``), the groups it shares
with ``gym-llm-eval`` (model, policy, sandbox, env_workers, hydra/launcher) of
the core (``gym_llm/apps/conf``, :data:`gym_llm.apps.hydra_app.CONFIG_DIR`).

    gym-llm-train                                    # the embedded CPU demo
    gym-llm-train trainer=ppo mixture=math_only trainer.total_steps=100
    gym-llm-train -m mixture=math_only,code_only     # a sweep (joblib launcher)
    torchrun --nproc-per-node 2 -m gym_llm_trainers.train hydra.run.dir=runs/ddp   # data parallel

Exit status: 0 when the run finished (or the run directory already had);
2 for a config it cannot start with (a bad value, an unknown key, a resume
with another config), printed without a traceback before the model loads;
``128 + N`` when signal N stopped it (130 for Ctrl-C, 143 for SIGTERM).
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

import hydra
from hydra.core.config_search_path import ConfigSearchPath
from hydra.core.plugins import Plugins
from hydra.plugins.search_path_plugin import SearchPathPlugin
from omegaconf import DictConfig, OmegaConf

from gym_llm.apps.hydra_app import CONFIG_DIR as SHARED_CONFIG_DIR
from gym_llm.apps.hydra_app import check_overrides, import_modules, threads_for_sweep, user_errors
from gym_llm.apps.runs import CONFIG_FILE, resumed_config_name

from .checkpoint import ResumePlan, plan_resume
from .config import RunConfig, from_dict, store_defaults

__all__ = ["main", "run", "run_config", "compose", "CONFIG_DIR", "SharedConfigs"]

log = logging.getLogger("gym_llm_trainers")

#: ``train.yaml`` and the training-only groups: package data of ``gym_llm_trainers``,
#: found by file path (the folder needs no ``__init__.py``).
CONFIG_DIR = str(Path(__file__).resolve().parent / "conf")


class SharedConfigs(SearchPathPlugin):
    """Puts the core's config groups (:data:`SHARED_CONFIG_DIR`) on the search
    path of every composition whose search path holds :data:`CONFIG_DIR`,
    right after it, whatever the command line's ``hydra.searchpath`` says
    (Hydra appends that after the plugins' entries); leaves other apps'
    search paths alone."""

    def manipulate_search_path(self, search_path: ConfigSearchPath) -> None:
        if any(entry.path.removeprefix("file://") == CONFIG_DIR for entry in search_path.get_path()):
            search_path.append(provider="gym-llm", path=f"file://{SHARED_CONFIG_DIR}")


# Both must be in place before anything composes ``train.yaml``: the console
# entry point and :func:`compose` (both here), and sweep workers (they import
# this module to unpickle ``main``; the launchers also ship them the
# ConfigStore's state and the composing config loader with its search path).
# The ``base`` options of the trainer and logging groups are the dataclass defaults.
Plugins.instance().register(SharedConfigs)
store_defaults()


def run_config(cfg: DictConfig) -> RunConfig:
    """The typed :class:`RunConfig` of a composed Hydra config: every value
    checked against its type and range, unknown keys with a did-you-mean hint
    (:class:`gym_llm.apps.hydra_app.ConfigError`, keys dotted from the top)."""
    data = OmegaConf.to_container(cfg, resolve=True)
    data.pop("hydra", None)
    return from_dict(RunConfig, data)


def run(cfg: DictConfig) -> Path:
    """Train with a composed config; returns the run directory."""
    import torch

    from .distributed import init_distributed
    from .trainer import Trainer

    rc = run_config(cfg)
    import_modules(rc.imports)
    dist = init_distributed()
    run_dir = rc.output_dir
    if run_dir is None:
        from hydra.core.hydra_config import HydraConfig

        run_dir = HydraConfig.get().runtime.output_dir if HydraConfig.initialized() else os.getcwd()
        threads_for_sweep()
    if dist.enabled:  # every rank writes into rank 0's directory (${now:...} may differ by a second)
        import torch.distributed as tdist

        box = [run_dir]
        tdist.broadcast_object_list(box, src=0)
        run_dir = box[0]
        torch.set_num_threads(max(1, (os.cpu_count() or 1) // dist.world_size))
    Path(run_dir).mkdir(parents=True, exist_ok=True)
    plan = plan_resume(run_dir, _plain_config(cfg))  # a resume with another config raises here
    if plan.finished:
        log.warning("%s is finished: its checkpoint is at step %d, trainer.total_steps=%d; nothing to do "
                    "(raise trainer.total_steps to train on, or use a new run dir)",
                    run_dir, plan.step, rc.trainer.total_steps)
        return Path(run_dir)
    if dist.is_main:
        _record_config(Path(run_dir), plan, cfg)
    if plan.checkpoint is not None:
        changed = ", ".join(f"{k}={new!r}" for k, (_, new) in plan.changes.items())
        log.info("resuming from step %d (%s)%s", plan.step, plan.checkpoint, f"; changed: {changed}" * bool(changed))
    Trainer(rc, run_dir, dist).train()
    return Path(run_dir)


def _plain_config(cfg: DictConfig) -> dict:
    data = OmegaConf.to_container(cfg, resolve=True)
    data.pop("hydra", None)
    return data


def _record_config(run_dir: Path, plan: ResumePlan, cfg: DictConfig) -> None:
    """``config.yaml`` for a fresh run; a resume keeps it and records a
    changed config beside it (``config.resumed_step_<N>.yaml``)."""
    if plan.checkpoint is None or not (run_dir / CONFIG_FILE).is_file():
        path = run_dir / CONFIG_FILE
    elif plan.changes:
        path = run_dir / resumed_config_name(plan.step)
    else:
        return
    path.write_text(OmegaConf.to_yaml(cfg, resolve=True))


def compose(overrides: list[str] | None = None) -> DictConfig:
    """The composed training config for ``overrides`` (command-line syntax),
    for use from Python: ``run(compose(["trainer.total_steps=5", "output_dir=runs/x"]))``."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    with initialize_config_dir(config_dir=CONFIG_DIR, version_base="1.3"):
        return hydra_compose(config_name="train", overrides=list(overrides or []))


def main() -> None:
    """Console entry point ``gym-llm-train`` (exit statuses: the module
    docstring). An override of a key the config lacks, or of a group option
    that does not exist, is reported with the closest one before Hydra
    composes (whose own error names none)."""
    with user_errors("gym-llm-train"):
        check_overrides(CONFIG_DIR, "train", sys.argv[1:])

    @hydra.main(config_path=CONFIG_DIR, config_name="train", version_base="1.3")
    def app(cfg: DictConfig) -> None:
        with user_errors("gym-llm-train"):
            run(cfg)

    app()


if __name__ == "__main__":
    main()
