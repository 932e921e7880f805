"""``math/PythonTool-v0``: solve a math problem with a sandboxed Python tool.

The model may call ``python`` (code runs in a fresh nsjail per call, see
``gym_llm_sandbox``; what it prints comes back as a tool message) any number
of times within ``max_turns``, then gives its final answer in ``\\boxed{}``
in a turn without tool calls. A sandbox that cannot run (nsjail missing,
jail setup failure) ends the episode with ``info["reward_error"]``: the
environment failed, not the model.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
from collections.abc import Mapping
from typing import Any

from gym_llm_sandbox import ExecResult, Limits, Sandbox, SandboxError, SandboxPolicy

from gym_llm import ProceduralTasks, RewardResult, Task, ToolEnv, Turn
from gym_llm.envs.grading import assistant_messages
from gym_llm.envs.kernel import PythonKernel
from gym_llm.envs.parsing import message_text, parse_tool_calls
from gym_llm.envs.rewards import attempt_discounted
from gym_llm.envs.tools import Tool, render_tools_prompt

from .dataset import SAMPLE, DatasetSource, DatasetTasks
from .envs import (
    FEEDBACK,
    FORMAT_FEEDBACK,
    answer_formula,
    resolve_attempts,
    score_answer,
    strict_score,
)
from .generators import GENERATORS
from .signals import SIGNALS

__all__ = ["PythonToolEnv", "POLICY", "SYSTEM_PROMPT"]

#: The math domain's sandbox policy: Python only, small limits (a tool call is
#: a calculation, not a job). A Hydra ``sandbox`` group applies on top.
POLICY = SandboxPolicy(
    limits=Limits(wall_time_s=10, cpu_time_s=10, memory_mb=512, max_processes=8,
                  max_output_bytes=100_000, max_file_mb=4, tmpfs_mb=16),
    languages=("python",),
)

SYSTEM_PROMPT = (
    "Solve the problem. You can run Python code with the python tool; only what the code "
    "prints comes back. When you are done, reply without a tool call and write your final "
    "answer inside \\boxed{}."
)

#: Where read-only copies of host pure-Python packages appear in the jail.
_JAIL_LIB = "/opt/gym_llm_math/lib"


def _package_mounts(names: tuple[str, ...]) -> tuple[str, ...]:
    """``"host_dir:jail_dir"`` mounts exposing pure-Python packages (sympy and
    its dependency mpmath) to the jail's interpreter, without importing them."""
    mounts = []
    for name in names:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            raise ValueError(f"package {name!r} is not installed, cannot offer it to the python tool")
        mounts.append(f"{os.path.dirname(spec.origin)}:{_JAIL_LIB}/{name}")
    return tuple(mounts)


def _render(result: ExecResult, max_chars: int) -> str:
    """What the model sees of a run: stdout, stderr on failure, and why it was
    stopped, cut to ``max_chars`` (head and tail kept)."""
    parts = [result.stdout]
    if result.exit_code != 0 and result.stderr:
        parts.append(result.stderr)
    if result.timed_out:
        parts.append("[stopped: time limit exceeded]")
    elif result.memory_exceeded:
        parts.append("[stopped: memory limit exceeded]")
    elif result.output_truncated:
        parts.append("[stopped: too much output]")
    elif result.exit_code != 0:
        parts.append(f"[exit code {result.exit_code}]")
    text = "\n".join(p.rstrip("\n") for p in parts if p)
    if not text.strip():
        return "(no output: print() what you want to see)"
    if len(text) > max_chars:
        half = max_chars // 2
        text = f"{text[:half]}\n[... {len(text) - 2 * half} characters cut ...]\n{text[-half:]}"
    return text


def _calls_tools(message: dict[str, Any]) -> bool:
    """Whether an assistant turn is a tool call (well-formed or not), not an answer."""
    parsed = parse_tool_calls(message)
    return bool(parsed.calls or parsed.errors)


