"""The bundled problems: Python function tasks and stdin/stdout tasks.

Each problem carries public examples (shown in the prompt), fixed hidden tests
with hand-written expected outputs, a reference solution and a seeded random
input generator. The reference and the generator are source text: they only
ever run inside the sandbox (the generator next to :mod:`genlib`), never on
the host.

Content lives in :mod:`gym_llm_code.bundled`, one module per topic, each with
``TOPIC`` and ``PROBLEMS``; it is loaded once, lazily.
"""

from __future__ import annotations

import ast
import functools
import importlib
import pkgutil
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

__all__ = [
    "FunctionProblem", "StdioProblem", "fn", "prog", "function_problems", "stdio_problems",
    "generator_source",
]

Case = tuple[tuple[Any, ...], Any]


def _source(text: str) -> str:
    return textwrap.dedent(text).strip("\n") + "\n"


def generator_source(body: str, name: str = "gen") -> str:
    """Wrap a generator body (which sees ``rng`` and :mod:`genlib`) into
    ``def gen(rng): ...``."""
    return f"from genlib import *\n\n\ndef {name}(rng):\n" + textwrap.indent(_source(body), "    ")


@dataclass(frozen=True)
class FunctionProblem:
    """Implement ``name``: examples and tests are ``(args, expected)`` pairs of
    plain Python values; ``generator`` is the body of ``gen(rng)`` returning an
    args tuple; ``reference`` defines ``name`` with type hints."""

    name: str
    difficulty: float
    description: str
    examples: tuple[Case, ...]
    tests: tuple[Case, ...]
    reference: str
    generator: str
    topic: str = ""

    @functools.cached_property
    def signature(self) -> str:
        """``def name(args) -> ret`` as written in the reference."""
        for node in ast.parse(self.reference).body:
            if isinstance(node, ast.FunctionDef) and node.name == self.name:
                ret = f" -> {ast.unparse(node.returns)}" if node.returns else ""
                return f"def {self.name}({ast.unparse(node.args)}){ret}"
        raise ValueError(f"reference of {self.name!r} does not define {self.name}()")

    def call_text(self, args: Sequence[Any]) -> str:
        """``name(arg1, arg2)`` with the arguments as Python literals."""
        return f"{self.name}({', '.join(map(repr, args))})"


@dataclass(frozen=True)
class StdioProblem:
    """A program reading stdin and writing stdout: examples and tests are
    ``(input, output)`` strings; ``generator`` is the body of ``gen(rng)``
    returning an input string; ``reference`` is a Python program."""

    name: str
    difficulty: float
    statement: str
    input_spec: str
    output_spec: str
    examples: tuple[tuple[str, str], ...]
    tests: tuple[tuple[str, str], ...]
    reference: str
    generator: str
    topic: str = ""


def fn(
    name: str,
    difficulty: float,
    description: str,
    *,
    examples: Sequence[Case],
    tests: Sequence[Case],
    ref: str,
    gen: str,
) -> FunctionProblem:
    """Declare a function task (see :class:`FunctionProblem`)."""
    return FunctionProblem(
        name=name,
        difficulty=difficulty,
        description=" ".join(description.split()),
        examples=tuple((tuple(a), e) for a, e in examples),
        tests=tuple((tuple(a), e) for a, e in tests),
        reference=_source(ref),
        generator=generator_source(gen),
    )


def prog(
    name: str,
    difficulty: float,
    statement: str,
    *,
    input: str,
    output: str,
    examples: Sequence[tuple[str, str]],
    tests: Sequence[tuple[str, str]],
    ref: str,
    gen: str,
) -> StdioProblem:
    """Declare a stdin/stdout task (see :class:`StdioProblem`)."""
    return StdioProblem(
        name=name,
        difficulty=difficulty,
        statement=" ".join(statement.split()),
        input_spec=" ".join(input.split()),
        output_spec=" ".join(output.split()),
        examples=tuple(examples),
        tests=tuple(tests),
        reference=_source(ref),
        generator=generator_source(gen),
    )


@functools.cache
def _load() -> tuple[tuple[FunctionProblem, ...], tuple[StdioProblem, ...]]:
    from . import bundled

    functions: list[FunctionProblem] = []
    stdio: list[StdioProblem] = []
    for info in sorted(pkgutil.iter_modules(bundled.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{bundled.__name__}.{info.name}")
        for p in module.PROBLEMS:
            p = replace(p, topic=module.TOPIC)
            (functions if isinstance(p, FunctionProblem) else stdio).append(p)
    for kind in (functions, stdio):
        names = [p.name for p in kind]
        dupes = {n for n in names if names.count(n) > 1}
        if dupes:
            raise ValueError(f"bundled problem names appear twice: {sorted(dupes)}")
    return tuple(functions), tuple(stdio)


def function_problems() -> tuple[FunctionProblem, ...]:
    """Every bundled function task, in a fixed order (by module, then as written)."""
    return _load()[0]


def stdio_problems() -> tuple[StdioProblem, ...]:
    """Every bundled stdin/stdout task, in a fixed order."""
    return _load()[1]
