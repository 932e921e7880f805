"""The bundled problems, plain-value encoding and the output judge (no sandbox)."""

from __future__ import annotations

import ast
import math

import pytest
from gym_llm_code.envs import function_task, split_of, stdio_task
from gym_llm_code.jail.plain import Unsupported, decode, encode, plain_equal
from gym_llm_code.judge import first_difference, tokens_match
from gym_llm_code.problems import function_problems, stdio_problems

import gym_llm

FUNCTIONS = function_problems()
STDIO = stdio_problems()
TOPICS = {"basics", "strings", "lists", "math", "dicts", "recursion", "parsing", "simulation"}


def test_there_are_enough_problems_across_topics_and_difficulties():
    assert len(FUNCTIONS) >= 150 and len(STDIO) >= 60
    assert {p.topic for p in FUNCTIONS} == TOPICS
    for problems in (FUNCTIONS, STDIO):
        difficulties = [p.difficulty for p in problems]
        assert all(0.0 <= d <= 1.0 for d in difficulties)
        assert min(difficulties) == 0.0 and max(difficulties) >= 0.6
        assert len({round(d, 1) for d in difficulties}) >= 6, "difficulty is not graded"


@pytest.mark.parametrize("problem", FUNCTIONS, ids=lambda p: p.name)
def test_function_problem_is_complete(problem):
    assert problem.description and len(problem.examples) >= 2 and len(problem.tests) >= 2
    assert problem.signature.startswith(f"def {problem.name}(")
    tree = ast.parse(problem.reference)
    assert any(isinstance(n, ast.FunctionDef) and n.name == problem.name for n in tree.body)
    ast.parse(problem.generator)
    # hidden tests are not the examples shown in the prompt
    assert not {repr(a) for a, _ in problem.tests} & {repr(a) for a, _ in problem.examples}


@pytest.mark.parametrize("problem", STDIO, ids=lambda p: p.name)
def test_stdio_problem_is_complete(problem):
    assert problem.statement and problem.input_spec and problem.output_spec
    assert len(problem.examples) >= 1 and len(problem.tests) >= 2
    assert all(isinstance(i, str) and isinstance(o, str) for i, o in problem.examples + problem.tests)
    ast.parse(problem.reference)
    ast.parse(problem.generator)


def test_splits_are_disjoint_and_both_hold_easy_and_hard_tasks():
    for tasks in ([function_task(p) for p in FUNCTIONS], [stdio_task(p) for p in STDIO]):
        train = [t for t in tasks if t.split == "train"]
        heldout = [t for t in tasks if t.split == "heldout"]
        assert not {t.id for t in train} & {t.id for t in heldout}
        assert 0.1 <= len(heldout) / len(tasks) <= 0.3
        for split in (train, heldout):
            assert min(t.difficulty for t in split) <= 0.05 and max(t.difficulty for t in split) >= 0.5
    assert split_of("pyfn/add") == split_of("pyfn/add")


def test_prompts_show_signature_and_examples_but_never_the_answer():
    for task in [function_task(p) for p in FUNCTIONS] + [stdio_task(p) for p in STDIO]:
        assert "```python" in task.prompt and task.answer.strip() not in task.prompt
    task = function_task(next(p for p in FUNCTIONS if p.name == "reverse_words"))
    assert "def reverse_words(s: str) -> str" in task.prompt
    assert "reverse_words('hello world') == 'world hello'" in task.prompt


def test_warm_up_tasks_for_a_tiny_model():
    env = gym_llm.make("code/PythonFunctions-v0", max_difficulty=0.0, seed=0).unwrapped
    assert env.num_tasks >= 10 and env.task_set.size("heldout") >= 1
    assert all(t.difficulty == 0.0 for t in env.task_set.iter_split("train"))
    with pytest.raises(ValueError, match="no bundled problem"):
        gym_llm.make("code/PythonFunctions-v0", topics=["astrology"])


@pytest.mark.parametrize("value", [
    None, True, 0, -5, 10**40, 1.5, "text", "", [1, [2, "x"]], (1, 2), (), {1, 2}, frozenset({"a"}),
    {"a": 1, 2: [3]}, {(1, 2): {"k": (None,)}}, b"\x00bytes", float("inf"), [float("-inf")],
])
def test_plain_round_trip(value):
    import json

    back = decode(json.loads(json.dumps(encode(value))))
    assert type(back) is type(value) and plain_equal(value, back)


def test_plain_reduces_rigged_objects():
    class AlwaysEqual:
        def __eq__(self, other):
            return True

    class LyingInt(int):
        def __eq__(self, other):
            return True

        def __int__(self):
            return 999

    class LyingList(list):
        def __iter__(self):
            return iter([42])

    assert isinstance(decode(encode(AlwaysEqual())), Unsupported)
    assert not plain_equal(3, decode(encode(AlwaysEqual())))
    assert decode(encode(LyingInt(7))) == 7 and type(decode(encode(LyingInt(7)))) is int
    assert decode(encode(LyingList([1, 2]))) == [1, 2]
    deep: list = []
    for _ in range(200):
        deep = [deep]
    assert isinstance(decode(encode(deep)), list)  # capped, not a RecursionError
    for bad in ({"$tuple": 3}, {"$nope": 1}, {"$set": [[1]]}, {"a": 1, "b": 2}):
        with pytest.raises(ValueError):
            decode(bad)


def test_plain_equal_follows_python_except_float_tolerance():
    assert plain_equal(0.1 + 0.2, 0.3) and plain_equal(2, 2.0) and not plain_equal(True, 1)
    assert not plain_equal([1, 2], (1, 2)) and not plain_equal("1", 1) and not plain_equal(1.0, 1.1)
    assert plain_equal({"a": [1.0]}, {"a": [1.0000000001]}) and not plain_equal({"a": 1}, {"b": 1})
    assert plain_equal(math.nan, math.nan) and not plain_equal(None, 0)


def test_stdio_judge_tokens():
    assert tokens_match("1 2\n3\n", "1\n2 3")
    assert tokens_match("2.5\n", "2.5000001") and tokens_match("7\n", "7.0000000")
    assert not tokens_match("1000000000000000000", "1000000000000000001")  # integers are exact
    assert not tokens_match("YES", "yes") and not tokens_match("1 2", "1 2 3") and not tokens_match("1", "")
    assert not tokens_match("1.5", "nan") and not tokens_match("2.5", "2.6")
    assert first_difference("a b c", "a x c") == "token 2: expected 'b', got 'x'"
