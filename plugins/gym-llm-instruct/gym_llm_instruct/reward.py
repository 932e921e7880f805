"""The instruction-following reward: one verdict per constraint, and the request check.

:func:`score_response` is the domain's verifier, usable outside environments
(e.g. as a TRL reward function through a task). ``reward="strict"`` scores 1.0
when every constraint holds, else 0.0; ``reward="partial"`` scores the
fraction that hold. Either way a response that does not do what the base
request asks (:func:`gym_llm_instruct.requests.check_request`) scores 0.0 when
``check_request`` is on (the default). ``loose=True`` reads each constraint
through IFEval's loose transforms.
"""

from __future__ import annotations

from typing import Any

from gym_llm import RewardResult, Task
from gym_llm.envs.parsing import message_text

from .constraints import component_keys, strip_thinking, verdict
from .requests import check_request

__all__ = ["score_response", "REWARD_MODES", "prompt_text", "check_reward_mode"]

REWARD_MODES = ("strict", "partial")


def check_reward_mode(reward: str) -> str:
    """``reward`` if it is one of :data:`REWARD_MODES`, else ``ValueError``."""
    if reward not in REWARD_MODES:
        raise ValueError(f"reward must be one of {REWARD_MODES}, got {reward!r}")
    return reward


def prompt_text(task: Task) -> str:
    """The user text of a task's prompt (what an echo is compared against)."""
    if isinstance(task.prompt, str):
        return task.prompt
    return "\n".join(message_text(m) for m in task.prompt if m.get("role") == "user")


def score_response(task: Task, response: Any, *, reward: str = "strict", loose: bool = False,
                   check_request: bool = True) -> RewardResult:
    """Score ``response`` (text or an assistant message) to an instruct ``task``.

    ``components``: one 0.0/1.0 verdict per constraint, keyed by
    :func:`~gym_llm_instruct.constraints.component_keys`; ``info``:
    ``request`` (1.0/0.0, the request check; absent when it is off),
    ``request_failed`` (which demand failed), ``violated`` (component keys) and
    ``reason`` when the score is below 1. Never raises on any response.
    """
    check_reward_mode(reward)
    text = strip_thinking(response if isinstance(response, str) else message_text(response))
    constraints = task.metadata["constraints"]
    keys = component_keys(constraints)
    components = {k: float(verdict(c, text, loose=loose)) for k, c in zip(keys, constraints, strict=True)}
    violated = [k for k, v in components.items() if v == 0.0]
    held = len(keys) - len(violated)
    score = float(not violated) if reward == "strict" else held / len(keys)
    info: dict[str, Any] = {"violated": violated}
    reasons = [f"violated: {', '.join(violated)}"] if violated else []
    if check_request:
        request = check_request_of(task, text)
        info["request"] = float(request.ok)
        if not request.ok:
            info["request_failed"] = request.failed
            reasons.insert(0, f"request not done ({request.failed}): {request.reason}")
            score = 0.0
    if not text.strip():
        reasons.insert(0, "empty response")
    if reasons:
        info["reason"] = "; ".join(reasons)
    return RewardResult(score, components, info)


def check_request_of(task: Task, text: str) -> Any:
    """:func:`~gym_llm_instruct.requests.check_request` of ``text`` for ``task``."""
    return check_request(text, prompt_text(task), task.metadata.get("request") or {}, task.metadata["constraints"])
