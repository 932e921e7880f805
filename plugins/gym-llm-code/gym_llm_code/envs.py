"""The code environments: bundled function tasks, bundled stdin/stdout tasks,
and (in :mod:`gym_llm_code.dataset_env`) tasks loaded from dataset files.

All share :class:`CodeEnv`: an answer is verified in the sandbox; with
``max_turns > 1`` a failed attempt gets feedback (the public examples'
results, or the compiler/runtime error) and another try, and the hidden tests
alone decide the reward.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from typing import Any

from gym_llm_sandbox import Sandbox

from gym_llm.envs.core import SingleTurnEnv, Turn
from gym_llm.envs.grading import assistant_messages
from gym_llm.envs.parsing import message_text
from gym_llm.envs.rewards import RewardResult
from gym_llm.envs.tasks import Task, TaskList, TaskSet, content_hash

from .harness import POLICY, Steps, default_sandbox
from .problems import FunctionProblem, StdioProblem, function_problems, stdio_problems
from .signals import SIGNALS
from .verify import GradingPolicy, averify, function_steps, stdio_steps, verify

__all__ = [
    "CodeEnv", "PythonFunctionsEnv", "StdioEnv", "function_task", "stdio_task", "split_of",
    "make_sandbox", "strict_rotation", "attempt_rotation", "STRICT_RANDOM_FACTOR",
]

#: Share of the bundled problems (by a hash of the name) in the held-out split.
HELDOUT_FRACTION = 0.2


def split_of(key: str) -> str:
    """``heldout`` for about :data:`HELDOUT_FRACTION` of keys, else ``train``;
    a pure function of the key, so splits never overlap."""
    return "heldout" if int(content_hash(key)[:8], 16) < HELDOUT_FRACTION * 2**32 else "train"


#: The strict grader draws this many times the training's random tests (at least 30).
STRICT_RANDOM_FACTOR = 3


def strict_rotation(rotation: int) -> int:
    """The rotation of the strict grader's random tests for an episode whose
    training rotation is ``rotation``: derived (so the same episode is
    strict-graded the same way in any process) and never ``rotation`` itself,
    so a policy that learned one rotation's inputs gains nothing from it."""
    return _derived_rotation(f"strict|{rotation}", rotation)


def attempt_rotation(rotation: int, attempt: int) -> int:
    """The rotation of the random tests of attempt ``attempt`` (0-based) of an
    episode whose rotation is ``rotation``: the first attempt uses ``rotation``
    itself (single-turn grading, and the GRPO group sharing a rotation, are
    unchanged); each later one a fresh rotation derived from both (so the same
    episode seed and answers give the same rewards in any process), so that
    what one attempt learned about its random inputs is no use to the next."""
    return rotation if attempt == 0 else _derived_rotation(f"attempt|{rotation}|{attempt}", rotation)


def _derived_rotation(key: str, rotation: int) -> int:
    """A rotation that is a pure function of ``key`` and never ``rotation``."""
    derived = int(content_hash(key)[:8], 16) % 2**31
    return derived if derived != rotation else (derived + 1) % 2**31


def make_sandbox(sandbox: Sandbox | Mapping[str, Any] | None) -> Sandbox | None:
    """Accept a ready :class:`~gym_llm_sandbox.Sandbox`, a Hydra-style mapping
    of overrides over the code domain's policy, or ``None`` (the shared
    default sandbox, built on first use)."""
    if sandbox is None or isinstance(sandbox, Sandbox):
        return sandbox
    return Sandbox.from_config(sandbox, policy=POLICY)


