"""Distinct indices are distinct tasks (ProceduralTasks): a split's size is
the number of distinct tasks it holds when the generator runs out, an
evaluation asking for more gets what exists and says so, and the envs that
used to repeat a task (math/Arithmetic-v0 at difficulty 0) no longer do."""

from __future__ import annotations

import pickle
import random

import gym_llm
from gym_llm import Draft, ProceduralTasks


def few(rng: random.Random, difficulty: float) -> Draft:
    """60 possible prompts: about 12 land in the held-out split."""
    n = rng.randrange(60)
    return Draft(f"What is {n} + 1?", str(n + 1))


def test_indices_of_a_small_space_are_distinct_and_counted() -> None:
    ts = ProceduralTasks("distinct-few", few)
    held = ts.size("heldout")
    assert 0 < held < 32  # ran out within the size probe: the exact count, not 500
    train = ts.distinct_count("train", 1000)
    assert 32 < train < 60 and held + train <= 60  # beyond the probe: the index space stays 10^9, counted exactly
    assert ts.describe_size("train").startswith(f"{train} distinct (exact")
    for split, n in (("heldout", held), ("train", train)):
        prompts = [ts.get(split, i).prompt for i in range(n)]
        assert len(set(prompts)) == n
    assert {ts.get("heldout", i).prompt for i in range(held)}.isdisjoint(ts.get("train", i).prompt for i in range(train))
    assert ts.distinct_count("heldout", 500) == held and ts.distinct_count("heldout", 3) == 3
    assert ts.describe_size("heldout") == f"{held} distinct (exact)"


def test_a_split_that_runs_out_holds_every_task_of_its_space() -> None:
    """The run of repeats that ends an enumeration grows with the tasks found:
    a fixed 64 stopped a 400-prompt space (and math/WordProblems-v0's held-out
    split, 346 of 385) before its last tasks."""
    def space(rng: random.Random, difficulty: float) -> Draft:
        n = rng.randrange(400)
        return Draft(f"What is {n} + 2?", str(n + 2))

    ts = ProceduralTasks("distinct-space", space)
    held, train = ts.distinct_count("heldout", 500), ts.distinct_count("train", 1000)
    assert held + train == 400 and ts.describe_size("heldout").startswith(f"{held} distinct (exact")


def test_arithmetic_at_difficulty_zero_has_no_repeated_task() -> None:
    env = gym_llm.make("math/Arithmetic-v0", split="heldout", difficulty=0.0).unwrapped
    n = env.num_tasks
    ids = [env.task_set.get("heldout", i).id for i in range(n)]
    assert n < 500 and len(set(ids)) == n  # was 500 indices over 26 problems
    train = gym_llm.make("math/Arithmetic-v0", split="train", difficulty=0.0).unwrapped.task_set
    assert train.get("train", 3).id != train.get("train", 5).id  # were the same problem
    assert len({train.get("train", i).id for i in range(50)}) == 50
    assert "distinct (exact" in train.describe_size("train")


def test_a_large_space_keeps_its_tasks() -> None:
    """Generators with enough entropy draw the same tasks as before: only
    repeats are skipped, so their task ids did not change."""
    def wide(rng: random.Random, difficulty: float) -> Draft:
        n = rng.randrange(10**9)
        return Draft(f"What is {n} + 1?", str(n + 1))

    ts = ProceduralTasks("distinct-wide", wide)
    assert ts.size("heldout") == 500 and ts.size("train") == 1_000_000_000
    assert [ts.get("heldout", i).metadata["index"] for i in range(5)] == list(range(5))
    assert "estimate" in ts.describe_size("train")


def test_an_enumerated_task_set_pickles_and_its_copy_names_the_same_tasks() -> None:
    """Vector env workers and checkpoints pickle envs mid-run: the
    enumeration (locks included) stays in its process; a copy re-finds it."""
    tasks = ProceduralTasks("few", few, sizes={"train": 1000, "heldout": 500})
    before = [tasks.get("train", i).id for i in range(tasks.distinct_count("train", 1000))]
    copy = pickle.loads(pickle.dumps(tasks))
    assert [copy.get("train", i).id for i in range(len(before))] == before
