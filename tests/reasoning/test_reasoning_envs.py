"""Every reasoning id, swept: registration, the info keys, the reference
answer earning 1.0, bad input earning 0 with a reason, a candidate list
earning 0, no answer running as Python (reasoning-gym's verifiers ``eval``
some answers), splits disjoint by task id and by question, difficulty reaching
the family's curriculum. (tests/test_contract.py sweeps check_env,
determinism across processes and the bad-action table for every id too.)"""

from __future__ import annotations

import pytest
from gym_llm_reasoning import catalogue, env_id
from gym_llm_reasoning.families import EXCLUDED, family_of

import gym_llm

IDS = [i for i in gym_llm.list_envs() if i.startswith("reasoning/")]
RESET_KEYS = {"task_id", "env_id", "domain", "split", "difficulty", "max_turns", "tools"}
BAD = {
    "empty": "",
    "huge": "<answer>" + "9" * 300_000 + "</answer>",
    "binary": b"\x00\xff<answer>\x80\x81</answer>",
    "markup flood": "<answer>" * 50_000 + "</answer>" * 3,
    "unclosed": "<answer>42",
}
#: Answers that write ``{mark}`` if a verifier evaluates them as Python (as eval and
#: sympy's parse_expr do): a bare call, inside a list, inside an arithmetic expression.
CODE = ["__import__('pathlib').Path('{mark}').touch()", "[__import__('pathlib').Path('{mark}').touch()]",
        "24 + 0*len(str(__import__('pathlib').Path('{mark}').touch()))",
        "x + C + 0*len(str(__import__('pathlib').Path('{mark}').touch()))"]


def test_every_family_of_reasoning_gyms_registry_is_an_id():
    from reasoning_gym.factory import DATASETS

    assert len(IDS) >= 90
    assert sorted(IDS) == sorted(env_id(f) for f in DATASETS if f not in EXCLUDED)
    assert all(family_of(env_id(f)) == f for f in catalogue())
    assert all(gym_llm.spec(i).plugin == "gym-llm-reasoning" for i in IDS)


@pytest.mark.slow
@pytest.mark.parametrize("split", ["train", "heldout"])
def test_sweep_every_id(split, tmp_path):
    problems = []
    for i in IDS:
        env = gym_llm.make(i, split=split, seed=0)
        _, info = env.reset(options={"task_index": 1})
        task = env.unwrapped.task
        if not set(info) >= RESET_KEYS or info["env_id"] != i or info["domain"] != "reasoning":
            problems.append((i, "info", sorted(info)))
        if task.metadata["source"] != family_of(i) or task.split != split:
            problems.append((i, "metadata", task.metadata["source"]))
        if task.answer is not None:
            reward = env.step(f"Thinking. <answer>{task.answer}</answer>")[1]
            if reward != 1.0:
                problems.append((i, "reference", reward))
            env.reset(options={"task_index": 1})
            reward = env.step(f"<answer>qqqq, {task.answer}, zzzz</answer>")[1]
            if reward != 0.0:
                problems.append((i, "hedge", reward))
        for kind, action in BAD.items():
            env.reset(options={"task_index": 1})
            _, reward, term, trunc, step_info = env.step(action)
            if reward != 0.0 or not (term or trunc) or not step_info.get("reason") or "reward_error" in step_info:
                problems.append((i, kind, reward, step_info.get("reason"), step_info.get("reward_error")))
        for code in CODE:
            mark = tmp_path / i.replace("/", "_")
            env.reset(options={"task_index": 1})
            if env.step(f"<answer>{code.format(mark=mark)}</answer>")[1] != 0.0 or mark.exists():
                problems.append((i, "ran the answer as code", code))
    assert not problems


@pytest.mark.slow
def test_splits_disjoint_by_id_and_question():
    problems = []
    for i in IDS:
        env = gym_llm.make(i, seed=0).unwrapped
        tasks = {s: [env.task_set.get(s, k) for k in range(4)] for s in ("train", "heldout")}
        ids = [{t.id for t in tasks[s]} for s in tasks]
        questions = [{t.prompt for t in tasks[s]} for s in tasks]
        if ids[0] & ids[1] or questions[0] & questions[1]:
            problems.append(i)
    assert not problems


def test_difficulty_reaches_the_curriculum():
    easy = gym_llm.make(env_id("basic_arithmetic"), seed=0, difficulty=0.0).unwrapped
    hard = gym_llm.make(env_id("basic_arithmetic"), seed=0, difficulty=1.0).unwrapped
    terms = [max(len(e.task_set.get("train", k).prompt) for k in range(8)) for e in (easy, hard)]
    assert terms[0] < terms[1]
    assert hard.task_set.get("train", 0).difficulty == 1.0


def test_tasks_are_the_same_for_the_same_seed_and_differ_across_indices():
    a = gym_llm.make(env_id("zebra_puzzles"), seed=3)
    b = gym_llm.make(env_id("zebra_puzzles"), seed=3)
    assert a.reset()[0] == b.reset()[0]
    prompts = {a.unwrapped.task_set.get("train", k).prompt for k in range(5)}
    assert len(prompts) == 5


@pytest.mark.parametrize("difficulty", [0.0, 0.5, 1.0])
def test_every_family_has_a_valid_config_at_every_difficulty(difficulty):
    """Curricula whose own configs fail validation (knight_swap) are lifted until they pass."""
    from gym_llm_reasoning.families import _config

    refused = []
    for family in catalogue():
        config = _config(family, difficulty, seed=0)
        try:
            config.validate() if hasattr(config, "validate") else None
        except AssertionError as e:
            refused.append((family, str(e)))
    assert not refused


def test_a_generator_does_not_change_the_process_decimal_precision() -> None:
    """decimal_arithmetic sets ``getcontext().prec`` when it generates: other
    domains' Decimal arithmetic in the same process must keep its precision."""
    import decimal

    before = decimal.getcontext().prec
    env = gym_llm.make("reasoning/DecimalArithmetic-v0", seed=3)
    for seed in range(5):
        env.reset(seed=seed)
    env.close()
    assert decimal.getcontext().prec == before
