"""Checkpoints: written atomically, the last N kept, found again by ``resume=auto``.

The run directory's layout (names, what makes a checkpoint complete, how the
latest one is found, LoRA's ``model/merged``) is :mod:`gym_llm.apps.runs`, which
``gym-llm-eval`` reads too; this module writes it. A checkpoint is a directory
``checkpoints/step_<N>/`` (:func:`gym_llm.apps.runs.checkpoint_name`) holding

* ``model/``: ``save_pretrained`` of the policy (LoRA: the adapter, plus the
  merged weights in ``model/merged`` so any tool can load it) and tokenizer,
  so ``gym-llm-eval model.path=<run>/checkpoints/step_<N>/model`` evaluates it;
* ``trainer_state.pt``: optimizer(s), scheduler, critic, curriculum, the
  env schedule (``schedule``: an adaptive one's scores and coming weights),
  the held-out curves and forgetting alarm (``heldout``), the hack alarm,
  step;
* ``meta.json``: step and a summary.

It is written under ``checkpoints/.tmp-step_<N>-<pid>/``
(:func:`gym_llm.apps.runs.temporary_name`; files fsynced) and renamed into place,
so a run killed at any instant leaves either the complete checkpoint or none;
stale temporary directories are removed on the next save.

:func:`plan_resume` decides whether a run directory may be continued with a
given config: ``trainer.resume=auto`` compares it with the run's latest
recorded config (:func:`gym_llm.apps.runs.recorded_configs`) and refuses on any
difference outside :data:`~gym_llm_trainers.config.RESUME_SAFE_KEYS`;
``force`` continues anyway, recording the new config beside the old.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from gym_llm.apps.hydra_app import ConfigError
from gym_llm.apps.runs import (
    CHECKPOINTS_DIR,
    MODEL_DIR,
    TEMPORARY_GLOB,
    checkpoint_name,
    checkpoint_step,
    latest_checkpoint,
    list_checkpoints,
    recorded_configs,
    temporary_name,
)

from .config import RESUME_SAFE_KEYS

__all__ = ["save_checkpoint", "latest_checkpoint", "list_checkpoints", "load_trainer_state", "resolve_resume",
           "config_changes", "resume_safe", "ResumePlan", "plan_resume"]


def _fsync_tree(path: Path) -> None:
    for p in sorted(path.rglob("*")):
        if p.is_file():
            with open(p, "rb") as f:
                os.fsync(f.fileno())


def save_checkpoint(
    root: str | os.PathLike,
    step: int,
    write_model: Callable[[Path], None],
    trainer_state: dict[str, Any],
    meta: dict[str, Any] | None = None,
    keep_last: int = 2,
) -> Path:
    """Write checkpoint ``step`` atomically and delete all but the ``keep_last``
    newest. ``write_model(dir)`` saves the model and tokenizer into ``dir``.
    Returns the final directory."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    for stale in root.glob(TEMPORARY_GLOB):
        shutil.rmtree(stale, ignore_errors=True)
    final = root / checkpoint_name(step)
    tmp = root / temporary_name(step)
    tmp.mkdir()
    write_model(tmp / MODEL_DIR)
    torch.save(trainer_state, tmp / "trainer_state.pt")
    (tmp / "meta.json").write_text(json.dumps({"step": step, **(meta or {})}, indent=1, sort_keys=True))
    _fsync_tree(tmp)
    if final.exists():  # re-saving the same step (a resumed run's final save)
        shutil.rmtree(final)
    os.replace(tmp, final)
    dir_fd = os.open(root, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    if keep_last > 0:
        for old in list_checkpoints(root)[:-keep_last]:
            shutil.rmtree(old, ignore_errors=True)
    return final


def load_trainer_state(ckpt: str | os.PathLike) -> dict[str, Any]:
    """The ``trainer_state.pt`` of a checkpoint directory."""
    return torch.load(Path(ckpt) / "trainer_state.pt", map_location="cpu", weights_only=False)


def resolve_resume(resume: str, root: str | os.PathLike) -> Path | None:
    """Which checkpoint ``trainer.resume`` names: ``auto`` or ``force`` -> the
    latest under ``root`` (``None`` when there is none), ``never`` -> ``None``,
    anything else -> that directory (which must exist)."""
    if resume in ("never", "", None):
        return None
    if resume in ("auto", "force"):
        return latest_checkpoint(root)
    path = Path(resume)
    if not (path / "trainer_state.pt").is_file():
        raise FileNotFoundError(f"trainer.resume={resume!r} is not a checkpoint directory")
    return path


def _flat(tree: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(tree, dict) and tree:
        return {k: v for key, sub in tree.items() for k, v in _flat(sub, f"{prefix}{key}.").items()}
    return {prefix[:-1]: tree}


def config_changes(old: dict[str, Any], new: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """Dotted key -> ``(old, new)`` for every leaf that differs between two
    configs (plain nested dicts; a key missing on one side is ``None`` there;
    lists compare whole)."""
    a, b = _flat(old), _flat(new)
    return {k: (a.get(k), b.get(k)) for k in sorted(a.keys() | b.keys()) if a.get(k) != b.get(k)}


def resume_safe(key: str) -> bool:
    """Whether a resumed run may change ``key`` (:data:`RESUME_SAFE_KEYS`)."""
    return any(key == s or s.endswith(".*") and key.startswith(s[:-1]) for s in RESUME_SAFE_KEYS)


@dataclass
class ResumePlan:
    """What a run directory's state means for a new start with some config.

    ``checkpoint`` is ``None`` for a fresh run; ``step`` is the checkpoint's.
    ``changes`` are the keys that differ from the recorded config (only
    resume-safe ones, unless forced); ``finished`` says the checkpoint is
    already at ``trainer.total_steps``."""

    checkpoint: Path | None
    step: int = 0
    changes: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    finished: bool = False


def plan_resume(run_dir: str | os.PathLike, config: dict[str, Any]) -> ResumePlan:
    """How the run in ``run_dir`` continues with ``config`` (the composed,
    resolved config as a plain dict; its ``trainer.resume`` decides).

    ``auto`` with a checkpoint compares ``config`` with the run's latest
    recorded config and raises :class:`~gym_llm.apps.hydra_app.ConfigError` (key
    ``trainer.resume``) listing every key that differs outside
    :data:`RESUME_SAFE_KEYS`, with the two ways out: a new run directory, or
    ``trainer.resume=force`` (which continues, keeping the changes). A
    checkpoint path given as ``trainer.resume`` is taken as asked, like
    ``force``."""
    trainer = config.get("trainer") or {}
    resume = str(trainer.get("resume", "auto"))
    ckpt = resolve_resume(resume, Path(run_dir) / CHECKPOINTS_DIR)
    if ckpt is None:
        return ResumePlan(None)
    step = checkpoint_step(ckpt) or 0
    history = recorded_configs(run_dir) if resume in ("auto", "force") else []
    changes = {}
    if history:
        from omegaconf import OmegaConf

        recorded = OmegaConf.to_container(OmegaConf.load(history[-1]), resolve=False) or {}
        changes = config_changes(recorded, config)
    unsafe = {k: v for k, v in changes.items() if not resume_safe(k)}
    if unsafe and resume == "auto":
        listed = "\n".join(f"  {k}: {old!r} -> {new!r}" for k, (old, new) in unsafe.items())
        raise ConfigError("trainer.resume", (
            f"{run_dir} holds a run (checkpoint at step {step}) whose config {history[-1].name} differs "
            f"from this one in {len(unsafe)} key(s) that a resume may not change:\n{listed}\n"
            f"Either train in a new run directory (hydra.run.dir=...), or continue this run with the "
            f"new config: trainer.resume=force (recorded beside the old one)."))
    return ResumePlan(ckpt, step, changes, finished=step >= int(trainer.get("total_steps", 0)))
