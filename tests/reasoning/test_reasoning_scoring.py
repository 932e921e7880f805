"""Leniency classes of reasoning-gym's verifiers, each shown on a real task:
reasoning-gym's own ``score_answer`` pays the gamed answer (the test's first
assertion: it fails on nothing once reasoning-gym is fixed upstream), ours
pays 0; the reference still earns 1.0 through ours."""

from __future__ import annotations

import time

import pytest
from gym_llm_reasoning import env_id
from gym_llm_reasoning.scoring import lists_candidates

import gym_llm


def task_of(family: str, index: int = 0, **kwargs):
    env = gym_llm.make(env_id(family), seed=0, **kwargs).unwrapped
    env.reset(options={"task_index": index})
    return env


def their_score(env, answer: str) -> float:
    """reasoning-gym's own verdict on ``answer``."""
    meta = env.task.metadata
    from gym_llm_reasoning.families import dataset

    return dataset(meta["source"], env.task.difficulty, meta["rg_block"]).score_answer(answer, meta["rg_entry"])


def our_score(env, answer_turn: str) -> float:
    env.reset(options={"task_index": env.unwrapped.task.metadata["index"]})
    return env.step(answer_turn)[1]


def hedge(family: str, make_answer) -> tuple[float, float, float]:
    env = task_of(family)
    gold = env.task.answer
    gamed = make_answer(gold, env.task)
    return their_score(env, gamed), our_score(env, f"<answer>{gamed}</answer>"), our_score(env, f"<answer>{gold}</answer>")


# (family, gamed answer from the reference): the classes found, one family each
LENIENCIES = {
    # default score_answer: len(gold)/len(answer) for any answer containing the gold
    "substring credit": ("basic_arithmetic", lambda gold, task: f"qqqq, {gold}, zzzz"),
    # Python truthiness: bool("False") == bool("True")
    "truthiness": ("game_of_life_halting",
                   lambda gold, task: "True" if gold == "False" else "False"),
    # the first number anywhere is the answer
    "first number": ("gsm_symbolic", lambda gold, task: f"{gold} or {int(float(gold)) + 1}"),
    # only the characters the verifier wants are read: junk and prose pass
    "characters picked out": ("quantum_lock", lambda gold, task: f"Press {gold} now!"),
    "grid digits picked out": ("kakurasu", lambda gold, task: "\n".join(f"row {r}" for r in gold.split("\n"))),
    "numbers picked out": ("polynomial_equations", lambda gold, task: f"qqqq, {gold}, zzzz"),
    # words that are no name skipped; a name claimed twice
    "claims picked out": ("knights_knaves", lambda gold, task: f"qqqq {gold} zzzz"),
    # partial credit for a near miss
    "partial credit": ("knights_knaves", lambda gold, task: flip_first_role(gold, task.prompt)),
}


def flip_first_role(gold: str, prompt: str) -> str:
    """``gold`` with its first person given the other role the puzzle names."""
    from reasoning_gym.logic.knights_knaves import VALID_ROLES

    named = sorted({w for w in prompt.lower().replace(",", " ").split() if w in VALID_ROLES})
    first = next(w for w in gold.lower().replace(".", " ").replace(",", " ").split() if w in VALID_ROLES)
    other = next(r for r in named if r != first)
    at = gold.lower().index(first)
    return gold[:at] + other + gold[at + len(first):]


@pytest.mark.parametrize("kind", list(LENIENCIES))
def test_leniency_paid_by_reasoning_gym_is_refused_here(kind):
    family, make_answer = LENIENCIES[kind]
    theirs, ours, reference = hedge(family, make_answer)
    assert theirs > 0.0, f"reasoning-gym no longer pays the {kind} answer"
    assert ours == 0.0
    assert reference == 1.0


def test_several_answer_blocks_earn_nothing_even_when_all_agree():
    env = task_of("basic_arithmetic")
    gold = env.task.answer
    assert our_score(env, f"<answer>{gold}</answer>") == 1.0
    env.reset(options={"task_index": 0})
    _, reward, _, _, info = env.step(f"<answer>{gold}</answer> <answer>{gold}</answer>")
    assert reward == 0.0 and info["hedge"] == "several answer blocks"


def test_candidate_lists_are_recognised():
    assert lists_candidates("4, 5, 6", "5")
    assert lists_candidates("5 or 6", "5")
    assert lists_candidates("Amelia is a hero, and Bob is a villain; Amelia is a villain",
                            "Amelia is a hero, and Bob is a villain")
    assert not lists_candidates("5", "5")
    assert not lists_candidates("1, 2, 3", "1, 2, 3")
    assert not lists_candidates("6", "5")


