"""Metrics sinks: ``metrics.jsonl`` (always), TensorBoard (default), W&B and
MLflow (optional), a rich progress bar, and the reward-curve PNG.

``metrics.jsonl`` holds one JSON object per step (``step``, ``reward/mean``,
...; at eval steps also ``heldout/<env_id>/reward/mean`` and
``heldout/reward/mean``, the mean over environments). Eval rows of step 0 are
written before any RL update. On resume the file is cut back to the
checkpoint's step, so the steps a killed run logged after its last checkpoint
are not duplicated.
"""

from __future__ import annotations

import json
import os
import statistics
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from gym_llm.apps.runs import METRICS_FILE
from gym_llm.envs.jsonio import finite

from .config import LoggingConfig

__all__ = ["MetricsLogger", "read_metrics", "plot_reward_curve", "mean"]


def read_metrics(run_dir: str | os.PathLike) -> list[dict[str, Any]]:
    """Rows of ``<run_dir>/metrics.jsonl`` (a torn last line is skipped)."""
    path = Path(run_dir) / METRICS_FILE
    rows = []
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                rows.append(json.loads(line))
            except ValueError:
                continue
    return rows


def mean(values: Iterable[float | None]) -> float:
    """The mean of the values that are not ``None`` (``statistics.fmean``); 0.0 when there are none."""
    present = [v for v in values if v is not None]
    return statistics.fmean(present) if present else 0.0


class MetricsLogger:
    """Write step metrics to every enabled sink. Only rank 0 logs."""

    def __init__(self, run_dir: str | os.PathLike, cfg: LoggingConfig, *, enabled: bool = True,
                 resume_step: int | None = None, total_steps: int = 0, run_config: dict | None = None):
        self.run_dir = Path(run_dir)
        self.cfg = cfg
        self.enabled = enabled
        self.path = self.run_dir / METRICS_FILE
        self._tb = self._wandb = self._mlflow = self._progress = None
        if not enabled:
            return
        self.run_dir.mkdir(parents=True, exist_ok=True)
        if resume_step is not None:
            keep = [r for r in read_metrics(self.run_dir) if r.get("step", 0) <= resume_step]
            self.path.write_text("".join(json.dumps(r) + "\n" for r in keep))
        elif self.path.exists():
            self.path.unlink()
        self._file = open(self.path, "a")  # noqa: SIM115 (kept open for the whole run)
        if cfg.tensorboard:
            from torch.utils.tensorboard import SummaryWriter

            self._tb = SummaryWriter(str(self.run_dir / "tensorboard"))
        if cfg.wandb:
            import wandb

            self._wandb = wandb.init(project=cfg.wandb_project, dir=str(self.run_dir),
                                     config=run_config or {}, resume="allow")
        if cfg.mlflow:
            import mlflow

            mlflow.start_run(run_name=self.run_dir.name)
            self._mlflow = mlflow
        if cfg.progress:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeRemainingColumn,
            )

            self._progress = Progress(
                TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                TextColumn("{task.fields[stats]}"), TimeRemainingColumn(),
            )
            self._task = self._progress.add_task("train", total=total_steps,
                                                 completed=resume_step or 0, stats="")
            self._progress.start()

    def phase_progress(self, description: str, total: int) -> Callable[[int, str], None]:
        """A bar of its own beside the steps' for a phase of ``total`` units
        (the warm start's optimizer steps), on the same progress display;
        returns ``advance(completed, stats)``. Does nothing when the progress
        bar is off (``logging.progress=false``, or not rank 0)."""
        if self._progress is None:
            return lambda completed, stats: None
        task = self._progress.add_task(description, total=total, stats="")
        return lambda completed, stats: self._progress.update(task, completed=completed, stats=stats)

    def log(self, step: int, metrics: dict[str, Any]) -> None:
        """Record one step's metrics (non-numeric values go to the JSONL only)."""
        if not self.enabled:
            return
        row = finite({"step": step, **metrics})
        self._file.write(json.dumps(row) + "\n")
        self._file.flush()
        numeric = {k: v for k, v in row.items() if isinstance(v, int | float) and k != "step" and v is not None}
        if self._tb is not None:
            for k, v in numeric.items():
                self._tb.add_scalar(k, v, step)
            self._tb.flush()
        if self._wandb is not None:
            self._wandb.log(numeric, step=step)
        if self._mlflow is not None:
            self._mlflow.log_metrics({k.replace("/", ".").replace("<", "").replace(">", ""): v
                                      for k, v in numeric.items()}, step=step)
        if self._progress is not None and "reward/mean" in row:
            stats = f"reward {row['reward/mean']:.3f}"
            if row.get("kl") is not None:
                stats += f"  kl {row['kl']:.4f}"
            if row.get("throughput/tokens_per_s") is not None:
                stats += f"  {row['throughput/tokens_per_s']:.0f} tok/s"
            if row.get("heldout/reward/mean") is not None:
                stats += f"  heldout {row['heldout/reward/mean']:.3f}"
            self._progress.update(self._task, completed=step, stats=stats)

    def close(self) -> None:
        if not self.enabled:
            return
        self._file.close()
        if self._tb is not None:
            self._tb.close()
        if self._wandb is not None:
            self._wandb.finish()
        if self._mlflow is not None:
            self._mlflow.end_run()
        if self._progress is not None:
            self._progress.stop()
        if self.cfg.plot:
            plot_reward_curve(self.run_dir)


def plot_reward_curve(run_dir: str | os.PathLike) -> Path | None:
    """Write ``reward_curve.png``: train reward per step and held-out reward
    (mean and per env) at eval steps. Returns its path (``None`` if no data)."""
    rows = read_metrics(run_dir)
    train = [(r["step"], r["reward/mean"]) for r in rows if r.get("reward/mean") is not None]
    heldout = [(r["step"], r["heldout/reward/mean"]) for r in rows if r.get("heldout/reward/mean") is not None]
    if not train and not heldout:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    if train:
        ax.plot(*zip(*train, strict=True), label="train reward", color="tab:blue", alpha=0.6)
    if heldout:
        ax.plot(*zip(*heldout, strict=True), "o-", label="held-out reward (mean)", color="tab:red", lw=2)
    envs = sorted({k for r in rows for k in r if k.startswith("heldout/") and k.endswith("/reward/mean")
                   and k != "heldout/reward/mean"})
    for k in envs:
        pts = [(r["step"], r[k]) for r in rows if r.get(k) is not None]
        ax.plot(*zip(*pts, strict=True), ".--", lw=1, alpha=0.7, label=k[len("heldout/"):-len("/reward/mean")])
    ax.set_xlabel("RL step")
    ax.set_ylabel("reward")
    ax.set_title(Path(run_dir).name)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    out = Path(run_dir) / "reward_curve.png"
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out
