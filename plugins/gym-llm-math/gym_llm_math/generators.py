"""Procedural task generators: ``generate(rng, difficulty) -> Draft``.

Each is deterministic in ``rng``; ``difficulty`` in [0, 1] scales the size of
numbers, the number of steps and the kinds of problems. Difficulty 0 is
deliberately easy (one-digit addition and subtraction, one-step equations and
word problems) so that a tiny model can learn from it; just above it, arithmetic
is place value (two-digit plus one-digit without carrying), the easiest rung
whose held-out problems a tiny model can solve by what it learnt on train. Every draft's
``answer`` is a string whose ``\\boxed{answer}`` earns full reward, and it
never appears verbatim in the prompt (the answer must not leak through the
observation, not even by coincidence).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from fractions import Fraction

from gym_llm import Draft

from .answers import format_number

__all__ = ["arithmetic", "algebra", "word_problems", "GENERATORS"]

#: Redraws allowed when a draft is rejected (answer visible in the prompt,
#: division by zero, ...). Rejections are rare, so this is never reached.
_MAX_REDRAWS = 200


def _answer(value: Fraction) -> str:
    """A generated task's answer: decimals up to 4 places, else ``\\frac``."""
    return format_number(value, max_decimal_denominator=10_000)


def _leaks(answer: str, prompt: str) -> bool:
    return answer in prompt


def _redraw(make: Callable[[random.Random, float], Draft | None]) -> Callable[[random.Random, float], Draft]:
    """Wrap a generator that may reject a draw (``None``) so that it redraws
    from the same random stream until a draft is acceptable."""

    def generate(rng: random.Random, difficulty: float) -> Draft:
        for _ in range(_MAX_REDRAWS):
            draft = make(rng, difficulty)
            if draft is not None and not _leaks(draft.answer, draft.prompt):
                return draft
        raise RuntimeError(f"{make.__name__}: no acceptable draft in {_MAX_REDRAWS} draws")

    generate.__name__ = make.__name__
    generate.__doc__ = make.__doc__
    return generate


# ---------------------------------------------------------------------------
# arithmetic

_PRECEDENCE = {"+": 1, "-": 1, "×": 2, "÷": 2}


def _apply(op: str, a: Fraction, b: Fraction) -> Fraction | None:
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "×":
        return a * b
    return None if b == 0 else a / b


def _operand(rng: random.Random, digits: int, kinds: list[str]) -> tuple[Fraction, str, str]:
    """(value, text, kind) of one random positive operand."""
    kind = rng.choice(kinds)
    if kind == "fraction":
        den = rng.randint(2, 12)
        value = Fraction(rng.randint(1, den - 1), den)
        return value, f"{value.numerator}/{value.denominator}", kind
    if kind == "decimal":
        value = Fraction(rng.randint(1, 10**digits * 10 - 1), rng.choice([10, 100]))
        return value, _answer(value), kind
    value = Fraction(rng.randint(1 if digits == 1 else 10 ** (digits - 1), 10**digits - 1))
    return value, str(value), kind


#: (units digit, one-digit addend) pairs whose sum stays a single digit.
_NO_CARRY_PAIRS = [(u, b) for u in range(9) for b in range(1, 10 - u)]

_Node = tuple[Fraction, str, int]  # value, text, precedence of its top operator (3: a number)