class CodeEnv(SingleTurnEnv):
    """Base of the code environments: subclasses build tasks and implement
    :meth:`steps` (the verification of one answer, as a job generator).

    Keyword arguments (all environments):

    * ``tests`` (``"both"``): hidden tests are the fixed ones, ``"random"``
      fresh ones, or both (see :class:`~gym_llm_code.verify.GradingPolicy`);
    * ``random_tests`` (10): random hidden tests per episode;
    * ``rotation_seed`` (``None``): ``None`` draws a fresh rotation of random
      tests each episode from the environment's RNG (so it is fixed by the
      reset seed); an int uses that rotation in every episode; either way a
      later attempt of a multi-turn episode draws its own
      (:func:`attempt_rotation`, :attr:`current_rotation`);
    * ``reward`` (``"passed"``): the score is ``passed`` (all hidden tests
      pass) or ``pass_rate``; both are always in ``reward_components``;
    * ``test_timeout_s`` (2.0) per test, ``time_budget_s`` (10.0) per answer;
    * ``sandbox``: a :class:`~gym_llm_sandbox.Sandbox` or a mapping of
      overrides (``{"memory_mb": 256}``) over the domain policy;
    * ``max_turns`` (1), ``attempt_discount`` (1.0), ``system_prompt``,
      ``split``, ``seed`` as in :class:`~gym_llm.SingleTurnEnv`.

    ``last_timings`` holds the wall time of the last verification (never in
    ``info``, which must be deterministic).

    The strict grader (:meth:`astrict_score`, docs/monitoring.md) verifies the
    last answer again with :meth:`strict_steps`: for the bundled envs the
    fixed tests plus :data:`STRICT_RANDOM_FACTOR` times as many random tests
    of a different rotation (:func:`strict_rotation`), all of which must pass.
    The hack signals are the domain's (:mod:`gym_llm_code.signals`).
    """

    hack_signals = SIGNALS

    def __init__(
        self,
        tasks: TaskSet | Sequence[Task],
        *,
        split: str = "train",
        seed: int | None = None,
        max_turns: int = 1,
        system_prompt: str | None = None,
        attempt_discount: float = 1.0,
        tests: str = "both",
        random_tests: int = 10,
        rotation_seed: int | None = None,
        reward: str = "passed",
        test_timeout_s: float = 2.0,
        time_budget_s: float = 10.0,
        sandbox: Sandbox | Mapping[str, Any] | None = None,
        render_mode: str | None = None,
    ):
        self.policy = GradingPolicy(
            tests=tests, random_tests=random_tests, test_timeout_s=test_timeout_s,  # type: ignore[arg-type]
            budget_s=time_budget_s, reward=reward,  # type: ignore[arg-type]
        )
        super().__init__(
            tasks, self._verify, split=split, seed=seed, max_turns=max_turns,
            system_prompt=system_prompt, attempt_discount=attempt_discount, render_mode=render_mode,
        )
        self.rotation_seed = rotation_seed
        self.rotation = 0
        self._sandbox_config = sandbox
        self._sandbox = sandbox if isinstance(sandbox, Sandbox) else None
        self.last_timings: dict[str, float] = {}

    @property
    def sandbox(self) -> Sandbox:
        """Where answers run: the sandbox given, one built from the config
        mapping over the domain policy, or the domain's shared default. Built
        on first use, so making an env never probes nsjail (a machine
        without it gets ``reward_error`` per answer, not a failed ``make``)."""
        if self._sandbox is None:
            self._sandbox = make_sandbox(self._sandbox_config) or default_sandbox()
        return self._sandbox

    # ----------------------------------------------------------- subclass API
    def steps(self, task: Task, text: str) -> Steps[RewardResult]:
        """The verification of ``text`` as an answer to ``task``."""
        raise NotImplementedError

    def strict_steps(self, task: Task, text: str) -> Steps[RewardResult]:
        """The strict grader's verification of ``text`` (see :meth:`astrict_score`)."""
        raise NotImplementedError

    @property
    def strict_policy(self) -> GradingPolicy:
        """The bundled envs' strict grading: fixed and random tests, more of
        the random ones (and the time budget to run them), every one must pass."""
        n = max(30, STRICT_RANDOM_FACTOR * self.policy.random_tests)
        return dataclasses.replace(self.policy, tests="both", random_tests=n, reward="passed",
                                   budget_s=self.policy.budget_s * STRICT_RANDOM_FACTOR)

    async def astrict_score(self, messages: list[dict[str, Any]], reward: float) -> RewardResult:
        """The last answer verified by :meth:`strict_steps`, discounted by
        the attempt it came in, as training is; a sandbox failure is the
        result's ``error`` (the episode stays strict-ungraded)."""
        turns = assistant_messages(messages)
        if not turns:
            return RewardResult(0.0, {"pass_rate": 0.0, "passed": 0.0}, {"reason": "strict: no answer"})
        result = await averify(self.strict_steps(self.task, message_text(turns[-1])), lambda: self.sandbox)
        result.score *= self.attempt_discount ** (len(turns) - 1)
        return result

    # ------------------------------------------------------------- internals
    def on_reset(self, task: Task) -> dict[str, Any]:
        if self.rotation_seed is None:
            self.rotation = int(self.np_random.integers(2**31))
        else:
            self.rotation = int(self.rotation_seed)
        return {"rotation": self.rotation}

    @property
    def current_rotation(self) -> int:
        """The rotation of the random tests of the attempt being graded."""
        return attempt_rotation(self.rotation, self.turn)

    def score_formula(self) -> str:
        """The ``reward`` kwarg's component counts, the other is logged."""
        other = "pass_rate" if self.policy.reward == "passed" else "passed"
        return f"1 * {self.policy.reward} + 0 * {other}"

    def feedback(self, result: RewardResult) -> str:
        return str(result.info.get("feedback") or self.feedback_text)

    def _verify(self, task: Task, text: str) -> RewardResult:
        start = time.perf_counter()
        try:
            return verify(self.steps(task, text), lambda: self.sandbox)
        finally:
            self.last_timings = {"verify_s": time.perf_counter() - start}

    async def arespond(self, message: dict[str, Any]) -> Turn:
        start = time.perf_counter()
        try:
            result = await averify(self.steps(self.task, message_text(message)), lambda: self.sandbox)
        finally:
            self.last_timings = {"verify_s": time.perf_counter() - start}
        return self._judge(result)


# --------------------------------------------------------------------------- functions

_FUNCTION_INSTRUCTIONS = (
    "Reply with the complete function in a ```python code block. You may use the Python "
    "standard library and define helper functions; do not read input or print."
)


