"""pass@k, aggregation, env sets, the sample store, the contamination guard: no model."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from gym_llm.apps.evaluate import (
    EvalEnv,
    SampleStore,
    aggregate,
    contamination_warnings,
    difficulty_labels,
    env_set,
    pass_at_k,
)
from gym_llm.runtime.rollout import Trajectory, write_jsonl


@pytest.mark.parametrize(("n", "c", "k", "expected"), [
    (5, 2, 1, 2 / 5),                 # pass@1 is the fraction correct
    (5, 2, 2, 1 - 3 / 10),            # 1 - C(3,2)/C(5,2)
    (5, 2, 3, 1 - 1 / 10),            # 1 - C(3,3)/C(5,3)
    (5, 2, 4, 1.0),                   # fewer than k wrong samples: some draw of k has a right one
    (10, 3, 5, 1 - 21 / 252),         # 1 - C(7,5)/C(10,5)
    (4, 0, 4, 0.0),
    (4, 4, 1, 1.0),
    (1, 1, 1, 1.0),
    (1, 0, 1, 0.0),
])
def test_pass_at_k_hand_computed(n: int, c: int, k: int, expected: float) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(expected, abs=1e-12)


def test_pass_at_k_large_n_matches_exact_binomials() -> None:
    for n, c, k in [(200, 7, 100), (1000, 1, 10), (64, 13, 32)]:
        exact = 1 - math.comb(n - c, k) / math.comb(n, k)
        assert pass_at_k(n, c, k) == pytest.approx(exact, rel=1e-9)


@pytest.mark.parametrize(("n", "c", "k"), [(3, 4, 1), (3, -1, 1), (3, 1, 0), (3, 1, 4)])
def test_pass_at_k_rejects_impossible_counts(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError):
        pass_at_k(n, c, k)


def _row(key: str, task: str, reward: float, *, difficulty: float = 0.0, threshold: float = 1.0,
         components: dict | None = None, **extra) -> dict:
    return {"eval_key": key, "env_id": key, "group_id": f"{key}|{{}}|{task}", "task_id": task,
            "split": "heldout", "difficulty": difficulty, "reward": reward,
            "correct": reward >= threshold, "reward_components": components or {},
            "num_turns": 1, "truncated": False, "loss_mask": [1, 1, 0], **extra}


def test_aggregate_against_hand_computed_figures() -> None:
    rows = (
        # task a: 1 of 4 correct; task b: 3 of 4 correct (difficulty 0.5)
        [_row("e", "a", r, components={"fmt": 1.0}) for r in (1.0, 0.0, 0.0, 0.5)]
        + [_row("e", "b", r, difficulty=0.5, components={"fmt": 0.0}) for r in (1.0, 1.0, 1.0, 0.0)]
        + [_row("f", "c", 0.0, reward_error="sandbox down") for _ in range(4)]
    )
    res = aggregate(rows, k=4)
    assert list(res) == ["e", "f"]
    e = res["e"]
    assert (e["n"], e["k"], e["num_samples"]) == (2, 4, 8)
    assert e["mean_reward"] == pytest.approx(4.5 / 8)
    assert e["pass@1"] == pytest.approx((1 / 4 + 3 / 4) / 2)
    assert e["pass@k"] == pytest.approx(1.0)
    # pass@2: a: 1 - C(3,2)/C(4,2) = 1/2; b: 1 - C(1,2)/C(4,2) = 1
    assert e["pass_at"] == {"1": pytest.approx(0.5), "2": pytest.approx(0.75), "4": pytest.approx(1.0)}
    # standard error of the task means 0.375 and 0.75
    assert e["reward_stderr"] == pytest.approx(math.sqrt(((0.375 - 0.5625) ** 2 * 2) / 1 / 2))
    assert e["reward_components"] == {"fmt": pytest.approx(0.5)}
    assert e["by_difficulty"]["0"]["pass@1"] == pytest.approx(0.25)
    assert e["by_difficulty"]["0.5"]["pass@1"] == pytest.approx(0.75)
    assert e["by_difficulty"]["0.5"]["n"] == 1
    assert e["mean_generated_tokens"] == 2.0 and e["mean_turns"] == 1.0
    assert e["reward_errors"] == 0 and res["f"]["reward_errors"] == 4
    assert res["f"]["pass@k"] == 0.0


def test_difficulty_labels_bin_many_levels() -> None:
    assert difficulty_labels([0.0, 0.5, 1.0, 0.5]) == {0.0: "0", 0.5: "0.5", 1.0: "1"}
    many = [0.0, 0.05, 0.2, 0.25, 0.4, 0.6, 0.9, 1.0]
    assert difficulty_labels(many) == {0.0: "0-0.25", 0.05: "0-0.25", 0.2: "0-0.25", 0.25: "0.25-0.5",
                                       0.4: "0.25-0.5", 0.6: "0.5-0.75", 0.9: "0.75-1", 1.0: "0.75-1"}
    rows = [_row("e", f"t{i}", float(i % 2), difficulty=d) for i, d in enumerate(many)]
    assert list(aggregate(rows, k=1)["e"]["by_difficulty"]) == ["0-0.25", "0.25-0.5", "0.5-0.75", "0.75-1"]


def test_env_set_shapes() -> None:
    envs = env_set({
        "arith": {"id": "math/Arithmetic-v0", "kwargs": {"max_turns": 2}, "difficulties": [0.0, 0.5]},
        "retry": {"id": "math/Arithmetic-v0", "key": "math/Arithmetic-v0#retry",
                  "kwargs": {"max_turns": 3}, "heldout_kwargs": {"max_turns": 1}, "weight": 0.5},
    })
    assert envs == [
        EvalEnv("math/Arithmetic-v0", {"max_turns": 2, "difficulty": 0.0}),
        EvalEnv("math/Arithmetic-v0", {"max_turns": 2, "difficulty": 0.5}),
        EvalEnv("math/Arithmetic-v0", {"max_turns": 1}, "math/Arithmetic-v0#retry"),
    ]
    assert env_set(["a/B-v0"]) == [EvalEnv("a/B-v0")]
    assert [e.id for e in env_set("all")] == sorted(e.id for e in env_set("all"))
    with pytest.raises(ValueError, match="distinct `key`"):
        env_set({"x": {"id": "math/Arithmetic-v0"}, "y": {"id": "math/Arithmetic-v0"}})
    with pytest.raises(ValueError, match="unknown keys"):
        env_set({"x": {"id": "math/Arithmetic-v0", "difficulty": 0.3}})


def test_sample_store_keeps_only_complete_tasks(tmp_path: Path) -> None:
    path = tmp_path / "samples.jsonl"
    store = SampleStore(path, k=2)
    store.append([_row("e", "a", 1.0), _row("e", "a", 0.0)])
    store.append([_row("e", "b", 1.0), _row("e", "b", 1.0)])
    # a killed writer: one row of task c, then half a line
    with open(path, "a") as f:
        f.write(json.dumps(_row("e", "c", 1.0)) + "\n" + json.dumps(_row("e", "c", 0.0))[:40])
    again = SampleStore(path, k=2)
    assert again.done() == {("e|{}|a", "a"), ("e|{}|b", "b")}
    assert len(path.read_text().splitlines()) == 4  # the partial task is gone from the file too
    assert SampleStore(path, k=2, resume=False).rows == [] and path.read_text() == ""


def test_contamination_warnings_from_a_run_dir(tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / ".hydra").mkdir(parents=True)
    (run / ".hydra" / "config.yaml").write_text(
        "mixture:\n  envs:\n    a: {id: math/Arithmetic-v0, weight: 1.0, kwargs: {difficulty: 0.0}}\n"
        "    c: {id: code/PythonFunctions-v0, weight: 1.0}\n  weights: {code: 0.0}\n")
    write_jsonl([Trajectory("tool/Orders-v0", "orders-leaked", "0-0", split="train")],
                run / "trajectories" / "step_000001.jsonl")
    # the trainer's own held-out evals are kept there too: not training data
    write_jsonl([Trajectory("math/Arithmetic-v0", "m1", "0-0", split="heldout")],
                run / "trajectories" / "heldout_step_000001.jsonl")
    envs = [EvalEnv("math/Arithmetic-v0"), EvalEnv("code/PythonFunctions-v0"), EvalEnv("tool/Orders-v0")]
    evaluated = list(zip(envs, [["m1"], ["c1"], ["orders-leaked", "orders-fresh"]], strict=True))
    on_train = contamination_warnings(run, evaluated, "train")
    assert any(w.startswith("math/Arithmetic-v0: training run") for w in on_train)
    assert any(w.startswith("tool/Orders-v0: training run") for w in on_train)  # seen in trajectories
    assert not any(w.startswith("code/PythonFunctions-v0") for w in on_train)  # weight 0: not trained
    on_heldout = contamination_warnings(run, evaluated, "heldout")
    assert on_heldout == [f"tool/Orders-v0: 1 evaluated task(s) appear in the training trajectories "
                          f"of {run} (e.g. orders-leaked): these tasks were trained on"]


def test_every_shipped_env_set_makes_its_environments() -> None:
    """conf/envs/*.yaml name registered ids with kwargs those envs accept (a
    plugin renaming a kwarg breaks this test, not a user's evaluation)."""
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    import gym_llm
    from gym_llm.apps.evaluate.app import CONFIG_DIR

    conf = Path(CONFIG_DIR)
    names = sorted(p.stem for p in (conf / "envs").glob("*.yaml"))
    assert {"default", "math", "code", "tool", "longctx"} <= set(names)
    with initialize_config_dir(config_dir=str(conf), version_base="1.3"):
        for name in names:
            cfg = compose(config_name="eval", overrides=[f"envs={name}"])
            envs = env_set(OmegaConf.to_container(cfg.envs.envs, resolve=True))
            assert envs, name
            for env in envs:
                made = gym_llm.make(env.id, split="heldout", seed=0, **dict(env.kwargs))
                obs, info = made.reset(options={"task_index": 0})
                assert obs and info["split"] == "heldout", (name, env)
                made.close()
