"""Each env's results carry a standard error and a 95% interval clustered by
task, and ``gym-llm compare`` says which differences exceed their noise,
paired over the tasks both evaluations ran."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gym_llm.apps.evaluate import aggregate, compare, format_comparison


def _rows(passes: list[list[bool]], key: str = "e/X-v0") -> list[dict]:
    """Sample rows of one env: task ``t``'s samples pass as ``passes[t]`` says."""
    return [{"eval_key": key, "env_id": key, "group_id": f"g{t}", "task_id": f"task-{t}", "sample_index": s,
             "difficulty": 0.0, "reward": float(ok), "correct": ok, "num_turns": 1}
            for t, samples in enumerate(passes) for s, ok in enumerate(samples)]


def test_intervals_are_clustered_by_task() -> None:
    # 20 tasks whose 4 samples always agree: the information of 20 samples, not 80
    agree = aggregate(_rows([[t % 2 == 0] * 4 for t in range(20)]), 4)["e/X-v0"]
    # 20 tasks whose 4 samples are half right: the pass rate is known far better
    mixed = aggregate(_rows([[True, False, True, False] for _ in range(20)]), 4)["e/X-v0"]
    for r in (agree, mixed):
        assert r["pass@1"] == 0.5
        lo, hi = r["pass@1_ci95"]
        assert lo < 0.5 < hi
        rlo, rhi = r["reward_ci95"]
        assert rlo == pytest.approx(0.5 - 1.959964 * r["reward_stderr"], abs=1e-6)
    assert agree["pass@1_stderr"] == pytest.approx(0.5 / 19**0.5 * (20 / 20) ** 0.5, rel=0.05)
    assert agree["pass@1_ci95"][1] - agree["pass@1_ci95"][0] > 0.35  # ~ +-0.2 with 20 independent units
    assert mixed["pass@1_stderr"] == 0.0 and mixed["pass@1_ci95"][1] - mixed["pass@1_ci95"][0] < 0.25
    # every task passed: the interval does not collapse to the point 1.0
    perfect = aggregate(_rows([[True] * 4 for _ in range(8)]), 4)["e/X-v0"]
    assert perfect["pass@1_ci95"][0] < 0.75 and perfect["pass@1_ci95"][1] == 1.0


def _eval_dir(path: Path, passes: list[list[bool]]) -> Path:
    path.mkdir()
    (path / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in _rows(passes)))
    return path


def test_compare_marks_only_differences_beyond_their_noise(tmp_path: Path) -> None:
    base = [[t % 3 == 0] * 2 for t in range(30)]
    a = _eval_dir(tmp_path / "a", base)
    better = _eval_dir(tmp_path / "better", [[True] * 2 if t < 15 else s for t, s in enumerate(base)])
    noisy = _eval_dir(tmp_path / "noisy", [[not s[0]] * 2 if t in (1, 2) else s for t, s in enumerate(base)])
    up = compare(a, better)["envs"]["e/X-v0"]["pass_delta"]
    assert up["tasks"] == 30 and up["mean"] == pytest.approx(10 / 30) and up["significant"]
    assert up["ci95"][0] > 0 and up["p_value"] < 0.01
    flat = compare(a, noisy)["envs"]["e/X-v0"]["pass_delta"]
    assert flat["mean"] == pytest.approx(2 / 30) and not flat["significant"] and flat["p_value"] > 0.2
    table = format_comparison(compare(a, better))
    assert "+0.333±" in table and "*" in table and "sign-flip" in table
    # too few paired tasks can never be called a difference, however large
    few = compare(_eval_dir(tmp_path / "few-a", [[False]] * 5), _eval_dir(tmp_path / "few-b", [[True]] * 5))
    assert few["envs"]["e/X-v0"]["pass_delta"]["mean"] == 1.0 and not few["envs"]["e/X-v0"]["pass_delta"]["significant"]
