"""Assertion tests split in two, by parsing alone (:mod:`ast` runs nothing).

When every assert of a test has the shape ``candidate(...) == expected`` (or
``abs(candidate(...) - expected) < tol``, ``math.isclose(...)``,
``candidate(...)``, ``not candidate(...)``), :func:`split_asserts` splits it
into a candidate side, evaluated next to the answer, and an expected side,
evaluated next to the reference solution, so the host compares plain values
(:mod:`gym_llm_code.assertion_grading`). Test code of any other shape is not
split: it runs as a whole.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = ["AssertCheck", "split_asserts"]


@dataclass(frozen=True)
class AssertCheck:
    """One assert split into a candidate side and an expected side (both
    expression sources). ``kind``: ``eq`` (``==``), ``close`` (``abs(c - e) <
    tol``, ``expected`` evaluates to ``(e, tol)``; ``inclusive`` for ``<=``),
    ``isclose`` (``expected`` evaluates to ``(e, rel_tol, abs_tol)``),
    ``truthy`` / ``falsy`` (the candidate side alone). ``source`` is the assert."""

    kind: Literal["eq", "close", "isclose", "truthy", "falsy"]
    candidate: str
    expected: str | None = None
    inclusive: bool = False
    source: str = ""


def _refs(node: ast.AST, names: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node))


def _sides(a: ast.expr, b: ast.expr, names: set[str]) -> tuple[ast.expr, ast.expr] | None:
    ra, rb = _refs(a, names), _refs(b, names)
    if ra == rb:
        return None
    return (a, b) if ra else (b, a)


def _split_one(test: ast.expr, names: set[str], source: str) -> AssertCheck | None:
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, right, op = test.left, test.comparators[0], test.ops[0]
        if isinstance(op, ast.Eq) and (sides := _sides(left, right, names)):
            return AssertCheck("eq", ast.unparse(sides[0]), ast.unparse(sides[1]), source=source)
        if (isinstance(op, ast.Lt | ast.LtE) and not _refs(right, names) and isinstance(left, ast.Call)
                and isinstance(left.func, ast.Name) and left.func.id == "abs" and len(left.args) == 1
                and not left.keywords and isinstance(left.args[0], ast.BinOp)
                and isinstance(left.args[0].op, ast.Sub)
                and (sides := _sides(left.args[0].left, left.args[0].right, names))):
            return AssertCheck("close", ast.unparse(sides[0]),
                               f"({ast.unparse(sides[1])}, {ast.unparse(right)})",
                               inclusive=isinstance(op, ast.LtE), source=source)
    if isinstance(test, ast.Call):
        func = test.func
        is_isclose = (isinstance(func, ast.Name) and func.id == "isclose") or (
            isinstance(func, ast.Attribute) and func.attr == "isclose")
        kwargs = {k.arg: k.value for k in test.keywords}
        if (is_isclose and len(test.args) == 2 and set(kwargs) <= {"rel_tol", "abs_tol"}
                and not any(_refs(v, names) for v in kwargs.values())
                and (sides := _sides(test.args[0], test.args[1], names))):
            rel = ast.unparse(kwargs["rel_tol"]) if "rel_tol" in kwargs else "1e-09"
            tol = ast.unparse(kwargs["abs_tol"]) if "abs_tol" in kwargs else "0.0"
            return AssertCheck("isclose", ast.unparse(sides[0]),
                               f"({ast.unparse(sides[1])}, {rel}, {tol})", source=source)
    call, kind = (test.operand, "falsy") if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) else (test, "truthy")
    if (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in names
            and not any(_refs(a, names) for a in [*call.args, *(k.value for k in call.keywords)])):
        return AssertCheck(kind, ast.unparse(call), source=source)  # type: ignore[arg-type]
    return None


def split_asserts(statements: Sequence[ast.stmt], names: set[str], text: str | None = None) -> list[AssertCheck] | None:
    """Split every assert of ``statements`` that mentions ``names`` (the
    function under test). ``None`` when some statement cannot be split (then
    the tests run in-process); asserts that do not mention the function and
    docstrings/``pass`` are ignored. ``text``, the source parsed, gives each
    check its assert as written."""
    checks = []
    for node in statements:
        if isinstance(node, ast.Pass) or (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            continue
        if not isinstance(node, ast.Assert):
            return None
        if not _refs(node.test, names):
            continue
        check = _split_one(node.test, names, (text and ast.get_source_segment(text, node)) or ast.unparse(node))
        if check is None:
            return None
        checks.append(check)
    return checks
