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


# ------------------------------------------------------------ third round, issue 37
@pytest.mark.parametrize("answer", [
    "5 \\text{ (or } 7\\text{)}",                                     # the second value in parentheses...
    "5 \\; (\\text{or } 7)", "5 \\textrm{ (or 7)}", "5\\mbox{ (maybe 7)}", "5 \\text{ (7)}",
    "5 \\text{ if } n \\text{ odd} \\; 7 \\text{ if even}",           # ...a case split...
    "5 \\text{ if } n \\text{ is odd}", "5 \\text{ when } n \\text{ odd}, 7 \\text{ otherwise}",
    "\\begin{cases} 5 & n \\text{ odd} \\\\ 7 & n \\text{ even} \\end{cases}",
    "\\begin{dcases} 5 & n \\text{ odd} \\\\ 7 & \\text{else} \\end{dcases}",
    "\\text{either } 5 \\text{ or } 7", "5 \\text{ possibly } 7",     # ...other wordings
    "5 \\text{, possibly } 7", "5 \\text{ or possibly } 7", "5 \\text{ or more}", "5; 7", "5, \\text{or } 7",
    "\\color{red}{5, 7}", "\\text{Either}\\ 5",
])
def test_a_second_value_or_a_case_split_in_one_box_is_a_hedge(answer, slow):
    """Each earned 1.0 for gold 5 (math-verify drops text after a value as its unit,
    and reads only the first case)."""
    result = both(slow, "5", boxed(answer))
    assert result.score == 0.0 and result.info["reason"].startswith("hedged"), (answer, result.info)


@pytest.mark.parametrize(("gold", "answer"), [
    ("5", "5 \\text{ apples}"), ("12", "12\\text{ cm}^2"), ("12", "12 \\text{ cm}"), ("90", "90 \\text{ degrees}"),
    ("\\text{(C)}", "\\text{(C)}"), ("\\text{Option 2}", "\\text{Option 2}"), ("\\text{Oregon}", "\\text{Oregon}"),
    ("x = 2 \\text{ or } x = 3", "x = 3 \\text{ or } x = 2"),
])
def test_text_units_and_prose_answers_are_not_hedges(gold, answer, slow):
    assert both(slow, gold, boxed(answer)).score == 1.0


@pytest.mark.parametrize(("gold", "answer", "expected"), [
    ("\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}", "\\begin{pmatrix}1\\\\2\\end{pmatrix}", 1.0),
    ("\\begin{pmatrix}1\\\\2\\end{pmatrix}", "\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}", 1.0),
    ("\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}", "\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}", 1.0),
    # ``\\ `` read as ``\`` and a control space made every column vector one sum:
    ("\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}", "\\begin{pmatrix} 2 \\\\ 1 \\end{pmatrix}", 0.0),
    ("\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}", "\\begin{pmatrix} 3 \\end{pmatrix}", 0.0),
    ("\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}", "\\begin{pmatrix} 3 & 4 \\\\ 1 & 2 \\end{pmatrix}", 0.0),
])
def test_a_matrix_is_read_the_same_however_its_rows_are_spaced(gold, answer, expected, slow):
    assert both(slow, gold, boxed(answer)).score == expected


@pytest.mark.parametrize(("gold", "answer", "expected"), [
    ("12", "1.2e1", 1.0), ("1200", "1.2e3", 1.0), ("0.12", "1.2E-1", 1.0), ("-250", "-2.5e+2", 1.0),
    ("12", "1.3e1", 0.0), ("6e", "2e3", 0.0),
])
def test_scientific_notation_is_a_number(gold, answer, expected, slow):
    assert both(slow, gold, boxed(answer)).score == expected


@pytest.mark.parametrize(("answer", "expected"), [
    ("\\phantom{0}12", 1.0), ("\\color{red}12", 1.0), ("\\color{red}{12}", 1.0), ("\\textcolor{blue}{12}", 1.0),
    ("\\color[rgb]{1,0,0}12", 1.0), ("\\newcommand{\\x}{12}\\x", 1.0), ("\\def\\x{6}\\x+\\x", 1.0),
    ("\\renewcommand\\half{6} 2 \\cdot \\half", 1.0),
    ("\\color{red}13", 0.0), ("\\phantom{12}13", 0.0), ("\\newcommand{\\x}{13}\\x", 0.0),
    ("\\newcommand{\\x}[1]{#1}\\x{12}", 0.0),  # a macro with arguments is not expanded: unreadable
    ("\\newcommand{\\x}{12}\\xy", 0.0),         # \xy is not \x
])
def test_harmless_macros_change_nothing(answer, expected, slow):
    assert both(slow, "12", boxed(answer)).score == expected, answer


