"""Parity: every adapter's score of a completion equals ``env.step``'s on the
same task, for tasks of each domain and right, wrong, empty and malformed
completions; bad input gives the lowest reward with a reason naming it."""

from __future__ import annotations

import json

import pytest

import gym_llm
from gym_llm.integrations import trl as gtrl
from gym_llm.integrations import verl as gverl
from gym_llm.integrations._tasks import TaskColumnError, TaskRef, completion_turn, task_rows

N_TASKS = 3

#: One env id per domain (plus a multi-turn feedback env), with a function
#: giving a right completion for a task (None: no cheap right answer).
def _math_right(task):
    return f"The answer is \\boxed{{{task.answer}}}."


def _tool_right(task):
    calls = task.answer if isinstance(task.answer, list) else [task.answer]
    return "".join(f"<tool_call>{json.dumps({'name': c['name'], 'arguments': c['arguments']})}</tool_call>"
                   for c in calls)


def _code_right(task):
    return f"```python\n{task.answer}\n```"  # the reference solution


def _longctx_right(task):
    answer = task.answer if isinstance(task.answer, str) else ", ".join(map(str, task.answer))
    return f"The answer is {answer}."


ENVS = {
    "math/Arithmetic-v0": ({}, _math_right),
    "math/Algebra-v0": ({"max_turns": 3}, _math_right),
    "tool/FunctionCalling-v0": ({}, _tool_right),
    "code/PythonFunctions-v0": ({}, _code_right),
    "longctx/Needle-v0": ({}, _longctx_right),
}

MALFORMED = [
    "",
    "\\boxed{",
    "<tool_call>{not json</tool_call>",
    "```python\ndef broken(:\n```",
    b"\xff\xfe binary",
    None,
    12345,
    {"role": "user", "content": "wrong role"},
    [{"role": "assistant", "content": "\\boxed{0}"}],
]


def _env_step(row, completion):
    env = gym_llm.make(row["env_id"], split=row["split"], **json.loads(row["env_kwargs"]))
    try:
        env.reset(seed=row["seed"], options={"task_index": row["task_index"]})
        task = env.unwrapped.task
        _, reward, _, _, info = env.step(completion_turn(completion))
        return task, reward, info
    finally:
        env.close()


def _completions(row, right):
    env = gym_llm.make(row["env_id"], split=row["split"], **json.loads(row["env_kwargs"]))
    env.reset(seed=row["seed"], options={"task_index": row["task_index"]})
    task = env.unwrapped.task
    env.close()
    good = right(task)
    return ([good] if good else []) + ["I do not know.", "\\boxed{-987654321}"] + MALFORMED


@pytest.mark.parametrize("env_id", sorted(ENVS))
def test_adapters_equal_env_step(env_id):
    kwargs, right = ENVS[env_id]
    reward = gtrl.reward_function(env_id, **kwargs)
    rows = task_rows(env_id, "train", N_TASKS, seed=7, **kwargs)
    rewarded = 0
    for row in rows:
        completions = _completions(row, right)
        columns = {c: [row[c]] * len(completions) for c in ("env_id", "split", "seed", "task_index", "env_kwargs")}
        trl_scores = reward([row["prompt"]] * len(completions), completions, **columns)
        for completion, trl_score in zip(completions, trl_scores, strict=True):
            _, expected, info = _env_step(row, completion)
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