def function_task(problem: FunctionProblem) -> Task:
    """The :class:`~gym_llm.Task` of a bundled function problem (its answer is
    the reference solution)."""
    examples = "\n".join(f"    {problem.call_text(args)} == {expected!r}" for args, expected in problem.examples)
    prompt = (
        f"Write a Python function `{problem.name}`.\n\n    {problem.signature}\n\n"
        f"{problem.description}\n\nExamples:\n{examples}\n\n{_FUNCTION_INSTRUCTIONS}"
    )
    key = f"pyfn/{problem.name}"
    return Task(
        id=key, prompt=prompt, answer=problem.reference, split=split_of(key),
        difficulty=problem.difficulty,
        metadata={"problem": problem.name, "topic": problem.topic, "entry_point": problem.name},
    )


def _select(problems: Sequence[Any], min_difficulty: float, max_difficulty: float,
            topics: Sequence[str] | None) -> list[Any]:
    if isinstance(topics, str):
        topics = [topics]
    chosen = [p for p in problems if min_difficulty <= p.difficulty <= max_difficulty
              and (topics is None or p.topic in topics)]
    if not chosen:
        raise ValueError(f"no bundled problem has difficulty in [{min_difficulty}, {max_difficulty}]"
                         + (f" and a topic in {list(topics)}" if topics is not None else ""))
    return chosen


class PythonFunctionsEnv(CodeEnv):
    """Implement a Python function from its signature, description and examples;
    hidden fixed and randomized unit tests decide the reward (bundled tasks).

    Extra kwargs: ``min_difficulty`` (0.0) and ``max_difficulty`` (1.0) keep the
    tasks in that range (``max_difficulty=0.0`` gives the warm-up tasks), and
    ``topics`` (``None`` = all of basics, strings, lists, math, dicts,
    recursion, parsing, simulation).
    """

    def __init__(self, *, min_difficulty: float = 0.0, max_difficulty: float = 1.0,
                 topics: Sequence[str] | None = None, **kwargs: Any):
        chosen = _select(function_problems(), min_difficulty, max_difficulty, topics)
        self.problems = {p.name: p for p in chosen}
        super().__init__(TaskList(function_task(p) for p in chosen), **kwargs)

    def steps(self, task: Task, text: str) -> Steps[RewardResult]:
        return function_steps(self.problems[task.metadata["problem"]], text, self.current_rotation, self.policy)

    def strict_steps(self, task: Task, text: str) -> Steps[RewardResult]:
        return function_steps(self.problems[task.metadata["problem"]], text, strict_rotation(self.rotation),
                              self.strict_policy)


# --------------------------------------------------------------------------- stdio

_STDIO_INSTRUCTIONS = (
    "Write a complete program that reads standard input and writes standard output. Reply "
    "with it in a single ```python (Python 3, standard library) or ```cpp (C++17, compiled "
    "with g++ -O2) code block."
)


def stdio_task(problem: StdioProblem) -> Task:
    """The :class:`~gym_llm.Task` of a bundled stdin/stdout problem (its answer
    is the Python reference solution)."""
    examples = "\n\n".join(
        f"Example {i}\nInput:\n```\n{inp.rstrip()}\n```\nOutput:\n```\n{out.rstrip()}\n```"
        for i, (inp, out) in enumerate(problem.examples, 1)
    )
    prompt = (
        f"{problem.statement}\n\nInput: {problem.input_spec}\n\nOutput: {problem.output_spec}\n\n"
        f"{examples}\n\n{_STDIO_INSTRUCTIONS}"
    )
    key = f"stdio/{problem.name}"
    return Task(
        id=key, prompt=prompt, answer=problem.reference, split=split_of(key),
        difficulty=problem.difficulty, metadata={"problem": problem.name, "topic": problem.topic},
    )


class StdioEnv(CodeEnv):
    """Solve a competitive-programming problem with a program reading stdin and
    writing stdout, in Python or C++ (by the fence tag); hidden fixed and
    randomized tests, compared token by token with numeric tolerance.

    Extra kwargs: ``min_difficulty``, ``max_difficulty``, ``topics`` as in
    :class:`PythonFunctionsEnv`, and ``languages`` (``("python", "cpp")``).
    """

    def __init__(self, *, min_difficulty: float = 0.0, max_difficulty: float = 1.0,
                 topics: Sequence[str] | None = None, languages: Sequence[str] = ("python", "cpp"),
                 **kwargs: Any):
        chosen = _select(stdio_problems(), min_difficulty, max_difficulty, topics)
        self.problems = {p.name: p for p in chosen}
        self.languages = tuple(languages)
        super().__init__(TaskList(stdio_task(p) for p in chosen), **kwargs)

    def steps(self, task: Task, text: str) -> Steps[RewardResult]:
        return stdio_steps(self.problems[task.metadata["problem"]], text, self.current_rotation, self.policy,
                           self.languages)

    def strict_steps(self, task: Task, text: str) -> Steps[RewardResult]:
        return stdio_steps(self.problems[task.metadata["problem"]], text, strict_rotation(self.rotation),
                           self.strict_policy, self.languages)
