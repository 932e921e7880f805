"""Running test jobs in the sandbox and reading their outcome back.

A :class:`Job` is everything the in-sandbox runner (``jail/runner.py``) needs:
the program, the test *inputs*, limits. Expected outputs are never part of a
job. :func:`run_job` / :func:`arun_job` run one job in a fresh jail through
:mod:`gym_llm_sandbox` and return a :class:`JobOutcome`.

Verification takes a few jobs in sequence (reference outputs for fresh random
inputs, then the candidate). It is written once, as a generator that yields
jobs and receives outcomes; :func:`drive` and :func:`adrive` run such a
generator synchronously or on the event loop.
"""

from __future__ import annotations

import functools
import json
import marshal
import struct
from collections.abc import Generator
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Literal, TypeVar

from gym_llm_sandbox import ExecResult, Limits, Sandbox, SandboxPolicy

__all__ = [
    "Job", "JobOutcome", "POLICY", "default_sandbox", "run_job", "arun_job", "drive", "adrive",
    "CPP_COMPILE",
]

T = TypeVar("T")

#: The code domain's sandbox policy. Per-test limits are enforced inside the
#: jail by the runner; these bound the whole job (compile + every test).
POLICY = SandboxPolicy(
    limits=Limits(wall_time_s=30, cpu_time_s=20, memory_mb=1024, max_processes=32,
                  max_output_bytes=8_000_000, max_file_mb=16),
    languages=("python",),
)

#: How a C++ answer is built inside the jail (``solution.cpp`` -> ``./solution``).
CPP_COMPILE = ["g++", "-O2", "-std=gnu++17", "-pipe", "-o", "solution", "solution.cpp"]

_MARK = "@@gym-llm-code-result@@"
_INPUTS_HEAD = struct.Struct(">I")
_BOOT = "import runner; runner.main()"
#: Seconds granted on top of a job's test budget for interpreter start-up
#: and compilation, so the runner (not the sandbox) ends a slow job.
_STARTUP_S = 5.0
_COMPILE_S = 30.0


@functools.cache
def _jail_sources() -> dict[str, str]:
    pkg = resources.files("gym_llm_code.jail")
    return {name: (pkg / name).read_text() for name in ("runner.py", "plain.py", "genlib.py")}


@functools.cache
def default_sandbox() -> Sandbox:
    """The process-wide sandbox of the code domain (built on first use, so that
    making an environment stays cheap)."""
    return POLICY.sandbox()


@dataclass
class Job:
    """One sandbox run of the test runner.

    ``kind``: ``call`` (call ``entry`` on each input's args), ``stdio`` (feed
    each input text on stdin), ``probe`` (evaluate the expressions ``exprs``
    after the task's ``setup`` code, with ``bind`` aliases) or ``check`` (run
    the task's assertion code ``test`` after ``setup``). ``call`` and
    ``stdio`` tests run in the order of ``inputs``, and the program is sent
    each input only when its test runs (``inputs.bin``, :meth:`inputs_file`):
    its process never holds the input of a later test, so the public examples
    go first and their results owe nothing to a hidden input. For ``probe`` and
    ``check`` that test code runs in the runner, the program in a separate
    process it calls into (``jail/runner.py``); ``setup``, ``exprs``, ``bind``
    and ``test`` travel in a file the runner opens and unlinks before the
    program starts, so the program's process never holds them. ``language`` is ``python`` or ``cpp`` (stdio only: compiled
    with :data:`CPP_COMPILE` in the same jail). ``generator`` (trusted
    reference jobs only) draws extra inputs from seeds. ``test_timeout_s`` is
    per test; ``budget_s`` bounds all tests together (later ones are skipped).
    """

    kind: Literal["call", "stdio", "probe", "check"]
    program: str | None
    inputs: list[Any] = field(default_factory=list)
    language: Literal["python", "cpp"] = "python"
    entry: str | None = None
    generator: dict[str, Any] | None = None
    setup: str = ""
    exprs: list[str] = field(default_factory=list)
    bind: dict[str, str] = field(default_factory=dict)
    test: str = ""
    test_timeout_s: float = 2.0
    budget_s: float = 10.0
    max_output_bytes: int = 256 * 1024

    def spec(self) -> dict[str, Any]:
        """The job the runner reads (as ``job.bin``): everything but the test
        inputs (:meth:`inputs_file`) and the checker's secret (:meth:`secret`)."""
        spec: dict[str, Any] = {
            "kind": self.kind, "test_timeout": self.test_timeout_s,
            "budget": self.budget_s, "max_output_bytes": self.max_output_bytes,
            "max_result_bytes": self.max_output_bytes,
        }
        if self.language == "cpp":
            spec.update(compile={"argv": CPP_COMPILE, "timeout": _COMPILE_S}, argv=["./solution"])
        else:
            spec["program"] = self.program
        if self.entry is not None:
            spec["entry"] = self.entry
        if self.generator is not None:
            spec["generator"] = self.generator
        return spec

    def secret(self) -> dict[str, Any]:
        """What only the checker reads (as ``secret.bin``; ``probe``/``check`` jobs)."""
        if self.kind == "probe":
            return {"setup": self.setup, "exprs": self.exprs, "bind": self.bind}
        return {"setup": self.setup, "test": self.test, "bind": self.bind}

    def inputs_file(self) -> bytes:
        """``inputs.bin``: the inputs the runner sends to the program one test
        at a time (``jail/runner.py``, ``Inputs``): a big-endian ``uint32``
        count, ``count + 1`` ``uint64`` offsets into the file, then each input
        (a ``stdio`` job's text as UTF-8, a ``call`` job's plain args as marshal)."""
        blobs = [text.encode() if self.kind == "stdio" else marshal.dumps(text, 4) for text in self.inputs]
        offset = _INPUTS_HEAD.size + 8 * (len(blobs) + 1)
        offsets = [offset]
        for blob in blobs:
            offsets.append(offsets[-1] + len(blob))
        return _INPUTS_HEAD.pack(len(blobs)) + struct.pack(f">{len(offsets)}Q", *offsets) + b"".join(blobs)

    def files(self) -> dict[str, str | bytes]:
        # marshal, not JSON: the runner then needs no json module (its import
        # is a large share of a job's CPU); host-to-jail data only, so trusted.
        sources = _jail_sources()
        files: dict[str, str | bytes] = {"runner.py": sources["runner.py"], "plain.py": sources["plain.py"],
                                         "job.bin": marshal.dumps(self.spec(), 4)}
        if self.inputs:
            files["inputs.bin"] = self.inputs_file()
        if self.generator is not None:
            files["genlib.py"] = sources["genlib.py"]
        if self.kind in ("probe", "check"):
            files["secret.bin"] = marshal.dumps(self.secret(), 4)
        if self.language == "cpp":
            files["solution.cpp"] = self.program or ""
        return files

    def limits(self, base: Limits) -> Limits:
        wall = self.budget_s + _STARTUP_S + (_COMPILE_S if self.language == "cpp" else 0.0)
        return base.replace(wall_time_s=max(base.wall_time_s, wall))


