"""The trainer's schedule (``schedule=static|adaptive``), rotating held-out evals
and the forgetting alarm, on the toy envs of trainer_test_envs."""

from __future__ import annotations

import logging

import pytest
from gym_llm_trainers.collection import RolloutCollector, run_entries
from gym_llm_trainers.config import CurriculumConfig
from gym_llm_trainers.curriculum import Curriculum
from gym_llm_trainers.distributed import DistContext
from gym_llm_trainers.metrics import read_metrics
from gym_llm_trainers.stopping import StopOnSignal
from gym_llm_trainers.train import compose, run_config
from gym_llm_trainers.trainer import Trainer
from trainer_support import BASE, make_trainer

from gym_llm.apps.report import load_run
from gym_llm.runtime.heldout import ForgettingAlert


def test_static_default_plans_the_episodes_the_mixture_always_planned():
    cfg = run_config(compose([*BASE, "mixture=vowels_multi", "mixture.envs.echo.weight=3.0"]))
    assert cfg.schedule.kind == "static"
    entries = run_entries(cfg)
    mixture = cfg.mixture.mixture()
    collector = RolloutCollector(cfg, entries, mixture, Curriculum(cfg.trainer.curriculum, {n: 0.0 for n in entries}),
                                 DistContext())
    for step, rnd, n in ((1, 0, 4), (2, 1, 7), (9, 0, 32)):
        # the plan before schedules existed: the mixture's own, keyed (seed, "plan", step, round, rank)
        before = mixture.plan_groups(n, cfg.trainer.group_size, seed=cfg.trainer.seed, keys=("plan", step, rnd, 0),
                                     group_prefix=f"s{step}-r{rnd}-k0-g", split="train",
                                     kwargs={k: collector.env_kwargs(k, "train") for k in entries})
        planned = [s for specs in collector.plan(step, rnd, n).values() for s in specs]
        assert sorted(planned, key=_order) == sorted(before, key=_order)


def _order(spec):
    return spec.group_id, spec.sample_index


def test_curriculum_tells_the_schedule_what_it_moves_and_what_is_unsolved_at_its_hardest():
    cur = Curriculum(CurriculumConfig(enabled=True, window=4, max_difficulty=0.5), {"a": 0.0, "b": 0.5})
    assert cur.steering("a") and cur.steering("b")  # no full window yet
    cur.update("a", [0.0] * 4)  # too hard at the easiest: held at the bottom
    cur.update("b", [0.0] * 3)
    assert not cur.steering("a") and cur.steering("b")
    assert cur.unsolved_at_hardest("b", 0.05) and not cur.unsolved_at_hardest("a", 0.05)
    restored = Curriculum(cur.cfg, {"a": 0.0, "b": 0.5})
    restored.load_state_dict(cur.state_dict())
    assert not restored.steering("a")
    cur.update("b", [1.0] * 1)  # the window fills at 0.25 success: the curriculum lowers b
    assert cur.difficulty("b") == pytest.approx(0.45) and not cur.unsolved_at_hardest("b", 0.05)
    cur.update("a", [1.0] * 4)  # easy now: a moves up again
    assert cur.steering("a") and cur.difficulty("a") == pytest.approx(0.05)


def test_alarms_log_warn_or_stop_the_run(caplog):
    alert = ForgettingAlert("heldout/test/Vowels-v0/reward/mean", 0.6, 0.4, 2, 0.1)
    stop = StopOnSignal()
    with caplog.at_level(logging.INFO, logger="gym_llm_trainers"):
        Trainer._alarm("forgetting alarm", "off", [alert], stop)
        Trainer._alarm("forgetting alarm", "log", [alert], stop)
        Trainer._alarm("forgetting alarm", "warn", [alert], stop)
    assert [r.levelno for r in caplog.records] == [logging.INFO, logging.WARNING]
    assert "forgetting alarm: heldout/test/Vowels-v0/reward/mean fell from its best 0.600" in caplog.text
    assert not stop.requested
    Trainer._alarm("forgetting alarm", "stop", [alert], stop)
    assert stop.requested and stop.reason.startswith("the forgetting alarm: heldout/test/Vowels-v0")


@pytest.mark.slow
def test_adaptive_schedule_logs_its_weights_rotates_evals_and_resumes_exactly(tmp_path):
    common = ["mixture=vowels_multi", "schedule=adaptive", "schedule.temperature=0.05", "trainer.save_every=2",
              "trainer.eval_every=1", "trainer.eval_tasks=2", "trainer.eval_samples=1", "trainer.eval_budget=4",
              "policy.max_batch_size=1"]  # one row per decoding step: sampling replays exactly on resume
    whole = tmp_path / "whole"
    make_trainer(whole, *common, "trainer.total_steps=3").train()
    reference = {r["step"]: r for r in read_metrics(whole)}
    resumed = tmp_path / "resumed"
    make_trainer(resumed, *common, "trainer.total_steps=2").train()
    make_trainer(resumed, *common, "trainer.total_steps=3").train()
    rows = {r["step"]: r for r in read_metrics(resumed)}
    keys = ["test/Vowels-v0", "test/VowelsRetry-v0", "test/Flaky-v0", "test/Echo-v0"]

    for step in range(1, 4):
        weights = [reference[step][f"schedule/{k}/weight"] for k in keys]
        assert sum(weights) == pytest.approx(1.0)
        assert sum(reference[step][f"schedule/{k}/groups"] for k in keys) >= 4
    # echo (an untrained model never repeats the word) has no signal: it drops towards its floor
    assert reference[3]["schedule/test/Echo-v0/weight"] < min(reference[3][f"schedule/{k}/weight"] for k in keys[:3])
    # step 3 plans from the state checkpointed at step 2, and its score is what it observed, replayed
    for k in keys:
        for what in ("weight", "score", "groups"):
            assert rows[3][f"schedule/{k}/{what}"] == pytest.approx(reference[3][f"schedule/{k}/{what}"], rel=1e-9,
                                                                    abs=1e-12), (k, what)
    # rotating evals: step 0 and the last cover every env, steps 1-2 one chunk of 4 episodes (2 envs) each
    assert all(f"heldout/{k}/reward/mean" in reference[s] for k in keys for s in (0, 3))
    assert [reference[s]["heldout/envs"] for s in range(4)] == [4, 2, 2, 4]
    assert reference[1]["heldout/rotation"] == 2 and "heldout_domain/test/reward/mean" in reference[2]
    assert rows[3]["heldout/reward/macro_mean"] == pytest.approx(reference[3]["heldout/reward/macro_mean"])
    # report.html draws the schedule: weights per env and per domain, held-out per domain, forgetting
    charts = {c["title"]: c for c in load_run(whole).charts if c["group"] == "schedule"}
    assert len(charts["Sampling weight per environment"]["series"]) == 4
    assert {s["name"] for s in charts["Sampling weight per domain"]["series"]} == {"test"}
    assert {"Held-out reward per domain", "Forgetting alarm alerts"} <= charts.keys()
    assert "charts-schedule" in (whole / "report.html").read_text()
