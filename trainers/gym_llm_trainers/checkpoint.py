"""Checkpoints: written atomically, the last N kept, found again by ``resume=auto``.

A checkpoint is a directory ``checkpoints/step_<N>/`` holding

* ``model/``: ``save_pretrained`` of the policy (LoRA: the adapter, plus the
  merged weights in ``model/merged`` so any tool can load it) and tokenizer,
  so ``gym-llm-eval model.path=<run>/checkpoints/step_<N>/model`` evaluates it;
* ``trainer_state.pt``: optimizer(s), scheduler, critic, curriculum, step;
* ``meta.json``: step and a summary.

It is written under ``checkpoints/.tmp-step_<N>-<pid>/`` (files fsynced) and
renamed into place, so a run killed at any instant leaves either the complete
checkpoint or none; stale temporary directories are removed on the next save.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

__all__ = ["save_checkpoint", "latest_checkpoint", "list_checkpoints", "load_trainer_state", "resolve_resume"]

_STEP_RE = re.compile(r"^step_(\d+)$")


def list_checkpoints(root: str | os.PathLike) -> list[Path]:
    """Complete checkpoints under ``root`` (the run's ``checkpoints/``), oldest first."""
    root = Path(root)
    if not root.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in root.iterdir() if (m := _STEP_RE.match(p.name)) and p.is_dir()]
    return [p for _, p in sorted(found)]


def latest_checkpoint(root: str | os.PathLike) -> Path | None:
    """The newest complete checkpoint under ``root``, or ``None``."""
    found = list_checkpoints(root)
    return found[-1] if found else None


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
    for stale in root.glob(".tmp-step_*"):
        shutil.rmtree(stale, ignore_errors=True)
    final = root / f"step_{step:06d}"
    tmp = root / f".tmp-step_{step:06d}-{os.getpid()}"
    tmp.mkdir()
    write_model(tmp / "model")
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
