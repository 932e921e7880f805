"""The instruct environments: generated tasks (counts, kinds, compatibility,
splits by topic), strict/partial/loose rewards, the multi-turn fix loop, the
strict grader, and instruct/Dataset-v0 on IFEval-format files."""

from __future__ import annotations

import json

import pytest
from gym_llm_instruct.constraints import CONSTRAINTS, component_keys, describe
from gym_llm_instruct.envs import InstructEnv
from gym_llm_instruct.generate import hardness_cap
from gym_llm_instruct.requests import TOPICS

import gym_llm

from .helpers import HONEST, make_task, play

GENERATED = ["instruct/Single-v0", "instruct/Multi-v0", "instruct/MultiTurn-v0"]
NO_COMMA = {"id": "punctuation:no_comma", "kwargs": {}}
LOWER = {"id": "change_case:english_lowercase", "kwargs": {}}
FEW_WORDS = {"id": "length_constraints:number_words", "kwargs": {"num_words": 30, "relation": "less than"}}


def _tasks(env_id: str, split: str = "train", n: int = 30, **kwargs):
    env = gym_llm.make(env_id, split=split, **kwargs).unwrapped
    return [env.task_set.get(split, i) for i in range(n)]


@pytest.mark.parametrize(("env_id", "difficulty", "count"), [
    ("instruct/Single-v0", 0.0, 1), ("instruct/Single-v0", 1.0, 1),
    ("instruct/Multi-v0", 0.0, 2), ("instruct/Multi-v0", 0.5, 4), ("instruct/Multi-v0", 1.0, 5),
])
def test_difficulty_sets_how_many_and_which_kinds(env_id, difficulty, count):
    tasks = _tasks(env_id, difficulty=difficulty)
    for task in tasks:
        constraints = task.metadata["constraints"]
        types = [CONSTRAINTS[c["id"]] for c in constraints]
        assert all(t.hardness <= hardness_cap(difficulty) for t in types)
        # solo types (JSON, two responses, ...) stand alone but for keywords: fewer is allowed then
        assert len(constraints) == count or any(t.solo for t in types)
        assert len({c["id"] for c in constraints}) == len(constraints)
        slots = [s for t in types for s in t.slot.split()]
        assert len(slots) == len(set(slots)), f"contradicting constraints in one task: {constraints}"
        for c in constraints:
            assert describe(c) in task.prompt
        assert task.answer == constraints and task.metadata["request"]["kind"]
    if difficulty == 0.0:  # easy kinds only: IFBench's word games never come up
        assert not any(CONSTRAINTS[c["id"]].kind == "words" for t in tasks for c in t.metadata["constraints"])


def test_hard_difficulty_reaches_ifbench_kinds():
    ids = {c["id"] for t in _tasks("instruct/Multi-v0", n=60, difficulty=1.0) for c in t.metadata["constraints"]}
    assert {CONSTRAINTS[i].source for i in ids} == {"ifeval", "ifbench"}


@pytest.mark.parametrize("env_id", GENERATED)
def test_splits_are_disjoint_by_topic(env_id):
    topics = {split: {t.metadata["request"]["topic"] for t in _tasks(env_id, split, 40)} for split in ("train", "heldout")}
    assert topics["train"] and topics["heldout"] and not topics["train"] & topics["heldout"]
    assert topics["train"] | topics["heldout"] <= {t.name for t in TOPICS}


@pytest.mark.parametrize("env_id", GENERATED)
def test_the_same_seed_gives_the_same_task(env_id):
    a, b = (gym_llm.make(env_id, seed=11, difficulty=0.6) for _ in range(2))
    assert a.reset()[0] == b.reset()[0] and a.unwrapped.task.metadata == b.unwrapped.task.metadata


def test_rewards_strict_partial_and_components():
    constraints = [NO_COMMA, LOWER, NO_COMMA]  # a repeated id is numbered
    strict, info, _ = play(constraints, HONEST)
    assert strict == 0.0 and set(info["reward_components"]) == set(component_keys(constraints))
    assert info["reward_components"] == {"punctuation:no_comma#1": 1.0, "change_case:english_lowercase": 0.0,
                                         "punctuation:no_comma#2": 1.0}
    assert "change_case:english_lowercase" in info["reason"]
    partial, _, _ = play(constraints, HONEST, reward="partial")
    assert partial == pytest.approx(2 / 3)
    assert play(constraints, HONEST.lower())[0] == 1.0
    with pytest.raises(ValueError):
        InstructEnv([make_task([NO_COMMA])], reward="lenient")


def test_loose_reading_is_a_kwarg():
    response = "Sure, here is my answer:\n" + HONEST.lower()
    assert play([LOWER], response)[0] == 0.0
    assert play([LOWER], response, loose=True)[0] == 1.0


