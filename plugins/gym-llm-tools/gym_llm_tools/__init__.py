"""gym-llm-tools: tool-use environments for gym-llm.

* ``tool/FunctionCalling-v0`` (:class:`FunctionCallingEnv`): single-turn calls;
* ``tool/Orders-v0``: a stateful order-management world with a scripted user;
* ``tool/Shell-v0``: file-system tasks through a sandboxed ``bash`` tool.

The verifiers are usable outside the environments:
:func:`~gym_llm_tools.checker.score_tool_calls` (TRL and verl take the
environments themselves: :mod:`gym_llm.apps.integrations`).
"""

from __future__ import annotations

from .checker import same_arguments, score_tool_calls

__all__ = ["score_tool_calls", "same_arguments"]
