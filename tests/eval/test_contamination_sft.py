"""The contamination guard also sees the SFT warm start's examples, which no
trajectory file records (issue 21, item 3): a run whose one dataset file
served both splits warm-started on the very tasks a held-out eval scores."""

from __future__ import annotations

from pathlib import Path

import gym_llm_math

from gym_llm import make
from gym_llm.apps.evaluate import EvalEnv, contamination_warnings

ONE_FILE = Path(gym_llm_math.__file__).resolve().parent / "data" / "sample_train.jsonl"


def _run(tmp_path: Path, sft_enabled: bool) -> Path:
    run = tmp_path / f"run-{sft_enabled}"
    run.mkdir()
    (run / "config.yaml").write_text(
        "trainer:\n  sft: {enabled: " + str(sft_enabled).lower() + ", examples_per_env: 64}\n"
        f"mixture:\n  envs:\n    mine: {{id: math/Dataset-v0, weight: 1.0, sft_examples: 3, "
        f"kwargs: {{path: '{ONE_FILE}'}}}}\n")
    return run


def test_warm_start_examples_count_as_trained_on(tmp_path: Path) -> None:
    env = EvalEnv("math/Dataset-v0", {"path": str(ONE_FILE)})
    heldout = make("math/Dataset-v0", split="heldout", path=str(ONE_FILE)).unwrapped
    ids = [heldout.task_set.get("heldout", i).id for i in range(5)]
    warned = contamination_warnings(_run(tmp_path, True), [(env, ids)], "heldout")
    assert len(warned) == 1 and "3 evaluated task(s) were SFT warm-start examples" in warned[0]
    assert contamination_warnings(_run(tmp_path, False), [(env, ids)], "heldout") == []
