"""Verifiers: from a model's answer to a :class:`~gym_llm.RewardResult`.

Each verifier runs the answer in the sandbox on the public examples and the
hidden tests, then compares outputs with the expected ones **on the host**:

* hidden expected outputs never enter the sandbox, so nothing the program
  does (reading files or memory, exiting early, printing fake verdicts,
  patching builtins) can reveal or change them;
* return values come back reduced to plain data (:mod:`gym_llm_code.jail.plain`)
  and are compared by host code, so a rigged ``__eq__`` never runs;
* a test passes only when its own output arrived and matches: missing,
  duplicated or unreadable output is a failure.

Hidden tests are the problem's fixed tests plus fresh random inputs drawn by
the problem's generator from a *rotation* seed; their expected outputs come
from running the reference solution in the sandbox (differential testing) and
are cached per (problem, rotation).

Reward components: ``pass_rate`` (fraction of hidden tests passed) and
``passed`` (1.0 when all passed). The score is one of them, per
:attr:`GradingPolicy.reward`. Public examples never count toward the reward;
their results make the feedback of multi-turn episodes.
"""

from __future__ import annotations

import asyncio
import builtins
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from gym_llm_sandbox import Sandbox, SandboxError

from gym_llm.envs.parsing import extract_code_blocks
from gym_llm.envs.rewards import RewardResult

from .harness import Job, JobOutcome, Steps, adrive, default_sandbox, drive
from .jail.plain import decode, encode, plain_equal
from .judge import first_difference
from .problems import FunctionProblem, StdioProblem

__all__ = [
    "GradingPolicy", "LANGUAGE_TAGS", "extract_answer", "function_steps", "stdio_steps",
    "verify", "averify", "Verdict", "score_verdicts", "failure_label",
]

#: Fence tags accepted for each answer language (an untagged fence is Python).
LANGUAGE_TAGS: dict[str, tuple[str, ...]] = {
    "python": ("python", "py", "python3", ""),
    "cpp": ("cpp", "c++", "cxx", "cc"),
}

_ADDRESS = re.compile(r"0x[0-9a-fA-F]{4,}")
_REFERENCE_CACHE: OrderedDict[tuple, Any] = OrderedDict()
_CACHE_LOCK = threading.Lock()
_CACHE_SIZE = 4096


@dataclass(frozen=True)
class GradingPolicy:
    """How hidden tests are drawn, run and scored.

    ``tests``: ``fixed`` (the problem's hand-written hidden tests), ``random``
    (``random_tests`` fresh inputs per rotation) or ``both``. ``test_timeout_s``
    bounds each test, ``budget_s`` all tests of one answer together (tests past
    it fail). ``reward``: the score is ``passed`` (all hidden tests pass, 0/1) or
    ``pass_rate`` (the fraction passed).
    """

    tests: Literal["fixed", "random", "both"] = "both"
    random_tests: int = 10
    test_timeout_s: float = 2.0
    budget_s: float = 10.0
    reward: Literal["passed", "pass_rate"] = "passed"

    def __post_init__(self) -> None:
        if self.tests not in ("fixed", "random", "both"):
            raise ValueError(f"tests must be 'fixed', 'random' or 'both', got {self.tests!r}")
        if self.reward not in ("passed", "pass_rate"):
            raise ValueError(f"reward must be 'passed' or 'pass_rate', got {self.reward!r}")
        if self.random_tests < 0 or self.test_timeout_s <= 0 or self.budget_s <= 0:
            raise ValueError("random_tests must be >= 0 and the time limits > 0")
        if self.tests != "fixed" and self.random_tests == 0:
            raise ValueError(f"tests={self.tests!r} needs random_tests > 0")

    @property
    def use_fixed(self) -> bool:
        return self.tests in ("fixed", "both")

    @property
    def use_random(self) -> bool:
        return self.tests in ("random", "both")


@dataclass
class Verdict:
    """One test's outcome: ``ok``, and for a failure a short ``detail``
    (``got`` is the program's output as text, for feedback)."""

    ok: bool
    detail: str = ""
    got: str | None = None


def extract_answer(text: str, languages: Sequence[str] = ("python",)) -> tuple[str, str] | None:
    """The last fenced code block of ``text`` whose tag names one of
    ``languages`` (see :data:`LANGUAGE_TAGS`), as ``(language, code)``."""
    for block in reversed(extract_code_blocks(text)):
        for lang in languages:
            if block.language in LANGUAGE_TAGS[lang]:
                return lang, block.code
    return None