def _expression(
    rng: random.Random, n_ops: int, digits: int, ops: list[str], kinds: list[str], used: set[str]
) -> _Node | None:
    """A random expression tree with ``n_ops`` operators, or ``None`` if the
    draw is unusable (division by zero, no exact integer division)."""
    if n_ops == 0:
        value, text, kind = _operand(rng, digits, kinds)
        used.add(kind)
        return value, text, 3
    op = rng.choice(ops)
    if op == "÷" and kinds == ["integer"]:
        # Integer-only problems divide by a divisor of the left side, so the
        # answer stays an integer whatever the tree.
        left = _expression(rng, n_ops - 1, digits, ops, kinds, used)
        if left is None or left[0] == 0:
            return None
        top = abs(left[0].numerator)
        divisors = [d for d in range(2, min(top, 10**digits - 1) + 1) if top % d == 0]
        if not divisors:
            return None
        d = rng.choice(divisors)
        right: _Node | None = (Fraction(d), str(d), 3)
    else:
        k = rng.randint(0, n_ops - 1)
        small = max(1, digits - 1) if op == "×" else digits
        left = _expression(rng, k, small, ops, kinds, used)
        right = _expression(rng, n_ops - 1 - k, small, ops, kinds, used)
    if left is None or right is None:
        return None
    value = _apply(op, left[0], right[0])
    if value is None:
        return None
    prec = _PRECEDENCE[op]
    lt = f"({left[1]})" if left[2] < prec else left[1]
    rt = f"({right[1]})" if right[2] < prec or (right[2] == prec and op in "-÷") else right[1]
    return value, f"{lt} {op} {rt}", prec


def _arithmetic(rng: random.Random, difficulty: float) -> Draft | None:
    """Integer, fraction and decimal arithmetic; more digits, operators and
    nesting as difficulty grows."""
    if difficulty < 0.05:  # the easy floor: a + b or a - b with one digit, never negative
        a, b = rng.randint(0, 9), rng.randint(0, 9)
        if rng.random() < 0.5:
            return Draft(f"What is {a} + {b}?", str(a + b), {"kind": "add"})
        a, b = max(a, b), min(a, b)
        return Draft(f"What is {a} - {b}?", str(a - b), {"kind": "subtract"})
    if difficulty < 0.15:
        # Place value: a two-digit number plus a one-digit one, no carrying. The
        # ~400 problems share their parts (the tens digit is copied, the units
        # digit is one of 45 digit sums), so a held-out problem is a new
        # combination of seen parts: unlike the ~100 digit facts of the floor,
        # it can be learnt rather than only memorised.
        units, b = rng.choice(_NO_CARRY_PAIRS)
        a = 10 * rng.randint(1, 9) + units
        return Draft(f"What is {a} + {b}?", str(a + b), {"kind": "add", "carry": False})
    digits = 1 + int(difficulty * 3.999)
    n_ops = 1 + int(difficulty * 3.5)
    ops = ["+", "-"] + (["×"] if difficulty >= 0.3 else []) + (["÷"] if difficulty >= 0.5 else [])
    kinds = ["integer"] + (["fraction"] if difficulty >= 0.6 else []) + (["decimal"] if difficulty >= 0.75 else [])
    if len(kinds) > 1 and rng.random() < 0.5:
        kinds = ["integer"]  # half the hard problems stay in integers
    used: set[str] = set()
    node = _expression(rng, n_ops, digits, ops, kinds, used)
    if node is None:
        return None
    value, text, _ = node
    if abs(value.numerator) > 10 ** (2 * digits + 2) or value.denominator > 1000:
        return None
    return Draft(f"Compute {text}.", _answer(value), {"kind": "expression", "operators": n_ops})


arithmetic = _redraw(_arithmetic)


# ---------------------------------------------------------------------------
# algebra


def _poly(coeffs: list[int], var: str = "x") -> str:
    """``[1, -1, -6]`` (highest degree first) -> ``x^{2} - x - 6``."""
    terms = []
    degree = len(coeffs) - 1
    for i, c in enumerate(coeffs):
        power = degree - i
        if c == 0:
            continue
        mag = abs(c)
        body = {0: "", 1: var}.get(power, f"{var}^{{{power}}}")
        coef = str(mag) if (mag != 1 or power == 0) else ""
        sign = "-" if c < 0 else "+"
        terms.append((sign, coef + body))
    if not terms:
        return "0"
    first_sign, first = terms[0]
    out = ("-" if first_sign == "-" else "") + first
    for sign, term in terms[1:]:
        out += f" {sign} {term}"
    return out


