"""Code dataset rows in the common formats: read into items to verify
(:func:`parse_row`), and written from bundled tasks (:func:`humaneval_row`,
:func:`mbpp_row`, :func:`stdio_row`, :func:`sample_rows`).

Formats (detected per row, or forced with ``format=``):

* **HumanEval**: ``task_id, prompt, entry_point, canonical_solution, test`` where
  ``test`` defines ``check(candidate)``. The program is the prompt plus the
  completion, as the HumanEval harness builds it.
* **MBPP**: ``text`` (or ``prompt``), ``code``, ``test_list`` (assert
  statements), optional ``test_setup_code`` and ``challenge_test_list``.
* **stdin/stdout**: ``question`` (or ``problem``/``prompt``/``description``)
  with ``input_output`` (APPS style, ``{"inputs": [...], "outputs": [...]}``,
  as a dict or a JSON string) or ``tests: [{"input", "output"}]``; optional
  ``solutions``/``solution``.

Dataset fields are never evaluated on the host: test code is only parsed
here (:mod:`gym_llm_code.asserts`). The MBPP test shown in the prompt is
never a hidden test.
"""

from __future__ import annotations

import ast
import builtins
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .asserts import AssertCheck, split_asserts
from .problems import FunctionProblem, StdioProblem

__all__ = [
    "AssertionItem", "StdioItem", "parse_row", "humaneval_row", "mbpp_row", "stdio_row", "sample_rows",
]

Format = Literal["humaneval", "mbpp", "stdio"]

#: Test code longer than this is not parsed for splitting (it still runs).
_MAX_PARSE_CHARS = 1_000_000


@dataclass(frozen=True)
class AssertionItem:
    """A HumanEval or MBPP row, ready to verify.

    ``prefix`` is prepended to every answer (HumanEval: the prompt);
    ``solution`` is the reference answer; ``setup`` the test-side setup code;
    ``checks`` the split asserts (``None``: run ``test_program`` in-process);
    ``public`` how many leading checks are shown in the prompt (MBPP).
    """

    format: Literal["humaneval", "mbpp"]
    task_id: str
    prompt: str
    entry_point: str
    prefix: str
    solution: str
    setup: str
    checks: tuple[AssertCheck, ...] | None
    test_program: str
    public: int = 0

    def program(self, code: str) -> str:
        """The program to test for answer ``code`` (prompt plus completion for HumanEval)."""
        if not self.prefix:
            return code
        joiner = "" if code[:1] in (" ", "\t") and self.prefix.endswith("\n") else "\n"
        return self.prefix + joiner + code


@dataclass(frozen=True)
class StdioItem:
    """A stdin/stdout row: ``problem`` holds its tests (the first is the
    public example, the others hidden; a row with one test has it as both)."""

    task_id: str
    problem: StdioProblem


def _first(row: Mapping[str, Any], *keys: str) -> Any:
    for k in keys:
        if row.get(k) not in (None, ""):
            return row[k]
    return None


def _detect(row: Mapping[str, Any]) -> Format:
    if {"prompt", "entry_point", "test"} <= set(row):
        return "humaneval"
    if "test_list" in row:
        return "mbpp"
    if "input_output" in row or "tests" in row:
        return "stdio"
    raise ValueError(f"cannot tell the format of a row with keys {sorted(row)[:12]}: expected "
                     "HumanEval (prompt, entry_point, test), MBPP (test_list) or stdin/stdout "
                     "(input_output or tests)")


def _parse(source: str, what: str) -> ast.Module:
    if len(source) > _MAX_PARSE_CHARS:
        raise ValueError(f"{what} is too long to analyse")
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
        raise ValueError(f"{what} is not valid Python: {e}") from None


