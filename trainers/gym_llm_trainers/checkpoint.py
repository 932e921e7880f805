"""Checkpoints: written atomically, the last N kept, found again by ``resume=auto``.

The run directory's layout (names, what makes a checkpoint complete, how the
latest one is found, LoRA's ``model/merged``) is :mod:`gym_llm.runs`, which
``gym-llm-eval`` reads too; this module writes it. A checkpoint is a directory
``checkpoints/step_<N>/`` (:func:`gym_llm.runs.checkpoint_name`) holding

* ``model/``: ``save_pretrained`` of the policy (LoRA: the adapter, plus the
  merged weights in ``model/merged`` so any tool can load it) and tokenizer,
  so ``gym-llm-eval model.path=<run>/checkpoints/step_<N>/model`` evaluates it;
* ``trainer_state.pt``: optimizer(s), scheduler, critic, curriculum, step;
* ``meta.json``: step and a summary.

It is written under ``checkpoints/.tmp-step_<N>-<pid>/``
(:func:`gym_llm.runs.temporary_name`; files fsynced) and renamed into place,
so a run killed at any instant leaves either the complete checkpoint or none;
stale temporary directories are removed on the next save.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from gym_llm.runs import (
    MODEL_DIR,
    TEMPORARY_GLOB,
    checkpoint_name,
    latest_checkpoint,
    list_checkpoints,
    temporary_name,
)

__all__ = ["save_checkpoint", "latest_checkpoint", "list_checkpoints", "load_trainer_state", "resolve_resume"]


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
    """Which checkpoint ``trainer.resume`` names: ``auto`` -> the latest under
    ``root`` (``None`` when there is none), ``never`` -> ``None``, anything else
    -> that directory (which must exist)."""
    if resume in ("never", "", None):
        return None
    if resume == "auto":
        return latest_checkpoint(root)
    path = Path(resume)
    if not (path / "trainer_state.pt").is_file():
        raise FileNotFoundError(f"trainer.resume={resume!r} is not a checkpoint directory")
    return path