def test_multiturn_feedback_names_what_was_violated_and_every_turn_is_rechecked():
    env = InstructEnv([make_task([NO_COMMA, FEW_WORDS])], max_turns=3, attempt_discount=0.5)
    env.reset(seed=0)
    long_answer = HONEST + " " + HONEST
    obs, reward, term, trunc, info = env.step(long_answer)
    assert (reward, term, trunc) == (0.0, False, False)
    feedback = obs[0]["content"]
    assert "length_constraints:number_words" in feedback and describe(env.task.metadata["constraints"][1]) in feedback
    assert "punctuation:no_comma" not in feedback
    # fixing the length by breaking the comma rule is no fix
    obs, reward, term, _, info = env.step("Honeybees, in short, live in a hive and make honey.")
    assert reward == 0.0 and not term and "punctuation:no_comma" in obs[0]["content"]
    _, reward, term, _, info = env.step(HONEST)
    assert term and reward == pytest.approx(0.25) and info["attempts"] == 3
    strict = env.strict_score(env.messages, reward)
    assert strict.score == pytest.approx(0.25)
    env.close()


def test_strict_grader_reads_strictly_with_the_request_check_on():
    env = InstructEnv([make_task([LOWER])], loose=True, check_request=False)
    env.reset(seed=0)
    response = "Sure, here is my answer:\n" + HONEST.lower()
    _, reward, _, _, _ = env.step(response)
    assert reward == 1.0 and env.strict_score(env.messages, reward).score == 0.0
    env.reset(seed=0)
    _, reward, _, _, _ = env.step("hive honey bees pollen nectar queen wax colony drone")
    assert reward == 1.0 and env.strict_score(env.messages, reward).score == 0.0
    env.close()


# ------------------------------------------------------------------ Dataset-v0
def _rows(n: int) -> list[dict]:
    # IFEval's own layout: every kwargs dict holds every argument name, None where unused
    return [{"key": k, "prompt": f"Write a short note about garden number {k} and its flowers.",
             "instruction_id_list": ["punctuation:no_comma", "length_constraints:number_words"],
             "kwargs": [{"num_words": None, "relation": None},
                        {"num_words": 10 + k, "relation": "at least", "keywords": None}]} for k in range(n)]


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def test_dataset_reads_ifeval_jsonl_split_by_prompt_hash(tmp_path):
    path = _write(tmp_path / "ifeval.jsonl", _rows(40))
    envs = {s: gym_llm.make("instruct/Dataset-v0", path=path, split=s).unwrapped for s in ("train", "heldout")}
    ids = {s: {e.task_set.get(s, i).id for i in range(e.num_tasks)} for s, e in envs.items()}
    assert ids["train"] and ids["heldout"] and not ids["train"] & ids["heldout"]
    assert len(ids["train"]) + len(ids["heldout"]) == 40
    task = envs["train"].task_set.get("train", 0)
    assert task.metadata["constraints"][1]["kwargs"] == {"num_words": 10 + task.metadata["key"],
                                                         "relation": "at least"}
    env = envs["train"]
    env.reset(options={"task_index": 0})
    answer = "The garden is full of flowers and bees and the paths are lined with tall green hedges."
    _, reward, _, _, info = env.step(answer)
    assert reward == 1.0, info


def test_dataset_mapping_of_splits_and_unsupported_rows(tmp_path):
    rows = _rows(3)
    rows[1]["instruction_id_list"][0] = "custom:csv_city"
    train = _write(tmp_path / "train.jsonl", rows)
    heldout = _write(tmp_path / "heldout.jsonl", _rows(2))
    with pytest.raises(ValueError, match=r"row 1: unknown constraint id 'custom:csv_city'"):
        gym_llm.make("instruct/Dataset-v0", path={"train": train, "heldout": heldout})
    env = gym_llm.make("instruct/Dataset-v0", path={"train": train, "heldout": heldout}, skip_unsupported=True)
    assert env.unwrapped.num_tasks == 2
    assert gym_llm.make("instruct/Dataset-v0", path={"train": train, "heldout": heldout}, split="heldout",
                        skip_unsupported=True).unwrapped.num_tasks == 2


@pytest.mark.parametrize(("row", "message"), [
    ({"prompt": "", "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]}, "prompt"),
    ({"prompt": "Hi there", "instruction_id_list": [], "kwargs": []}, "instruction_id_list"),
    ({"prompt": "Hi there", "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}, {}]}, "kwargs"),
    ({"prompt": "Hi there", "instruction_id_list": ["keywords:existence"], "kwargs": [{}]}, "missing"),
])
def test_dataset_rows_that_cannot_be_scored_are_refused_by_name(tmp_path, row, message):
    path = _write(tmp_path / "bad.jsonl", [row])
    with pytest.raises(ValueError, match=message):
        gym_llm.make("instruct/Dataset-v0", path={"train": path})


def test_the_bundled_sample_is_valid_and_disjoint():
    envs = {s: gym_llm.make("instruct/Dataset-v0", split=s).unwrapped for s in ("train", "heldout")}
    assert envs["train"].num_tasks == 12 and envs["heldout"].num_tasks == 6
    prompts = {s: {e.task_set.get(s, i).prompt for i in range(e.num_tasks)} for s, e in envs.items()}
    assert not prompts["train"] & prompts["heldout"]
