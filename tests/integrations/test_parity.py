"""Parity: every adapter's score of a completion equals ``env.step``'s on the
same task, for tasks of each domain and right, wrong, empty and malformed
completions; bad input gives the lowest reward with a reason naming it."""

from __future__ import annotations

import json

import pytest

import gym_llm
from gym_llm.apps.integrations import trl as gtrl
from gym_llm.apps.integrations import verl as gverl
from gym_llm.apps.integrations._tasks import TaskColumnError, TaskRef, completion_turn, task_rows

from .completions import KINDS, turns

N_TASKS = 3

#: One env id per domain, and a multi-turn feedback env, with their kwargs.
ENVS = {
    "math/Arithmetic-v0": {},
    "math/Algebra-v0": {"max_turns": 3},
    "tool/FunctionCalling-v0": {},
    "code/PythonFunctions-v0": {},
    "longctx/Needle-v0": {},
}

#: Besides the shared kinds: a TRL conversational completion (a message list).
EXTRA = [[{"role": "assistant", "content": "\\boxed{0}"}], "\\boxed{", "```python\ndef broken(:\n```"]


def _env_step(row, completion):
    env = gym_llm.make(row["env_id"], split=row["split"], **json.loads(row["env_kwargs"]))
    try:
        env.reset(seed=row["seed"], options={"task_index": row["task_index"]})
        _, reward, _, _, info = env.step(completion_turn(completion))
        return reward, info
    finally:
        env.close()


def _completions(row):
    """Each kind's first turn (a single completion is one turn), every
    malformed action, and :data:`EXTRA`."""
    out = []
    for kind in KINDS:
        got = turns(row["env_id"], kind, row["seed"], row["task_index"])
        out += got if kind == "malformed" else got[:1]
    return out + EXTRA


@pytest.mark.parametrize("env_id", sorted(ENVS))
def test_adapters_equal_env_step(env_id):
    kwargs = ENVS[env_id]
    reward = gtrl.reward_function(env_id, **kwargs)
    rows = task_rows(env_id, "train", N_TASKS, seed=7, **kwargs)
    rewarded = 0
    for row in rows:
        completions = _completions(row)
        columns = {c: [row[c]] * len(completions) for c in ("env_id", "split", "seed", "task_index", "env_kwargs")}
        trl_scores = reward([row["prompt"]] * len(completions), completions, **columns)
        for completion, trl_score in zip(completions, trl_scores, strict=True):
            expected, info = _env_step(row, completion)
            got = gverl.compute_score(env_id, completion, row["task_id"], extra_info=row)
            assert got["score"] == expected, (completion, got, info)
            assert got["reason"] == (info.get("reason") or "")
            assert got["reward_error"] == (info.get("reward_error") or "")
            assert trl_score == (None if info.get("reward_error") else expected), (completion, info)
            rewarded += expected > 0
    # the right completions must actually score: parity on zeros alone proves little
    assert rewarded >= 1


def test_rows_are_the_tasks_reset_picks():
    rows = task_rows("math/Arithmetic-v0", "heldout", 4, seed=11)
    env = gym_llm.make("math/Arithmetic-v0", split="heldout")
    for i, row in enumerate(rows):
        obs, info = env.reset(seed=11 + i)
        assert (row["task_index"], row["task_id"], row["prompt"]) == (info["task_index"], info["task_id"], obs)
    ds = gtrl.dataset("math/Arithmetic-v0", "heldout", 4, seed=11)
    assert ds.column_names == ["prompt", "task_id", "env_id", "split", "seed", "task_index", "env_kwargs"]
    assert ds["task_index"] == [r["task_index"] for r in rows]


@pytest.mark.parametrize("row, column", [
    ({"env_id": "math/Arithmetic-v0", "seed": 0}, "task_index"),
    ({"env_id": "math/Arithmetic-v0", "task_index": 1}, "seed"),
    ({"env_id": "math/Arithmetic-v0", "seed": "x", "task_index": 1}, "seed"),
    ({"env_id": "math/Arithmetic-v0", "seed": 0, "task_index": 1, "split": "test"}, "split"),
    ({"env_id": "math/Arithmetic-v0", "seed": 0, "task_index": 1, "env_kwargs": "{oops"}, "env_kwargs"),
    ({"env_id": "math/NoSuch-v0", "seed": 0, "task_index": 1}, "env_id"),
])
def test_bad_rows_score_lowest_with_the_column_named(row, column):
    got = gverl.compute_score(row["env_id"], "\\boxed{2}", None, extra_info=row)
    assert got["score"] == 0.0 and f"'{column}'" in got["reward_error"]
    columns = {k: [v] for k, v in row.items()}
    env_id = "math/Arithmetic-v0"
    if row["env_id"] == env_id:
        assert gtrl.reward_function(env_id)([[]], ["\\boxed{2}"], **columns) == [None]
    if column != "env_id":  # a well-formed unknown id is the registry's to report (above)
        with pytest.raises(TaskColumnError, match=f"'{column}'"):
            TaskRef.from_row(row)


def test_unknown_env_id_raises_at_construction():
    with pytest.raises(LookupError, match="math/NoSuch-v0"):
        gtrl.reward_function("math/NoSuch-v0")
    with pytest.raises(LookupError, match="math/NoSuch-v0"):
        gtrl.dataset("math/NoSuch-v0", n=1)
    with pytest.raises(LookupError, match="math/NoSuch-v0"):
        gverl.rows("math/NoSuch-v0", n=1)


def test_row_naming_another_env_is_an_error_score():
    row = task_rows("math/Arithmetic-v0", n=1)[0]
    out = gtrl.reward_function("math/Algebra-v0")([row["prompt"]], ["\\boxed{1}"], **{k: [v] for k, v in row.items()})
    assert out == [None]
