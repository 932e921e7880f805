"""``code/Repo-v0``: an agentic env over a multi-file project in a sandbox session.

The model works on a project in ``/work`` (a sandbox session: files persist across
the episode's calls, each command runs in a fresh jail) with the tools
``list_files``, ``read_file`` (line ranges), ``grep``, ``write_file``,
``edit_file`` (exact replace), ``run`` (bash in the jail, the project as working
directory), ``python`` (a persistent interpreter, :mod:`gym_llm.envs.kernel`)
and ``submit``. The reward comes from hidden tests run in a fresh jail on the
project's source files only (:mod:`gym_llm_code.repo.scoring`). Tasks are
procedural (:mod:`gym_llm_code.repo.projects`) or built from a local project
(``repo=PATH``, :mod:`gym_llm_code.repo.byo`).
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import os
import posixpath
import shlex
import weakref
from collections.abc import Mapping
from typing import Any

from gym_llm_sandbox import Sandbox, SandboxError, SandboxSession

from gym_llm import ProceduralTasks, RewardResult, Task, ToolEnv, Turn
from gym_llm.envs.grading import assistant_messages
from gym_llm.envs.kernel import PythonKernel
from gym_llm.envs.parsing import parse_tool_calls
from gym_llm.envs.tasks import content_hash
from gym_llm.envs.tools import Tool, render_tools_prompt

from .projects import generate_repo_task
from .scoring import REPO_POLICY, hidden_sources, pytest_mounts, run_expressions, run_pytest
from .signals import SIGNALS

__all__ = ["RepoEnv", "REPO_POLICY", "SYSTEM_PROMPT", "approx_tokens"]

SYSTEM_PROMPT = (
    "You are a software engineer working in a Python repository in /work. Use the tools to explore "
    "the code (list_files, read_file, grep), change it (write_file, edit_file), and check your work "
    "(run: a bash command in /work, e.g. the tests; python: a persistent Python interpreter). Fix the "
    "issue in the package's source; hidden tests will check it. Call submit() when you are done."
)

def approx_tokens(text: str) -> int:
    """The token budget's count: one token per 3 UTF-8 bytes, an over-estimate for
    English and code under BPE tokenizers (about 4 bytes a token), so the episode
    ends before a real tokenizer's count would reach the budget."""
    return len(text.encode("utf-8", "surrogatepass")) // 3 + 1


def _message_tokens(messages: list[dict[str, Any]]) -> int:
    total = 0
    for m in messages:
        total += approx_tokens(str(m.get("content") or ""))
        for call in m.get("tool_calls") or ():
            total += approx_tokens(str(call))
    return total


#: The final sources of recent episodes, for the strict grader (``{key: sources}``).
_FINAL_SOURCES: collections.OrderedDict[str, dict[str, bytes]] = collections.OrderedDict()
_FINAL_SOURCES_KEPT = 256


def _episode_key(task_id: str, messages: list[dict[str, Any]]) -> str:
    return content_hash([task_id, [[m.get("content"), m.get("tool_calls")] for m in assistant_messages(messages)]])


