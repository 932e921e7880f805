"""An evaluation repeats exactly: the same model, seed and settings give the
same ``samples.jsonl`` and ``results.json``, byte for byte, whatever
``concurrency``, the policy's ``max_batch_size`` or a resume (the Ray backend:
tests/scaleout/test_ray_runs.py). Sampled at temperature 1, so every token
is a draw; the old shared generator, consumed in completion order, failed this."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gym_llm.apps.evaluate import EvalEnv, evaluate
from gym_llm.runtime.policies import HFPolicy, SamplingParams

pytestmark = pytest.mark.slow  # ~20 s: three evals of the tiny model

PARITY_ID = "evaltest/Parity-v0"  # registered by conftest.py
SAMPLING = SamplingParams(temperature=1.0, max_new_tokens=8)
ENVS = [EvalEnv(PARITY_ID, {"difficulty": 0.0}), EvalEnv("math/Arithmetic-v0", {"difficulty": 0.5})]


def _eval(policy: HFPolicy, out: Path, *, num_tasks: int = 4, concurrency: int = 64) -> None:
    evaluate(policy, ENVS, out, num_tasks=num_tasks, k=3, sampling=SAMPLING, seed=7, concurrency=concurrency,
             policy_identity={"backend": "hf", "model": "tiny"}, strict=False)


def _files(out: Path) -> tuple[str, str]:
    return (out / "samples.jsonl").read_text(), (out / "results.json").read_text()


@pytest.fixture(scope="module")
def invariant_policies(tiny_path: str):
    """Two policies of the tiny model: batches of up to 64 rows, and one row at a time."""
    wide = HFPolicy(tiny_path, device="cpu", max_batch_size=64, seed=1, batch_invariant=True)
    narrow = HFPolicy(tiny_path, device="cpu", max_batch_size=1, seed=2, batch_invariant=True)
    yield wide, narrow
    wide.close()
    narrow.close()


def test_same_samples_whatever_concurrency_batching_or_resume(invariant_policies, tmp_path: Path) -> None:
    wide, narrow = invariant_policies
    _eval(wide, tmp_path / "a")
    first = _files(tmp_path / "a")
    rows = [json.loads(line) for line in first[0].splitlines()]
    assert len(rows) == 2 * 4 * 3 and len({r["task_id"] for r in rows}) == 8
    assert len({tuple(r["response_token_ids"]) for r in rows}) > 12  # sampled: the samples differ
    assert all(r["reproducible"] for r in json.loads(first[1]).values())

    _eval(narrow, tmp_path / "b", concurrency=1)  # one episode at a time, one row per batch
    assert _files(tmp_path / "b") == first

    _eval(wide, tmp_path / "c", num_tasks=2, concurrency=5)  # half the tasks, then resumed to all
    _eval(wide, tmp_path / "c", concurrency=5)
    assert _files(tmp_path / "c") == first
