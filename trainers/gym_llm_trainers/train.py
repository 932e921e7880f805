"""``gym-llm-train``: the Hydra app (configs: ``gym_llm/conf/train.yaml``,
shipped inside the installed ``gym_llm`` package).

    gym-llm-train                                    # the embedded CPU demo
    gym-llm-train trainer=ppo mixture=math_only trainer.total_steps=100
    gym-llm-train -m mixture=math_only,code_only     # a sweep (joblib launcher)
    torchrun --nproc-per-node 2 -m gym_llm_trainers.train hydra.run.dir=runs/ddp   # data parallel
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import hydra
from omegaconf import DictConfig, OmegaConf

from gym_llm.hydra_app import threads_for_sweep
from gym_llm.runs import CONFIG_FILE

from .config import RunConfig, from_dict, store_defaults

__all__ = ["main", "run", "run_config", "compose", "CONFIG_DIR"]

#: The configs ship as package data of ``gym_llm`` (``gym_llm/conf``), found
#: by file path so they need no ``__init__.py`` of their own.
CONFIG_DIR = str(Path(importlib.util.find_spec("gym_llm").submodule_search_locations[0]) / "conf")

# The ``base`` options of the trainer and logging groups (the dataclass
# defaults) must be in Hydra's ConfigStore before anything composes
# ``train.yaml``: the console entry point and :func:`compose` (both here), and
# sweep workers (they import this module to unpickle ``main``; the joblib
# launcher also ships them the ConfigStore's state).
store_defaults()


def run_config(cfg: DictConfig) -> RunConfig:
    """The typed :class:`RunConfig` of a composed Hydra config (unknown keys
    raise with a did-you-mean hint)."""
    data = OmegaConf.to_container(cfg, resolve=True)
    data.pop("hydra", None)
    return from_dict(RunConfig, data)


def run(cfg: DictConfig) -> Path:
    """Train with a composed config; returns the run directory."""
    import torch

    from .distributed import init_distributed
    from .trainer import Trainer

    rc = run_config(cfg)
    for module in rc.imports:
        importlib.import_module(module)
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
    if dist.is_main:
        (Path(run_dir) / CONFIG_FILE).write_text(OmegaConf.to_yaml(cfg, resolve=True))
    Trainer(rc, run_dir, dist).train()
    return Path(run_dir)


def compose(overrides: list[str] | None = None) -> DictConfig:
    """The composed training config for ``overrides`` (command-line syntax),
    for use from Python: ``run(compose(["trainer.total_steps=5", "output_dir=runs/x"]))``."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    with initialize_config_dir(config_dir=CONFIG_DIR, version_base="1.3"):
        return hydra_compose(config_name="train", overrides=list(overrides or []))


@hydra.main(config_path=CONFIG_DIR, config_name="train", version_base="1.3")
def main(cfg: DictConfig) -> None:
    """Console entry point ``gym-llm-train``."""
    run(cfg)


if __name__ == "__main__":
    main()
