"""What reaches the hidden-test run of ``code/Repo-v0``, and how it is run.

The hidden tests run in a fresh jail (never the episode's session) that holds
only the project's **source files** as the model left them
(:func:`hidden_sources`): regular ``.py`` files under the project's source
roots (its package directories and top-level modules), read from the session
without following symlinks. Nothing else the model wrote gets there: no test
files, ``conftest.py``, ``pytest.ini``/``setup.cfg``/``pyproject.toml``/``tox.ini``,
``sitecustomize``/``usercustomize``, ``.pth`` files, ``__pycache__`` bytecode,
symlinks, files outside the roots (a top-level ``json.py`` or ``pytest.py``
shadowing a module, a second copy of the package elsewhere). The jail's Python
runs with ``-S -s -B`` (no ``site``: no ``.pth`` or customize hooks even if
one got there), its environment is ours (no ``PYTHONPATH`` of the model's).

Procedural projects: the tests are call expressions (``jail/hidden_runner.py``)
whose results come back as plain data and are compared on the host with
expected values that never enter the jail. Bring-your-own projects: the
project's own pytest tests, the test files, ``conftest.py`` files and pytest
configuration taken from the user's original project, run with the host's
pytest mounted read-only.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from gym_llm_sandbox import ExecResult, Limits, Sandbox, SandboxPolicy, Snapshot

from .projects import same_result

__all__ = ["hidden_sources", "is_source", "in_roots", "is_test_path", "run_expressions", "ExpressionRun",
           "PYTEST_LIB", "PYTEST_LIMITS", "REPO_POLICY",
           "pytest_mounts", "run_pytest", "PytestRun"]

#: File names that configure or extend a test run, never part of the project's source.
_NOT_SOURCE = {"conftest.py", "sitecustomize.py", "usercustomize.py", "setup.py", "__main__.py"}
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def is_test_path(path: str) -> bool:
    """A test file or test directory by pytest's and unittest's conventions."""
    parts = path.split("/")
    name = parts[-1]
    return (any(p in ("tests", "test", "testing") for p in parts[:-1])
            or name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py")


def hidden_sources(snapshot: Snapshot, roots: Sequence[str]) -> dict[str, bytes]:
    """The files of a session ``snapshot`` that the hidden run gets: regular files
    named ``<identifier>.py`` (no ``__pycache__``, no customize or conftest
    module, no test file) whose every directory is an identifier, under one of
    ``roots`` (a package directory ``"pkg"`` or ``"src/pkg"``, or a top-level
    module ``"mod.py"``)."""
    return {path: state.content for path, state in snapshot.items()
            if state.kind == "file" and state.content is not None and is_source(path, roots)}


def is_source(path: str, roots: Sequence[str]) -> bool:
    """Whether ``path`` is a source file of a project with these ``roots``: a
    ``<identifier>.py`` under a root, every directory an identifier, not in
    ``__pycache__``, not a test, conftest, customize, ``setup.py`` or ``__main__.py``."""
    parts = path.split("/")
    if not path.endswith(".py") or "__pycache__" in parts or parts[-1] in _NOT_SOURCE or is_test_path(path):
        return False
    return all(_IDENTIFIER.match(p) for p in [*parts[:-1], parts[-1][:-3]]) and in_roots(path, roots)


def in_roots(path: str, roots: Sequence[str]) -> bool:
    """Whether ``path`` is one of ``roots`` (a top-level module) or lies under one (a package)."""
    return any(path == r or path.startswith(r + "/") for r in roots)


# ------------------------------------------------------- procedural projects
@dataclass
class ExpressionRun:
    """Results of :func:`run_expressions`: whether the package imported, which
    tests passed (by index), and the jail's result."""

    imported: bool
    passed: list[bool]
    result: ExecResult
    problem: str | None = None


def _runner_program() -> str:
    jail = resources.files("gym_llm_code") / "jail"
    own = resources.files("gym_llm_code.repo") / "jail"
    return (jail / "plain.py").read_text() + "\n" + (own / "hidden_runner.py").read_text()


