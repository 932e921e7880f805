"""evaluate() with the real tiny model: schema, figures recomputed from the
samples, resume, and the contamination guard."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path

import pytest

from gym_llm.apps.evaluate import ContaminationError, EvalEnv, evaluate
from gym_llm.runtime.policies import SamplingParams

PARITY_ID = "evaltest/Parity-v0"  # registered by conftest.py for these tests
SAMPLING = SamplingParams(temperature=1.0, max_new_tokens=6)
IDENTITY = {"backend": "hf", "model": "tiny"}
TRAJECTORY_FIELDS = {  # DESIGN.md's trajectory fields
    "env_id", "task_id", "group_id", "messages", "prompt_token_ids", "response_token_ids",
    "loss_mask", "logprobs", "turn_rewards", "reward", "reward_components", "num_turns",
    "terminated", "truncated",
}


def _run(policy, out: Path, **kw):
    args = dict(num_tasks=3, k=4, sampling=SAMPLING, policy_identity=IDENTITY, seed=0,
                envs=[EvalEnv(PARITY_ID, {"difficulty": 0.0}), EvalEnv(PARITY_ID, {"difficulty": 0.5})])
    args.update(kw)
    return evaluate(policy, args.pop("envs"), out, **args)


def _rows(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]


def test_results_and_samples_schema_and_figures(hf_policy, tmp_path: Path) -> None:
    outcome = _run(hf_policy, tmp_path)
    results = json.loads((tmp_path / "results.json").read_text())
    assert results == json.loads(json.dumps(outcome.results))
    assert list(results) == [PARITY_ID]
    r = results[PARITY_ID]
    for key, kind in [("n", int), ("k", int), ("mean_reward", float), ("pass@1", float),
                      ("pass@k", float), ("num_samples", int), ("reward_components", dict),
                      ("by_difficulty", dict), ("pass_at", dict), ("reward_errors", int)]:
        assert isinstance(r[key], kind), key
    assert (r["n"], r["k"], r["num_samples"]) == (6, 4, 24)
    assert set(r["by_difficulty"]) == {"0", "0.5"}
    assert set(r["reward_components"]) == {"even", "nonempty"}

    rows = _rows(tmp_path)
    assert len(rows) == 24
    for row in rows:
        assert set(row) >= TRAJECTORY_FIELDS
        assert row["eval_key"] == PARITY_ID and row["split"] == "heldout"
        assert len(row["loss_mask"]) == len(row["response_token_ids"])
        assert len(row["logprobs"]) == sum(row["loss_mask"]) > 0
        assert row["correct"] == (row["reward"] >= 1.0)
    # the same task_index gives the same task for every sample of a group
    groups = defaultdict(list)
    for row in rows:
        groups[row["group_id"]].append(row)
    assert len(groups) == 6 and all(len(g) == 4 for g in groups.values())
    assert all(len({x["task_id"] for x in g}) == 1 for g in groups.values())
    assert sorted(x["sample_index"] for x in next(iter(groups.values()))) == [0, 1, 2, 3]

    # figures recomputed independently from the samples, with exact binomials
    def pass_k(n, c, k):
        return 1 - math.comb(n - c, k) / math.comb(n, k)

    per_task = [(len(g), sum(x["correct"] for x in g)) for g in groups.values()]
    assert 0 < sum(c for _, c in per_task) < 24, "the test env should give a mix of outcomes"
    assert r["mean_reward"] == pytest.approx(sum(x["reward"] for x in rows) / 24)
    assert r["pass@1"] == pytest.approx(sum(c / n for n, c in per_task) / 6)
    assert r["pass@k"] == pytest.approx(sum(pass_k(n, c, 4) for n, c in per_task) / 6)
    assert r["pass_at"]["2"] == pytest.approx(sum(pass_k(n, c, 2) for n, c in per_task) / 6)
    assert r["reward_components"]["even"] == pytest.approx(
        sum(x["reward_components"]["even"] for x in rows) / 24)
    half = [g for g in groups.values() if g[0]["difficulty"] == 0.5]
    assert r["by_difficulty"]["0.5"]["pass@1"] == pytest.approx(
        sum(sum(x["correct"] for x in g) / 4 for g in half) / len(half))

    config = json.loads((tmp_path / "eval_config.json").read_text())
    assert config["k"] == 4 and config["policy"] == IDENTITY and config["split"] == "heldout"


def test_resume_skips_finished_tasks(hf_policy, tmp_path: Path) -> None:
    first = _run(hf_policy, tmp_path, num_tasks=2)
    assert first.skipped_tasks == 0
    before = (tmp_path / "samples.jsonl").read_text().splitlines()
    assert len(before) == 2 * 2 * 4

    # a rerun with more tasks evaluates only the new ones; old lines are kept as they were
    # (the file is put back in plan order: tests/eval/test_reproducible.py)
    second = _run(hf_policy, tmp_path, num_tasks=3)
    assert second.skipped_tasks == 4
    after = (tmp_path / "samples.jsonl").read_text().splitlines()
    assert set(before) <= set(after) and len(after) == 3 * 2 * 4
    assert second.results[PARITY_ID]["n"] == 6
    generated = second.stats.episodes
    assert generated == 2 * 4  # one new task per difficulty, k samples each

    # an identical rerun does nothing, and fewer tasks report only those
    third = _run(hf_policy, tmp_path, num_tasks=2)
    assert third.skipped_tasks == 4 and third.stats.episodes == 0
    assert third.results[PARITY_ID]["n"] == 4

    # a run killed in the middle of writing a task: that task runs again
    (tmp_path / "samples.jsonl").write_text("\n".join(after[:-2]) + "\n" + after[-2][:50])
    fourth = _run(hf_policy, tmp_path, num_tasks=3)
    assert fourth.skipped_tasks == 5 and fourth.stats.episodes == 4
    assert len(_rows(tmp_path)) == 24


def test_resume_refuses_other_settings(hf_policy, tmp_path: Path) -> None:
    _run(hf_policy, tmp_path, num_tasks=1)
    with pytest.raises(ValueError, match=r"other settings \(k: 4 before, 2 now\)"):
        _run(hf_policy, tmp_path, num_tasks=1, k=2)
    with pytest.raises(ValueError, match=r"other settings \(policy: .*'tiny'.* before, .*'other'.* now\)"):
        _run(hf_policy, tmp_path, num_tasks=1, policy_identity={"backend": "hf", "model": "other"})
    fresh = _run(hf_policy, tmp_path, num_tasks=1, k=2, resume=False)
    assert fresh.skipped_tasks == 0 and len(_rows(tmp_path)) == 2 * 2


def test_train_split_needs_the_flag(hf_policy, tmp_path: Path) -> None:
    with pytest.raises(ContaminationError, match="allow_train_split"):
        _run(hf_policy, tmp_path, split="train")
    assert not (tmp_path / "samples.jsonl").exists()
    outcome = _run(hf_policy, tmp_path, split="train", allow_train_split=True, num_tasks=1, k=1)
    assert {row["split"] for row in _rows(tmp_path)} == {"train"}
    assert outcome.results[PARITY_ID]["split"] == "train"
