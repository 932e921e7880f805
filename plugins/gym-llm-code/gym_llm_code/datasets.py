"""Code datasets in the common formats, and their verification.

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

Files: ``.jsonl``, ``.jsonl.gz``, ``.json`` (a list of rows, or ``{"rows"|"data":
[...]}``), ``.parquet``, or a Hugging Face dataset name. One file holds all rows of
the split it is loaded for; ``task_index`` k is row k.

Dataset fields are never evaluated on the host. Assertion tests are *parsed*
(:mod:`ast`, which runs nothing) and, when every assert has the shape
``candidate(...) == expected`` (or ``abs(candidate(...) - expected) < tol``,
``math.isclose(...)``, ``candidate(...)``, ``not candidate(...)``), split in
two: the expected sides are evaluated next to the reference solution, the
candidate sides next to the answer, and the host compares plain values -- the
same guarantee as the bundled tasks. Other test code (loops, helper
variables) runs as a whole and passes when it runs to its end:
``info["harness"]`` says ``"split"`` or ``"in-process"``. Either way the
dataset's code runs in the jail's checker process with the task's own helpers,
and reaches the answer, in a process of its own that never holds the tests,
only through calls that return plain data (``jail/runner.py``). The MBPP test
shown in the prompt is never a hidden test.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import gzip
import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any, Literal

from gym_llm.envs.jsonio import parse_jsonl
from gym_llm.envs.rewards import RewardResult
from gym_llm.envs.tasks import Task, TaskList, check_split, content_hash

from .envs import CodeEnv
from .harness import Job, JobOutcome, Steps
from .jail.plain import Unsupported, decode
from .problems import FunctionProblem, StdioProblem
from .verify import (
    GradingPolicy,
    Verdict,
    cached,
    clean_text,
    environment_error,
    extract_answer,
    failure_kind,
    score_verdicts,
    stdio_steps,
    store,
    value_verdict,
    zero,
)

__all__ = [
    "read_rows", "parse_row", "AssertCheck", "AssertionItem", "StdioItem", "DatasetEnv",
    "split_asserts", "assertion_steps", "humaneval_row", "mbpp_row", "stdio_row", "DEFAULT_PATH",
]

Format = Literal["humaneval", "mbpp", "stdio"]

#: The dataset ``code/Dataset-v0`` loads by default: bundled tasks exported
#: to the three formats (see :func:`humaneval_row` and friends).
DEFAULT_PATH = {"train": "sample-train.jsonl", "heldout": "sample-heldout.jsonl"}

_HUB_NAME = re.compile(r"[A-Za-z0-9][\w.-]*(/[\w.-]+)?")

#: Test code longer than this is not parsed for splitting (it still runs).
_MAX_PARSE_CHARS = 1_000_000


# ----------------------------------------------------------------------------- files

def read_rows(path: str, *, hf_split: str = "test", hf_config: str | None = None) -> list[dict[str, Any]]:
    """All rows of a dataset file, or of split ``hf_split`` of the Hugging Face
    dataset named ``path`` when no such file exists."""
    if os.path.exists(path):
        name = path.lower()
        if name.endswith(".jsonl.gz") or name.endswith(".jsonl"):
            opener = gzip.open if name.endswith(".gz") else open
            with opener(path, "rt", encoding="utf-8") as f:
                return parse_jsonl(f, path)
        if name.endswith(".json"):
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
            if isinstance(data, dict):
                data = data.get("rows", data.get("data"))
            if not isinstance(data, list):
                raise ValueError(f"{path}: expected a JSON list of rows (or {{'rows': [...]}})")
            return data
        if name.endswith(".parquet"):
            import pyarrow.parquet as pq

            return pq.read_table(path).to_pylist()
        raise ValueError(f"{path}: unsupported file type (use .jsonl, .jsonl.gz, .json or .parquet)")
    if not _HUB_NAME.fullmatch(path) or path.endswith((".jsonl", ".json", ".gz", ".parquet")):
        raise FileNotFoundError(f"no dataset file {path!r}")
    try:
        import datasets
    except ImportError as e:
        raise ImportError(f"{path!r} is not a file; loading it from the Hugging Face hub needs "
                          "`pip install datasets`") from e
    return [dict(row) for row in datasets.load_dataset(path, hf_config, split=hf_split)]


# ----------------------------------------------------------------------------- assertion tests

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


# ----------------------------------------------------------------------------- verification

def _expected_values(item: AssertionItem, checks: Sequence[AssertCheck]) -> Job:
    return Job(kind="probe", program=item.prefix + ("\n" if item.prefix else "") + item.solution,
               entry=item.entry_point, setup=item.prefix + "\n" + item.setup,
               exprs=[c.expected for c in checks if c.expected is not None],
               test_timeout_s=30.0, budget_s=120.0)


def _numbers(*values: Any) -> bool:
    return all(type(v) in (int, float, bool) for v in values)


def check_verdict(check: AssertCheck, expected: Any, result: dict[str, Any]) -> Verdict:
    """Judge one split assert on the host, on plain values."""
    if check.kind == "eq":
        return value_verdict(expected, result)
    problem = failure_kind(result)
    if problem is not None or "value" not in result:
        return Verdict(False, problem or "no result")
    try:
        got = decode(result["value"])
    except (ValueError, TypeError, RecursionError) as e:
        return Verdict(False, f"unreadable result: {clean_text(str(e))}")
    if check.kind in ("truthy", "falsy"):
        ok = not isinstance(got, Unsupported) and bool(got) == (check.kind == "truthy")
    else:
        try:
            if check.kind == "close":
                value, tol = expected
                ok = _numbers(got, value, tol) and (abs(got - value) <= tol if check.inclusive
                                                    else abs(got - value) < tol)
            else:
                value, rel, tol = expected
                ok = _numbers(got, value, rel, tol) and math.isclose(got, value, rel_tol=rel, abs_tol=tol)
        except OverflowError:  # an int too large for a float is near no float
            ok = False
    return Verdict(True) if ok else Verdict(False, "wrong result", clean_text(repr(got), 200))


def assertion_steps(item: AssertionItem, text: str, policy: GradingPolicy,
                    raw_completions: bool = False) -> Steps[RewardResult]:
    """Verify an answer to a HumanEval/MBPP item (see the module docstring).
    With ``raw_completions`` an answer without a code fence is taken as the
    completion itself (the HumanEval convention)."""
    answer = extract_answer(text, ("python",))
    if answer is None and not raw_completions:
        return zero("no ```python code block in the answer",
                    feedback="Answer with the complete function in a ```python code block.")
    program = item.program(answer[1] if answer else text)
    if item.checks is None:
        outcome: JobOutcome = yield Job(kind="check", program=program, entry=item.entry_point,
                                        setup=item.prefix, test=item.test_program,
                                        test_timeout_s=policy.budget_s, budget_s=policy.budget_s)
        info: dict[str, Any] = {"language": "python", "harness": "in-process"}
        if outcome.task_error is not None:
            return environment_error(f"the test code of {item.task_id!r} failed: {outcome.task_error}")
        if outcome.compile_error is not None:
            return _compile_error(outcome.compile_error, info)
        if outcome.failure is not None:
            return zero(outcome.failure, **info, feedback=f"Your code could not be tested: {outcome.failure}.")
        res = outcome.results_of(1)[0]
        verdict = Verdict(True) if res == {"value": True} else Verdict(False, failure_kind(res) or "test failed")
        result = score_verdicts([verdict], policy, info)
        if not verdict.ok:
            result.info["feedback"] = _hidden_feedback([verdict])
        return result
    checks = list(item.checks)
    key = ("asserts", content_hash([item.prefix, item.solution, item.setup, [c.expected for c in checks]]))
    expected_values = cached(key)
    if expected_values is None:
        ref: JobOutcome = yield _expected_values(item, checks)
        expected_values = _reference_values(ref, item)
        if isinstance(expected_values, str):
            return environment_error(expected_values)
        store(key, expected_values)
    outcome = yield Job(kind="probe", program=program, entry=item.entry_point, setup=item.prefix + "\n" + item.setup,
                        exprs=[c.candidate for c in checks],
                        bind={"candidate": item.entry_point} if item.format == "humaneval" else {},
                        test_timeout_s=policy.test_timeout_s, budget_s=policy.budget_s)
    info = {"language": "python", "harness": "split"}
    if outcome.task_error is not None:
        return environment_error(f"the test code of {item.task_id!r} failed: {outcome.task_error}")
    if outcome.compile_error is not None:
        return _compile_error(outcome.compile_error, info)
    if outcome.failure is not None:
        return zero(outcome.failure, **info, feedback=f"Your code could not be tested: {outcome.failure}.")
    values = iter(expected_values)
    results = outcome.results_of(len(checks))
    verdicts = [check_verdict(c, next(values) if c.expected is not None else None, r)
                for c, r in zip(checks, results, strict=True)]
    info.update(public_passed=sum(v.ok for v in verdicts[:item.public]), public_total=item.public)
    result = score_verdicts(verdicts[item.public:], policy, info)
    if not result.components["passed"]:
        shown = [f"- `{c.source}`: " + ("passed" if v.ok else (f"got {v.got}" if v.got else v.detail))
                 for c, v in zip(checks[:item.public], verdicts, strict=False)]
        result.info["feedback"] = ("\n".join(["Your solution fails some tests.", *shown]) if shown
                                   else _hidden_feedback(verdicts))
    return result


def _reference_values(ref: JobOutcome, item: AssertionItem) -> list[Any] | str:
    where = f"expected values of {item.task_id!r}"
    if ref.failure or ref.compile_error or ref.task_error:
        return f"{where} could not be computed: {ref.failure or ref.compile_error or ref.task_error}"
    values = []
    for i, res in enumerate(ref.results):
        if "value" not in res:
            return f"{where}: test {i + 1} failed to evaluate: {failure_kind(res)}"
        values.append(decode(res["value"]))
    return values


def _compile_error(error: str, info: dict[str, Any]) -> RewardResult:
    error = clean_text(error, 1000)
    return zero("the code does not compile", compile_error=error, **info,
                feedback=f"Your code does not compile:\n{error}\nAnswer again with the complete function in a ```python code block.")


def _hidden_feedback(verdicts: Sequence[Verdict]) -> str:
    """Feedback that names how tests failed without showing them."""
    kinds = sorted({v.detail.split(":")[0] for v in verdicts if not v.ok})
    return (f"Your solution fails {sum(not v.ok for v in verdicts)} of {len(verdicts)} tests "
            f"({', '.join(kinds)}). Fix it and answer again with the complete function in a ```python block.")


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


# ----------------------------------------------------------------------------- env

def _resolve_default(name: str) -> str:
    return str(resources.files("gym_llm_code") / "data" / name)


class DatasetEnv(CodeEnv):
    """Code tasks loaded from a dataset: HumanEval, MBPP or stdin/stdout format,
    from a .jsonl/.jsonl.gz/.json/.parquet file or a Hugging Face dataset name.

    Kwargs: ``path`` -- one file (all its rows form the requested split) or
    ``{"train": ..., "heldout": ...}`` (default: a bundled sample in all three
    formats); ``format`` (``"auto"`` per row, or ``humaneval``/``mbpp``/``stdio``);
    ``hf_config`` and ``hf_splits`` (default ``{"train": "train", "heldout":
    "test"}``) for hub datasets; ``challenge_tests`` adds MBPP's
    ``challenge_test_list``; ``raw_completions`` (default: HumanEval rows only)
    takes an unfenced answer as the completion; ``name`` prefixes task ids
    (default: the file or dataset name). Datasets have fixed tests only:
    ``tests`` must be ``"fixed"`` (``"both"`` is read as ``"fixed"``), and
    the other :class:`~gym_llm_code.envs.CodeEnv` kwargs apply.
    """

    def __init__(
        self,
        *,
        path: str | Mapping[str, str] | None = None,
        format: str = "auto",
        hf_config: str | None = None,
        hf_splits: Mapping[str, str] | None = None,
        challenge_tests: bool = False,
        raw_completions: bool | None = None,
        name: str | None = None,
        split: str = "train",
        tests: str = "fixed",
        **kwargs: Any,
    ):
        split = check_split(split)
        if tests == "random":
            raise ValueError("dataset tasks have fixed tests only: use tests='fixed'")
        if path is None:
            path = {s: _resolve_default(f) for s, f in DEFAULT_PATH.items()}
        source = path.get(split) if isinstance(path, Mapping) else path
        if source is None:
            raise ValueError(f"no dataset file given for split {split!r}")
        hf_split = {"train": "train", "heldout": "test", **(hf_splits or {})}[split]
        rows = read_rows(str(source), hf_split=hf_split, hf_config=hf_config)
        label = name or os.path.basename(str(source)).split(".")[0] or str(source)
        self.items: dict[str, AssertionItem | StdioItem] = {}
        #: What the strict grader verifies (:meth:`strict_steps`).
        self.strict_items: dict[str, AssertionItem | StdioItem] = {}
        tasks = []
        for i, row in enumerate(rows):
            item = parse_row(row, i, format, challenge_tests)
            task_id = f"{label}/{item.task_id}"
            if task_id in self.items:
                task_id = f"{task_id}#{i}"
            self.items[task_id] = item
            self.strict_items[task_id] = _strict_item(row, i, format, item)
            tasks.append(self._task(task_id, item, split))
        self.raw_completions = raw_completions
        super().__init__(TaskList(tasks), split=split, tests="fixed", **kwargs)

    @staticmethod
    def _task(task_id: str, item: AssertionItem | StdioItem, split: str) -> Task:
        if isinstance(item, StdioItem):
            p = item.problem
            prompt = (f"{p.statement}\n\nWrite a complete program that reads standard input and writes "
                      "standard output. Reply with it in a single ```python or ```cpp code block.")
            return Task(id=task_id, prompt=prompt, answer=p.reference or None, split=split,
                        metadata={"format": "stdio", "tests": len(p.tests)})
        return Task(id=task_id, prompt=item.prompt, answer=item.solution or None, split=split,
                    metadata={"format": item.format, "entry_point": item.entry_point,
                              "harness": "split" if item.checks is not None else "in-process"})

    def steps(self, task: Task, text: str) -> Steps[RewardResult]:
        return self._steps(self.items[task.id], text, self.policy)

    def strict_steps(self, task: Task, text: str) -> Steps[RewardResult]:
        """Every test the row holds (:func:`_strict_item`), every one must
        pass: a dataset has no generator, so no fresh random tests."""
        return self._steps(self.strict_items[task.id], text, dataclasses.replace(self.policy, reward="passed"))

    def _steps(self, item: AssertionItem | StdioItem, text: str, policy: GradingPolicy) -> Steps[RewardResult]:
        if isinstance(item, StdioItem):
            return stdio_steps(item.problem, text, self.rotation, policy)
        raw = self.raw_completions if self.raw_completions is not None else item.format == "humaneval"
        return assertion_steps(item, text, policy, raw)


def _strict_item(row: Mapping[str, Any], index: int, format: str,
                 item: AssertionItem | StdioItem) -> AssertionItem | StdioItem:
    """The strict grader's version of a row: MBPP with its
    ``challenge_test_list`` (when the row has one), stdin/stdout with the
    public example counted as a hidden test too; otherwise ``item`` (HumanEval
    rows hold no more tests than training runs)."""
    if isinstance(item, StdioItem):
        p = item.problem
        if p.tests == p.examples:  # a one-test row already grades its only test
            return item
        return StdioItem(item.task_id, dataclasses.replace(p, tests=p.examples + p.tests))
    if item.format == "mbpp" and row.get("challenge_test_list"):
        return parse_row(row, index, format, challenge_tests=True)
    return item
