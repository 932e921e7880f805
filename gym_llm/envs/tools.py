"""Tools for multi-turn environments: schemas from typed functions, argument
validation, and :class:`ToolEnv`, the base of every tool-using environment.

A tool is a plain typed Python function with a docstring::

    @tool
    def get_weather(city: str, unit: Literal["C", "F"] = "C") -> str:
        '''Current weather of a city.

        Args:
            city: The city name.
            unit: Temperature unit.
        '''

Calls are parsed by the core's one parser (:func:`gym_llm.envs.parsing.parse_tool_calls`),
validated against the tool's JSON schema before anything runs, and answered
with ``{"role": "tool", "tool_call_id", "name", "content"}`` messages. An
invalid call becomes an error tool message, never an exception.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
import types
import typing
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args, get_origin

import jsonschema

from gym_llm.envs.core import LLMEnv, Turn
from gym_llm.envs.parsing import ToolCall, parse_tool_calls
from gym_llm.envs.rewards import RewardResult
from gym_llm.envs.tasks import Task, TaskSet

__all__ = [
    "Tool", "tool", "function_schema", "validate_arguments", "tool_message", "ToolEnv",
    "render_tools_prompt",
]

_PY_TO_JSON = {str: "string", int: "integer", float: "number", bool: "boolean", dict: "object", list: "array"}


def _type_schema(annotation: Any) -> dict[str, Any]:
    if annotation is inspect.Parameter.empty or annotation is Any:
        return {}
    origin = get_origin(annotation)
    if origin is Literal:
        values = list(get_args(annotation))
        schema: dict[str, Any] = {"enum": values}
        kinds = {type(v) for v in values}
        if len(kinds) == 1 and next(iter(kinds)) in _PY_TO_JSON:
            schema["type"] = _PY_TO_JSON[next(iter(kinds))]
        return schema
    if origin in (typing.Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return _type_schema(args[0])
        return {"anyOf": [_type_schema(a) for a in args]}
    if origin in (list, Sequence, tuple, set):
        args = get_args(annotation)
        schema = {"type": "array"}
        if args and args[0] is not Ellipsis:
            schema["items"] = _type_schema(args[0])
        return schema
    if origin is dict:
        return {"type": "object"}
    if annotation in _PY_TO_JSON:
        return {"type": _PY_TO_JSON[annotation]}
    raise TypeError(f"cannot express type {annotation!r} in a tool schema")


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Google-style docstring -> (description, {param: description})."""
    doc = inspect.cleandoc(doc or "")
    head, _, rest = doc.partition("\nArgs:")
    params: dict[str, str] = {}
    current = None
    for line in rest.splitlines():
        m = re.match(r"^\s+(\w+)(?:\s*\([^)]*\))?:\s*(.*)$", line)
        if m and (current is None or len(line) - len(line.lstrip()) <= 4):
            current = m.group(1)
            params[current] = m.group(2).strip()
        elif re.match(r"^\S", line):  # next section (Returns:, Raises:)
            break
        elif current and line.strip():
            params[current] += " " + line.strip()
    return " ".join(head.split("\n\n")[0].split()), params


def function_schema(
    fn: Callable[..., Any], name: str | None = None, *, defaults: bool = False
) -> dict[str, Any]:
    """The OpenAI tool schema of a typed function with a Google-style docstring.

    Parameters without a default are required; ``Literal`` becomes ``enum``;
    ``Optional[X]`` is ``X`` and not required. With ``defaults=True`` each
    optional parameter whose default is a JSON value other than ``None`` gets
    a ``"default"`` entry (an annotation only: validation ignores it; checkers
    use it to treat an omitted argument as its default).
    """
    description, param_docs = _parse_docstring(fn.__doc__ or "")
    hints = typing.get_type_hints(fn)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for pname, p in inspect.signature(fn).parameters.items():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        prop = _type_schema(hints.get(pname, p.annotation))
        if pname in param_docs:
            prop["description"] = param_docs[pname]
        properties[pname] = prop
        if p.default is inspect.Parameter.empty:
            required.append(pname)
        elif defaults and (default := _json_default(p.default)) is not None:
            prop["default"] = default
    return {
        "type": "function",
        "function": {
            "name": name or fn.__name__,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            },
        },
    }


def _json_default(value: Any) -> Any:
    """``value`` as JSON data (a tuple becomes a list), or ``None`` when it has
    no JSON form."""
    try:
        return json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError):
        return None


_validators: dict[str, jsonschema.protocols.Validator] = {}

#: Longest validation error (longer ones are cut): jsonschema's messages quote the
#: offending value whole, and each becomes a tool message the conversation keeps.
MAX_ERROR_CHARS = 300