def clean_text(text: str, limit: int = 300) -> str:
    """Error text made deterministic (no memory addresses) and short."""
    text = _ADDRESS.sub("0x...", text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def failure_kind(result: dict[str, Any]) -> str | None:
    if result.get("timeout"):
        return "timed out"
    if result.get("skipped"):
        return "not run: the time budget of the answer was used up"
    if "crash" in result:
        return clean_text(str(result["crash"]))
    if "error" in result:
        return clean_text(str(result["error"]))
    return None


def value_verdict(expected: Any, result: dict[str, Any]) -> Verdict:
    """Judge a ``call``/``exprs`` test: its plain value must equal ``expected``."""
    problem = failure_kind(result)
    if problem is not None:
        return Verdict(False, problem)
    if "value" not in result:
        return Verdict(False, "no result")
    try:
        got = decode(result["value"])
    except (ValueError, TypeError, RecursionError) as e:
        return Verdict(False, f"unreadable result: {clean_text(str(e))}")
    if plain_equal(expected, got):
        return Verdict(True)
    return Verdict(False, "wrong result", clean_text(repr(got), 200))


def stdio_verdict(expected: str, result: dict[str, Any]) -> Verdict:
    """Judge a ``stdio`` test: exit status 0 and matching tokens."""
    if not isinstance(result.get("stdout"), str):
        return Verdict(False, failure_kind(result) or "no result")
    if result.get("timeout"):
        return Verdict(False, "timed out")
    if result.get("truncated"):
        return Verdict(False, "printed too much output")
    if result.get("exit") != 0:
        how = f"killed by signal {result.get('signal')}" if result.get("signal") else f"exit status {result.get('exit')}"
        tail = (result.get("stderr") or "").strip().splitlines()[-1:] or [""]
        return Verdict(False, clean_text(f"runtime error ({how}) {tail[0]}".strip()))
    diff = first_difference(expected, result["stdout"])
    if diff is None:
        return Verdict(True)
    return Verdict(False, f"wrong answer: {diff}", clean_text(result["stdout"], 200))


#: Failure kinds named as they are; any other detail is named by :func:`failure_label`.
_PLAIN_LABELS = frozenset({"wrong result", "wrong answer", "timed out", "not run", "no result", "unreadable result",
                           "printed too much output", "test failed"})


def failure_label(verdict: Verdict) -> str:
    """What kind of failure ``verdict`` is, from a fixed vocabulary: the
    labels above, ``crashed``, ``runtime error``, a builtin exception's name,
    else ``error``. Never text the program wrote (a message, its stderr, an
    exit status): hidden tests' failures are named only by these labels, in
    the feedback of multi-turn episodes and in ``info["failures"]``, so they
    carry nothing of a hidden input the program was given."""
    head = verdict.detail.split(":")[0]
    if head in _PLAIN_LABELS:
        return head
    if head.startswith("the test process ended"):
        return "crashed"
    if head.startswith("runtime error"):
        return "runtime error"
    cls = getattr(builtins, head, None)
    return head if isinstance(cls, type) and issubclass(cls, BaseException) else "error"


def score_verdicts(hidden: Sequence[Verdict], policy: GradingPolicy, info: dict[str, Any]) -> RewardResult:
    """The reward of a set of hidden-test verdicts."""
    n = len(hidden)
    k = sum(v.ok for v in hidden)
    pass_rate = k / n if n else 0.0
    passed = float(n > 0 and k == n)
    info = {**info, "hidden_passed": k, "hidden_total": n}
    if not passed:
        info.setdefault("reason", f"{n - k} of {n} hidden tests failed" if n else "no hidden tests")
        kinds: dict[str, int] = {}
        for v in hidden:
            if not v.ok:
                key = failure_label(v)
                kinds[key] = kinds.get(key, 0) + 1
        info["failures"] = kinds
    score = passed if policy.reward == "passed" else pass_rate
    return RewardResult(score, {"pass_rate": pass_rate, "passed": passed}, info)


def zero(reason: str, **info: Any) -> RewardResult:
    """A zero reward for an answer that could not be tested (the model's fault)."""
    return RewardResult(0.0, {"pass_rate": 0.0, "passed": 0.0}, {"reason": reason, **info})


def environment_error(message: str) -> RewardResult:
    """A reward that must not be trusted: the environment failed, not the model."""
    return RewardResult(0.0, {"pass_rate": 0.0, "passed": 0.0}, {"reward_error": message})


def cached(key: tuple) -> Any:
    """A reference result computed before (LRU, shared by all environments of
    the process), or ``None``."""
    with _CACHE_LOCK:
        hit = _REFERENCE_CACHE.get(key)
        if hit is not None:
            _REFERENCE_CACHE.move_to_end(key)
        return hit


def store(key: tuple, value: Any) -> None:
    """Remember a reference result (see :func:`cached`)."""
    with _CACHE_LOCK:
        _REFERENCE_CACHE[key] = value
        while len(_REFERENCE_CACHE) > _CACHE_SIZE:
            _REFERENCE_CACHE.popitem(last=False)


def rotation_seeds(name: str, rotation: int, n: int) -> list[str]:
    """The generator seeds of rotation ``rotation`` of problem ``name``."""
    return [f"{name}|{rotation}|{i}" for i in range(n)]


def _reference_generation(
    kind: Literal["call", "stdio"], problem: FunctionProblem | StdioProblem, rotation: int, policy: GradingPolicy
) -> Steps[tuple[list, list] | str]:
    """Fresh random inputs and the reference's outputs for them: ``(inputs,
    expected)``, or an error text when the reference itself failed."""
    seeds = rotation_seeds(problem.name, rotation, policy.random_tests)
    key = (kind, problem.name, problem.reference, problem.generator, tuple(seeds))
    hit = cached(key)
    if hit is not None:
        return hit
    outcome = yield Job(
        kind=kind, program=problem.reference, entry=problem.name if kind == "call" else None,
        generator={"source": problem.generator, "seeds": seeds, "kind": "args" if kind == "call" else "text"},
        # The reference is trusted and fast; generous limits keep a loaded
        # machine from turning into a false environment error.
        test_timeout_s=max(10.0, policy.test_timeout_s), budget_s=max(60.0, policy.budget_s),
    )
    where = f"reference solution of {problem.name!r}"
    if outcome.failure or outcome.compile_error:
        return f"{where} failed: {outcome.failure or outcome.compile_error}"
    generated = outcome.generated or []
    if len(generated) != len(seeds) or len(outcome.results) != len(seeds):
        return f"{where}: generator produced {len(generated)} inputs for {len(seeds)} seeds"
    expected = []
    for inp, res in zip(generated, outcome.results, strict=True):
        if kind == "call":
            if "value" not in res:
                return f"{where} failed on generated input {str(inp)[:200]}: {failure_kind(res)}"
            expected.append(decode(res["value"]))
        else:
            if res.get("timeout") or res.get("exit") != 0 or not isinstance(res.get("stdout"), str):
                return f"{where} failed on generated input {str(inp)[:200]!r}: {clean_text(str(res))}"
            expected.append(res["stdout"])
    value = (generated, expected)
    store(key, value)
    return value


def _public_feedback(lines: list[str], all_public_ok: bool, language_hint: str) -> str:
    head = ("Your solution passes the examples but fails some hidden tests."
            if all_public_ok else "Your solution fails some of the examples:")
    return "\n".join([head, *lines, f"Fix the code and answer again with the complete program in a {language_hint} block."])


def function_steps(problem: FunctionProblem, text: str, rotation: int, policy: GradingPolicy) -> Steps[RewardResult]:
    """Verify an answer to a bundled function task (see the module docstring)."""
    answer = extract_answer(text, ("python",))
    if answer is None:
        return zero("no ```python code block in the answer",
                    feedback="Answer with the complete function in a ```python code block.")
    code = answer[1]
    hidden_inputs: list[list[Any]] = []
    hidden_expected: list[Any] = []
    if policy.use_fixed:
        hidden_inputs += [[encode(a) for a in args] for args, _ in problem.tests]
        hidden_expected += [expected for _, expected in problem.tests]
    if policy.use_random:
        ref = yield from _reference_generation("call", problem, rotation, policy)
        if isinstance(ref, str):
            return environment_error(ref)
        hidden_inputs += ref[0]
        hidden_expected += ref[1]
    public_inputs = [[encode(a) for a in args] for args, _ in problem.examples]
    outcome: JobOutcome = yield Job(
        kind="call", program=code, entry=problem.name, inputs=public_inputs + hidden_inputs,
        test_timeout_s=policy.test_timeout_s, budget_s=policy.budget_s,
    )
    info: dict[str, Any] = {"language": "python"}
    if outcome.compile_error is not None:
        error = clean_text(outcome.compile_error, 1000)
        return zero("the code does not compile", compile_error=error,
                    feedback=f"Your code does not compile:\n{error}\nAnswer again with the complete function in a ```python code block.")
    if outcome.failure is not None:
        return zero(outcome.failure, feedback=f"Your code could not be tested: {outcome.failure}.")
    results = outcome.results_of(len(public_inputs) + len(hidden_inputs))
    lines = []
    public_ok = 0
    for (args, expected), res in zip(problem.examples, results, strict=False):
        v = value_verdict(expected, res)
        public_ok += v.ok
        call = problem.call_text(args)
        lines.append(f"- {call} == {expected!r}: passed" if v.ok else
                     f"- {call} should return {expected!r}, but " +
                     (f"returned {v.got}" if v.got is not None else v.detail))
    hidden = [value_verdict(e, r) for e, r in zip(hidden_expected, results[len(public_inputs):], strict=True)]
    info.update(public_passed=public_ok, public_total=len(problem.examples))
    result = score_verdicts(hidden, policy, info)
    if not result.components["passed"]:
        result.info["feedback"] = _public_feedback(lines, public_ok == len(problem.examples), "```python")
    return result


def stdio_steps(problem: StdioProblem, text: str, rotation: int, policy: GradingPolicy,
                languages: Sequence[str] = ("python", "cpp")) -> Steps[RewardResult]:
    """Verify an answer (Python or C++, by its fence tag) to a stdin/stdout task."""
    answer = extract_answer(text, languages)
    hint = " or ".join(f"```{lang}" for lang in languages)
    if answer is None:
        return zero(f"no {hint} code block in the answer",
                    feedback=f"Answer with the complete program in a {hint} code block.")
    language, code = answer
    hidden_inputs = [inp for inp, _ in problem.tests] if policy.use_fixed else []
    hidden_expected = [out for _, out in problem.tests] if policy.use_fixed else []
    if policy.use_random:
        ref = yield from _reference_generation("stdio", problem, rotation, policy)
        if isinstance(ref, str):
            return environment_error(ref)
        hidden_inputs += ref[0]
        hidden_expected += ref[1]
    public_inputs = [inp for inp, _ in problem.examples]
    outcome: JobOutcome = yield Job(
        kind="stdio", program=code, language=language, inputs=public_inputs + hidden_inputs,  # type: ignore[arg-type]
        test_timeout_s=policy.test_timeout_s, budget_s=policy.budget_s,
    )
    info: dict[str, Any] = {"language": language}
    if outcome.compile_error is not None:
        error = clean_text(outcome.compile_error, 1500)
        return zero("the code does not compile", compile_error=error, language=language,
                    feedback=f"Your code does not compile:\n{error}\nAnswer again with the complete program in a {hint} block.")
    if outcome.failure is not None:
        return zero(outcome.failure, language=language, feedback=f"Your code could not be tested: {outcome.failure}.")
    results = outcome.results_of(len(public_inputs) + len(hidden_inputs))
    lines = []
    public_ok = 0
    for i, ((inp, expected), res) in enumerate(zip(problem.examples, results, strict=False), 1):
        v = stdio_verdict(expected, res)
        public_ok += v.ok
        lines.append(f"- example {i}: passed" if v.ok else
                     f"- example {i} (input {inp!r}): {v.detail}" + (f"; your output was {v.got}" if v.got else ""))
    hidden = [stdio_verdict(e, r) for e, r in zip(hidden_expected, results[len(public_inputs):], strict=True)]
    info.update(public_passed=public_ok, public_total=len(problem.examples))
    result = score_verdicts(hidden, policy, info)
    if not result.components["passed"]:
        result.info["feedback"] = _public_feedback(lines, public_ok == len(problem.examples), hint)
    return result


def verify(steps: Steps[RewardResult], sandbox: Sandbox | Callable[[], Sandbox] | None = None) -> RewardResult:
    """Run verification ``steps`` to a reward, blocking; a sandbox failure
    becomes ``info["reward_error"]``. ``sandbox``: a sandbox, a function that
    returns one (building it may fail: that is a sandbox failure too), or
    ``None`` for the domain's shared default."""
    try:
        return drive(steps, sandbox if isinstance(sandbox, Sandbox) else (sandbox or default_sandbox)())
    except (SandboxError, OSError) as e:  # host-side: the program under test cannot cause these
        return environment_error(f"sandbox failure: {type(e).__name__}: {e}")


async def averify(steps: Steps[RewardResult], sandbox: Sandbox | Callable[[], Sandbox] | None = None) -> RewardResult:
    """Async :func:`verify`: never blocks the event loop."""
    try:
        # Building a sandbox probes nsjail once: keep it off the loop.
        if not isinstance(sandbox, Sandbox):
            sandbox = await asyncio.to_thread(sandbox or default_sandbox)
        return await adrive(steps, sandbox)
    except (SandboxError, OSError) as e:
        return environment_error(f"sandbox failure: {type(e).__name__}: {e}")
