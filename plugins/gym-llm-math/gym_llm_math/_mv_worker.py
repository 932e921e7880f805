"""The math-verify worker process (``python -m gym_llm_math._mv_worker``).

Protocol: one JSON object per line. On start it prints ``{"ready": true}``
(or ``{"ready": false, "error": ...}`` if math-verify cannot be imported);
then for each request

* ``{"gold": str, "pred": str, "lenient_decimals": bool}`` it prints
  ``{"gold_parsed": bool, "equal": bool}``;
* ``{"form": "expanded", "pred": str}`` it prints ``{"form_ok": bool,
  "why": str}``: whether the answer (normalised by the parent), as
  written, is an expanded polynomial;

or ``{"error": str}``.

math-verify runs with its own (signal-based) timeouts disabled: the parent
kills this process when a request overruns, which works from any thread.

Numbers compare exactly here, not as math-verify does by default
(:func:`_numeric_eq` replaces its numeric check): a decimal equals an exact
value only when it is that value (``0.5`` is ``1/2``; ``1.41421356`` is not
``\\sqrt{2}``) unless the request asks for lenient decimals (the rule of
:func:`gym_llm_math.answers.decimal_matches`), and exact expressions that
simplification cannot settle compare by relative difference at high
precision, never by rounding a difference to zero (``1/2006!`` and
``1/2004!`` differ).
"""

from __future__ import annotations

import json
import logging
import os
import resource
import signal
import sys

_WARM_UP = [
    ("x^2 - 1", "(x - 1)(x + 1)"),
    ("\\begin{pmatrix}1 & 2\\\\3 & 4\\end{pmatrix}", "[1, 2)"),
    ("\\{1, 2\\}", "x = 1 \\text{ or } x = 2"),
]


def _protocol_channel():
    """Keep the real stdout for replies and send fd 1 to stderr, so that a
    stray print() in a library cannot corrupt the protocol."""
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return channel


_channel = sys.stdout


def _emit(obj: dict) -> None:
    _channel.write(json.dumps(obj) + "\n")
    _channel.flush()


def _limit_memory() -> None:
    # An answer like 9^{9^{9^9}} must not take the machine's memory with it.
    mb = int(os.environ.get("GYM_LLM_MATH_WORKER_MEMORY_MB", "2048"))
    if mb > 0:
        limit = mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _die_with_parent() -> None:
    # A hung comparison must not outlive a parent killed with SIGKILL (the
    # parent's stdin closing is only noticed between requests). The parent
    # starts workers from a thread that lives as long as it does: the signal
    # is sent when that *thread* exits.
    parent = os.getppid()
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:
        os._exit(0)


#: Relative precision (digits) of the numeric fallback for exact expressions.
_DIGITS = 40
_lenient_decimals = False  # set per request


def _as_exact(expr):
    """``expr`` with every float replaced by the decimal it was written as."""
    from sympy import Float, Rational

    return expr.xreplace({f: Rational(_decimal_text(f)) for f in expr.atoms(Float)})


def _decimal_text(f) -> str:
    # A Float keeps the digits it was parsed from (15 significant by
    # default); trailing zeros are padding, not precision.
    text = str(f)
    return text.rstrip("0").rstrip(".") if "." in text and "e" not in text else text


def _places(f) -> int:
    return len(_decimal_text(f).partition(".")[2])


def _numeric_eq(a, b, float_rounding: int, numeric_precision: int) -> bool:
    """math-verify's numeric comparison, made exact (see the module docstring)."""
    from fractions import Fraction

    from math_verify import grader
    from sympy import Float, MatrixBase, Rational
    from sympy.matrices.expressions import MatrixExpr

    from gym_llm_math.answers import decimal_matches

    if isinstance(a, MatrixBase | MatrixExpr) and isinstance(b, MatrixBase | MatrixExpr):
        return _original_numeric_eq(a, b, float_rounding, numeric_precision)  # it recurses into us per element
    try:
        a, b = grader.safe_sympy_doit(a), grader.safe_sympy_doit(b)
        if a.has(Float) or b.has(Float):
            ea, eb = _as_exact(a), _as_exact(b)
            if (ea - eb).is_zero:
                return True
            if not _lenient_decimals:
                return False
            # Lenient: a lone decimal matches a value that rounds to it.
            lone = [x for x in (a, b) if isinstance(x, Float)]
            if not lone:
                return False
            d = min(lone, key=_places)
            other = eb if d is a else ea
            value = other.evalf(_DIGITS)
            if not value.is_Number:
                return False
            dec = Fraction(_decimal_text(d))
            return decimal_matches(dec, _places(d), Fraction(str(Rational(value))))
        if a.is_Number and b.is_Number:
            return bool(a == b)
        va, vb = a.evalf(_DIGITS), b.evalf(_DIGITS)
        if not (va.is_Number and vb.is_Number):
            return False
        scale = max(abs(va), abs(vb))
        return bool(scale == 0 or abs(va - vb) <= scale * Rational(1, 10 ** (_DIGITS - 5)))
    except Exception:
        return False


_original_numeric_eq = None


def _literal_fractions():
    """A stand-in for the ``sympy`` module of latex2sympy's parser, for the
    form check: the parser folds a quotient of two integers (``4/2``,
    ``\\frac{4}{2}``, ``4 \\div 2``) into one Rational even when nothing is
    evaluated, so ``x + \\frac{4}{2}`` would read as ``x + 2``; here such a
    quotient stays ``Mul(4, Pow(2, -1))``, as written."""
    import types

    import sympy

    class LiteralFractions(types.ModuleType):
        def __getattr__(self, name: str):
            return getattr(sympy, name)

        @staticmethod
        def Rational(p, q=1):  # noqa: N802 - sympy's name
            if q == 1:
                return sympy.Rational(p, q)
            return sympy.Mul(p, sympy.Pow(q, -1, evaluate=False), evaluate=False)

    return LiteralFractions("sympy")