def _factor(root: int) -> str:
    """The factor (x - root) as text: ``(x + 3)`` for root -3."""
    return f"(x - {root})" if root > 0 else f"(x + {-root})" if root < 0 else "x"


def _nonzero(rng: random.Random, bound: int) -> int:
    return rng.choice([i for i in range(-bound, bound + 1) if i != 0])


def _linear(rng: random.Random, difficulty: float) -> Draft:
    big = 3 + int(12 * difficulty)
    if difficulty < 0.15:  # one step: x + b = c
        x, b = rng.randint(0, 9), rng.randint(1, 9)
        return Draft(f"Solve for x: x + {b} = {x + b}.", str(x), {"kind": "linear"})
    a, b = _nonzero(rng, big), rng.randint(-big, big)
    if difficulty < 0.3:
        a = abs(a) + 1
    if difficulty < 0.5:  # a x + b = value
        x = rng.randint(-big, big) if difficulty >= 0.3 else rng.randint(0, 9)
        return Draft(f"Solve for x: {_poly([a, b])} = {a * x + b}.", str(x), {"kind": "linear"})
    # x on both sides: a x + b = c x + e; from 0.7 the solution may be a fraction k / (a - c)
    c = _nonzero(rng, big)
    if c == a:
        c = -a
    k = rng.randint(-big, big)
    x = Fraction(k, a - c) if difficulty >= 0.7 else Fraction(k)
    e = (a - c) * x + b
    return Draft(f"Solve for x: {_poly([a, b])} = {_poly([c, int(e)])}.", _answer(x), {"kind": "linear"})


def _expand(rng: random.Random, difficulty: float) -> Draft:
    big = 2 + int(7 * difficulty)
    r, s = _nonzero(rng, big), _nonzero(rng, big)
    k = rng.randint(2, 3) if difficulty >= 0.7 else 1
    lead = f"{k}" if k != 1 else ""
    coeffs = [k, -k * (r + s), k * r * s]
    return Draft(
        f"Expand {lead}{_factor(r)}{_factor(s)} and simplify.",
        _poly(coeffs),
        {"kind": "expand", "form": "expanded"},
    )


def _quadratic(rng: random.Random, difficulty: float) -> Draft | None:
    big = 2 + int(8 * difficulty)
    r, s = sorted(rng.sample([i for i in range(-big, big + 1)], 2))
    k = _nonzero(rng, 3) if difficulty >= 0.7 else 1
    equation = _poly([k, -k * (r + s), k * r * s])
    return Draft(
        f"Find all real solutions of {equation} = 0. List them separated by commas.",
        f"{r}, {s}",
        {"kind": "quadratic"},
    )


def _system(rng: random.Random, difficulty: float) -> Draft | None:
    big = 2 + int(8 * difficulty)
    x, y = rng.randint(-big, big), rng.randint(-big, big)
    a, b, c, d = (_nonzero(rng, 5) for _ in range(4))
    if a * d - b * c == 0:
        return None

    def side(p: int, q: int) -> str:
        return _poly([p, 0]) + (f" + {_poly([q, 0], 'y')}" if q > 0 else f" - {_poly([-q, 0], 'y')}")

    return Draft(
        f"Solve the system {side(a, b)} = {a * x + b * y} and {side(c, d)} = {c * x + d * y}. "
        "Give the answer as an ordered pair (x, y).",
        f"({x}, {y})",
        {"kind": "system"},
    )


def _rational(rng: random.Random, difficulty: float) -> Draft:
    big = 2 + int(7 * difficulty)
    r, s = _nonzero(rng, big), _nonzero(rng, big)
    numerator = _poly([1, -(r + s), r * s])
    return Draft(
        f"Simplify ({numerator}) / {_factor(r)} for x ≠ {r}, writing the result without fractions or parentheses.",
        _poly([1, -s]),
        {"kind": "simplify", "form": "expanded"},
    )


