"""The run directories' layout, the one definition of it: a training run's,
written by the trainers (``gym_llm_trainers.checkpoint``, ``.metrics``) and read
by ``gym-llm-eval`` and ``gym-llm report``, and an eval run's, written by
``gym-llm-eval`` and read by ``gym-llm report`` and ``gym-llm compare``.

::

    <run>/
      config.yaml            the composed config, resolved, of the run's first steps
                             (gym-llm-train writes it once; Hydra's .hydra/config.yaml
                             is read when it is missing)
      config.resumed_step_<N>.yaml  the config of a resume from step N that changed
                             keys (resume-safe ones, or any with trainer.resume=force)
      metrics.jsonl
      trajectories/          step_<N>.jsonl (training rollouts), heldout_step_<N>.jsonl (held-out evals)
      checkpoints/
        step_<N>/            N zero-padded to 6 digits: step_000050
          model/             save_pretrained of the policy and tokenizer; for LoRA the
            merged/          adapter, with the merged full model in model/merged/
          trainer_state.pt   (the trainer's own: optimizer, scheduler, ...)
          meta.json
        .tmp-step_<N>-<pid>/ a checkpoint being written
      model/                 the final model (LoRA merged)
      report.html            gym-llm report's page (of an eval run too)

    <eval run>/
      samples.jsonl          every sample, appended as tasks finish (resumable), in plan order at the end
      results.json           {env_id: {"n", "mean_reward", "pass@1", "pass@k", "k", ...}}
      report.md              the results as Markdown, with plots
      eval_config.json       what the samples were drawn with (a rerun resumes only if it matches)
      errors.jsonl           tasks that could not run, and why

Contract:

* A checkpoint is *complete* exactly when a directory named
  :func:`checkpoint_name` exists: a writer builds it under
  :func:`temporary_name` (which never matches) and renames it into place, so
  :func:`list_checkpoints` and :func:`latest_checkpoint` never see half a
  checkpoint, in any process, at any instant.
* The model of a checkpoint that tools load is :func:`checkpoint_model`:
  ``model/merged`` when it holds a ``config.json`` (LoRA), else ``model``.
* :func:`resolve_checkpoint` turns what a user names (a run, one of its
  checkpoints, a model directory) into a loadable directory and the run it
  belongs to; :func:`run_config` and :func:`training_mixture` read what a run
  was configured with, the mixture's weights through
  :class:`gym_llm.runtime.mixture.Mixture` (entry weight x domain weight) and its
  names through :meth:`~gym_llm.runtime.mixture.Mixture.metric_keys`, as the trainer
  draws and names them.
* :func:`recorded_configs` is the run's config history: ``config.yaml`` is
  never rewritten by a resume, each resume that changed the config adds
  :func:`resumed_config_name` beside it, so the last one is what the latest
  steps ran with.

Nothing here imports torch or the trainers: a bare ``pip install gym-llm``
reads runs.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from gym_llm.runtime.mixture import Mixture

__all__ = [
    "CHECKPOINTS_DIR", "MODEL_DIR", "MERGED_DIR", "CONFIG_FILE", "HYDRA_CONFIG_FILE", "TRAJECTORIES_DIR",
    "METRICS_FILE", "REPORT_FILE", "SAMPLES_FILE", "RESULTS_FILE", "EVAL_REPORT_FILE",
    "EVAL_CONFIG_FILE", "ERRORS_FILE",
    "TEMPORARY_GLOB", "checkpoint_name", "temporary_name", "checkpoint_step", "list_checkpoints",
    "latest_checkpoint", "checkpoint_model", "resolve_checkpoint", "run_config", "training_mixture",
    "trajectory_file", "trajectory_files", "resumed_config_name", "recorded_configs",
]

CHECKPOINTS_DIR = "checkpoints"
MODEL_DIR = "model"
MERGED_DIR = "merged"
CONFIG_FILE = "config.yaml"
HYDRA_CONFIG_FILE = ".hydra/config.yaml"
TRAJECTORIES_DIR = "trajectories"
METRICS_FILE = "metrics.jsonl"
REPORT_FILE = "report.html"
SAMPLES_FILE = "samples.jsonl"
RESULTS_FILE = "results.json"
EVAL_REPORT_FILE = "report.md"
EVAL_CONFIG_FILE = "eval_config.json"
ERRORS_FILE = "errors.jsonl"
#: Checkpoints being written (a killed writer leaves them; the next save removes them).
TEMPORARY_GLOB = ".tmp-step_*"

_STEP_RE = re.compile(r"step_(\d+)")
_RESUMED_CONFIG_RE = re.compile(r"config\.resumed_step_(\d+)\.yaml")
#: The keys of a mixture entry that describe its environment (the rest, such as
#: ``sft_examples`` or ``turn_credit``, are the trainer's own).
_ENV_KEYS = ("id", "weight", "kwargs", "heldout_kwargs")


def checkpoint_name(step: int) -> str:
    """The directory name of complete checkpoint ``step``: ``step_000050``."""
    return f"step_{int(step):06d}"


def temporary_name(step: int, pid: int | None = None) -> str:
    """Where checkpoint ``step`` is written before it is renamed to
    :func:`checkpoint_name` (one per writing process)."""
    return f".tmp-{checkpoint_name(step)}-{os.getpid() if pid is None else pid}"


def checkpoint_step(path: str | os.PathLike) -> int | None:
    """The step of a complete checkpoint's directory name, else ``None``."""
    m = _STEP_RE.fullmatch(Path(path).name)
    return int(m.group(1)) if m else None


