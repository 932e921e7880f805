"""gym-llm-eval as users run it: a subprocess per command."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EVAL = [sys.executable, "-c", "from gym_llm.apps.evaluate import main; main()"]
DOMAINS = ["math/Arithmetic-v0", "code/PythonFunctions-v0", "tool/FunctionCalling-v0", "longctx/Needle-v0"]


def gym_llm_eval(*overrides: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([*EVAL, *overrides], cwd=cwd, capture_output=True, text=True, timeout=timeout)


def test_refuses_train_split_without_the_flag(tmp_path: Path) -> None:
    # `imports` modules (user code registering environments) load first
    (tmp_path / "my_envs.py").write_text("open('imported', 'w').close()\n")
    proc = gym_llm_eval("split=train", "imports=[my_envs]", f"hydra.run.dir={tmp_path / 'out'}",
                        cwd=tmp_path)
    assert proc.returncode != 0
    assert "allow_train_split=true" in proc.stderr
    assert not (tmp_path / "out" / "samples.jsonl").exists()
    assert (tmp_path / "imported").exists()


def test_mixture_env_set_needs_a_training_run(tmp_path: Path) -> None:
    proc = gym_llm_eval("env_ids=mixture", f"hydra.run.dir={tmp_path / 'out'}", cwd=tmp_path)
    assert proc.returncode != 0 and "checkpoint=<run dir> or train_run=<run dir>" in proc.stderr


def test_unreachable_server_fails_the_tasks_not_the_results(tmp_path: Path) -> None:
    """Episodes that cannot run are kept out of the results (in errors.jsonl),
    reported, and make the exit status 1; a rerun retries them."""
    from servers import free_port

    out = tmp_path / "out"
    proc = gym_llm_eval("policy=openai", f"policy.base_url=http://127.0.0.1:{free_port()}/v1",
                        "policy.model=nobody", "policy.max_retries=0", "policy.timeout_s=5",
                        "env_ids=[example/Reverse-v0]", "num_tasks=2", "k=2", f"hydra.run.dir={out}",
                        cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert json.loads((out / "results.json").read_text()) == {}
    assert not (out / "samples.jsonl").read_text()
    errors = [json.loads(line) for line in (out / "errors.jsonl").read_text().splitlines()]
    assert len(errors) == 4 and all(e["error"] for e in errors)
    assert "2 task(s) could not run" in (out / "report.md").read_text()


@pytest.mark.slow
def test_default_env_set_on_the_tiny_model(tmp_path: Path) -> None:
    """The default run's configuration (tiny model, the four domains), fewer tasks."""
    out = tmp_path / "out"
    proc = gym_llm_eval("num_tasks=1", "k=2", f"hydra.run.dir={out}", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads((out / "results.json").read_text())
    assert list(results) == DOMAINS
    for r in results.values():
        assert (r["n"], r["k"], r["num_samples"]) == (1, 2, 2)
        assert 0.0 <= r["mean_reward"] <= 1.0 and 0.0 <= r["pass@1"] <= r["pass@k"] <= 1.0
        assert r["mean_turns"] >= 1, "every sample should get to answer"
        assert r["strict_graded"] == 2 and 0.0 <= r["strict_mean"] <= 1.0  # every domain's strict grader ran
    rows = (out / "samples.jsonl").read_text().splitlines()
    assert len(rows) == 8
    assert all(json.loads(row)["strict_reward"] is not None for row in rows)
    assert "<th>strict mean</th>" in (out / "report.html").read_text()
    report = (out / "report.md").read_text()
    assert all(f"| {d} | 1 | 2 |" in report for d in DOMAINS)
    for png in ("reward_by_env.png", "reward_by_difficulty.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"({png})" in report


def _training_run(root: Path, model_dir: str) -> Path:
    """A run directory as gym-llm-train leaves it: Hydra's config, one
    checkpoint written by the trainer's own save_checkpoint, no trajectories."""
    from gym_llm_trainers.checkpoint import save_checkpoint

    run = root / "train-run"
    (run / ".hydra").mkdir(parents=True)
    (run / ".hydra" / "config.yaml").write_text(
        "mixture:\n  name: math_only\n  envs:\n    arithmetic:\n      id: math/Arithmetic-v0\n"
        "      weight: 1.0\n      kwargs: {difficulty: 0.0}\n  weights: {}\n")
    save_checkpoint(run / "checkpoints", 3, lambda d: shutil.copytree(model_dir, d), {"step": 3})
    return run


@pytest.mark.slow
def test_multirun_models_x_env_sets_with_a_checkpoint(tmp_path: Path, other_model: str) -> None:
    """-m over two models (a training run's checkpoint and another model) and
    two env sets: four evaluations, each with its own results, the run's one
    warned about contamination when it evaluates the split it trained on."""
    run = _training_run(tmp_path, other_model)
    sweep = tmp_path / "sweep"
    proc = gym_llm_eval(
        "-m", f"checkpoint={run},{other_model}", "env_ids=[math/Arithmetic-v0],[example/Reverse-v0]",
        "num_tasks=2", "k=1", "policy.max_new_tokens=8", "split=train", "allow_train_split=true",
        f"hydra.sweep.dir={sweep}",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    jobs = sorted(p.parent for p in sweep.glob("*/results.json"))  # one flat folder per job
    assert len(jobs) == 4
    seen = set()
    for job in jobs:
        config = json.loads((job / "eval_config.json").read_text())
        results = json.loads((job / "results.json").read_text())
        (env_key,) = results
        model = config["policy"]["model"]
        seen.add((model, env_key))
        report = (job / "report.md").read_text()
        trained_on_it = model.startswith(str(run)) and env_key == "math/Arithmetic-v0"
        assert ("trained on its train split" in report) == trained_on_it, job
    ckpt_model = str(run / "checkpoints" / "step_000003" / "model")
    assert seen == {(m, e) for m in (ckpt_model, other_model)
                    for e in ("math/Arithmetic-v0", "example/Reverse-v0")}
