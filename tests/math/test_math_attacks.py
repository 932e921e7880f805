"""The math reward attacked: unexpanded answers spelled to slip past a form
check, real answer formats the verifier must read, and near-miss values it
must not accept. Every verdict is checked with the fast path on and off."""

from __future__ import annotations

import re

import pytest
from gym_llm_math import Verifier, verify
from gym_llm_math.envs import score_answer

import gym_llm
import gym_llm.envs.parsing


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


# ------------------------------------------- boxes in boxes, relations, spacing
@pytest.mark.parametrize("answer", ["6 \\boxed{5}", "6 \\fbox{5}", "6 \\boxed 5", "6, \\boxed{5}"])
def test_a_box_inside_the_answer_box_is_wrong_not_graded_on_the_inner_box(answer, slow):
    result = both(slow, "5", boxed(answer))
    reason = result.info["reason"]
    assert result.score == 0.0 and ("box inside" in reason or reason.startswith("hedged")), reason


def test_a_box_after_a_newline_is_a_box():
    assert gym_llm.envs.parsing.extract_boxed("\\boxed\n{6} then \\boxed\r\n\t{5}") == ["6", "5"]
    assert verify("5", "\\boxed\n{6} then \\boxed{5}").info["reason"] == "hedged: boxed answers disagree"


@pytest.mark.parametrize("answer", ["7 = 5", "y = 6 = 5", "x=7 \\Rightarrow x=5", "5 \\approx 6", "x = 5 = 7",
                                    "5 \\equiv 6"])
def test_a_relation_between_different_values_is_a_hedge(answer, slow):
    result = both(slow, "5", boxed(answer))
    assert result.score == 0.0 and result.info["reason"].startswith("hedged"), result.info


@pytest.mark.parametrize(("gold", "answer"), [
    ("5", "x = 5"), ("5", "x = 2 + 3 = 5"), ("5", "f(2) = 5"), ("30", "\\angle ABC = 30"), ("5", "a_{10} = 5"),
    ("x = 2", "x = 1 + 1 = 2"), ("y = 2x + 3", "2x + 3 = y"), ("(3, -1)", "x=3, y=-1"),
])
def test_a_named_value_and_agreeing_sides_are_one_value(gold, answer, slow):
    assert both(slow, gold, boxed(answer)).score == 1.0


def test_a_relation_hedge_hides_neither_in_a_tuple_nor_in_an_equation_gold(slow):
    assert both(slow, "(3, -1)", boxed("x = 7 = 3, y = -1")).score == 0.0
    assert both(slow, "x = 2", boxed("x = 7 = 2")).score == 0.0


@pytest.mark.parametrize(("gold", "answer"), [
    ("2\\sqrt{3}", "2\\,\\sqrt{3}"), ("12", "12\\,\\text{cm}^2"), ("\\frac{1}{2}", "\\int_0^1 x\\,dx"),
    ("x^{2} + 3x + 2", "x^2+3\\,x+2"), ("2\\sqrt{3}", "2\\sqrt{3}\\;"), ("2\\sqrt{3}", "2\\sqrt{3}\\quad"),
])
def test_spacing_commands_are_not_hedge_separators(gold, answer, slow):
    assert both(slow, gold, boxed(answer)).score == 1.0


@pytest.mark.parametrize(("gold", "answer"), [("\\sqrt{2}", "\\sqrt{2}."), ("(1, 2)", "(1, 2)."), ("12", "12."),
                                              ("x^{2} + 3x + 2", "x^{2}+3x+2.")])
def test_a_final_full_stop_is_normalised_on_every_path(gold, answer, slow):
    assert both(slow, gold, boxed(answer)).score == 1.0