@pytest.mark.parametrize("family", ["graph_color", "propositional_logic", "rubiks_cube"])
def test_families_with_several_answers_show_a_reference_that_earns_full_reward(family):
    """reasoning-gym's answer is None here; its metadata holds a valid one."""
    env = task_of(family)
    assert env.task.answer
    assert our_score(env, f"<answer>{env.task.answer}</answer>") == 1.0


def test_answers_past_the_limit_are_not_read():
    env = task_of("basic_arithmetic")
    _, reward, _, _, info = env.step("<answer>" + "1" * 100_000 + "</answer>")
    assert reward == 0.0 and "over the" in info["reason"]


def test_a_verifier_that_raises_scores_zero_with_a_reason():
    env = task_of("prime_factorization")
    with pytest.raises(ValueError):
        their_score(env, "not a number")
    _, reward, _, _, info = env.step("<answer>not a number</answer>")
    assert reward == 0.0 and "reward_error" not in info and "raised" in info["reason"]


def test_strict_grader_wants_the_answer_at_the_end():
    env = task_of("basic_arithmetic")
    gold = env.task.answer
    prompt = env.messages[:]
    good = prompt + [{"role": "assistant", "content": f"so <answer>{gold}</answer>"}]
    retracted = prompt + [{"role": "assistant", "content": f"<answer>{gold}</answer> no wait, it is 3"}]
    assert env.strict_score(good, 1.0).score == 1.0
    assert env.strict_score(retracted, 1.0).score == 0.0


def test_wrong_answer_gets_feedback_and_a_discounted_retry():
    env = gym_llm.make(env_id("basic_arithmetic"), seed=0, max_turns=2)
    env.reset(options={"task_index": 0})
    gold = env.unwrapped.task.answer
    obs, reward, term, trunc, _ = env.step("no tags here")
    assert reward == 0.0 and not (term or trunc) and "<answer>" in obs[0]["content"]
    _, reward, term, _, _ = env.step(f"<answer>{gold}</answer>")
    assert term and reward == 0.5


def test_the_warm_start_finds_a_rendering_of_the_reference():
    """gym-llm-train's SFT warm start tries reference_candidates in order; one must earn 1.0 here."""
    from gym_llm_trainers.sft import reference_candidates

    env = task_of("basic_arithmetic")
    rewards = []
    for candidate in reference_candidates(env.task.answer):
        env.reset(options={"task_index": 0})
        rewards.append(env.step(candidate)[1])
    assert rewards[-1] == 1.0 and max(rewards[:-1]) == 0.0


def test_the_tag_parser_is_total_and_linear():
    import time

    from gym_llm.envs.parsing import extract_tagged

    assert extract_tagged("a <answer> 5 </answer> <ANSWER>x<answer>y</Answer> <answer>open") == ["5", "x<answer>y"]
    assert extract_tagged(None) == [] and extract_tagged("<a>1</a>", "a b") == []
    start = time.perf_counter()
    for flood in ("<answer>" * 200_000, "</answer><answer>" * 100_000, "<answe" * 200_000):
        extract_tagged(flood)
    assert time.perf_counter() - start < 5.0  # a regex over the whole text from each opener was quadratic


@pytest.mark.parametrize("family", ["puzzle24", "countdown", "simple_integration", "intermediate_integration"])
def test_expression_answers_are_arithmetic_only(family):
    from gym_llm_reasoning.scoring import EXPRESSIONS, is_expression

    operators, names = EXPRESSIONS[family]
    for difficulty in (0.0, 1.0):
        for index in range(0, 20, 4):
            task = task_of(family, index, difficulty=difficulty).task
            variable = task.metadata["rg_entry"]["metadata"].get("variable")
            assert is_expression(task.answer, operators, names | {variable} if variable else names), task.answer
    # each of these reached reasoning-gym's parse_expr: code, or a number too big to compute
    for attack in ["9**9**9**9", "2**(999*999)", "x**(9**9)", "x**2**99", "__import__('os')", "x.real",
                   "(lambda: 24)()", "'24'", "1e999999", "9" * 13, "[24]", "24; 1", "24 if 1 else 0"]:
        assert not is_expression(attack, operators, names | {"x"}), attack


def test_a_verdict_past_the_deadline_scores_zero_and_the_next_verdict_runs(monkeypatch):
    from gym_llm_reasoning import verifier

    env = task_of("intermediate_integration", 1)
    monkeypatch.setattr(verifier, "TIMEOUT_S", 3.0)
    slow = "sin(" * 12 + "x" + ")" * 12  # sympy's simplify of its derivative: about 20 s
    env.reset(options={"task_index": 1})
    started = time.monotonic()
    _, reward, *_, info = env.step(f"<answer>{slow}</answer>")
    assert reward == 0.0 and "ran past 3 s" in info["reason"]
    assert time.monotonic() - started < 15  # the deadline, plus a worker start on a loaded machine
    monkeypatch.undo()
    assert our_score(env, f"<answer>{env.task.answer}</answer>") == 1.0  # a new worker
