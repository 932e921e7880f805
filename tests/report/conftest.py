"""Fixtures of the report tests: a real short training run (the tiny model, the
trainer tests' toy envs plus a multi-turn one with a hack signal of its own)."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import pytest

import gym_llm
from gym_llm import HackSignal
from gym_llm.envs.grading import assistant_messages
from gym_llm.envs.parsing import message_text
from tests.trainers.trainer_support import make_trainer

REPORT_ENV = "test/ReportVowels-v0"  # test/Vowels-v0 with a second try: environment turns between policy turns


def _even_length(t) -> bool:
    turns = assistant_messages(t.messages)
    return bool(turns) and len(message_text(turns[-1])) % 2 == 0


#: Fires on about half of a random model's answers, so filtering by it changes the rows.
EVEN_LENGTH = HackSignal("even_length", "the last answer has an even length", _even_length, threshold=1.0)

#: The run: two RL steps, a held-out eval at steps 0, 1 and 2, trajectories saved, a strict sample graded.
RUN = ["+mixture.envs.retry.id=test/ReportVowels-v0", "+mixture.envs.flaky.id=test/Flaky-v0",
       "trainer.total_steps=2", "trainer.eval_every=1", "trainer.eval_tasks=3", "trainer.eval_samples=2",
       "logging.save_trajectories=true", "trainer.monitoring.min_trajectories=1",
       "trainer.monitoring.strict_fraction=0.5"]


@pytest.fixture(scope="session")
def report_env():
    """The multi-turn env, registered for these tests only, with its signal."""
    import gymnasium
    from trainer_test_envs import (
        VowelsEnv,  # importable: trainer_support put its folder on sys.path
    )

    class ReportVowelsEnv(VowelsEnv):
        hack_signals = (EVEN_LENGTH,)

    gym_llm.register(REPORT_ENV, ReportVowelsEnv, max_turns=2)
    yield REPORT_ENV
    gym_llm.registry.specs.pop(REPORT_ENV, None)
    gymnasium.registry.pop(REPORT_ENV, None)


@pytest.fixture(scope="session")
def trained_run(report_env, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished real training run's directory (report.html written by the trainer)."""
    run_dir = tmp_path_factory.mktemp("report") / "run"
    trainer = make_trainer(run_dir, *RUN)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer.train()
    return run_dir


@pytest.fixture
def run_copy(trained_run: Path, tmp_path: Path) -> Path:
    """A copy of the trained run to damage."""
    out = tmp_path / "run"
    shutil.copytree(trained_run, out, ignore=shutil.ignore_patterns("model", "checkpoints", "tensorboard"))
    return out
