"""Runs a user can trust (issue 21): a config is checked (types, ranges,
unknown keys) before the model loads; reusing a run directory with another
config is refused; a finished run says so; SIGINT/SIGTERM checkpoint the
step in progress; ``gym-llm play`` leaves cleanly on Ctrl-C. Everything runs
the real console scripts in subprocesses and sends real signals."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from gym_llm_trainers.checkpoint import config_changes, resume_safe
from gym_llm_trainers.config import RunConfig, TrainerConfig, from_dict
from gym_llm_trainers.metrics import read_metrics
from gym_llm_trainers.train import compose, run_config
from trainer_support import BASE, cli_env, gym_llm_train

from gym_llm.apps.hydra_app import ConfigError, UnknownKeyError
from gym_llm.apps.runs import CONFIG_FILE, list_checkpoints, recorded_configs, resumed_config_name

EXE = Path(sys.executable).with_name("gym-llm-train")


def _output(proc: subprocess.CompletedProcess) -> str:
    return proc.stdout + proc.stderr


# ------------------------------------------------------------ config values


@pytest.mark.parametrize(("override", "message"), [
    ("trainer.total_steps=abc", "trainer.total_steps: expected an integer, got 'abc'"),
    ("trainer.total_steps=-1", "trainer.total_steps: must be >= 0, got -1"),
    ("trainer.sft.warmup_ratio=2", "trainer.sft.warmup_ratio: must be <= 1, got 2"),
    ("policy.top_p=0", "policy.top_p: must be > 0, got 0"),
    ("trainer.loss_agg=sum", "trainer.loss_agg: expected one of token-mean |"),
    ("mixture.envs.vowels.weight=lots", "mixture.envs.vowels.weight: expected a number, got 'lots'"),
    ("trainer.totl_steps=3", "trainer.totl_steps: unknown config key (did you mean 'trainer.total_steps'?)"),
    ("+trainer.totl_steps=3", "trainer.totl_steps: unknown config key (did you mean 'trainer.total_steps'?)"),
    ("trainr.seed=3", "did you mean 'trainer.seed'?"),
])
def test_a_bad_override_is_named_before_the_model_loads(tmp_path, override, message):
    run = tmp_path / "run"
    t0 = time.monotonic()
    proc = gym_llm_train(override, f"hydra.run.dir={run}", check=False, timeout=120)
    assert proc.returncode == 2, _output(proc)[-3000:]
    assert message in proc.stderr
    assert "Traceback" not in _output(proc)
    assert not (run / CONFIG_FILE).exists()  # it stopped before recording (or loading) anything
    assert time.monotonic() - t0 < 60


@pytest.mark.parametrize(("override", "message"), [
    ("num_task=3", "num_task: unknown config key (did you mean 'num_tasks'?)"),
    ("policy.temprature=0", "policy.temprature: unknown config key (did you mean 'policy.temperature'?)"),
])
def test_gym_llm_eval_names_the_closest_key_too(tmp_path, override, message):
    exe = Path(sys.executable).with_name("gym-llm-eval")
    proc = subprocess.run([str(exe), override, f"hydra.run.dir={tmp_path / 'eval'}"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2 and message in proc.stderr, _output(proc)[-3000:]
    assert "Traceback" not in _output(proc)


def test_types_and_ranges_are_checked_where_the_knobs_are_declared():
    # the same checks from Python: the dataclasses own them, not the command line
    with pytest.raises(ConfigError, match=r"^total_steps: expected an integer, got 2\.5$"):
        TrainerConfig(total_steps=2.5)
    with pytest.raises(ConfigError, match="group_size: GRPO compares completions"):
        TrainerConfig(group_size=1)
    assert TrainerConfig(algorithm="ppo", group_size=1).group_size == 1
    with pytest.raises(ConfigError, match="adam_betas"):
        TrainerConfig(adam_betas=[0.9, 1.5])
    with pytest.raises(ConfigError, match=r"^trainer\.sft\.batch_size: must be >= 1, got 0$"):
        from_dict(RunConfig, {"trainer": {"sft": {"batch_size": 0}}})
    with pytest.raises(ConfigError, match=r"^model\.dtype: expected one of float32 \| bfloat16 \| float16"):
        run_config(compose(["model.dtype=fp8"]))
    with pytest.raises(UnknownKeyError, match="did you mean 'policy.temperature'") as err:
        run_config(compose(["+policy.temprature=0.5"]))
    assert isinstance(err.value, KeyError) and err.value.suggestion == "policy.temperature"
    assert TrainerConfig(lr=1).lr == 1.0 and isinstance(TrainerConfig(lr=1).lr, float)  # an int is a number
    assert TrainerConfig(dual_clip=None).dual_clip is None  # null where the type allows it


def test_the_resume_safe_keys_are_declared_once():
    assert resume_safe("trainer.total_steps") and resume_safe("logging.wandb") and resume_safe("output_dir")
    assert not resume_safe("trainer.lr") and not resume_safe("mixture.envs.a.weight")
    assert not resume_safe("logging_extra")  # a prefix covers keys under it, not keys that start alike
    changes = config_changes({"trainer": {"lr": 1e-3, "seed": 0}, "imports": ["a"]},
                             {"trainer": {"lr": 5e-4, "seed": 0}, "imports": ["a", "b"], "new": {"k": 1}})
    assert changes == {"imports": (["a"], ["a", "b"]), "new.k": (None, 1), "trainer.lr": (1e-3, 5e-4)}


# ----------------------------------------------------------------- resume


@pytest.mark.slow
def test_resume_refuses_another_config_and_keeps_the_config_history(tmp_path):
    run = tmp_path / "run"
    common = ["trainer.save_every=1", f"hydra.run.dir={run}"]
    gym_llm_train("trainer.total_steps=1", *common)
    first = (run / CONFIG_FILE).read_bytes()

    again = gym_llm_train("trainer.total_steps=1", *common)
    assert "is finished: its checkpoint is at step 1, trainer.total_steps=1" in _output(again)
    assert [r["step"] for r in read_metrics(run)] == [1]

    other = gym_llm_train("trainer.total_steps=2", "trainer.lr=5e-4", "mixture.weights.test=0.5", *common,
                          check=False)
    assert other.returncode == 2, _output(other)[-3000:]
    assert "trainer.lr: 0.001 -> 0.0005" in other.stderr and "mixture.weights.test: 1.0 -> 0.5" in other.stderr
    assert "trainer.total_steps" not in other.stderr  # safe to change: not listed
    assert "new run directory" in other.stderr and "trainer.resume=force" in other.stderr
    assert "Traceback" not in _output(other)
    assert (run / CONFIG_FILE).read_bytes() == first and recorded_configs(run) == [run / CONFIG_FILE]

    longer = gym_llm_train("trainer.total_steps=2", *common)  # only a resume-safe key changed
    assert "resuming from step 1" in _output(longer)
    assert [r["step"] for r in read_metrics(run)] == [1, 2]
    assert (run / CONFIG_FILE).read_bytes() == first
    assert yaml.safe_load((run / resumed_config_name(1)).read_text())["trainer"]["total_steps"] == 2

    forced = gym_llm_train("trainer.total_steps=3", "trainer.lr=5e-4", "trainer.resume=force", *common)
    assert "resuming from step 2" in _output(forced)
    assert [r["step"] for r in read_metrics(run)] == [1, 2, 3]
    assert recorded_configs(run) == [run / CONFIG_FILE, run / resumed_config_name(1), run / resumed_config_name(2)]
    assert yaml.safe_load((run / resumed_config_name(2)).read_text())["trainer"]["lr"] == 5e-4
    assert yaml.safe_load(first)["trainer"]["lr"] == 1e-3  # the record of step 1 is intact


# ---------------------------------------------------------------- signals


def _start(run: Path, *overrides: str) -> subprocess.Popen:
    return subprocess.Popen([str(EXE), *BASE, *overrides, f"hydra.run.dir={run}"], env=cli_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for_step(proc: subprocess.Popen, run: Path, step: int, timeout: float = 240) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        if any(r["step"] >= step for r in read_metrics(run)):
            return
        time.sleep(0.05)
    proc.kill()
    pytest.fail(f"the run ended or stalled before step {step}: {proc.communicate()[1][-3000:]}")


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_finishes_the_step_checkpoints_it_and_resume_continues(tmp_path, signum):
    run = tmp_path / "run"
    # no periodic checkpoints: whatever is on disk afterwards, the signal wrote
    overrides = ["trainer.total_steps=500", "trainer.save_every=0"]
    proc = _start(run, *overrides)
    _wait_for_step(proc, run, 1)
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signum, err[-3000:]
    name = signal.Signals(signum).name
    assert f"{name} received: finishing the current step" in err
    assert "Traceback" not in err
    done = max(r["step"] for r in read_metrics(run))
    assert [p.name for p in list_checkpoints(run / "checkpoints")] == [f"step_{done:06d}"]
    assert f"{name}: stopped after step {done}; checkpoint" in err
    assert not (run / "model").exists()  # the final model is for finished runs

    resumed = gym_llm_train(f"trainer.total_steps={done + 2}", "trainer.save_every=0", f"hydra.run.dir={run}")
    assert f"resuming from step {done}" in _output(resumed)
    assert [r["step"] for r in read_metrics(run)] == list(range(1, done + 3))


@pytest.mark.slow
def test_a_second_signal_stops_at_once_without_a_checkpoint(tmp_path):
    run, log = tmp_path / "run", tmp_path / "stderr.txt"
    # long steps (seconds), so the second signal lands in the step the first one asked to finish
    with open(log, "w") as err_file:
        proc = subprocess.Popen([str(EXE), *BASE, "trainer.total_steps=500", "trainer.save_every=0",
                                 "trainer.num_groups=16", "trainer.group_size=8", "policy.max_new_tokens=48",
                                 f"hydra.run.dir={run}"], env=cli_env(), stdout=subprocess.DEVNULL,
                                stderr=err_file, text=True)
        _wait_for_step(proc, run, 1)
        proc.send_signal(signal.SIGINT)
        # signals that arrive before Python runs the handler count once: wait for the first to be seen
        deadline = time.monotonic() + 60
        while "SIGINT received" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
    err = log.read_text()
    assert proc.returncode == 130, err[-3000:]
    assert "second SIGINT: stopped at once, without a checkpoint" in err, err[-3000:]
    assert "Traceback" not in err
    assert list_checkpoints(run / "checkpoints") == []


def test_play_leaves_cleanly_on_ctrl_c():
    exe = Path(sys.executable).with_name("gym-llm")
    # Ctrl-C as a terminal delivers it: a suite started in the background of a script inherits
    # SIGINT ignored, and Python then installs no KeyboardInterrupt handler in the child
    proc = subprocess.Popen([str(exe), "play", "math/Arithmetic-v0", "--seed", "0"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ),
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    # the prompt is on screen and play waits for the assistant turn: the user presses Ctrl-C
    line = ""
    deadline = time.monotonic() + 60
    while "assistant>" not in line and time.monotonic() < deadline:
        line = proc.stdout.readline()
        assert line or proc.poll() is None, proc.stderr.read()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert "interrupted" in out and "Traceback" not in err + out
