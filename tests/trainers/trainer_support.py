"""Shared helpers: the toy environments, and trainers built from Hydra overrides."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import trainer_test_envs  # noqa: E402,F401  (registers test/* ids)

#: Overrides every trainer test starts from: the toy envs, no warm start, small batches.
BASE = [
    "imports=[trainer_test_envs]",
    f"hydra.searchpath=[file://{HERE / 'conf'}]",
    "mixture=vowels",
    "logging=quiet",
    "trainer.sft.enabled=false",
    "trainer.num_groups=4",
    "trainer.group_size=4",
    "trainer.eval_every=0",
    "trainer.save_every=0",
    "policy.max_new_tokens=12",
    # the toy envs score whatever was written, and an untrained model's turns always run to the cap
    "trainer.truncated_turns=keep",
    "trainer.lr=1e-3",
]


def make_trainer(run_dir: Path, *overrides: str):
    """A :class:`Trainer` in ``run_dir`` with ``BASE`` + ``overrides``."""
    from gym_llm_trainers.train import compose, run_config
    from gym_llm_trainers.trainer import Trainer

    cfg = compose([*BASE, f"output_dir={run_dir}", *overrides])
    return Trainer(run_config(cfg), run_dir)


def cli_env() -> dict[str, str]:
    """Environment of ``gym-llm-train`` subprocesses: the toy envs importable,
    two threads (what CI has), no progress bar noise."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")])
    env.setdefault("OMP_NUM_THREADS", "2")
    return env


def gym_llm_train(*args: str, timeout: float = 300, check: bool = True) -> subprocess.CompletedProcess:
    """Run the installed ``gym-llm-train`` console script."""
    exe = Path(sys.executable).with_name("gym-llm-train")
    flags = [a for a in args if a.startswith("-")]  # argparse wants -m before the overrides
    overrides = [a for a in args if not a.startswith("-")]
    proc = subprocess.run([str(exe), *flags, *BASE, *overrides], env=cli_env(), capture_output=True,
                          text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"gym-llm-train failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}")
    return proc


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return tmp_path / "run"