def validate_arguments(parameters: dict[str, Any], arguments: Any) -> list[str]:
    """Errors of ``arguments`` against a JSON-schema ``parameters`` object
    (empty list = valid), each at most :data:`MAX_ERROR_CHARS` characters.
    Booleans are not accepted as numbers. ``arguments`` as
    :func:`~gym_llm.envs.parsing.parse_tool_calls` gives them (nested at most
    ``MAX_TOOL_CALL_DEPTH`` levels): jsonschema recurses on deeper values."""
    key = json.dumps(parameters, sort_keys=True)
    validator = _validators.get(key)
    if validator is None:
        cls = jsonschema.validators.validator_for(parameters, default=jsonschema.Draft202012Validator)
        validator = _validators[key] = cls(parameters)
    errors = []
    for err in sorted(validator.iter_errors(arguments), key=lambda e: list(e.absolute_path)):
        where = "/".join(map(str, err.absolute_path)) or "arguments"
        error = f"{where}: {err.message}"
        errors.append(error if len(error) <= MAX_ERROR_CHARS else error[:MAX_ERROR_CHARS - 1] + "…")
    return errors


@dataclass
class Tool:
    """A callable the model may use: ``fn(**arguments)`` returns the result
    (str, or anything JSON-able); an async ``fn`` is awaited."""

    name: str
    description: str
    parameters: dict[str, Any]
    fn: Callable[..., Any] | Callable[..., Awaitable[Any]]

    @classmethod
    def from_function(cls, fn: Callable[..., Any], name: str | None = None) -> Tool:
        schema = function_schema(fn, name)["function"]
        return cls(schema["name"], schema["description"], schema["parameters"], fn)

    @property
    def schema(self) -> dict[str, Any]:
        """The OpenAI tool schema."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


def tool(fn: Callable[..., Any] | None = None, *, name: str | None = None) -> Any:
    """Decorator: ``@tool`` or ``@tool(name="...")`` turns a function into a :class:`Tool`."""
    if fn is None:
        return lambda f: Tool.from_function(f, name)
    return Tool.from_function(fn, name)


def tool_message(call: ToolCall, content: str) -> dict[str, Any]:
    """A tool-result message answering ``call``."""
    return {"role": "tool", "tool_call_id": call.id, "name": call.name, "content": content}


def _render_result(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return str(value)


def render_tools_prompt(tools: Sequence[dict[str, Any]]) -> str:
    """A system-prompt paragraph listing ``tools`` and the Hermes call format,
    for models whose chat template does not render tools itself."""
    lines = [
        "You can call these tools. To call one, write",
        '<tool_call>{"name": "<tool name>", "arguments": {<arguments as JSON>}}</tool_call>',
        "(several calls allowed in one turn). Tool results come back in the next message.",
        "<tools>",
    ]
    lines += [json.dumps(t, sort_keys=True) for t in tools]
    lines.append("</tools>")
    return "\n".join(lines)


def _integers_as_int(parameters: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` with each integral float given for an ``integer`` parameter as an
    int: JSON Schema counts ``1.0`` as an integer, so it validates, and a tool declared
    ``page: int`` then indexed a list with a float."""
    props = parameters.get("properties") or {}
    return {k: int(v) if (isinstance(v, float) and v.is_integer()
                          and (props.get(k) or {}).get("type") == "integer") else v
            for k, v in arguments.items()}


