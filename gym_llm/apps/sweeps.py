"""Hydra multirun sweeps of ``gym-llm-train`` and ``gym-llm-eval``: job
directories named by their overrides, and one summary table per sweep.

Contract:

* :func:`slug` turns an override string into one safe path component; the
  ``${gym_llm_slug:...}`` resolver the configs' ``hydra.sweep.subdir`` use
  (``<job number>_<overrides>``) is registered when this module is imported
  (at import, not in a callback: launcher workers resolve the subdir after
  unpickling the job, which imports the config's callback module).
* :class:`SweepSummary` (``hydra.callbacks.sweep_summary`` in the trainers'
  ``train.yaml``) writes ``summary.md`` into the sweep directory when a
  multirun ends: one row per job, its overrides and its final held-out reward
  (the last ``heldout/reward/mean`` of its ``metrics.jsonl``; "-" for a job
  that has none: it failed, or never evaluated).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import OmegaConf

from gym_llm.apps.runs import METRICS_FILE

__all__ = ["slug", "SweepSummary", "SUMMARY_FILE", "final_heldout_reward"]

SUMMARY_FILE = "summary.md"
#: The metric a training job is summarised by (gym_llm_trainers' held-out eval).
HELDOUT_KEY = "heldout/reward/mean"


def slug(text: str, limit: int = 200) -> str:
    """``text`` (a Hydra override string) as one safe path component: path
    separators and other odd characters become ``_``; cut at ``limit``."""
    return re.sub(r"[^A-Za-z0-9._=,+@-]+", "_", str(text)).strip("_")[:limit]


def final_heldout_reward(job_dir: str | Path) -> float | None:
    """The last :data:`HELDOUT_KEY` value of ``job_dir/metrics.jsonl``
    (``None`` when there is none; a torn last line is skipped)."""
    path = Path(job_dir) / METRICS_FILE
    value = None
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row.get(HELDOUT_KEY), int | float):
                value = float(row[HELDOUT_KEY])
    return value


class SweepSummary(Callback):
    """Writes :data:`SUMMARY_FILE` (a Markdown table: job, overrides, final
    held-out reward) into ``hydra.sweep.dir`` at the end of a multirun."""

    def on_multirun_end(self, config: Any, **kwargs: Any) -> None:
        sweep_dir = Path(config.hydra.sweep.dir)
        rows = []
        for overrides_file in sorted(sweep_dir.glob("*/.hydra/overrides.yaml"), key=_job_order):
            job_dir = overrides_file.parent.parent
            overrides = OmegaConf.to_container(OmegaConf.load(overrides_file)) or []
            reward = final_heldout_reward(job_dir)
            rows.append(f"| {job_dir.name} | `{' '.join(map(str, overrides))}` | "
                        f"{'-' if reward is None else f'{reward:.4f}'} |")
        text = ["# Sweep summary", "", f"{len(rows)} job(s) in {sweep_dir}.", "",
                f"| job | overrides | final {HELDOUT_KEY} |", "| --- | --- | --- |", *rows, ""]
        (sweep_dir / SUMMARY_FILE).write_text("\n".join(text), encoding="utf-8")


def _job_order(overrides_file: Path) -> tuple[int, str]:
    name = overrides_file.parent.parent.name
    number = name.split("_", 1)[0]
    return (int(number) if number.isdigit() else 1 << 30, name)


if not OmegaConf.has_resolver("gym_llm_slug"):
    OmegaConf.register_new_resolver("gym_llm_slug", slug)
