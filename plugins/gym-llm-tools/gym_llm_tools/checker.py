"""The function-call verifier: did the model make the gold calls?

Usable on its own (any OpenAI tool schemas, any gold calls) and as the reward
of ``tool/FunctionCalling-v0`` (in TRL: :mod:`gym_llm.apps.integrations.trl`).

A call *matches* a gold call when

* the function name is the gold one and is among the offered tools;
* its arguments validate against the tool's JSON schema (required parameters
  present, no unexpected ones, JSON types right, values within ``enum``
  lists; booleans are not numbers);
* every parameter has the gold value, where an omitted optional parameter
  counts as its schema ``default`` (so a call may leave out an optional
  parameter the request did not mention, or spell out its default), and values
  compare loosely only where spelling is not the point: numbers numerically,
  strings case-, whitespace-, end-punctuation- and leading-article-insensitively,
  arrays as multisets.

Parallel calls match order-free. The score is ``matched / max(#gold, #calls)``
(malformed calls count as calls), so a call spree cannot beat the exact answer;
with ``partial_credit=False`` it is 1.0 for exactly the gold calls, else 0.0.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from typing import Any

from gym_llm.envs.parsing import ToolCall, parse_tool_calls
from gym_llm.envs.rewards import RewardResult
from gym_llm.envs.tools import validate_arguments

__all__ = ["score_tool_calls", "same_arguments"]

_MISSING = object()
_ARTICLE = re.compile(r"^(?:a|an|the)\s+")
_EDGE_PUNCT = " \t\n\"'`.,;:!?"


def _norm_text(s: str) -> str:
    s = " ".join(s.casefold().split()).strip(_EDGE_PUNCT)
    return _ARTICLE.sub("", s)


def _canonical(value: Any) -> Any:
    """A comparable form: text normalised, arrays sorted; numbers kept (see :func:`_same`)."""
    if isinstance(value, str):
        return _norm_text(value)
    if isinstance(value, list):
        return sorted((_canonical(v) for v in value), key=_order)
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in value.items()}
    return value


def _order(value: Any) -> str:
    """Sort key of an array element: 2.0 sorts where 2 does."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return json.dumps(value, sort_keys=True, default=str)


def _number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _same(a: Any, b: Any) -> bool:
    """Equal under the canonical forms. Two floats match within 1e-9; a number
    against an int matches only exactly (Python compares int with float exactly,
    and a huge int never overflows into a float here)."""
    if _number(a) and _number(b):
        if isinstance(a, float) and isinstance(b, float):
            return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def same_arguments(given: dict[str, Any], gold: dict[str, Any], parameters: dict[str, Any]) -> bool:
    """Whether two argument dicts mean the same call under ``parameters``
    (omitted optional parameters count as their schema default)."""
    props = parameters.get("properties") or {}
    for key in set(given) | set(gold):
        default = (props.get(key) or {}).get("default", _MISSING)
        a, b = given.get(key, default), gold.get(key, default)
        if a is _MISSING or b is _MISSING:
            return False
        if not _same(_canonical(a), _canonical(b)):
            return False
    return True


def _parameters_by_name(tools: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out = {}
    for t in tools:
        fn = t.get("function", t)
        out[fn["name"]] = fn.get("parameters") or {"type": "object", "properties": {}}
    return out


def _call_problem(call: ToolCall, parameters: dict[str, dict[str, Any]]) -> str | None:
    if call.name not in parameters:
        return f"{call.name!r} is not an offered tool"
    errors = validate_arguments(parameters[call.name], call.arguments)
    if errors:
        return f"{call.name}: " + "; ".join(errors)
    return None


def score_tool_calls(
    response: Any,
    gold: Sequence[dict[str, Any]],
    tools: Sequence[dict[str, Any]],
    *,
    partial_credit: bool = True,
) -> RewardResult:
    """Score an assistant turn (text with ``<tool_call>`` blocks, or an OpenAI
    message dict with ``tool_calls``) against ``gold`` calls
    ``[{"name", "arguments"}]`` given the offered ``tools`` (OpenAI schemas).

    Components: ``matched`` (fraction of gold calls made), ``valid`` (fraction
    of the model's calls that were well-formed and schema-valid), ``exact``
    (1.0 iff exactly the gold calls). ``info["reason"]`` names the first
    problem; reasons never quote gold values.
    """
    parsed = parse_tool_calls(response)
    parameters = _parameters_by_name(tools)
    n_calls = len(parsed.calls) + len(parsed.errors)
    problems: list[str] = list(parsed.errors)
    unmatched = list(gold)
    matched = valid = 0
    for call in parsed.calls:
        problem = _call_problem(call, parameters)
        if problem:
            problems.append(problem)
            continue
        valid += 1
        hit = next(
            (g for g in unmatched
             if g["name"] == call.name and same_arguments(call.arguments, g.get("arguments") or {}, parameters[call.name])),
            None,
        )
        if hit is None:
            problems.append(f"{call.name}: no requested call has these arguments")
        else:
            unmatched.remove(hit)
            matched += 1
    if unmatched:
        names = sorted({g["name"] for g in unmatched})
        problems.append(f"{len(unmatched)} requested call(s) missing or wrong ({', '.join(names)})"
                        if n_calls else "no tool call")
    exact = float(not problems and matched == len(gold) == n_calls)
    score = matched / max(len(gold), n_calls, 1) if partial_credit else exact
    components = {
        "matched": matched / len(gold) if gold else float(n_calls == 0),
        "valid": valid / n_calls if n_calls else 0.0,
        "exact": exact,
    }
    info: dict[str, Any] = {"calls": n_calls}
    if problems:
        info["reason"] = problems[0]
        info["problems"] = problems
    return RewardResult(score, components, info)