async def run_expressions(sandbox: Sandbox, sources: Mapping[str, bytes], package: str, modules: Sequence[str],
                          tests: Sequence[Mapping[str, Any]], test_timeout_s: float = 2.0) -> ExpressionRun:
    """Run call-expression ``tests`` (``{"expr", "expected"}``) on ``sources`` in a
    fresh jail; compare on the host. Output that is not the runner's (a second
    line for one test, an unknown index, garbage) fails the tests it touches."""
    job = {"package": package, "modules": list(modules), "tests": [t["expr"] for t in tests],
           "test_timeout_s": test_timeout_s}
    result = await sandbox.arun_code("python", _runner_program(), stdin=json.dumps(job), files=dict(sources))
    lines = result.stdout.splitlines()
    passed = [False] * len(tests)
    try:
        head = json.loads(lines[0]) if lines else {}
    except ValueError:
        head = {}
    if head.get("import") is not True:
        why = head.get("e") or ("the run was killed" if result.timed_out or result.memory_exceeded
                                else "no result from the test runner")
        return ExpressionRun(False, passed, result, f"the package does not import: {why}")
    seen: dict[int, Any] = {}
    duplicated: set[int] = set()
    for line in lines[1:]:
        try:
            record = json.loads(line)
            i = record["i"]
        except (ValueError, TypeError, KeyError):
            continue
        if type(i) is int and 0 <= i < len(tests):
            if i in seen:
                duplicated.add(i)
            seen[i] = record
    for i, record in seen.items():
        passed[i] = i not in duplicated and same_result(tests[i]["expected"], record)
    return ExpressionRun(True, passed, result)


# ------------------------------------------------------- pytest projects
#: Where the host's pytest (and its dependencies) appear in the jail.
PYTEST_LIB = "/opt/gym_llm_repo/lib"

#: Per command: 20 s wall, 10 s CPU, 512 MB, 64 processes, 200 kB of output per stream,
#: 8 MB per file; a 32 MB work dir; no network. Python and bash; pytest mounted read-only.
REPO_POLICY = SandboxPolicy(
    limits=Limits(wall_time_s=20, cpu_time_s=10, memory_mb=512, max_processes=64,
                  max_output_bytes=200_000, max_file_mb=8, tmpfs_mb=32),
    languages=("python", "bash"),
    extra_ro_mounts=("/etc/alternatives",) if os.path.isdir("/etc/alternatives") else (),
    env={"PYTHONPATH": PYTEST_LIB},
)

_PYTEST_PACKAGES = ("pytest", "_pytest", "pluggy", "iniconfig", "packaging", "pygments", "py")


#: A project's whole test suite is a bigger job than one command of the episode: 120 s
#: of wall and CPU time, 2 GB (more-itertools' 600 tests and 11,000 subtests ran out of
#: 512 MB and 20 s).
PYTEST_LIMITS = dataclasses.replace(REPO_POLICY.limits, wall_time_s=120, cpu_time_s=120, memory_mb=2048)


def pytest_mounts(required: bool = True) -> tuple[str, ...]:
    """``"host:jail"`` read-only mounts of the host's pytest and its dependencies
    (pure Python), so jailed runs can ``python3 -m pytest`` with
    ``PYTHONPATH=`` :data:`PYTEST_LIB` (none where pytest is missing and not ``required``)."""
    mounts = []
    for name in _PYTEST_PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            if not required:
                return ()
            raise ValueError(f"{name} is not installed on the host: bring-your-own projects need pytest")
        if spec.submodule_search_locations:  # a package: its directory
            mounts.append(f"{os.path.dirname(spec.origin)}:{PYTEST_LIB}/{name}")
        else:  # a module (pytest's py.py shim)
            mounts.append(f"{spec.origin}:{PYTEST_LIB}/{name}.py")
    return tuple(mounts)


@dataclass
class PytestRun:
    """Per-test outcomes of a jailed pytest run: ``{node id: "passed" | "failed" |
    "error" | "skipped"}``, the failure lines (``{node id: message}``), and the
    jail's result."""

    outcomes: dict[str, str]
    messages: dict[str, str]
    result: ExecResult


_SUMMARY = re.compile(r"^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (\S+)(?: - (.*))?$")


def parse_pytest_summary(stdout: str) -> tuple[dict[str, str], dict[str, str]]:
    """Outcomes and messages from pytest's ``-rA`` short summary lines."""
    outcomes: dict[str, str] = {}
    messages: dict[str, str] = {}
    for line in stdout.splitlines():
        m = _SUMMARY.match(line.strip())
        if m:
            outcomes[m.group(2)] = m.group(1).lower()
            if m.group(3):
                messages[m.group(2)] = m.group(3)
    return outcomes, messages


async def run_pytest(sandbox: Sandbox, files: Mapping[str, bytes | str], test_cmd: Sequence[str],
                     node_ids: Sequence[str] = ()) -> PytestRun:
    """Run pytest (``test_cmd``, e.g. ``["python3", "-m", "pytest"]``) over
    ``files`` in a fresh jail, on ``node_ids`` (all tests when empty)."""
    argv = [*test_cmd, "-p", "no:cacheprovider", "-rA", "-q", "--no-header", "-o", "console_output_style=classic",
            *node_ids]
    result = await sandbox.arun(argv, files=dict(files), limits=PYTEST_LIMITS, env={"PYTHONPATH": PYTEST_LIB,
                                                              "PYTHONDONTWRITEBYTECODE": "1", "COLUMNS": "400"})
    outcomes, messages = parse_pytest_summary(result.stdout)
    return PytestRun(outcomes, messages, result)
