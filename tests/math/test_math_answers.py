"""Answer normalisation: plain numbers, multi-valued answers, and the fast
path agreeing with math-verify on numbers beyond the table."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import pytest
from gym_llm_math.answers import compare_numbers, is_multi_valued, is_single_value, plain_number
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


@pytest.mark.parametrize(("text", "value", "percent"), [
    ("42", 42, False), ("-7", -7, False), ("\u22127", -7, False), ("+3", 3, False), ("007", 7, False),
    ("1,234,567", 1234567, False), ("1{,}000", 1000, False), ("1\\,000", 1000, False),
    ("12.50", Fraction(25, 2), False), (".5", Fraction(1, 2), False), ("5.", 5, False),
    ("\\$1,000.00", 1000, False), ("$-3", -3, False), ("-$3", -3, False), ("€12", 12, False),
    ("3/4", Fraction(3, 4), False), ("\\frac{3}{4}", Fraction(3, 4), False), ("\\dfrac34", Fraction(3, 4), False),
    ("-\\frac{1}{2}", Fraction(-1, 2), False), ("25\\%", 25, True), ("25 percent", 25, True),
    ("12 apples", 12, False), ("3.5 km/h", Fraction(7, 2), False), ("90^{\\circ}", 90, False),
    ("20 \\text{ cm}", 20, False), ("$5$", 5, False), ("\\text{12}", 12, False), ("12.", 12, False),
    ("1e3", 1000, False), ("1.2e1", 12, False), ("1.2E-1", Fraction(3, 25), False), ("-2.5e+2", -250, False),
    ("\\color{red}12", 12, False), ("\\phantom{0}12", 12, False),
])
def test_plain_numbers(text, value, percent):
    n = plain_number(text)
    assert n is not None and n.value == value and n.percent == percent


@pytest.mark.parametrize("text", [
    "", "x", "5x", "12cm", "1,5", "1,00", "2^3", "\\sqrt{2}", "1e", "e3", "1e3.5", "5 7", "\\frac{1}{0}", "(1, 2)",
    "--5", "5 - 3", "1" * 2000, "\\frac{x}{2}", "5 \\text{ or more}", "5 \\text{ (or 7)}", "5 \\text{ if odd}",
    "5 possibly",
])
def test_not_plain_numbers(text):
    assert plain_number(text) is None


@pytest.mark.parametrize(("text", "multi"), [
    ("5, 7", True), ("5 \\text{ or } 7", True), ("x = 1 or x = 2", True), ("\\pm 5", True),
    ("1 \\pm \\sqrt{2}", True), ("2; 3", True), ("2 \\quad 3", True), ("2 \\lor 3", True),
    ("1,000", False), ("(1, 2)", False), ("\\{1, 2\\}", False), ("[1, 2)", False), ("f(x, y)", False),
    ("\\begin{pmatrix}1 & 2\\\\3 & 4\\end{pmatrix}", False), ("\\frac{1}{2}", False), ("color", False),
    ("2\\,\\sqrt{3}", False), ("x^2+3\\,x+2", False), ("2\\sqrt{3}\\;", False), ("2\\sqrt{3}\\quad", False),
    ("\\sqrt{2},", False),
    # a second value hidden at any depth, or a case split (issue 37)
    ("5 \\text{ (or } 7\\text{)}", True), ("5 \\; (\\text{or } 7)", True), ("5 \\text{ possibly } 7", True),
    ("\\text{either } 5", True), ("5 \\text{ if } n \\text{ odd} \\; 7 \\text{ if even}", True),
    ("5 \\text{ when } n \\text{ odd}", True), ("5 \\textrm{ (7)}", True), ("5\\mbox{ (maybe 7)}", True),
    ("\\begin{cases} 5 & n \\text{ odd} \\\\ 7 & n \\text{ even} \\end{cases}", True), ("1orW(x)=-1", True),
    ("5 \\text{ apples}", False), ("12\\text{ cm}^2", False), ("\\text{Option 2}", False), ("\\text{(C)}", False),
    ("5 \\text{ for all } n", False), ("\\text{Oregon}", False), ("\\begin{pmatrix}1\\\\2\\end{pmatrix}", False),
])
def test_multi_valued(text, multi):
    assert is_multi_valued(text) is multi


@pytest.mark.parametrize(("gold", "single"), [
    ("5", True), ("1,000", True), ("x^2 + 1", True), ("\\text{Monday}", True),
    ("(3, 1)", False), ("2, 3", False), ("\\{1, 2\\}", False), ("\\begin{pmatrix}1 & 2\\end{pmatrix}", False),
])
def test_single_value(gold, single):
    assert is_single_value(gold) is single


def _styles(value: Decimal) -> st.SearchStrategy[str]:
    whole = int(abs(value))
    frac = format(abs(value), "f").partition(".")[2]
    sign = "-" if value < 0 else ""
    tail = f".{frac}" if frac else ""
    return st.sampled_from([
        f"{sign}{whole}{tail}", f"{sign}{whole:,}{tail}", f"{sign}\\${whole:,}{tail}",
        f"{sign}{whole}{tail}{'' if tail else '.'}00", f"{sign}000{whole}{tail}",
        f"{sign}{whole:,}{tail}".replace(",", "{,}"), f"{sign}{whole}{tail} \\text{{ units}}",
    ])


decimals = st.decimals(min_value=-10**9, max_value=10**9, places=3, allow_nan=False, allow_infinity=False)


@given(value=decimals, data=st.data())
def test_plain_number_reads_every_style_exactly(value, data):
    text = data.draw(_styles(value))
    n = plain_number(text)
    assert n is not None and n.value == Fraction(value), text


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(a=decimals, delta=st.sampled_from([0, 1e-9, 1e-7, 4e-7, 6e-7, 1e-6, 3e-6, 1e-3, 1, 1000]),
       use_int=st.booleans())
def test_fast_path_agrees_with_math_verify_on_numbers(a, delta, use_int, slow_verifier):
    gold = str(int(a)) if use_int else format(a, "f")
    pred = format(Decimal(gold) + Decimal(str(delta)), "f")
    fast = compare_numbers(plain_number(gold), plain_number(pred))
    slow = slow_verifier(gold, f"\\boxed{{{pred}}}").score == 1.0
    assert fast == slow, (gold, pred, fast, slow)

