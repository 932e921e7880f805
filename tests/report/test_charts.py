"""Charts that do not mislead (issue 38, item 8): the y axis and its labels
(KL near 1e-9, a reward flat at 0), one series for ``kl`` and ``kl/update``
when they are the same, and the held-out first-vs-last table opening on the
tasks that moved. Read from real run directories written as the trainer
writes them (``metrics.jsonl``, ``trajectories/heldout_step_<N>.jsonl``)."""

from __future__ import annotations

import json
from pathlib import Path

from gym_llm.apps.report import write_report
from gym_llm.apps.report.data import axis, load_run
from gym_llm.apps.runs import METRICS_FILE, trajectory_file
from tests.report.report_support import page_data


def _write(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _chart(data, title: str) -> dict:
    return next(c for c in data["charts"] if c["title"] == title)


def test_axes_say_what_the_values_are(tmp_path: Path) -> None:
    kl = [1.2e-9, 2.9e-9, 0.8e-9, 2.1e-9]
    _write(tmp_path / METRICS_FILE, [
        {"step": s, "reward/mean": 0.0, "reward/math/mean": 0.0, "kl": k, "kl/update": k, "entropy": 2.0}
        for s, k in enumerate(kl, start=1)])
    data = page_data(write_report(tmp_path))  # what the page draws from

    chart = _chart(data, "KL")
    assert [s["name"] for s in chart["series"]] == ["kl (= kl/update)"]  # identical series: shown once
    labels = [label for _, label in chart["axis"]["ticks"]]
    assert len(set(labels)) == len(labels) and labels[0] == "0"  # not five "0.000000"
    assert chart["axis"]["min"] == 0 and max(kl) <= chart["axis"]["max"] < 2 * max(kl)
    assert all(label == "0" or label.endswith("e-9") for label in labels), labels

    for title in ("Reward (all environments)", "Reward: math"):  # flat at 0: no negative reward on the axis
        flat = _chart(data, title)["axis"]
        assert flat["min"] == 0 and flat["max"] == 1 and flat["ticks"][0] == [0, "0"]
    assert data["axes"]["reward/mean"]["min"] == 0  # the "any metric" chart draws the same axes
    assert data["axes"]["entropy"]["min"] == 0 and data["axes"]["entropy"]["max"] >= 2.0


def test_axis_rules() -> None:
    assert [t[1] for t in axis([0.24, 0.55])["ticks"]] == ["0", "0.2", "0.4", "0.6"]
    assert [t[1] for t in axis([-0.1, 0.3])["ticks"]] == ["-0.1", "0", "0.1", "0.2", "0.3"]  # a real crossing
    assert [t[1] for t in axis([100, 120])["ticks"]] == ["100", "105", "110", "115", "120"]  # far from 0: zoomed
    assert [t[1] for t in axis([123456, 234567])["ticks"]] == ["1.0e5", "1.5e5", "2.0e5", "2.5e5"]
    assert [t[1] for t in axis([8.2917, 8.2918])["ticks"]][:2] == ["8.291700", "8.291725"]  # fixed while it reads
    assert axis([-3e-5, -1e-5])["max"] == 0  # never negative data above 0 either


def test_first_vs_last_opens_on_the_tasks_that_moved(tmp_path: Path) -> None:
    def episodes(rewards: dict[str, float]) -> list[dict]:
        return [{"env_id": env, "group_id": f"{env}-g", "sample_index": 0, "task_id": f"{env}-t", "reward": r,
                 "messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]}
                for env, r in rewards.items()]

    _write(tmp_path / METRICS_FILE, [{"step": 0, "heldout/reward/mean": 0.25}, {"step": 8, "heldout/reward/mean": 0.5}])
    # envs sorted by name would open on "a/Still" (0 -> 0) and "b/Same" (1 -> 1)
    _write(trajectory_file(tmp_path, 0, heldout=True), episodes({"a/Still": 0.0, "b/Same": 1.0, "c/Learnt": 0.0,
                                                                 "d/Forgot": 1.0, "e/Partly": 0.25}))
    _write(trajectory_file(tmp_path, 8, heldout=True), episodes({"a/Still": 0.0, "b/Same": 1.0, "c/Learnt": 1.0,
                                                                 "d/Forgot": 0.0, "e/Partly": 0.75}))
    pairs = load_run(tmp_path).first_last
    assert [p["env"] for p in pairs] == ["c/Learnt", "d/Forgot", "e/Partly", "a/Still", "b/Same"]