# ------------------------------------------------- the asked form, unsimplified
@pytest.mark.parametrize(("gold", "answer"), [
    ("x^{2} + 3x + 2", "x^2+2x+x+2"),           # like terms not combined
    ("x^{2} + 3x + 2", "x^2+3x+4/2"),           # arithmetic left between numbers
    ("x^{2} + 3x + 2", "x^2+3x+\\frac{4}{2}"),
    ("x^{2} + 3x + 2", "x^2+3x+(-1)(-2)"),
    ("x^{2} + 3x + 2", "x \\cdot x+3x+2"),
    ("x^{2} + 3x + 2", "x^2+3x+1+1"),
    ("x^{2} + 3x + 2", "x^2+3x+2^1"),
    ("x^{2} + 3x + 2", "x^2+3x+2+0x"),
    ("x^{2} + 3x + 2", "(x+1)(x+2) = x^2+3x+2"),  # the question's product beside the answer
    ("x + 6", "x+\\frac{12}{2}"),
    ("x + 6", "x+4 \\div 2 + 4"),
    ("x + 6", "x + 2 \\cdot 3"),
])
def test_unsimplified_expanded_forms_fail_the_form_check(gold, answer):
    task = gym_llm.Task(id="t", prompt="p", answer=gold, metadata={"form": "expanded"})
    assert verify(gold, boxed(answer)).score == 1.0, answer  # right in value...
    result = score_answer(task, boxed(answer))
    assert result.score == 0.0 and "form" in result.info["reason"], (answer, result.info)  # ...wrong in form


@pytest.mark.parametrize(("gold", "answer"), [
    ("x^{2} + 3x + 2", "2 + 3x + x^2"), ("x^{2} - 3x + 2", "x^2-3x+2"), ("-x^{2} + 1", "-x^2+1"),
    ("\\frac{3}{2}x + 1", "\\frac{3}{2}x+1"), ("-\\frac{3}{2}x", "-\\frac{3}{2}x"), ("x + 6", "f(x) = x + 6"),
    ("x^{2} + 3x + 2", "x^{2}+3x+2."),
])
def test_expanded_forms_pass_the_form_check(gold, answer):
    task = gym_llm.Task(id="t", prompt="p", answer=gold, metadata={"form": "expanded"})
    result = score_answer(task, boxed(answer))
    assert result.score == 1.0, (answer, result.info)


# ------------------------------------------------------------ second round, 2026-12-06
@pytest.mark.parametrize("answer", ["6 \\sim 5", "6 \\mid 5", "\\cancel{6} 5", "6 \\Leftarrow 5", "6 {=} 5",
                                    "6 @ 5", "6 ? 5", "6 \\leftrightarrow 5", "6 \\texttt{or} 5",
                                    "6 \\text{ (or } 5)", "6 \\operatorname{or} 5"])
def test_a_box_the_latex_parser_cannot_read_is_not_graded_on_its_last_number(answer, slow):
    """math-verify's default extraction falls back to the last number of a box its
    LaTeX parser cannot read: every one of these earned 1 for gold 5."""
    assert both(slow, "5", boxed(answer)).score == 0.0


@pytest.mark.parametrize("answer", ["\\cos(0) = 5", "\\log(6) = 5", "\\Gamma(6) = 5", "e = 5", "i = 5",
                                    "\\mathrm{e} = 5"])
def test_a_value_does_not_pass_for_a_name_on_the_left_of_a_relation(answer, slow):
    result = both(slow, "5", boxed(answer))
    assert result.score == 0.0 and result.info["reason"].startswith("hedged"), result.info


def test_one_call_has_one_time_budget_across_its_comparisons():
    """Seven slow but equal sides of one relation (each about 3 s in sympy) took 27 s,
    each within its own 5 s limit."""
    import time

    def slow_five(n):
        return f"\\frac{{{n}!}}{{{n - 1}!}} - {n - 5}"

    v = Verifier(workers=1, timeout_s=5.0, call_timeout_s=4.0)
    try:
        chain = " = ".join(["x"] + [slow_five(380000 + 1000 * k) for k in range(7)] + ["5"])
        t0 = time.monotonic()
        result = v("5", boxed(chain))
        assert time.monotonic() - t0 < 8.0 and result.score == 0.0 and "timed out" in result.info["reason"]
        assert v("5", boxed("x = 2 + 3 = 5")).score == 1.0  # the budget is per call
    finally:
        v.close()