def test_a_macro_bomb_stays_small_and_fast():
    import time

    defs = "".join(f"\\newcommand{{\\m{chr(97 + k)}}}{{\\m{chr(98 + k)}\\m{chr(98 + k)}}}" for k in range(24))
    t0 = time.monotonic()
    result = verify("12", boxed(defs + "\\ma"))
    assert result.score == 0.0 and time.monotonic() - t0 < 3.0


@pytest.mark.parametrize(("gold", "response"), [
    ("{1,2,3}", "\\boxed{1} and \\boxed{2} and \\boxed{3}"),         # several boxes, one gold set
    ("{1,2,3}", "\\boxed{1},\\boxed{2},\\boxed{3}"),
    ("\\{1, 2, 3\\}", "\\boxed{3}, \\boxed{1}, \\boxed{2}"),
    ("\\boxed{1} papers and \\boxed{2} bins", "\\boxed{1,2}"),          # ...and the reverse
    ("$\\boxed{1}\\boxed{2}$", "\\boxed{\\{2, 1\\}}"),
    ("\\boxed{2}, \\boxed{3} and \\boxed{5}", "\\boxed{{2, 3, 5}}"),
    ("W(x)=1 or W(x)=-1", "\\boxed{W(x) = 1, W(x) = -1}"),
    ("W(x)=1orW(x)=-1", "\\boxed{W(x)=1 \\text{ and } W(x)=-1}"),
    ("W(x)=1 \\text{ or } W(x)=-1", "\\boxed{W(x) = -1} or \\boxed{W(x) = 1}"),
    ("(5, 8), (8, 5)", "\\boxed{(x, y) = (5, 8) \\quad \\text{and} \\quad (8, 5)}"),
    ("(5, 8)", "\\boxed{(x, y) = (5, 8)}"),
])
def test_a_set_matches_however_it_is_boxed(gold, response, slow):
    assert both(slow, gold, response).score == 1.0


@pytest.mark.parametrize(("gold", "response"), [
    ("{1,2,3}", "\\boxed{1},\\boxed{2}"), ("{1,2,3}", "\\boxed{1},\\boxed{2},\\boxed{3},\\boxed{4}"),
    ("\\boxed{1} papers and \\boxed{2} bins", "\\boxed{2}"),
    ("\\boxed{1} no no no no no \\boxed{2}", "\\boxed{1,2}"),         # a derivation between: the last box
    ("\\boxed{\\frac{10}{2}} = \\boxed{5}", "\\boxed{10/2, 5}"),
    ("W(x)=1 or W(x)=-1", "\\boxed{W(x) = 1}"), ("W(x)=1 or W(x)=-1", "\\boxed{W(x) = 1, W(x) = 2}"),
    ("(5, 8), (8, 5)", "\\boxed{(x, y) = (5, 8) \\quad \\text{and} \\quad (8, 6)}"),
    ("(5, 8)", "\\boxed{(x, y) = (5, 9)}"), ("13", "\\boxed{{2, 3, 5, 7, 13}}"),
    ("2, 3", "\\boxed{2, 3 \\text{ (or } 4\\text{)}}"), ("2, 3", "\\boxed{2} and \\boxed{3 \\text{ (possibly 4)}}"),
])
def test_a_set_is_still_matched_as_a_set(gold, response, slow):
    assert both(slow, gold, response).score == 0.0


def test_a_long_decimal_of_a_rational_matches_only_under_the_lenient_knob(slow):
    """``0.0833333333333333`` is not 1/12 (it is 833333333333333/10^16): exact by default,
    as ``0.333333`` is not 1/3; under ``lenient_decimals`` it rounds to it, as any decimal may."""
    assert both(slow, "\\frac{1}{12}", boxed("0.0833333333333333")).score == 0.0
    assert both(slow, "\\frac{1}{12}", boxed("0.0833333333333333"), lenient_decimals=True).score == 1.0
    assert both(slow, "\\frac{1}{12}", boxed("0.0833"), lenient_decimals=True).score == 1.0
    assert both(slow, "\\frac{1}{12}", boxed("0.0833333333333334"), lenient_decimals=True).score == 0.0  # 1/12 rounds to ...333


@pytest.mark.parametrize(("gold", "answer"), [
    ("x = 11", "x = 5+5+1 = 7 = 11"),   # a relation chain with a false step is a hedge
    ("z = 2", "z = 3+3 = 2"),
    ("1000.99", "1000,99"),              # a decimal comma: 1000,99 is two values (or a typo of 100,099)
    ("1.22", "1,22"),
])
def test_deliberate_strictness(gold, answer, slow):
    """math-verify accepts these; docs/math.md says why we do not."""
    assert both(slow, gold, boxed(answer)).score == 0.0
