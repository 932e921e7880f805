"""The math reward attacked: unexpanded answers spelled to slip past a form
check, real answer formats the verifier must read, and near-miss values it
must not accept. Every verdict is checked with the fast path on and off."""

from __future__ import annotations

import re

import pytest
from gym_llm_math import Verifier, verify

import gym_llm


def boxed(answer: str) -> str:
    return f"so the answer is \\boxed{{{answer}}}"


@pytest.fixture(scope="module")
def slow():
    v = Verifier(workers=1, fast_path=False)
    yield v
    v.close()


def both(slow, gold, response, **kwargs):
    """The verdict with the fast path on, checked equal with it off."""
    fast = verify(gold, response, **kwargs)
    assert slow(gold, response, **kwargs).score == fast.score, (gold, response)
    return fast


# ------------------------------------------------------------ the asked form
def form_tasks(kind, n=4):
    env = gym_llm.make("math/Algebra-v0", difficulty=0.9)
    found = []
    for i in range(200):
        task = env.unwrapped.task_set.get("train", i)
        if task.metadata["kind"] == kind:
            found.append((env, task))
        if len(found) == n:
            return found
    raise AssertionError(f"no {kind} tasks")


def _expand_attacks(question: str, answer: str) -> list[str]:
    """Equivalent, unexpanded spellings of an expansion task's answer."""
    lead, f1, f2 = re.search(r"Expand (\d*)\((x [+-] \d+)\)\((x [+-] \d+)\)", question).groups()
    k = lead or "1"
    return [
        f"{k}\\cdot{{{f1}}}\\cdot{{{f2}}}",                      # brace grouping
        f"{k}{{{f1}}}{{{f2}}}",                                  # juxtaposed braces
        f"\\cfrac{{{k}\\cdot{{{f1}}}\\cdot{{{f2}}}\\cdot{{x + 1}}}}{{x + 1}}",  # \cfrac
        f"{{{answer}}}\\cdot{{x + 1}} \\div {{x + 1}}",          # \div
        f"{answer} + x \\cdot x^{{-1}} - 1",                     # a negative power
    ]


def _simplify_attacks(question: str, answer: str) -> list[str]:
    num, den = re.search(r"Simplify \((.+?)\) / \((x [+-] \d+)\)", question).groups()
    return [
        f"\\cfrac{{{num}}}{{{den}}}",
        f"{{{num}}} \\div {{{den}}}",
        f"{{{num}}} \\cdot {{{den}}}^{{-1}}",
        f"{answer} + {{{den}}}^{{-1}}\\cdot{{{den}}} - 1",
    ]


@pytest.mark.parametrize(("kind", "attacks"), [("expand", _expand_attacks), ("simplify", _simplify_attacks)])
def test_equivalent_but_unexpanded_spellings_earn_zero(kind, attacks):
    for env, task in form_tasks(kind):
        question = task.prompt
        for attack in attacks(question, task.answer):
            assert verify(task.answer, boxed(attack)).score == 1.0, attack  # right in value...
            env.reset(options={"task_index": task.metadata["index"]})
            _, r, _, _, info = env.step(boxed(attack))
            assert r == 0.0 and "form" in info["reason"], (attack, info)  # ...wrong in form
        env.reset(options={"task_index": task.metadata["index"]})
        assert env.step(boxed(task.answer))[1] == 1.0


# ------------------------------------------------------- real answer formats
@pytest.mark.parametrize(("gold", "answer"), [
    ("11111100", "11,\\! 111,\\! 100"),
    ("1000", "\\$1,\\!000"),
    ("1,000,000", "1,\\! 000,\\! 000"),
    ("28 percent", "28\\,\\%"),
    ("28\\,\\%", "0.28"),
])
def test_separators_and_percent_spellings_match(gold, answer, slow):
    assert both(slow, gold, boxed(answer)).score == 1.0