_ALGEBRA_KINDS: list[tuple[float, Callable[[random.Random, float], Draft | None]]] = [
    (0.0, _linear),
    (0.25, _expand),
    (0.4, _quadratic),
    (0.55, _system),
    (0.7, _rational),
]


def _algebra(rng: random.Random, difficulty: float) -> Draft | None:
    """Linear equations, then expansion, quadratics, 2x2 systems and rational
    simplification as difficulty unlocks them."""
    kinds = [make for floor, make in _ALGEBRA_KINDS if difficulty >= floor]
    return rng.choice(kinds)(rng, difficulty)


algebra = _redraw(_algebra)


# ---------------------------------------------------------------------------
# word problems

_NAMES = ["Ana", "Ben", "Chloe", "Dev", "Elif", "Femi", "Grace", "Hugo", "Ines", "Jon", "Kira", "Liam", "Mei", "Nora"]
_ITEMS = [("notebook", "notebooks"), ("pen", "pens"), ("apple", "apples"), ("ticket", "tickets"),
          ("sticker", "stickers"), ("candle", "candles"), ("mug", "mugs"), ("plant", "plants")]


def _price(rng: random.Random, difficulty: float, low: int, high: int) -> Fraction:
    whole = rng.randint(low, high)
    if difficulty >= 0.5:
        return whole + Fraction(rng.choice([0, 25, 50, 75]), 100)
    return Fraction(whole)


def _money(value: Fraction) -> str:
    return "$" + (f"{float(value):.2f}" if value.denominator != 1 else str(value.numerator))


def _shopping(rng: random.Random, difficulty: float, steps: int) -> Draft | None:
    name = rng.choice(_NAMES)
    (one, many), (one2, many2) = rng.sample(_ITEMS, 2)
    scale = 1 + int(difficulty * 9)
    n1, p1 = rng.randint(2, 3 + 2 * scale), _price(rng, difficulty, 1, 2 + scale)
    text = f"{name} buys {n1} {many} for {_money(p1)} each"
    total = n1 * p1
    if steps >= 2:
        n2, p2 = rng.randint(2, 3 + 2 * scale), _price(rng, difficulty, 1, 2 + scale)
        text += f" and {n2} {many2} for {_money(p2)} each"
        total += n2 * p2
    text += "."
    if steps >= 4:
        pct = rng.choice([10, 20, 25, 50])
        text += f" The shop takes {pct}% off the whole purchase."
        total = total * (100 - pct) / 100
        if (total * 100).denominator != 1:
            return None  # prices stay in whole cents
    if steps >= 3:
        bill = next((b for b in (10, 20, 50, 100, 200, 500, 1000, 5000) if b > total), None)
        if bill is None:
            return None
        text += f" {name} pays with a ${bill} bill. How many dollars of change does {name} get?"
        return Draft(text, _answer(bill - total), {"kind": "shopping", "unit": "dollars"})
    text += f" How many dollars does {name} spend?"
    return Draft(text, _answer(total), {"kind": "shopping", "unit": "dollars"})