class _Workspace:
    """One episode's tools, bound to its sandbox session (``None``: the sandbox
    failed, ``error`` says why, and every tool call raises)."""

    def __init__(self, env: RepoEnv, session: SandboxSession | None, error: str | None = None):
        self.env, self.session, self.error = env, session, error
        self.submitted = False
        self.kernel = PythonKernel(session) if session is not None else None

    def _session(self) -> SandboxSession:
        if self.session is None:
            raise SandboxError(self.error or "no sandbox session")
        return self.session

    def _cap(self, text: str, what: str) -> str:
        limit = self.env.max_output_chars
        if len(text) <= limit:
            return text
        return (text[:limit] + f"\n[... {len(text) - limit} more characters of {what} cut; "
                f"ask for less (a line range, a narrower pattern or path)]")

    async def _guard(self, coro: Any) -> Any:
        try:
            return await coro
        except SandboxError as e:
            self.error = self.error or f"SandboxError: {e}"
            raise

    # ----------------------------------------------------------------- tools
    def list_files(self, path: str = ".") -> str:
        """List the files of the repository (or of one directory of it), one path per line.

        Args:
            path: A directory relative to /work, e.g. "." or "src/pkg".
        """
        where = _relative(path)
        snapshot = self._session().snapshot(max_file_bytes=0)
        names = [p + ("/" if s.kind == "dir" else "") for p, s in snapshot.items()
                 if (where == "" or p == where or p.startswith(where + "/")) and "__pycache__" not in p.split("/")]
        if not names:
            return f"Error: no such directory: {path}"
        return self._cap("\n".join(names), "the listing")

    def read_file(self, path: str, start_line: int = 1, end_line: int | None = None) -> str:
        """Read a text file, with line numbers; optionally only lines start_line..end_line.

        Args:
            path: The file, relative to /work.
            start_line: First line to show (1-based).
            end_line: Last line to show (default: the end of the file).
        """
        data = self._session().read_file(_relative(path))
        if data is None:
            return f"Error: no such file: {path}"
        lines = data.decode("utf-8", "replace").splitlines()
        first = max(1, start_line)
        last = len(lines) if end_line is None else min(len(lines), end_line)
        shown = "\n".join(f"{i:>5}  {lines[i - 1]}" for i in range(first, last + 1))
        return self._cap(shown or f"({path} has {len(lines)} lines)", path)

    async def grep(self, pattern: str, path: str = ".") -> str:
        """Search files for a regular expression (grep -rnE); prints path:line:text for each match.

        Args:
            pattern: An extended regular expression, e.g. "def group_total".
            path: A file or directory relative to /work.
        """
        argv = ["grep", "-rnE", "--exclude-dir=__pycache__", "-e", pattern, "--", _relative(path) or "."]
        result = await self._guard(self._session().arun(argv))
        if result.exit_code == 1 and not result.stdout:
            return "(no matches)"
        return self._cap(result.stdout + (result.stderr if result.exit_code > 1 else ""), "the matches")

    def write_file(self, path: str, content: str) -> str:
        """Create or overwrite a file with the given content.

        Args:
            path: The file, relative to /work.
            content: The complete new content of the file.
        """
        self._session().write_files({_relative(path): content})
        return f"wrote {path} ({len(content.splitlines())} lines)"

    def edit_file(self, path: str, old: str, new: str) -> str:
        """Replace one exact occurrence of a text in a file.

        Args:
            path: The file, relative to /work.
            old: The exact text to replace; it must occur exactly once in the file.
            new: The replacement text.
        """
        name = _relative(path)
        data = self._session().read_file(name)
        if data is None:
            return f"Error: no such file: {path}"
        text = data.decode("utf-8", "surrogateescape")
        count = text.count(old) if old else 0
        if count != 1:
            return f"Error: the text to replace occurs {count} times in {path}; it must occur exactly once"
        self._session().write_files({name: text.replace(old, new, 1).encode("utf-8", "surrogateescape")})
        return f"edited {path}"

    async def run(self, command: str) -> str:
        """Run a bash command in /work (the repository) and return its exit code and output.

        Args:
            command: The command line, e.g. "python3 -m unittest discover -s tests".
        """
        result = await self._guard(self._session().arun_code("bash", command))
        parts = [f"exit code: {result.exit_code}" + (" (killed: time limit)" if result.timed_out else "")]
        if result.stdout:
            parts.append("stdout:\n" + result.stdout)
        if result.stderr:
            parts.append("stderr:\n" + result.stderr)
        return self._cap("\n".join(parts), "the output")

    async def python(self, code: str) -> str:
        """Run Python code in a persistent interpreter (variables and imports are kept between calls; /work is the working directory); returns what it prints and the value of a final expression.

        Args:
            code: Python statements.
        """
        self._session()
        result = await self._guard(self.kernel.arun(code))
        text = result.stdout + result.stderr + ("\n[killed: time limit]" if result.timed_out else "")
        return self._cap(text or "(no output)", "the output")

    def submit(self) -> str:
        """Submit the repository as it is now for grading; this ends the episode."""
        self.submitted = True
        return "submitted"


