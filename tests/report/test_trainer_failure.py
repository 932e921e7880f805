"""A step whose update fails still leaves its trajectories (and the run its report)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from gym_llm.apps.report import REPORT_FILE
from gym_llm.apps.runs import trajectory_file
from tests.report.conftest import REPORT_ENV, RUN, _even_length
from tests.report.report_support import jsonl
from tests.trainers.trainer_support import make_trainer


def test_a_failing_update_keeps_the_steps_trajectories(report_env, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    trainer = make_trainer(run_dir, *RUN, "trainer.total_steps=1", "trainer.eval_every=0")
    # A bad config that reaches the update: RunConfig refuses it when composed, so it is set on the
    # built trainer's config; the real loss aggregation then raises inside Learner.update.
    trainer.tc.loss_agg = "no-such-aggregation"
    with pytest.raises(ValueError, match="unknown loss aggregation"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer.train()
    rows = jsonl(trajectory_file(run_dir, 1))
    assert len(rows) == 4 * 4  # trainer.num_groups x group_size
    from gym_llm.runtime.rollout import Trajectory

    for row in rows:
        if row["env_id"] == REPORT_ENV:  # hack signals annotated before the update
            assert row["hack_signals"] == (["even_length"] if _even_length(Trajectory.from_dict(row)) else [])
    assert any(r["strict_reward"] is not None for r in rows)  # the strict sample was joined, then written
    assert not (run_dir / "metrics.jsonl").read_text().strip()  # the step itself was never logged
    assert (run_dir / REPORT_FILE).is_file()
