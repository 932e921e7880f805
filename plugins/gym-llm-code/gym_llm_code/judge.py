"""Host-side comparison of program outputs with expected outputs.

Only the host ever sees expected outputs; these functions compare them with
what came back from the sandbox, as plain data.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation

__all__ = ["tokens_match", "first_difference"]

# ASCII digits only, and no two ways to split a digit run: "\d+\.?\d*" backtracked
# quadratically on a long token that fails at its end ('1' * 20000 + 'x': 11 s of host
# CPU per test, after the jail).
_INT = re.compile(r"[+-]?\d+", re.ASCII)
_FLOAT = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)


def _token_equal(expected: str, got: str, rel_tol: float, abs_tol: float) -> bool:
    if expected == got:
        return True
    if _INT.fullmatch(expected):
        # An integer is matched exactly (``7.000`` is 7; a float tolerance
        # would accept 10**18 + 999): compared as exact decimals, not floats.
        # Decimal, not int(): an expected integer past 4,300 digits (2000! has 5,736)
        # would raise.
        if _FLOAT.fullmatch(got) is None:
            return False
        try:
            return Decimal(got) == Decimal(expected)
        except InvalidOperation:  # an exponent past what Decimal holds: 1e9999999999999999999
            return False
    if _FLOAT.fullmatch(expected) and _FLOAT.fullmatch(got):
        e, g = float(expected), float(got)
        return math.isfinite(e) and math.isfinite(g) and math.isclose(e, g, rel_tol=rel_tol, abs_tol=abs_tol)
    return False


def first_difference(expected: str, got: str, rel_tol: float = 1e-6, abs_tol: float = 1e-6) -> str | None:
    """Compare whitespace-separated tokens; ``None`` when they match, else a
    short description of the first mismatch.

    An expected integer token must be matched by a number of exactly the same
    value (``5``, ``5.0``; never within a tolerance); an expected decimal number by a
    number within ``rel_tol``/``abs_tol`` (finite values only); anything else
    must match exactly. Line breaks and runs of spaces do not matter.
    """
    e, g = expected.split(), got.split()
    for i, (a, b) in enumerate(zip(e, g, strict=False)):
        if not _token_equal(a, b, rel_tol, abs_tol):
            return f"token {i + 1}: expected {a[:40]!r}, got {b[:40]!r}"
    if len(e) != len(g):
        return f"expected {len(e)} tokens, got {len(g)}"
    return None


def tokens_match(expected: str, got: str, rel_tol: float = 1e-6, abs_tol: float = 1e-6) -> bool:
    """True when ``got`` matches ``expected`` token by token (see
    :func:`first_difference`)."""
    return first_difference(expected, got, rel_tol, abs_tol) is None
