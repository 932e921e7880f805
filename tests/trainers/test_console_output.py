"""What ``gym-llm-train`` says on the console and how it runs its threads
(issue 38, items 8 and 9): the warm start has a progress bar as the RL steps
have, a step that trains on nothing (``groups/kept 0``) says so instead of
passing like any other, and torch's threads sleep rather than spin while
they wait."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from gym_llm_trainers.metrics import read_metrics
from trainer_support import cli_env, gym_llm_train


@pytest.mark.slow
def test_warm_start_bar_and_a_step_that_trains_on_nothing(tmp_path: Path) -> None:
    # test/Echo-v0 scores an exact echo only: two warm-start steps teach an untrained model nothing
    # of it, so every completion of every group scores 0 and dynamic sampling keeps no group
    proc = gym_llm_train("+mixture.envs.echo={id: test/Echo-v0, weight: 1.0, sft_examples: 8}",
                         "mixture.envs.vowels.weight=0", "trainer.sft.enabled=true", "trainer.sft.epochs=1",
                         "trainer.sft.batch_size=4", "logging.progress=true", "trainer.total_steps=1",
                         f"output_dir={tmp_path / 'run'}")
    out = proc.stdout + proc.stderr
    assert read_metrics(tmp_path / "run")[-1]["groups/kept"] == 0  # the premise
    assert "step 1 trained on nothing: groups/kept 0" in out, out[-3000:]
    bar = [line for line in out.splitlines() if line.startswith("warm start ")]
    assert bar and "2/2" in bar[-1] and "loss " in bar[-1], out[-3000:]


@pytest.mark.parametrize(("policy", "spin_count"), [(None, "'0'"), ("ACTIVE", "'30000000000'")])
def test_torch_threads_sleep_while_they_wait(policy: str | None, spin_count: str) -> None:
    """gym-llm-train starts torch's OpenMP runtime with OMP_WAIT_POLICY=PASSIVE
    (no spinning: the warm start collapsed on a shared CPU, benchmarks/RESULTS.md
    "warm_start_contention"), unless the environment chose a policy; the
    runtime itself reports what it took (OMP_DISPLAY_ENV)."""
    # a user's environment, not this test process's: earlier tests' imports may have
    # added variables under which the child loads torch's OpenMP runtime first
    env = {k: v for k, v in cli_env().items() if k in ("PATH", "HOME", "PYTHONPATH", "OMP_NUM_THREADS", "TMPDIR")}
    env["OMP_DISPLAY_ENV"] = "verbose"
    if policy:
        env["OMP_WAIT_POLICY"] = policy
    proc = subprocess.run([str(Path(sys.executable).with_name("gym-llm-train")), "--cfg", "job"], env=env,
                          capture_output=True, text=True, timeout=120, check=True)
    assert f"GOMP_SPINCOUNT = {spin_count}" in proc.stderr, proc.stderr[-2000:]
