"""Grading an answer to a HumanEval or MBPP item (:func:`assertion_steps`).

Split asserts (:mod:`gym_llm_code.asserts`): the expected sides are evaluated
next to the reference solution, the candidate sides next to the answer, and
the host compares plain values (:func:`check_verdict`) -- the same guarantee
as the bundled tasks. Other test code (loops, helper variables) runs as a
whole and passes when it runs to its end: ``info["harness"]`` says
``"split"`` or ``"in-process"``. Either way the dataset's code runs in the
jail's checker process with the task's own helpers, and reaches the answer,
in a process of its own that never holds the tests, only through calls that
return plain data (``jail/runner.py``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from gym_llm.envs.rewards import RewardResult
from gym_llm.envs.tasks import content_hash

from .asserts import AssertCheck
from .dataset_rows import AssertionItem
from .harness import Job, JobOutcome, Steps
from .jail.plain import Unsupported, decode
from .verify import (
    GradingPolicy,
    Verdict,
    cached,
    clean_text,
    environment_error,
    extract_answer,
    failure_kind,
    failure_label,
    score_verdicts,
    store,
    value_verdict,
    zero,
)

__all__ = ["assertion_steps", "check_verdict"]


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
        if (untested := _untested(outcome, item, info)) is not None:
            return untested
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
    if (untested := _untested(outcome, item, info)) is not None:
        return untested
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


def _untested(outcome: JobOutcome, item: AssertionItem, info: dict[str, Any]) -> RewardResult | None:
    """The result of a run that gave no test results, or ``None`` when it did:
    the item's own test code failed (an environment error), the answer did
    not compile, or it could not be tested (both harnesses alike)."""
    if outcome.task_error is not None:
        return environment_error(f"the test code of {item.task_id!r} failed: {outcome.task_error}")
    if outcome.compile_error is not None:
        return _compile_error(outcome.compile_error, info)
    if outcome.failure is not None:
        return zero(outcome.failure, **info, feedback=f"Your code could not be tested: {outcome.failure}.")
    return None


def _compile_error(error: str, info: dict[str, Any]) -> RewardResult:
    error = clean_text(error, 1000)
    return zero("the code does not compile", compile_error=error, **info,
                feedback=f"Your code does not compile:\n{error}\nAnswer again with the complete function in a ```python code block.")


def _hidden_feedback(verdicts: Sequence[Verdict]) -> str:
    """Feedback that names how tests failed (:func:`failure_label`) without showing them."""
    kinds = sorted({failure_label(v) for v in verdicts if not v.ok})
    return (f"Your solution fails {sum(not v.ok for v in verdicts)} of {len(verdicts)} tests "
            f"({', '.join(kinds)}). Fix it and answer again with the complete function in a ```python block.")
