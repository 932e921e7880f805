"""Errors before work (issue 38, item 5): a mistyped group option, env id or
a metrics sink whose package is missing stops ``gym-llm-train`` and
``gym-llm-eval`` with exit status 2, the closest valid choice named, no
traceback, before the model loads. Each case runs the real console script.

A run stopped so leaves no run directory behind.

"Before the model loads" is proven, not timed: ``model.path`` points at a
directory whose ``config.json`` no loader accepts, so reaching the model load
would end in its traceback (status 1) instead of the error checked here."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
from pathlib import Path

import pytest
from trainer_support import cli_env

BIN = Path(sys.executable).parent


def _unloadable_model(tmp_path: Path) -> Path:
    model = tmp_path / "unloadable-model"
    model.mkdir()
    (model / "config.json").write_text('{"model_type": "no-such-architecture"}')
    return model


def _run(app: str, tmp_path: Path, *overrides: str) -> subprocess.CompletedProcess:
    """Run console script ``app`` with ``overrides`` and the unloadable model;
    check what every case shares: status 2, no traceback, well under a model
    load's time (the Hydra start-up on a busy 2-core machine is the bound)."""
    t0 = time.monotonic()
    proc = subprocess.run([str(BIN / app), *overrides, f"model.path={_unloadable_model(tmp_path)}",
                           f"hydra.run.dir={tmp_path / 'out'}"],
                          env=cli_env(), capture_output=True, text=True, timeout=120, cwd=tmp_path)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 2, output[-3000:]
    assert "Traceback" not in output and "HYDRA_FULL_ERROR" not in output, output[-3000:]
    assert time.monotonic() - t0 < 60
    assert not (tmp_path / "out").exists()  # no run directory left to be taken for a run
    return proc


@pytest.mark.parametrize(("overrides", "message"), [
    (["mixture=mathonly"], "mixture: no option 'mathonly' (did you mean 'math_only'?); the options are: "),
    (["-m", "trainer=grpo,ppoo"], "trainer: no option 'ppoo' (did you mean 'ppo'?)"),  # each value of a sweep
    (["hydra/launcher=jobilb"], "hydra/launcher: no option 'jobilb' (did you mean 'joblib'?)"),
    (["mixture.envs.arithmetic.id=math/Arithmetc-v0"],
     "mixture.envs.arithmetic.id: no environment registered as 'math/Arithmetc-v0'; did you mean "
     "'math/Arithmetic-v0'"),
    (["imports=[no_such_module]"], "imports: no module named 'no_such_module'"),
])
def test_gym_llm_train_names_the_closest_choice_before_the_model_loads(tmp_path, overrides, message):
    proc = _run("gym-llm-train", tmp_path, *overrides, "logging=quiet", "trainer.total_steps=1")
    assert message in proc.stderr, proc.stderr[-3000:]


def test_a_metrics_sink_without_its_package_fails_before_the_model_loads(tmp_path):
    sink = "wandb"
    if importlib.util.find_spec(sink) is not None:
        pytest.skip(f"{sink} is installed here: the missing-package path cannot be reached")
    proc = _run("gym-llm-train", tmp_path, f"logging={sink}", "trainer.total_steps=1")
    assert f"logging.{sink}=true: the {sink} package is not installed (pip install {sink}" in proc.stderr


def test_a_new_config_group_is_checked_without_being_listed(tmp_path):
    """Groups are read from the search path, so one added later (here through
    ``hydra.searchpath``) has its options checked too."""
    (tmp_path / "conf" / "cadence").mkdir(parents=True)
    (tmp_path / "conf" / "cadence" / "weekly.yaml").write_text("every: 7\n")
    proc = _run("gym-llm-train", tmp_path, f"hydra.searchpath=[file://{tmp_path / 'conf'}]", "+cadence=wekly")
    assert "cadence: no option 'wekly' (did you mean 'weekly'?)" in proc.stderr, proc.stderr[-3000:]


@pytest.mark.parametrize(("overrides", "message"), [
    (["env_ids=[math/Arithmetc-v0]"],
     "no environment registered as 'math/Arithmetc-v0'; did you mean 'math/Arithmetic-v0'"),
    (["model=tinyy"], "model: no option 'tinyy' (did you mean 'tiny'?)"),
    (["env_ids=mixture"], "env_ids: env_ids=mixture evaluates a training run's mixture"),
    (["imports=[no_such_module]"], "imports: no module named 'no_such_module'"),
])
def test_gym_llm_eval_names_the_closest_choice_before_the_model_loads(tmp_path, overrides, message):
    proc = _run("gym-llm-eval", tmp_path, *overrides)
    assert message in proc.stderr, proc.stderr[-3000:]


def test_a_config_error_keeps_a_run_directory_that_holds_an_earlier_run(tmp_path):
    out = tmp_path / "out"
    (out / "checkpoints").mkdir(parents=True)
    proc = subprocess.run([str(BIN / "gym-llm-train"), "mixture.envs.arithmetic.id=math/Arithmetc-v0",
                           f"hydra.run.dir={out}"], env=cli_env(), capture_output=True, text=True, timeout=120,
                          cwd=tmp_path)
    assert proc.returncode == 2 and (out / "checkpoints").is_dir(), proc.stderr[-2000:]
