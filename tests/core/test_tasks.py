import random

import pytest

from gym_llm import Draft, ProceduralTasks, Task, TaskList


def gen(rng: random.Random, difficulty: float) -> Draft:
    a, b = rng.randint(0, 9), rng.randint(0, 9)
    return Draft(f"{a}+{b}=?", str(a + b), {"a": a})


def test_procedural_splits_are_disjoint_by_content_and_deterministic():
    ts = ProceduralTasks("add", gen)
    train = {ts.get("train", i).prompt for i in range(300)}
    held = {ts.get("heldout", i).prompt for i in range(ts.size("heldout"))}
    assert train and held and not (train & held)
    assert ts.get("train", 5) == ProceduralTasks("add", gen).get("train", 5)
    t = ts.get("heldout", 3)
    assert t.split == "heldout" and t.id.startswith("add-") and t.metadata["a"] >= 0
    # the id is a function of the content: the same prompt has the same id anywhere
    ids = {ts.get("train", i).prompt: ts.get("train", i).id for i in range(300)}
    assert len(set(ids.values())) == len(ids)


def test_procedural_bounds_and_errors():
    ts = ProceduralTasks("add", gen, sizes={"heldout": 10})
    assert ts.size("heldout") == 10 and ts.size("test") == 10
    with pytest.raises(IndexError):
        ts.get("heldout", 10)
    with pytest.raises(ValueError, match="unknown split"):
        ts.get("dev", 0)
    with pytest.raises(ValueError):
        ProceduralTasks("x", gen, difficulty=2.0)
    tiny = ProceduralTasks("one", lambda rng, d: Draft("same", "1"), max_attempts=20)
    split, _ = tiny.split_of("same")
    other = "heldout" if split == "train" else "train"
    with pytest.raises(RuntimeError, match="too small"):
        tiny.get(other, 0)


def test_task_list_refuses_duplicate_ids_across_splits():
    with pytest.raises(ValueError, match="appears twice"):
        TaskList([Task("a", "p", "x"), Task("a", "p", "x", split="heldout")])
    tl = TaskList([Task("a", "p", "x"), Task("b", "q", "y", split="test")])
    assert tl.size("train") == 1 and tl.get("heldout", 0).id == "b"


def test_task_messages():
    t = Task("a", "hello", "x")
    assert t.messages("sys") == [{"role": "system", "content": "sys"}, {"role": "user", "content": "hello"}]
    t = Task("b", [{"role": "system", "content": "own"}, {"role": "user", "content": "q"}], "x")
    assert t.messages("sys")[0]["content"] == "own"
    msgs = t.messages()
    msgs[0]["content"] = "changed"
    assert t.prompt[0]["content"] == "own"


def test_plans_decide_the_split_by_key_and_build_only_accepted_draws():
    from gym_llm.envs.tasks import Plan

    built = []

    def plan(rng, difficulty):
        a = rng.randint(0, 99)

        def build():
            built.append(a)
            return Draft(f"filler {rng.random()} ... what is {a}?", str(a), {"a": a})

        return Plan({"question": a}, build)

    ts = ProceduralTasks("plan", plan)
    held = [ts.get("heldout", i) for i in range(20)]
    train = [ts.get("train", i) for i in range(60)]
    assert len(built) == 80  # rejected plans were never built
    assert not {t.metadata["a"] for t in held} & {t.metadata["a"] for t in train}  # split by key, not text
    assert all(t.metadata["split_key"] for t in held) and ts.get("heldout", 3).id == held[3].id