def _humaneval(row: Mapping[str, Any], task_id: str) -> AssertionItem:
    prompt, entry, test = str(row["prompt"]), str(row["entry_point"]), str(row["test"])
    tree = _parse(test, "the test code")
    check = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "check"), None)
    if check is None or not check.args.args:
        raise ValueError("the HumanEval test code has no check(candidate) function")
    setup = [n for n in tree.body if n is not check and not (
        isinstance(n, ast.Expr) and isinstance(n.value, ast.Call) and isinstance(n.value.func, ast.Name)
        and n.value.func.id == "check")]
    checks = split_asserts(check.body, {check.args.args[0].arg})
    return AssertionItem(
        format="humaneval", task_id=task_id,
        prompt=("Complete the following Python function.\n\n```python\n" + prompt.rstrip() + "\n```\n\n"
                "Reply with the completed function in a ```python code block."),
        entry_point=entry, prefix=prompt, solution=str(row.get("canonical_solution") or ""),
        setup=ast.unparse(ast.Module(setup, [])), checks=tuple(checks) if checks else None,
        test_program=test + f"\ncheck({entry})\n",
    )


def _mbpp(row: Mapping[str, Any], task_id: str, challenge: bool) -> AssertionItem:
    tests = [str(t) for t in row["test_list"]]
    if challenge:
        tests += [str(t) for t in row.get("challenge_test_list") or []]
    if not tests:
        raise ValueError("the MBPP row has an empty test_list")
    code = str(row.get("code") or "")
    parsed = [(t, _parse(t, "a test").body) for t in tests]
    asserts = [node for _, body in parsed for node in body]
    called = [n.func.id for a in asserts for n in ast.walk(a) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
    defined = [n.name for n in _parse(code, "the reference code").body if isinstance(n, ast.FunctionDef)] if code else []
    entry = next((name for name in called if name in defined), None) or next(
        (name for name in called if not hasattr(builtins, name) and name != "isclose"), None)
    if entry is None:
        raise ValueError("cannot tell which function the MBPP tests call")
    # The test shown in the prompt is a format example: it never counts
    # toward the reward (with a single test, none is shown).
    shown = tests[:1] if len(tests) > 1 else []
    split = [split_asserts(body, {entry}, t) for t, body in parsed]
    checks = None if any(c is None for c in split) else [c for part in split for c in part or []]
    setup = str(row.get("test_setup_code") or "")
    text = str(_first(row, "text", "prompt", "description") or "")
    example = f"\n\nYour code should pass this test:\n\n```python\n{shown[0]}\n```" if shown else ""
    return AssertionItem(
        format="mbpp", task_id=task_id,
        prompt=(f"{text.strip()}{example}\n\n"
                f"Reply with the complete function `{entry}` in a ```python code block."),
        entry_point=entry, prefix="", solution=code, setup=setup,
        checks=tuple(checks) if checks else None,
        test_program=setup + "\n" + "\n".join(tests[len(shown):]) + "\n",
        public=len(split[0] or []) if checks and shown else 0,
    )


def _stdio(row: Mapping[str, Any], task_id: str) -> StdioItem:
    question = _first(row, "question", "problem", "prompt", "description")
    if question is None:
        raise ValueError("the stdin/stdout row has no question/problem/prompt/description")
    pairs: list[tuple[str, str]] = []
    if row.get("input_output") not in (None, ""):
        io = row["input_output"]
        io = json.loads(io) if isinstance(io, str) else io
        if io.get("fn_name"):
            raise ValueError("call-based input_output (fn_name) rows are not supported; use MBPP or HumanEval format")
        pairs = [(_text(i), _text(o)) for i, o in zip(io.get("inputs", []), io.get("outputs", []), strict=False)]
    else:
        pairs = [(_text(t.get("input")), _text(t.get("output"))) for t in row.get("tests") or []]
    if not pairs:
        raise ValueError("the stdin/stdout row has no tests")
    solutions = _first(row, "solutions", "solution")
    if isinstance(solutions, str) and solutions.lstrip().startswith("["):
        try:
            solutions = json.loads(solutions)
        except ValueError:
            pass
    solution = str(solutions[0] if isinstance(solutions, list) and solutions else solutions or "")
    problem = StdioProblem(
        name=task_id, difficulty=0.0, statement=str(question).strip(), input_spec="", output_spec="",
        # the first test is the example of feedback; it is not a hidden test
        examples=tuple(pairs[:1]), tests=tuple(pairs[1:] or pairs), reference=solution, generator="",
    )
    return StdioItem(task_id, problem)


def _text(value: Any) -> str:
    if isinstance(value, list):  # some datasets store lines
        return "\n".join(map(str, value)) + "\n"
    return "" if value is None else str(value)


def parse_row(row: Mapping[str, Any], index: int, format: str = "auto",
              challenge_tests: bool = False) -> AssertionItem | StdioItem:
    """One dataset row as an item to verify. Raises ``ValueError`` naming the
    problem (unknown format, unparsable tests, no tests)."""
    task_id = str(_first(row, "task_id", "problem_id", "id", "name") or f"row-{index}")
    try:
        fmt = _detect(row) if format == "auto" else format
        if fmt == "humaneval":
            return _humaneval(row, task_id)
        if fmt == "mbpp":
            return _mbpp(row, task_id, challenge_tests)
        if fmt == "stdio":
            return _stdio(row, task_id)
    except (KeyError, TypeError, AttributeError) as e:
        raise ValueError(f"row {index} ({task_id}): missing or malformed field: {e}") from None
    except ValueError as e:
        raise ValueError(f"row {index} ({task_id}): {e}") from None
    raise ValueError(f"unknown format {format!r}: expected auto, humaneval, mbpp or stdio")


# ----------------------------------------------------------------------------- export

def humaneval_row(problem: FunctionProblem) -> dict[str, Any]:
    """A bundled function task in HumanEval format (fixed hidden tests as ``check``)."""
    examples = "\n".join(f"    >>> {problem.call_text(a)}\n    {e!r}" for a, e in problem.examples)
    doc = f"{problem.description}\n\n{examples}".replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    prompt = f'{problem.signature}:\n    """{doc}\n    """\n'
    tree = ast.parse(problem.reference)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == problem.name)
    helpers = [n for n in tree.body if n is not fn]
    body = "\n".join("    " + line if line else line for line in ast.unparse(ast.Module(fn.body, [])).splitlines())
    asserts = "\n".join(f"    assert candidate({', '.join(map(repr, a))}) == {e!r}" for a, e in problem.tests)
    return {
        "task_id": f"gym-llm/{problem.name}",
        "prompt": (ast.unparse(ast.Module(helpers, [])) + "\n\n\n" if helpers else "") + prompt,
        "entry_point": problem.name,
        "canonical_solution": body + "\n",
        "test": f"METADATA = {{'source': 'gym-llm'}}\n\n\ndef check(candidate):\n{asserts}\n",
    }