@dataclass
class JobOutcome:
    """What came back from one job.

    ``results``: one dict per test, in input order (see ``jail/runner.py``);
    ``generated``: inputs drawn by the job's generator; ``compile_error``: the
    program did not compile; ``task_error``: the task's own setup code failed
    (an environment fault, not the program's); ``failure``: the runner produced no usable
    outcome (killed by a limit, or its output line was missing or forged), so
    no test counts as passed.
    """

    results: list[dict[str, Any]] = field(default_factory=list)
    generated: list[Any] | None = None
    compile_error: str | None = None
    task_error: str | None = None
    failure: str | None = None

    def results_of(self, count: int) -> list[dict[str, Any]]:
        """Exactly ``count`` results, one per test of a job of ``count`` tests: the
        missing ones fail (``{}``), and a line with more results than the job has
        tests is not the runner's, so it fails them all."""
        if len(self.results) > count:
            return [{}] * count
        return self.results + [{}] * (count - len(self.results))
    wall_time_s: float = 0.0


def parse_outcome(r: ExecResult) -> JobOutcome:
    """Read the runner's one result line from a sandbox result.

    The program under test can write to the runner's stdout too, so exactly
    one line carrying the marker is accepted; zero or several is a failure.
    """
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith(_MARK)]
    if len(lines) != 1:
        if r.timed_out:
            why = "the job ran out of time"
        elif r.memory_exceeded:
            why = "the job ran out of memory"
        elif r.output_truncated:
            why = "the job wrote too much output"
        elif lines:
            why = "the test runner's output was tampered with"
        else:
            why = f"the test runner was killed (exit code {r.exit_code})"
        return JobOutcome(failure=why, wall_time_s=r.wall_time_s)
    try:
        data = json.loads(lines[0][len(_MARK):])
    except (ValueError, RecursionError):
        return JobOutcome(failure="the test runner's output was unreadable", wall_time_s=r.wall_time_s)
    if not isinstance(data, dict):
        return JobOutcome(failure="the test runner's output was malformed", wall_time_s=r.wall_time_s)
    results = data.get("results", [])
    return JobOutcome(
        results=[x if isinstance(x, dict) else {} for x in results] if isinstance(results, list) else [],
        generated=data.get("generated"),
        compile_error=data.get("compile_error"),
        task_error=data.get("task_error"),
        wall_time_s=r.wall_time_s,
    )


def run_job(sandbox: Sandbox, job: Job) -> JobOutcome:
    """Run ``job`` in a fresh jail (blocking). Raises
    :class:`~gym_llm_sandbox.SandboxError` when the sandbox itself fails."""
    limits = job.limits(sandbox.limits)
    if job.language == "cpp":  # needs /usr for the toolchain
        return parse_outcome(sandbox.run(["python3", "-s", "-B", "-c", _BOOT], files=job.files(), limits=limits))
    return parse_outcome(sandbox.run_code("python", _BOOT, files=job.files(), limits=limits))


async def arun_job(sandbox: Sandbox, job: Job) -> JobOutcome:
    """Async :func:`run_job`: never blocks the event loop."""
    limits = job.limits(sandbox.limits)
    if job.language == "cpp":
        r = await sandbox.arun(["python3", "-s", "-B", "-c", _BOOT], files=job.files(), limits=limits)
    else:
        r = await sandbox.arun_code("python", _BOOT, files=job.files(), limits=limits)
    return parse_outcome(r)


Steps = Generator[Job, JobOutcome, T]


def drive(steps: Steps[T], sandbox: Sandbox) -> T:
    """Run a verification written as a generator of jobs, blocking."""
    try:
        job = next(steps)
        while True:
            job = steps.send(run_job(sandbox, job))
    except StopIteration as done:
        return done.value


async def adrive(steps: Steps[T], sandbox: Sandbox) -> T:
    """Run a verification written as a generator of jobs on the event loop."""
    try:
        job = next(steps)
        while True:
            job = steps.send(await arun_job(sandbox, job))
    except StopIteration as done:
        return done.value