def list_checkpoints(root: str | os.PathLike) -> list[Path]:
    """Complete checkpoints under ``root`` (a run's ``checkpoints/``), oldest first."""
    root = Path(root)
    if not root.is_dir():
        return []
    found = [(step, p) for p in root.iterdir() if (step := checkpoint_step(p)) is not None and p.is_dir()]
    return [p for _, p in sorted(found)]


def latest_checkpoint(root: str | os.PathLike) -> Path | None:
    """The newest complete checkpoint under ``root``, or ``None``."""
    found = list_checkpoints(root)
    return found[-1] if found else None


def checkpoint_model(ckpt: str | os.PathLike) -> Path:
    """The loadable model of checkpoint directory ``ckpt``: ``model/merged``
    when it holds a ``config.json`` (a LoRA run's merged weights), else ``model``."""
    model = Path(ckpt) / MODEL_DIR
    merged = model / MERGED_DIR
    return merged if (merged / "config.json").is_file() else model


def resolve_checkpoint(path: str | os.PathLike) -> tuple[Path, Path | None]:
    """``(model_dir, run_dir)`` for ``checkpoint=<path>``.

    ``path`` may be a ``save_pretrained`` directory (has ``config.json``), a
    trainer checkpoint ``checkpoints/step_<N>/`` (its :func:`checkpoint_model`),
    or a training run directory (its latest complete checkpoint). ``run_dir``
    is the training run the checkpoint belongs to, when it can be told (the
    contamination guard reads it). Raises ``FileNotFoundError`` naming what
    was looked for.
    """
    p = Path(path).expanduser().resolve()
    run_dir: Path | None = None
    if (p / CHECKPOINTS_DIR).is_dir():
        run_dir = p
        latest = latest_checkpoint(p / CHECKPOINTS_DIR)
        if latest is None:
            raise FileNotFoundError(f"{p} is a run directory with no complete checkpoint in {CHECKPOINTS_DIR}/")
        p = latest
    if (p / MODEL_DIR).is_dir():  # a checkpoint directory
        ckpt: Path | None = p
        p = checkpoint_model(p)
    else:  # a model directory: a checkpoint's model/, or any save_pretrained one
        ckpt = p.parent if p.name == MODEL_DIR else None
        if (p / MERGED_DIR / "config.json").is_file():
            p = p / MERGED_DIR
    if not (p / "config.json").is_file():
        raise FileNotFoundError(
            f"checkpoint={path!r}: no config.json in {p} (expected a save_pretrained directory, "
            f"a {CHECKPOINTS_DIR}/step_<N> directory or a training run directory)")
    if run_dir is None and ckpt is not None and ckpt.parent.name == CHECKPOINTS_DIR:
        run_dir = ckpt.parent.parent
    return p, run_dir