def mbpp_row(problem: FunctionProblem, task_id: int) -> dict[str, Any]:
    """A bundled function task in MBPP format."""
    tests = [f"assert {problem.name}({', '.join(map(repr, a))}) == {e!r}" for a, e in problem.examples + problem.tests]
    return {"task_id": task_id, "text": f"Write a function `{problem.signature}`. {problem.description}",
            "code": problem.reference, "test_list": tests, "test_setup_code": "", "challenge_test_list": []}


def stdio_row(problem: StdioProblem) -> dict[str, Any]:
    """A bundled stdin/stdout task in APPS-like format."""
    cases = problem.examples + problem.tests
    return {
        "problem_id": f"gym-llm/{problem.name}",
        "question": f"{problem.statement}\n\nInput: {problem.input_spec}\n\nOutput: {problem.output_spec}",
        "input_output": json.dumps({"inputs": [i for i, _ in cases], "outputs": [o for _, o in cases]}),
        "solutions": json.dumps([problem.reference]),
    }


def sample_rows(split: str) -> list[dict[str, Any]]:
    """The rows of the bundled sample dataset (``data/sample-<split>.jsonl``):
    easy bundled tasks of ``split`` exported to HumanEval, MBPP and stdin/stdout
    format, so the default ``code/Dataset-v0`` keeps the bundled splits."""
    from .envs import function_task, stdio_task
    from .problems import function_problems, stdio_problems

    functions = [p for p in function_problems() if function_task(p).split == split and p.difficulty <= 0.3]
    stdio = [p for p in stdio_problems() if stdio_task(p).split == split and p.difficulty <= 0.3]
    return ([humaneval_row(p) for p in functions[:6]]
            + [mbpp_row(p, 1000 + i) for i, p in enumerate(functions[6:10])]
            + [stdio_row(p) for p in stdio[:3]])