def _relative(path: str) -> str:
    """A path relative to /work ('' for /work itself); ``..`` and other absolute
    paths raise (the tool answers with the error)."""
    p = posixpath.normpath(path.strip() or ".")
    if p == "/work" or p.startswith("/work/"):
        p = p[len("/work/"):] if p != "/work" else "."
    if p.startswith("/") or p == ".." or p.startswith("../"):
        raise ValueError(f"{path!r} is outside the repository /work")
    return "" if p == "." else p


class RepoEnv(ToolEnv):
    """Repository-level tasks in a sandbox session; reward = hidden tests passed / total.

    Args:
        kind: ``"interface"``, ``"bug"``, ``"feature"`` or ``None`` (all three)
            for procedural projects.
        difficulty: 0..1: modules, call depth and distractors (procedural).
        repo: A local Python project with a pytest suite: tasks are built from it
            (:func:`gym_llm_code.repo.byo.build_repo_tasks`; cached) instead.
        test_cmd: The pytest command for ``repo`` (default ``python3 -m pytest``
            with the jail's flags), a string or an argv list.
        max_mutants, cache_dir: passed to the ``repo`` task builder.
        max_turns: Assistant turns (each may call up to 16 tools).
        token_budget: Estimated tokens (:func:`approx_tokens`) the conversation may
            reach; past it the episode is truncated and the project scored as it stands.
        max_output_chars: Longest tool result (longer ones are cut, with a note).
        sandbox: Overrides of :data:`REPO_POLICY` (the Hydra ``sandbox`` group's keys).
        heldout_size: Held-out procedural tasks.
    """

    hack_signals = SIGNALS
    #: The tools of every episode, in the order the schemas list them.
    TOOL_NAMES = ("list_files", "read_file", "grep", "write_file", "edit_file", "run", "python", "submit")

    def __init__(
        self,
        *,
        kind: str | None = None,
        difficulty: float = 0.5,
        repo: str | os.PathLike[str] | None = None,
        test_cmd: str | list[str] | None = None,
        max_mutants: int = 40,
        cache_dir: str | None = None,
        split: str = "train",
        seed: int | None = None,
        max_turns: int = 30,
        token_budget: int | None = 32_000,
        max_output_chars: int = 8000,
        sandbox: Mapping[str, Any] | None = None,
        heldout_size: int = 500,
        tools_in_prompt: bool = True,
        render_mode: str | None = None,
    ):
        if repo is not None:
            from .byo import DEFAULT_TEST_CMD, build_repo_tasks

            self.test_cmd = shlex.split(test_cmd) if isinstance(test_cmd, str) else list(test_cmd or DEFAULT_TEST_CMD)
            tasks: Any = build_repo_tasks(repo, test_cmd=self.test_cmd, max_mutants=max_mutants,
                                          cache_dir=cache_dir, sandbox=sandbox)
        else:
            self.test_cmd = []
            tasks = ProceduralTasks(f"code-repo-{kind or 'all'}",
                                    lambda rng, d: generate_repo_task(rng, d, kind),
                                    difficulty=difficulty, sizes={"heldout": heldout_size})
        self.max_output_chars = int(max_output_chars)
        self.token_budget = token_budget
        self.sandbox_config = dict(sandbox or {})
        self.policy = dataclasses.replace(REPO_POLICY, extra_ro_mounts=REPO_POLICY.extra_ro_mounts
                                          + pytest_mounts(required=repo is not None))
        self._sandbox: Sandbox | None = None
        self.workspace = _Workspace(self, None, "no episode started")
        self._finalizer: weakref.finalize | None = None
        self._configured_max_turns = max_turns
        schemas = [Tool.from_function(getattr(self.workspace, n)).schema for n in self.TOOL_NAMES]
        system_prompt = SYSTEM_PROMPT + ("\n\n" + render_tools_prompt(schemas) if tools_in_prompt else "")
        super().__init__(tasks, split=split, seed=seed, max_turns=max_turns, system_prompt=system_prompt,
                         render_mode=render_mode)

    # --------------------------------------------------------------- episode
    def sandbox(self) -> Sandbox:
        if self._sandbox is None:
            self._sandbox = Sandbox.from_config(self.sandbox_config, policy=self.policy)
        return self._sandbox

    def on_reset(self, task: Task) -> dict[str, Any]:
        self.max_turns = self._configured_max_turns  # a token budget may have cut the last episode short
        return {"kind": task.metadata["kind"], "token_budget": self.token_budget}

    def _open_workspace(self, task: Task) -> _Workspace:
        self._close_session()
        try:
            session = self.sandbox().session()
            self._finalizer = weakref.finalize(self, session.close)
            session.write_files(task.metadata["files"])
            return _Workspace(self, session)
        except (SandboxError, OSError, ValueError) as e:  # reported as reward_error when scored
            self._close_session()
            return _Workspace(self, None, f"{type(e).__name__}: {e}")

    def episode_tools(self, task: Task) -> list[Tool]:
        self.workspace = self._open_workspace(task)
        return [Tool.from_function(getattr(self.workspace, n)) for n in self.TOOL_NAMES]

    async def arespond(self, message: dict[str, Any]) -> Turn:
        parsed = parse_tool_calls(message)
        if not parsed.calls and not parsed.errors:  # a plain message submits, as in every tool env
            return Turn(reward=await self._ascore(message), done=True)
        turn = await super().arespond(message)
        if self.workspace.submitted:
            reward = turn.reward if self.is_last_turn else await self._ascore(message)
            return Turn(reward=reward, done=True, info=turn.info)
        if not self.is_last_turn and self.token_budget is not None and \
                _message_tokens(self.messages + turn.messages) >= self.token_budget:
            self.max_turns = self.turn + 1  # this turn ends the episode: truncated, as at max_turns
            info = {**turn.info, "truncated_reason": f"token budget of {self.token_budget} (estimated) reached; "
                                                     "the project was scored as it stood"}
            return Turn(reward=await self._ascore(None), info=info)
        return turn

    def reward_formula(self) -> str:
        """:meth:`grade`: the share of hidden tests passed (``hidden`` is 0 when
        the package does not import); the visible tests the model could run
        itself earn nothing."""
        return "1 * hidden + 0 * visible + 0 * import"

    async def score_episode(self, final_message: dict[str, Any] | None) -> RewardResult:
        ws = self.workspace
        try:
            if ws.error or ws.session is None:
                return self._failed(f"sandbox failed: {ws.error or 'no sandbox session'}")
            snapshot = await asyncio.to_thread(ws.session.snapshot)
            if not snapshot.complete:
                return RewardResult(0.0, {"hidden": 0.0, "visible": 0.0, "import": 0.0},
                                    {"reason": "the work directory is too large or deep to grade"})
            sources = hidden_sources(snapshot, self.task.metadata["roots"])
            _FINAL_SOURCES[_episode_key(self.task.id, self.messages)] = sources
            while len(_FINAL_SOURCES) > _FINAL_SOURCES_KEPT:
                _FINAL_SOURCES.popitem(last=False)
            result = await self.grade(sources)
            result.info["tests_changed"] = _changed_tests(self.task, snapshot)
            return result
        finally:
            self._close_session()

    async def grade(self, sources: Mapping[str, bytes], strict: bool = False) -> RewardResult:
        """Score ``sources`` (``{path: bytes}``, as :func:`hidden_sources` selects
        them) against the current task's hidden tests (``strict``: the strict
        grader's larger set, every test must pass)."""
        meta = self.task.metadata
        try:
            if meta.get("mode") == "pytest":
                return await self._grade_pytest(sources, strict)
            tests = meta["strict"] if strict else meta["hidden"] + meta["visible"]
            run = await run_expressions(self.sandbox(), sources, meta["package"], meta["modules"], tests)
        except SandboxError as e:
            return self._failed(f"sandbox failed: {e}")
        n_hidden = len(tests) if strict else len(meta["hidden"])
        hidden, visible = run.passed[:n_hidden], run.passed[n_hidden:]
        return self._result(run.imported, hidden, visible, strict, run.problem)

    async def _grade_pytest(self, sources: Mapping[str, bytes], strict: bool) -> RewardResult:
        meta = self.task.metadata
        files = {**meta["support_files"], **sources}
        hidden = meta["hidden"] + (meta["regression"] if strict else [])
        run = await run_pytest(self.sandbox(), files, self.test_cmd, [*hidden, *meta["visible"]])
        passed = [run.outcomes.get(t) == "passed" for t in [*hidden, *meta["visible"]]]
        imported = not any("ImportError" in m or "ModuleNotFoundError" in m for m in run.messages.values()) \
            and "ERROR collecting" not in run.result.stdout
        return self._result(imported, passed[:len(hidden)], passed[len(hidden):], strict,
                            None if imported else "the package does not import (collection errors)")

    @staticmethod
    def _result(imported: bool, hidden: list[bool], visible: list[bool], strict: bool,
                problem: str | None) -> RewardResult:
        h = _fraction(hidden) if imported else 0.0
        score = (float(all(hidden) and imported) if strict else h)
        info: dict[str, Any] = {"hidden_passed": sum(hidden), "hidden_total": len(hidden),
                                "visible_passed": sum(visible), "visible_total": len(visible)}
        if problem:
            info["reason"] = problem
        elif score < 1.0:
            info["reason"] = f"{len(hidden) - sum(hidden)} of {len(hidden)} hidden tests failed"
        components = {"hidden": h, "visible": _fraction(visible) if imported else 0.0, "import": float(imported)}
        if strict:
            components = {"strict": score}
            info["strict_grader"] = "every hidden and regression test, more inputs"
        return RewardResult(score, components, info)

    @staticmethod
    def _failed(error: str) -> RewardResult:
        return RewardResult(0.0, {"hidden": 0.0, "visible": 0.0, "import": 0.0}, {"reward_error": error})

    async def astrict_score(self, messages: list[dict[str, Any]], reward: float) -> RewardResult:
        """Every hidden test (3x the training set on procedural projects) and every
        regression test must pass, on the episode's final sources (kept by this
        process when it scored them; otherwise rebuilt by replaying the episode's
        tool calls in a fresh session)."""
        sources = _FINAL_SOURCES.get(_episode_key(self.task.id, messages))
        if sources is None:
            sources = await self._replay(messages)
            if isinstance(sources, RewardResult):
                return sources
        return await self.grade(sources, strict=True)

    async def _replay(self, messages: list[dict[str, Any]]) -> dict[str, bytes] | RewardResult:
        ws = self._open_workspace(self.task)
        try:
            if ws.session is None:
                return self._failed(f"sandbox failed: {ws.error}")
            self._tools = {t.name: t for t in (Tool.from_function(getattr(ws, n)) for n in self.TOOL_NAMES)}
            for m in assistant_messages(messages):
                for call in parse_tool_calls(m).calls[:self.max_calls_per_turn]:
                    if not ws.submitted:
                        await self.call_tool(call)
            snapshot = await asyncio.to_thread(ws.session.snapshot)
            return hidden_sources(snapshot, self.task.metadata["roots"])
        finally:
            self._close_session()

    def _close_session(self) -> None:
        if self._finalizer is not None:
            self._finalizer()
        self._finalizer = None
        self.workspace.session = None

    def close(self) -> None:
        self._close_session()
        super().close()


def _fraction(passed: list[bool]) -> float:
    return sum(passed) / len(passed) if passed else 1.0


def _changed_tests(task: Task, snapshot: Mapping[str, Any]) -> list[str]:
    """The project's test files that the episode edited or deleted."""
    out = []
    for path in task.metadata.get("test_files", ()):
        state = snapshot.get(path)
        original = task.metadata["files"][path]
        original = original.encode() if isinstance(original, str) else original
        if state is None or state.kind != "file" or state.content != original:
            out.append(path)
    return out