def run_config(run_dir: str | os.PathLike) -> dict[str, Any]:
    """A training run's config: ``config.yaml`` (gym-llm-train writes it,
    resolved), else Hydra's ``.hydra/config.yaml``; ``{}`` when neither exists."""
    run_dir = Path(run_dir)
    for path in (run_dir / CONFIG_FILE, run_dir / HYDRA_CONFIG_FILE):
        if path.is_file():
            from omegaconf import OmegaConf

            return OmegaConf.to_container(OmegaConf.load(path), resolve=False) or {}
    return {}


def resumed_config_name(step: int) -> str:
    """The file recording the config of a resume from checkpoint ``step``:
    ``config.resumed_step_000050.yaml``."""
    return f"config.resumed_{checkpoint_name(step)}.yaml"


def recorded_configs(run_dir: str | os.PathLike) -> list[Path]:
    """The run's recorded configs, oldest first: ``config.yaml`` (else
    Hydra's ``.hydra/config.yaml``), then each :func:`resumed_config_name`
    by step. ``[]`` for a run that recorded none."""
    run_dir = Path(run_dir)
    first = [p for p in (run_dir / CONFIG_FILE, run_dir / HYDRA_CONFIG_FILE) if p.is_file()][:1]
    resumed = sorted((int(m.group(1)), p) for p in run_dir.glob("config.resumed_step_*.yaml")
                     if (m := _RESUMED_CONFIG_RE.fullmatch(p.name)))
    return first + [p for _, p in resumed]


def training_mixture(run_dir: str | os.PathLike) -> dict[str, dict[str, Any]]:
    """The environments a training run sampled, as an eval env set: its
    ``mixture.envs`` entries (``name -> {id, weight, kwargs, heldout_kwargs}``;
    the trainer's own keys such as ``sft_examples`` or ``turn_credit`` are
    left out) whose probability in the run's :class:`~gym_llm.runtime.mixture.Mixture`
    (entry weight x domain weight, ``mixture.weights``) is positive. An entry
    whose metric key (:meth:`~gym_llm.runtime.mixture.Mixture.metric_keys`) is not its
    id gets it as ``key`` (``<id>#<name>`` for entries sharing an id, as
    gym-llm-train names their held-out metrics). ``{}`` when the run has no
    config or no mixture."""
    mixture = run_config(run_dir).get("mixture") or {}
    envs = {str(name): dict(entry or {}) for name, entry in (mixture.get("envs") or {}).items()}
    envs = {name: entry for name, entry in envs.items() if entry.get("id")}
    if not envs:
        return {}
    mix = Mixture({name: float(e.get("weight", 1.0)) for name, e in envs.items()},
                  env_ids={name: str(e["id"]) for name, e in envs.items()},
                  domain_weights=mixture.get("weights") or {}, validate=False,
                  name=str(mixture.get("name") or ""))
    out = {}
    for name, key in mix.metric_keys().items():
        entry = {k: v for k, v in envs[name].items() if k in _ENV_KEYS}
        if key != entry["id"]:
            entry["key"] = key
        out[name] = entry
    return out


def trajectory_file(run_dir: str | os.PathLike, step: int, *, heldout: bool = False) -> Path:
    """Where gym-llm-train writes the trajectories of ``step``: the training
    rollouts (``trajectories/step_<N>.jsonl``) or the held-out eval's
    (``heldout_step_<N>.jsonl``)."""
    name = f"{'heldout_' if heldout else ''}{checkpoint_name(step)}.jsonl"
    return Path(run_dir) / TRAJECTORIES_DIR / name


def trajectory_files(run_dir: str | os.PathLike) -> list[Path]:
    """The run's trajectory files (``trajectories/*.jsonl``, compressed ones
    too), sorted; which split each episode was played on is in the episode."""
    return sorted((Path(run_dir) / TRAJECTORIES_DIR).glob("*.jsonl*"))