@pytest.mark.parametrize("response", [
    "x = 2 gives \\boxed{2} and x = 3 gives \\boxed{3}",
    "\\boxed{x = 3}, \\boxed{x = 2}",
    "\\boxed{3} \\text{ and } \\boxed{2}",
    "\\boxed{2} or \\boxed{3, 2}",
])
def test_a_set_of_solutions_may_be_answered_in_several_boxes(response, slow):
    for gold in ("2, 3", "\\{2, 3\\}", "x = 2 \\text{ or } x = 3"):
        assert both(slow, gold, response).score == 1.0, gold
    # ...and is still matched as a set: a missing or an extra value is wrong
    assert both(slow, "2, 3, 5", response).score == 0.0
    assert both(slow, "2", response).score == 0.0
    assert both(slow, "2, 3", response + " \\boxed{4}").score == 0.0
    # a set expression is one value, not a list to split
    assert both(slow, "2, 3", response + " \\boxed{\\{2, 3\\} \\cup \\{4\\}}").score == 0.0
    assert both(slow, "2, 3", response + " \\boxed{\\{2\\} \\cup \\{3\\}}").score == 1.0


@pytest.mark.parametrize(("solution", "right", "wrong"), [
    ("The answer is $\\frac{3}{4}$, since 3 of the 4 parts are shaded.", "\\frac34", "4"),
    ("We add 3 and 4. The answer is 7 apples. Check: $7 < 10$.", "7", "10"),
    ("Final answer: 36\nWe used $3$ boxes of $12$ eggs.", "36", "3"),
    ("So the answer is $x = 5$; the other root, $x = -2$, is rejected.", "5", "-2"),
    ("The answer is \\(42\\), and 6 times 7 checks it.", "42", "7"),
])
def test_gold_that_is_a_whole_solution_uses_its_marked_answer(solution, right, wrong, slow):
    assert both(slow, solution, boxed(right)).score == 1.0
    assert both(slow, solution, boxed(wrong)).score == 0.0


@pytest.mark.parametrize("solution", [
    "The total is 7 apples. We double check: 3 + 4 = 7, and 7 is less than 10.",
    "First she buys 4 pens.\nThen 6 more, so 10 pens in all, costing 20 dollars.",
])
def test_a_solution_without_a_marked_answer_is_a_reward_error_not_a_guess(solution):
    for answer in ("7", "10", "20"):
        result = verify(solution, boxed(answer))
        assert result.score == 0.0 and result.error and "whole solution" in result.error


# --------------------------------------------------------- false positives
@pytest.mark.parametrize(("gold", "answer"), [
    ("\\frac{1}{2006!}", "\\frac{1}{2004!}"),     # both underflow a float check
    ("10^{-400}", "10^{-401}"),
    ("e^{-1000}", "2e^{-1000}"),
    ("\\sqrt{2}", "1.41421356"),                   # truncated decimals of irrationals
    ("\\pi", "3.14159265"),
    ("\\frac{1}{3}", "0.333333"),
    ("\\frac{\\sqrt{2}}{2}", "0.7071068"),
    ("(\\sqrt{2}, 1)", "(1.414214, 1)"),
])
def test_near_misses_are_wrong(gold, answer, slow):
    assert both(slow, gold, boxed(answer)).score == 0.0


@pytest.mark.parametrize(("gold", "answer", "lenient"), [
    ("\\sqrt{2}", "1.41421356", 1.0),
    ("\\frac{1}{3}", "0.333333", 1.0),
    ("\\pi", "3.1416", 1.0),
    ("\\pi", "3.1415", 0.0),                       # rounds to 3.1416, not 3.1415
    ("\\frac{1}{3}", "0.334", 0.0),
    ("\\frac{1}{2006!}", "\\frac{1}{2004!}", 0.0),  # not decimals: never lenient
])
def test_lenient_decimals_is_a_knob_that_rounds(gold, answer, lenient, slow):
    assert both(slow, gold, boxed(answer), lenient_decimals=True).score == lenient
    env = gym_llm.make("math/Arithmetic-v0", lenient_decimals=True)
    assert env.unwrapped.lenient_decimals is True


def test_exact_values_still_match_exactly(slow):
    for gold, answer in [("\\frac{1}{2006!}", "\\frac{1}{2006 \\cdot 2005!}"), ("\\frac{1}{2}", "0.5"),
                         ("\\sqrt{8}", "2\\sqrt{2}"), ("10^{-400}", "\\frac{1}{10^{400}}")]:
        assert both(slow, gold, boxed(answer)).score == 1.0, (gold, answer)
    assert both(slow, "\\frac{1}{2006!}", boxed("\\frac{1}{2004!}")).score == 0.0