class PythonToolEnv(ToolEnv):
    """Math problems with a sandboxed ``python`` tool; final answer in ``\\boxed{}``.

    Args:
        source: Where problems come from: ``"arithmetic"``, ``"algebra"``,
            ``"word_problems"`` (procedural, at ``difficulty``) or
            ``"dataset"`` (``path``, as for ``math/Dataset-v0``).
        difficulty: Difficulty of procedural problems, in [0, 1].
        path: Dataset for ``source="dataset"`` (``None``: the bundled sample).
        max_turns: Assistant turns in an episode (tool calls and answers).
        max_attempts: Final answers allowed; a wrong one (while turns remain)
            gets ``feedback``. Attempt k earns ``score * attempt_discount**k``.
        sympy: Make sympy importable in the jail (read-only copy of the host's).
        persistent: Keep the tool's state (variables, imports) across the calls of an
            episode, like a notebook kernel (:class:`gym_llm.envs.kernel.PythonKernel`:
            earlier cells are run again, silently, before each new one).
        sandbox: Overrides of :data:`POLICY` (a Hydra ``sandbox`` group:
            limits, ``isolation``, ...).
        max_output_chars: Longest tool message (longer output is cut).
        tools_in_prompt: Also describe the tool in the system prompt, for chat
            templates that do not render ``info["tools"]``.
        format_weight, lenient_decimals: As for :class:`~gym_llm_math.envs.MathEnv`.
        heldout_size: Held-out tasks of procedural sources.
        system_prompt: The instructions (the tool description is appended
            when ``tools_in_prompt``).
    """

    #: Each call may run for the sandbox's whole wall time (10 s) with 8 processes on
    #: the CPU: 16 calls in one turn took 160 s of wall and host CPU.
    max_calls_per_turn = 4

    hack_signals = SIGNALS

    def __init__(
        self,
        *,
        source: str = "arithmetic",
        difficulty: float = 0.8,
        path: DatasetSource | None = None,
        split: str = "train",
        seed: int | None = None,
        max_turns: int = 6,
        max_attempts: int = 1,
        feedback: str = FEEDBACK,
        attempt_discount: float = 0.5,
        format_weight: float = 0.0,
        lenient_decimals: bool = False,
        sympy: bool = True,
        persistent: bool = False,
        sandbox: Mapping[str, Any] | None = None,
        max_output_chars: int = 4000,
        tools_in_prompt: bool = True,
        heldout_size: int = 500,
        system_prompt: str = SYSTEM_PROMPT,
        render_mode: str | None = None,
    ):
        if source == "dataset":
            tasks: Any = DatasetTasks(SAMPLE if path is None else path)
        elif source in GENERATORS:
            tasks = ProceduralTasks(f"math-python-{source}", GENERATORS[source], difficulty=difficulty,
                                    sizes={"heldout": heldout_size})
        else:
            raise ValueError(f"unknown source {source!r}: expected one of {[*GENERATORS, 'dataset']}")
        self.max_attempts = resolve_attempts(max_attempts, None)
        self.feedback_text, self.attempt_discount = feedback, float(attempt_discount)
        self.format_weight = float(format_weight)
        self.lenient_decimals = bool(lenient_decimals)
        self.max_output_chars = int(max_output_chars)
        self.sandbox_config = dict(sandbox or {})
        self.policy = dataclasses.replace(POLICY, extra_ro_mounts=_package_mounts(("sympy", "mpmath")) if sympy else ())
        self._sandbox: Sandbox | None = None
        self.persistent = bool(persistent)
        self.kernel: PythonKernel | None = None
        self.python = Tool.from_function(self._python, name="python")
        if tools_in_prompt:
            system_prompt = system_prompt + "\n\n" + render_tools_prompt([self.python.schema])
        super().__init__(tasks, split=split, seed=seed, max_turns=max_turns,
                         system_prompt=system_prompt, render_mode=render_mode)
        self.attempt = 0
        self.sandbox_error: str | None = None

    # ------------------------------------------------------------------ tool
    async def _python(self, code: str) -> str:
        """Run Python code in a fresh sandbox and return what it prints.

        Args:
            code: A complete Python program; print() the values you need.
        """
        try:
            if self._sandbox is None:
                self._sandbox = Sandbox.from_config(self.sandbox_config, policy=self.policy)
            env = {"PYTHONPATH": f"/work:{_JAIL_LIB}"} if self.policy.extra_ro_mounts else None
            if self.persistent:
                if self.kernel is None:
                    self.kernel = PythonKernel(self._sandbox, env=env)
                result = await self.kernel.arun(code)
            else:
                result = await self._sandbox.arun_code("python", code, env=env)
        except SandboxError as e:
            self.sandbox_error = f"sandbox failed: {e}"
            return "Error: the sandbox is unavailable, the code was not run."
        return _render(result, self.max_output_chars)

    # ------------------------------------------------------------- ToolEnv
    def episode_tools(self, task: Task) -> list[Tool]:
        return [self.python]

    def on_reset(self, task: Task) -> dict[str, Any]:
        self.attempt = 0
        self.sandbox_error = None
        self.kernel = None  # a persistent tool starts each episode empty
        return {"max_attempts": self.max_attempts}

    def reward_formula(self) -> str:
        """:func:`~gym_llm_math.envs.answer_formula` of the final answer, discounted by its attempt."""
        score = answer_formula(self.format_weight)
        if self.max_attempts == 1 or self.attempt_discount == 1.0:
            return score
        return attempt_discounted(score, self.attempt_discount)

    def score_episode(self, final_message: dict[str, Any] | None) -> RewardResult:
        if final_message is None:
            return RewardResult(0.0, {"format": 0.0, "correct": 0.0},
                                {"reason": "no final answer: the turns ran out while calling tools"})
        return score_answer(self.task, message_text(final_message), self.format_weight, self.lenient_decimals)

    async def astrict_score(self, messages: list[dict[str, Any]], reward: float) -> RewardResult:
        """The math strict grader (:func:`~gym_llm_math.envs.strict_score`)
        of the last answer turn (one without tool calls), discounted by its
        attempt as training is; no answer (the turns ran out) scores 0."""
        answers = [m for m in assistant_messages(messages) if not _calls_tools(m)]
        if not answers:
            return RewardResult(0.0, {"format": 0.0, "correct": 0.0}, {"reason": "strict: no final answer"})
        return await strict_score(self.task, message_text(answers[-1]), self.attempt_discount ** (len(answers) - 1))

    async def arespond(self, message: dict[str, Any]) -> Turn:
        if _calls_tools(message):
            turn = await super().arespond(message)
            if self.sandbox_error:
                return Turn(reward=RewardResult(0.0, {"format": 0.0, "correct": 0.0},
                                                {"reward_error": self.sandbox_error}), done=True, info=turn.info)
            return turn
        result = self.score_episode(message)
        self.attempt += 1
        solved = result.components.get("correct") == 1.0
        if result.error or solved or self.attempt >= self.max_attempts or self.is_last_turn:
            result.score *= self.attempt_discount ** (self.attempt - 1)
            result.info.setdefault("attempts", self.attempt)
            return Turn(reward=result, done=True)
        text = FORMAT_FEEDBACK if result.components.get("format") == 0.0 else self.feedback_text
        return Turn(messages=[{"role": "user", "content": text}],
                    reward=RewardResult(0.0, dict(result.components), dict(result.info)))