def _travel(rng: random.Random, difficulty: float, steps: int) -> Draft:
    name = rng.choice(_NAMES)
    scale = 1 + int(difficulty * 9)
    v, t = rng.randint(2, 5 + 5 * scale), rng.randint(1, 2 + scale)
    text = f"{name} travels at {v} km per hour for {t} hours"
    dist = Fraction(v * t)
    if steps >= 2:
        minutes = rng.choice([15, 20, 30, 45])
        v2 = rng.randint(1, 3 + 2 * scale) * (60 // math.gcd(60, minutes))  # whole kilometers
        text += f", then at {v2} km per hour for {minutes} minutes"
        dist += Fraction(v2 * minutes, 60)
    text += "."
    if steps >= 3:
        back = rng.randint(1, int(dist) - 1) if dist > 2 else 1
        text += f" Then {name} walks {back} km back the same way."
        dist -= back
        question = f" How many kilometers from the start is {name} now?"
    else:
        question = f" How many kilometers does {name} travel?"
    return Draft(text + question, _answer(dist), {"kind": "travel", "unit": "km"})


def _recipe(rng: random.Random, difficulty: float, steps: int) -> Draft:
    scale = 1 + int(difficulty * 9)
    serves = rng.randint(2, 4 + scale)
    per = rng.randint(2, 5 + 10 * scale) * 5
    grams = serves * per
    wanted = rng.randint(2, 6 + 3 * scale)
    while wanted == serves:
        wanted += 1
    text = f"A recipe for {serves} people uses {grams} grams of flour."
    need = wanted * per
    if steps == 1:
        return Draft(text + f" How many grams of flour are needed for {wanted} people?",
                     str(need), {"kind": "recipe", "unit": "grams"})
    bag = rng.choice([250, 500, 1000])
    bags = -(-need // bag)
    text += f" Flour is sold in {bag}-gram bags."
    if steps >= 3:
        price = _price(rng, difficulty, 1, 3 + scale)
        return Draft(text + f" Each bag costs {_money(price)}. How many dollars does the flour for "
                     f"{wanted} people cost, buying whole bags only?",
                     _answer(bags * price), {"kind": "recipe", "unit": "dollars"})
    return Draft(text + f" How many bags are needed to cook for {wanted} people?",
                 str(bags), {"kind": "recipe", "unit": "bags"})


def _rope(rng: random.Random, difficulty: float, steps: int) -> Draft | None:
    scale = 1 + int(difficulty * 9)
    meters = rng.randint(2, 3 + 2 * scale)
    piece = rng.randint(1, 4 + 2 * scale) * 5
    count = rng.randint(2, max(2, min(3 + 2 * scale, meters * 100 // piece - 1)))
    left = meters * 100 - count * piece
    if left <= 0:
        return None
    text = f"A rope is {meters} meters long. {count} pieces of {piece} cm each are cut from it."
    if steps >= 2:
        parts = rng.choice([d for d in (2, 4, 5, 10) if left % d == 0] or [1])
        if parts > 1:
            return Draft(text + f" The rest is cut into {parts} equal parts. How many centimeters long is each part?",
                         str(left // parts), {"kind": "rope", "unit": "cm"})
    return Draft(text + " How many centimeters of rope are left?", str(left), {"kind": "rope", "unit": "cm"})


def _savings(rng: random.Random, difficulty: float, steps: int) -> Draft:
    name = rng.choice(_NAMES)
    scale = 1 + int(difficulty * 9)
    weekly, weeks = rng.randint(2, 5 + 5 * scale), rng.randint(2, 3 + scale)
    total = Fraction(weekly * weeks)
    text = f"{name} saves ${weekly} every week for {weeks} weeks."
    if steps >= 2:
        pct = rng.choice([10, 20, 25, 50])
        text += f" Then {name} spends {pct}% of the savings on a gift."
        total = total * (100 - pct) / 100
    if steps >= 3:
        extra = rng.randint(1, 5 + 5 * scale)
        text += f" A friend then gives {name} ${extra}."
        total += extra
    return Draft(text + f" How many dollars does {name} have now?", _answer(total),
                 {"kind": "savings", "unit": "dollars"})


_TEMPLATES = [_shopping, _travel, _recipe, _rope, _savings]


def _word_problem(rng: random.Random, difficulty: float) -> Draft | None:
    """Multi-step word problems with units (money, distance, mass, length);
    more steps and larger numbers as difficulty grows."""
    steps = 1 + int(difficulty * 3.999)
    draft = rng.choice(_TEMPLATES)(rng, difficulty, steps)
    if draft is not None:
        draft.metadata["steps"] = steps
    return draft


word_problems = _redraw(_word_problem)

#: Generators by name, as ``math/PythonTool-v0``'s ``source`` kwarg spells them.
GENERATORS: dict[str, Callable[[random.Random, float], Draft]] = {
    "arithmetic": arithmetic,
    "algebra": algebra,
    "word_problems": word_problems,
}
