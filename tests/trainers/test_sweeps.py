"""A ``gym-llm-train`` multirun (issue 21, item 7): job directories named by
their overrides, and ``summary.md`` in the sweep dir with each job's final
held-out reward."""

from __future__ import annotations

from pathlib import Path

from gym_llm_trainers.metrics import read_metrics
from trainer_support import gym_llm_train

from gym_llm.apps.sweeps import SUMMARY_FILE, slug


def test_slug_keeps_one_path_component() -> None:
    assert slug("model.path=/ckpt/a b,mixture=math_only") == "model.path=_ckpt_a_b,mixture=math_only"


def test_sweep_names_jobs_by_overrides_and_writes_a_summary(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep"
    gym_llm_train("-m", "trainer.lr=1e-3,2e-3", "trainer.total_steps=1", "trainer.eval_every=1",
                  "trainer.eval_tasks=2", f"hydra.sweep.dir={sweep}", timeout=400)
    jobs = sorted(p.name for p in sweep.iterdir() if p.is_dir())
    # named by number and overrides (sorted, path-safe), not only by number
    assert [j.split("_", 1)[0] for j in jobs] == ["0", "1"]
    assert all("mixture=vowels" in j and "trainer.eval_tasks=2" in j and "/" not in j for j in jobs)
    summary = (sweep / SUMMARY_FILE).read_text()
    for job, lr in zip(jobs, ["0.001", "0.002"], strict=True):
        assert f"trainer.lr={lr}" in job
        final = [r["heldout/reward/mean"] for r in read_metrics(sweep / job) if "heldout/reward/mean" in r][-1]
        row = next(line for line in summary.splitlines() if line.startswith(f"| {job} |"))
        assert f"trainer.lr={lr} " in row and row.endswith(f"| {final:.4f} |")
