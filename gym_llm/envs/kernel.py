"""A persistent Python tool: state kept across the calls of one episode, like a
notebook kernel, with every call still run in a fresh sandbox jail.

No jail outlives its call (the sandbox's contract), so the state is rebuilt:
each call runs the episode's earlier cells again, their output discarded, then
the new cell, whose output comes back (and, as in a notebook, the value of a
final expression). Consequences, documented for users: a cell that reads the
clock or a random source without a seed may rebuild a different state; side
effects on files (in a session's work dir) happen again at every call, so a
cell that appends to a file appends again; a call costs the run time of the
cells before it (the history is capped at :attr:`PythonKernel.max_cells`).
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from gym_llm_sandbox import ExecResult

__all__ = ["PythonKernel", "KERNEL_DRIVER"]

#: The program each call runs (stdlib only): ``{"history": [...], "cell": ...}`` on stdin.
KERNEL_DRIVER = r'''
import ast, json, os, sys, traceback
job = json.loads(sys.stdin.read())
ns = {"__name__": "__main__", "__builtins__": __builtins__}
out, err = sys.stdout, sys.stderr
sys.stdout = sys.stderr = open(os.devnull, "w")
for cell in job["history"]:
    try:
        exec(compile(cell, "<cell>", "exec"), ns)
    except BaseException:
        pass
sys.stdout, sys.stderr = out, err
try:
    tree = ast.parse(job["cell"], "<cell>")
except SyntaxError as e:
    traceback.print_exception(type(e), e, None)
    sys.exit(1)
try:
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, "<cell>", "exec"), ns)
    if last is not None:
        value = eval(compile(ast.Expression(last.value), "<cell>", "eval"), ns)
        if value is not None:
            print(repr(value))
except SystemExit:
    raise
except BaseException:
    kind, value, tb = sys.exc_info()
    traceback.print_exception(kind, value, tb.tb_next if tb is not None else None)
    sys.exit(1)
'''


class _Runner(Protocol):
    async def arun_code(self, language: str, code: str, **kwargs: Any) -> ExecResult: ...


class PythonKernel:
    """The state of one episode's ``python`` tool.

    ``runner``: a :class:`~gym_llm_sandbox.Sandbox` or a
    :class:`~gym_llm_sandbox.SandboxSession` (then the cells share its work dir);
    ``env``: extra environment variables for the jail (``PYTHONPATH``).
    """

    #: Earlier cells kept (the oldest are dropped, so its state is lost).
    max_cells: int = 64

    def __init__(self, runner: _Runner, *, env: dict[str, str] | None = None):
        self.runner = runner
        self.env = env
        self.history: list[str] = []

    def reset(self) -> None:
        """Forget every cell: the next call starts from an empty namespace."""
        self.history.clear()

    async def arun(self, code: str) -> ExecResult:
        """Run ``code`` after the earlier cells; it joins the history unless it
        has a syntax error (which leaves no state behind)."""
        stdin = json.dumps({"history": self.history, "cell": code})
        result = await self.runner.arun_code("python", KERNEL_DRIVER, stdin=stdin, env=self.env)
        try:
            compile(code, "<cell>", "exec")  # compiling runs nothing
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return result
        self.history = [*self.history, code][-self.max_cells:]
        return result