def _factors(term) -> list:
    from sympy import Mul

    if isinstance(term, Mul):
        return [f for arg in term.args for f in _factors(arg)]
    return [term]


def _is_expanded(expr) -> tuple[bool, str]:
    """Whether ``expr`` (parsed unevaluated, quotients of integers kept) is
    an expanded polynomial: a sum of monomials, each at most a sign, one
    number (an integer, or a reduced fraction p/q written as one) and
    distinct symbols to positive integer powers, no two monomials with the
    same symbols and powers."""
    from math import gcd

    from sympy import Add, Integer, Pow, Symbol

    terms = [expr]
    while any(isinstance(t, Add) for t in terms):  # (a + b) + c is still a sum
        terms = [u for t in terms for u in (t.args if isinstance(t, Add) else [t])]
    seen: set[tuple] = set()
    for t in terms:
        numbers, inverses, powers = [], [], {}
        for f in _factors(t):
            if isinstance(f, Integer):
                numbers.append(int(f))
            elif isinstance(f, Pow) and isinstance(f.base, Integer) and f.exp == -1:
                inverses.append(int(f.base))
            elif isinstance(f, Symbol) or (isinstance(f, Pow) and isinstance(f.base, Symbol)
                                           and isinstance(f.exp, Integer) and f.exp >= 1):
                base, exp = (f, 1) if isinstance(f, Symbol) else (f.base, int(f.exp))
                if base in powers:
                    return False, f"the term {t} repeats {base} (a product left to multiply)"
                powers[base] = exp
            else:
                return False, f"the term {t} is not a monomial (a product of sums, a quotient or a power)"
        if -1 in numbers and (len(numbers) > 1 or powers):  # a minus sign
            numbers.remove(-1)
            if any(n < 0 for n in numbers):
                return False, f"the term {t} has arithmetic left between numbers"
        if len(numbers) > 1 or len(inverses) > 1 or (inverses and not numbers):
            return False, f"the term {t} has arithmetic left between numbers"
        if inverses and (inverses[0] <= 1 or gcd(numbers[0], inverses[0]) != 1):
            return False, f"the term {t} has a fraction that is not reduced"
        if numbers == [0] and (powers or len(terms) > 1):
            return False, f"the term {t} is zero"
        key = tuple(sorted((str(b), e) for b, e in powers.items()))
        if key in seen:
            return False, f"like terms are not combined (two terms in {key or 'the constant'})"
        seen.add(key)
    return True, ""


def main() -> None:
    global _channel, _lenient_decimals, _original_numeric_eq
    _channel = _protocol_channel()
    logging.disable(logging.CRITICAL)  # math-verify warns on every timeout-less call
    try:
        _die_with_parent()
        _limit_memory()
        from latex2sympy2_extended import latex2sympy, latex2sympy2
        from math_verify import LatexExtractionConfig, grader, parse, verify
        from sympy import evaluate

        # sympy_expr_eq looks the numeric check up by name at each call.
        _original_numeric_eq = grader.sympy_numeric_eq
        grader.sympy_numeric_eq = _numeric_eq
        literal_fractions = _literal_fractions()

        def parse_boxed(answer: str) -> list:
            return parse("\\boxed{" + answer + "}", parsing_timeout=None)

        latex_only = [LatexExtractionConfig()]

        def parse_answer(answer: str) -> list:
            # LaTeX only: the default config falls back to the last number of a box
            # the LaTeX parser cannot read, so "6 \\sim 5" or "6 \\mid 5" was 5.
            return parse("\\boxed{" + answer + "}", extraction_config=latex_only, parsing_timeout=None)

        # The first comparisons pay for sympy's and the LaTeX parser's lazy
        # set-up (about a second): pay it here, under the startup time limit,
        # not under the first request's.
        for gold, pred in _WARM_UP:
            verify(parse_boxed(gold), parse_answer(pred), timeout_seconds=None)
    except Exception as e:
        _emit({"ready": False, "error": f"{type(e).__name__}: {e}"})
        return
    _emit({"ready": True})

    for line in sys.stdin:
        try:
            request = json.loads(line)
            if "form" in request:
                real_sympy, latex2sympy2.sympy = latex2sympy2.sympy, literal_fractions
                try:
                    with evaluate(False):  # the form as written: 2(x + 1) must stay a product
                        ok, why = _is_expanded(latex2sympy(request["pred"]))
                finally:
                    latex2sympy2.sympy = real_sympy
                _emit({"form_ok": ok, "why": why})
                continue
            _lenient_decimals = bool(request.get("lenient_decimals", False))
            gold = parse_boxed(request["gold"])
            # A bare string is math-verify's fallback when nothing parsed.
            if not any(not isinstance(g, str) for g in gold):
                _emit({"gold_parsed": False, "equal": False})
                continue
            pred = parse_answer(request["pred"])
            _emit({"gold_parsed": True, "equal": bool(verify(gold, pred, timeout_seconds=None))})
        except Exception as e:  # MemoryError, RecursionError included: report, stay alive
            _emit({"error": f"{type(e).__name__}: {e}"[:500]})


if __name__ == "__main__":
    main()
