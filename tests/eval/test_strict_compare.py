"""The eval side of the monitors: every sample strict-graded beside its training
reward (samples.jsonl, results.json, report.md, report.html), and two eval
directories compared task by task (``gym-llm compare``)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

import gym_llm
from gym_llm import RewardResult
from gym_llm.apps.evaluate import EvalEnv, compare, evaluate, format_comparison, write_report
from gym_llm.apps.report import write_report as write_html_report
from gym_llm.envs.grading import assistant_messages
from gym_llm.envs.parsing import message_text
from gym_llm.runtime.policies import SamplingParams

STRICT_ID = "evaltest/StrictParity-v0"
PARITY_ID = "evaltest/Parity-v0"  # conftest.py registers it
SAMPLING = SamplingParams(temperature=1.0, max_new_tokens=6)


def strict_parity(text: str) -> float:
    """The strict grader: an even length that is also a multiple of 4."""
    text = text.strip()
    return float(len(text) > 0 and len(text) % 4 == 0)


@pytest.fixture(scope="module")
def strict_env():
    """The parity env of conftest.py with a stricter grader of its own."""
    import gymnasium

    def make(**kwargs):
        env = gym_llm.make(PARITY_ID, **kwargs).unwrapped

        async def astrict_score(messages, reward):
            last = assistant_messages(messages)[-1]
            return RewardResult(strict_parity(message_text(last)), info={"reason": "multiple of 4"})

        env.astrict_score = astrict_score
        return env

    gym_llm.register(STRICT_ID, make)
    yield STRICT_ID
    gym_llm.registry.specs.pop(STRICT_ID, None)
    gymnasium.registry.pop(STRICT_ID, None)


def test_every_sample_is_strict_graded_beside_its_reward(hf_policy, strict_env, tmp_path: Path) -> None:
    outcome = evaluate(hf_policy, [EvalEnv(strict_env)], tmp_path, num_tasks=4, k=3, sampling=SAMPLING,
                       policy_identity={"backend": "hf", "model": "tiny"})
    rows = [json.loads(line) for line in (tmp_path / "samples.jsonl").read_text().splitlines()]
    assert len(rows) == 12
    for row in rows:
        answer = [m for m in row["messages"] if m["role"] == "assistant"][-1]["content"]
        assert row["strict_reward"] == strict_parity(answer), row
        assert row["info"]["strict_reason"] == "multiple of 4"
    r = outcome.results[strict_env]
    strict = [row["strict_reward"] for row in rows]
    assert r["strict_graded"] == 12
    assert r["strict_mean"] == pytest.approx(sum(strict) / 12)
    assert r["gap"] == pytest.approx(sum(row["reward"] for row in rows) / 12 - sum(strict) / 12)
    assert r["gap"] >= 0  # a multiple of 4 is even: the strict grader never pays more
    assert json.loads((tmp_path / "results.json").read_text())[strict_env]["strict_mean"] == pytest.approx(
        r["strict_mean"])

    md = write_report(tmp_path, outcome.results, {"model": "tiny"}).read_text()
    assert "| strict mean | gap |" in md and f"{r['strict_mean']:.3f}" in md
    assert "[samples.jsonl](samples.jsonl)" in md and "[report.html](report.html)" in md
    page = write_html_report(tmp_path).read_text()
    assert "<th>strict mean</th>" in page and "href='samples.jsonl'" in page


def test_strict_false_skips_the_strict_grader(hf_policy, strict_env, tmp_path: Path) -> None:
    outcome = evaluate(hf_policy, [EvalEnv(strict_env)], tmp_path, num_tasks=2, k=2, sampling=SAMPLING,
                       policy_identity={"backend": "hf", "model": "tiny"}, strict=False)
    rows = [json.loads(line) for line in (tmp_path / "samples.jsonl").read_text().splitlines()]
    assert len(rows) == 4 and all(row["strict_reward"] is None for row in rows)
    r = outcome.results[strict_env]
    assert r["strict_graded"] == 0 and math.isnan(r["strict_mean"]) and math.isnan(r["gap"])


def test_older_results_without_strict_fields_still_report(tmp_path: Path) -> None:
    """results.json / samples.jsonl of a gym-llm-eval before the strict grader."""
    row = {"env_id": "math/Arithmetic-v0", "eval_key": "math/Arithmetic-v0", "task_id": "t0", "group_id": "g",
           "messages": [{"role": "user", "content": "1+1?"}, {"role": "assistant", "content": "2"}],
           "reward": 1.0, "correct": True, "turn_rewards": [1.0]}
    (tmp_path / "samples.jsonl").write_text(json.dumps(row) + "\n")
    (tmp_path / "results.json").write_text(json.dumps({"math/Arithmetic-v0": {"n": 1, "mean_reward": 1.0}}))
    page = write_html_report(tmp_path).read_text()
    assert "no strict_mean (written by an older gym-llm-eval)" in page
    assert "predate the hack_signals / strict_reward fields" in page


def _samples(path: Path, tasks: dict[str, list[bool]], key: str = "math/Arithmetic-v0") -> Path:
    path.mkdir(parents=True)
    rows = [{"env_id": key, "eval_key": key, "task_id": t, "group_id": f"{key}|{t}", "sample_index": i,
             "reward": float(c), "strict_reward": float(c) / 2, "correct": c, "messages": []}
            for t, flags in tasks.items() for i, c in enumerate(flags)]
    (path / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_compare_names_the_flipped_tasks(tmp_path: Path) -> None:
    a = _samples(tmp_path / "a", {"t1": [True, True], "t2": [False, False], "t3": [True, False],
                                  "t4": [True, True], "only-a": [True, True]})
    b = _samples(tmp_path / "b", {"t1": [False, False], "t2": [True, True], "t3": [False, True],
                                  "t4": [True, False], "only-b": [False, False]})
    with (b / "samples.jsonl").open("a") as f:
        f.write('{"env_id": "math/Arith')  # B is still being written
    result = compare(a, b)
    e = result["envs"]["math/Arithmetic-v0"]
    # half the samples correct passes: t3 and t4 pass on both sides
    assert e["pass_to_fail"] == ["t1"] and e["fail_to_pass"] == ["t2"]
    assert (e["tasks"], e["only_a"], e["only_b"]) == (4, 1, 1)
    assert e["pass_a"] == e["pass_b"] == 0.75
    assert e["mean_reward_a"] == pytest.approx(5 / 8) and e["strict_mean_b"] == pytest.approx(4 / 16)
    assert any("last line is incomplete" in n for n in result["notes"])
    text = format_comparison(result)
    assert "math/Arithmetic-v0 pass -> fail: t1" in text and "fail -> pass: t2" in text


def test_compare_is_one_command(hf_policy, strict_env, tmp_path: Path) -> None:
    """Two real eval directories, the same tasks: ``gym-llm compare A B --json``."""
    for name in ("a", "b"):
        evaluate(hf_policy, [EvalEnv(strict_env)], tmp_path / name, num_tasks=3, k=2, sampling=SAMPLING,
                 policy_identity={"backend": "hf", "model": "tiny"})
    proc = subprocess.run([sys.executable, "-m", "gym_llm.apps.cli", "compare", str(tmp_path / "a"), str(tmp_path / "b"),
                           "--json"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out == json.loads(json.dumps(compare(tmp_path / "a", tmp_path / "b")))
    e = out["envs"][strict_env]
    assert e["tasks"] == 3 and e["only_a"] == e["only_b"] == 0
    flipped = set(e["pass_to_fail"]) | set(e["fail_to_pass"])
    assert math.isclose(e["pass_b"] - e["pass_a"], (len(e["fail_to_pass"]) - len(e["pass_to_fail"])) / 3)
    assert flipped <= {json.loads(line)["task_id"] for line in (tmp_path / "a" / "samples.jsonl").open()}

    text = subprocess.run([sys.executable, "-m", "gym_llm.apps.cli", "compare", str(tmp_path / "a"),
                           str(tmp_path / "b")], capture_output=True, text=True, timeout=120)
    assert text.returncode == 0 and strict_env in text.stdout
    missing = subprocess.run([sys.executable, "-m", "gym_llm.apps.cli", "compare", str(tmp_path / "a"),
                              str(tmp_path / "nowhere")], capture_output=True, text=True, timeout=120)
    assert missing.returncode == 2 and "has no samples.jsonl" in missing.stderr + missing.stdout
