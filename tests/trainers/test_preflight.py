"""Checks before compute (issue 21, item 3) and training on your own dataset
files (item 7), through the ``gym-llm-train`` console script."""

from __future__ import annotations

import shutil
from pathlib import Path

import gym_llm_math
import pytest
from gym_llm_trainers.metrics import read_metrics
from trainer_support import gym_llm_train

from gym_llm.envs.jsonio import parse_jsonl

DATA = Path(gym_llm_math.__file__).resolve().parent / "data"


def _entry(train: Path, heldout: Path) -> str:
    """The override docs/training.md gives for one's own math/Dataset-v0 files."""
    return ("+mixture.envs.mine={id: math/Dataset-v0, weight: 1.0, "
            f"kwargs: {{path: {{train: '{train}', heldout: '{heldout}'}}}}}}")


def test_missing_heldout_file_fails_before_the_warm_start(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "heldout.jsonl"
    proc = gym_llm_train(_entry(DATA / "sample_train.jsonl", missing), "trainer.sft.enabled=true",
                         "trainer.total_steps=1", f"output_dir={tmp_path / 'run'}",
                         "model.path=./no-such-model", check=False)
    assert proc.returncode == 2, proc.stderr[-3000:]
    err = proc.stderr
    assert "'mine' (math/Dataset-v0), heldout split" in err and str(missing) in err
    assert "model.path='./no-such-model': no such model directory" in err  # every problem at once
    assert "warm start" not in proc.stdout + err  # nothing expensive ran


def test_malformed_row_names_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "train.jsonl"
    bad.write_text('{"question": "1+1?", "answer": "2"}\n\n{"question": "2+2?", "answer": \n')
    with pytest.raises(ValueError, match=rf"{bad}:3: malformed JSON row"):
        parse_jsonl(bad.read_text().splitlines(), bad)
    proc = gym_llm_train(_entry(bad, DATA / "sample_heldout.jsonl"), "trainer.total_steps=1",
                         f"output_dir={tmp_path / 'run'}", check=False)
    assert proc.returncode == 2 and f"{bad}:3: malformed JSON row" in proc.stderr, proc.stderr[-3000:]


def test_own_dataset_recipe_trains_and_evaluates(tmp_path: Path) -> None:
    """docs/training.md's recipe: train and held-out files into the mixture."""
    data = tmp_path / "data"
    data.mkdir()
    for split in ("train", "heldout"):
        shutil.copy(DATA / f"sample_{split}.jsonl", data / f"{split}.jsonl")
    run = tmp_path / "run"
    proc = gym_llm_train(_entry(data / "train.jsonl", data / "heldout.jsonl"), "trainer.total_steps=1",
                         "trainer.eval_every=1", "trainer.eval_tasks=2", f"output_dir={run}")
    assert "preflight" not in proc.stdout + proc.stderr  # separate files: no overlap warning
    rows = read_metrics(run)
    assert [r["step"] for r in rows if "heldout/math/Dataset-v0/reward/mean" in r] == [0, 1]  # keyed by env id
    recorded = (run / "config.yaml").read_text()
    assert str(data / "heldout.jsonl") in recorded


def test_one_file_for_both_splits_warns(tmp_path: Path) -> None:
    one = DATA / "sample_train.jsonl"
    entry = f"+mixture.envs.mine={{id: math/Dataset-v0, weight: 1.0, kwargs: {{path: '{one}'}}}}"
    proc = gym_llm_train(entry, "trainer.total_steps=1", "trainer.eval_tasks=2",
                         f"output_dir={tmp_path / 'run'}")
    out = proc.stdout + proc.stderr
    assert "preflight: mixture entry 'mine' (math/Dataset-v0): 2 held-out task(s) are also train tasks" in out
