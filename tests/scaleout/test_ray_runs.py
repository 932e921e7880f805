"""Runs on a real local multi-node Ray cluster: ``gym-llm-train
env_workers=ray`` joining it writes the same trajectories as a local run, and
a two-job sweep with ``hydra/launcher=cluster_ray`` runs its jobs on it, and
``gym-llm-eval env_workers=ray`` scores what a local eval scores."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from trainer_support import gym_llm_train

pytestmark = pytest.mark.slow

SHORT = ["logging.save_trajectories=true", "trainer.total_steps=1", "trainer.num_groups=2",
         "trainer.group_size=2"]


def _trajectories(run: Path) -> list[dict]:
    rows = []
    for path in sorted((run / "trajectories").glob("*.jsonl")):
        rows += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return rows


def _metrics(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines() if line.strip()]


def test_train_with_ray_env_workers_writes_what_a_local_run_writes(ray_cluster, tmp_path):
    local, remote = tmp_path / "local", tmp_path / "ray"
    gym_llm_train(*SHORT, f"output_dir={local}")
    gym_llm_train(*SHORT, f"output_dir={remote}", "env_workers=ray", f"env_workers.address={ray_cluster.address}",
                  "env_workers.num_cpus_per_worker=0")
    a, b = _trajectories(local), _trajectories(remote)
    assert a and len(a) == len(b)
    assert [set(r) for r in a] == [set(r) for r in b]
    key = lambda r: (r["group_id"], r["sample_index"])  # noqa: E731
    # the same tasks (the samples differ: which request reaches the seeded sampler first is timing)
    for x, y in zip(sorted(a, key=key), sorted(b, key=key), strict=True):
        assert (x["env_id"], x["task_id"], x["messages"][0]) == (y["env_id"], y["task_id"], y["messages"][0])
        assert len(y["loss_mask"]) == len(y["response_token_ids"]) and y["num_turns"] >= 1
    last = _metrics(remote)[-1]
    assert last["trajectories/env_lost"] == 0 and last["trajectories/error"] == 0
    assert last["env_workers/worker_deaths"] == 0 and last["env_workers/episodes_lost"] == 0
    assert "env_workers/worker_deaths" not in _metrics(local)[-1]


def test_sweep_with_the_cluster_ray_launcher_runs_both_jobs(ray_cluster, tmp_path):
    sweep = tmp_path / "sweep"
    gym_llm_train("-m", "hydra/launcher=cluster_ray", f"hydra.launcher.ray.init.address={ray_cluster.address}",
                  "hydra.launcher.ray.remote.num_gpus=0", "hydra.launcher.ray.remote.num_cpus=1",
                  f"hydra.sweep.dir={sweep}", *SHORT, "trainer.seed=1,2")
    runs = sorted(p for p in sweep.iterdir() if (p / "metrics.jsonl").exists())
    assert len(runs) == 2, list(sweep.iterdir())
    assert all(_metrics(r)[-1]["step"] == 1 for r in runs)


def _eval(out: Path, *overrides: str) -> tuple[dict, str]:
    """An eval's rewards by (env, task, sample) and its report.md."""
    proc = subprocess.run([sys.executable, "-m", "gym_llm.apps.evaluate", f"hydra.run.dir={out}", *overrides],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    rows = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines() if line.strip()]
    return {(r["env_id"], r["task_id"], r["sample_index"]): r["reward"] for r in rows}, (out / "report.md").read_text()


def test_eval_with_ray_env_workers_scores_what_a_local_eval_scores(ray_cluster, tmp_path):
    common = ["env_ids=[math/Arithmetic-v0,code/PythonFunctions-v0,tool/Orders-v0]", "num_tasks=2", "k=2",
              "policy.temperature=1", "policy.max_new_tokens=24", "plots=false"]
    local, local_report = _eval(tmp_path / "local", *common)
    remote, remote_report = _eval(tmp_path / "ray", *common, "env_workers=ray",
                                  f"env_workers.address={ray_cluster.address}", "env_workers.num_cpus_per_worker=0")
    assert len(local) == 12 and remote == local  # sampled, yet the same completions, scored on the workers
    for name in ("samples.jsonl", "results.json"):  # byte for byte (docs/eval.md, reproducibility)
        assert (tmp_path / "ray" / name).read_text() == (tmp_path / "local" / name).read_text()
    assert "in this process" in local_report
    assert "ray, 2 workers (0 worker deaths, 0 step timeouts, 0 episodes rerun, 0 lost)" in remote_report