class ToolEnv(LLMEnv):
    """A multi-turn environment in which the model calls tools.

    Each assistant turn with tool calls gets one tool message per call (parse
    errors and schema violations become error tool messages; nothing raises).
    A turn without tool calls is the final answer: :meth:`score_episode` scores
    the episode and it ends. Reaching ``max_turns`` while still calling tools
    truncates it, scored by :meth:`score_episode` all the same.

    Subclasses implement :meth:`episode_tools` (the tools of this episode,
    usually bound to per-episode state set up in :meth:`on_reset`) and
    :meth:`score_episode`.
    """

    #: Tool calls run per assistant turn; the rest of a longer turn gets error tool
    #: messages, unrun. One turn of a million characters held about 14,000 calls,
    #: each a sandboxed command in the Shell env: hours of jails for a single step.
    max_calls_per_turn: int = 16

    #: Wall time the tool calls of one assistant turn share, in seconds (``None``:
    #: unbounded). An async call still running when it is spent is cancelled (a
    #: sandboxed command's jail is killed), later calls are not run; each gets an error tool
    #: message and the turn is answered and scored as usual. Sixteen Shell commands
    #: of up to 10 s each took 160 s, past the Ray backend's step deadline
    #: (``step_timeout_s``, 120 s by default); this keeps a turn well inside it.
    turn_time_budget_s: float | None = 60.0

    def __init__(
        self,
        tasks: TaskSet | Sequence[Task],
        *,
        split: str = "train",
        seed: int | None = None,
        max_turns: int = 8,
        system_prompt: str | None = None,
        render_mode: str | None = None,
    ):
        super().__init__(
            tasks, split=split, seed=seed, max_turns=max_turns,
            system_prompt=system_prompt, render_mode=render_mode,
        )
        self._tools: dict[str, Tool] = {}
        self.tool_errors = 0

    def episode_tools(self, task: Task) -> list[Tool]:
        """The tools offered for ``task``."""
        raise NotImplementedError

    def score_episode(self, final_message: dict[str, Any] | None) -> RewardResult | float:
        """Score the episode; ``final_message`` is the answer turn, or ``None``
        when the episode was truncated while calling tools. ``self.messages``
        holds the whole conversation."""
        raise NotImplementedError

    @property
    def tools(self) -> list[dict[str, Any]] | None:
        return [t.schema for t in self._tools.values()] or None

    def initial_messages(self, task: Task) -> list[dict[str, Any]]:
        self._tools = {t.name: t for t in self.episode_tools(task)}
        self.tool_errors = 0
        return super().initial_messages(task)

    async def call_tool(self, call: ToolCall) -> dict[str, Any]:
        """Validate and run one call; returns its tool message."""
        t = self._tools.get(call.name)
        if t is None:
            self.tool_errors += 1
            return tool_message(call, f"Error: unknown tool {call.name!r}; available: {sorted(self._tools)}")
        errors = validate_arguments(t.parameters, call.arguments)
        if errors:
            self.tool_errors += 1
            return tool_message(call, "Error: invalid arguments: " + "; ".join(errors))
        arguments = _integers_as_int(t.parameters, call.arguments)
        try:
            if inspect.iscoroutinefunction(t.fn):
                result = await t.fn(**arguments)
            else:
                result = t.fn(**arguments)
        except Exception as e:  # the tool's own error is information for the model
            self.tool_errors += 1
            return tool_message(call, f"Error: {type(e).__name__}: {e}")
        return tool_message(call, _render_result(result))

    async def _call_within_budget(self, calls: Sequence[ToolCall]) -> list[dict[str, Any]]:
        """Run ``calls`` in order within :attr:`turn_time_budget_s` of wall time in all."""
        budget = self.turn_time_budget_s
        if budget is None:
            return [await self.call_tool(c) for c in calls]
        loop = asyncio.get_running_loop()
        deadline = loop.time() + budget
        spent = f"Error: turn time budget spent ({budget:g} s for all tool calls of a turn)"
        replies = []
        for c in calls:
            left = deadline - loop.time()
            if left <= 0:
                self.tool_errors += 1
                replies.append(tool_message(c, f"{spent}; this call was not run"))
                continue
            try:
                async with asyncio.timeout(left):
                    replies.append(await self.call_tool(c))
            except TimeoutError:  # only the budget's: call_tool turns a tool's own exceptions into messages
                self.tool_errors += 1
                replies.append(tool_message(c, f"{spent}; this call was stopped"))
        return replies

    async def arespond(self, message: dict[str, Any]) -> Turn:
        parsed = parse_tool_calls(message)
        if not parsed.calls and not parsed.errors:
            result = await self._ascore(message)
            return Turn(reward=result, done=True)
        cap = self.max_calls_per_turn
        replies = await self._call_within_budget(parsed.calls[:cap])
        for c in parsed.calls[cap:]:
            self.tool_errors += 1
            replies.append(tool_message(c, f"Error: more than {cap} tool calls in one turn; this one was not run"))
        for unread in parsed.unread:  # answered under the call's own id: chat templates pair by id
            self.tool_errors += 1
            replies.append({"role": "tool", "tool_call_id": unread.id, "name": unread.name,
                            "content": f"Error: {unread.error}"})
        info: dict[str, Any] = {"tool_calls": len(parsed.calls), "tool_errors": self.tool_errors}
        failed = [r["content"] for r in replies if r["content"].startswith("Error:")]
        if failed:  # a bad call earns nothing this turn; say why
            info["reason"] = failed[0]
        if self.is_last_turn:
            return Turn(reward=await self._ascore(None), info=info)
        return Turn(messages=replies, info=info)

    async def _ascore(self, final_message: dict[str, Any] | None) -> RewardResult:
        result = self.score_episode(final_message)
        if inspect.isawaitable(result):
            result = await result
        if not isinstance(result, RewardResult):
            result = RewardResult(float(result))
        return result
