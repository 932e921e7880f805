"""The reward vocabulary.

A *reward function* maps ``(task, response)`` to a float or a
:class:`RewardResult`. ``response`` is what the environment scores: the final
assistant text for single-turn environments, the list of messages of the
episode for multi-turn ones. Rubrics compose reward functions:

* :class:`WeightedSum` adds named parts with weights;
* :class:`Gate` lets a part count only when a condition holds ("the format must
  hold before correctness counts").

Every part's score lands in ``RewardResult.components`` under its name, so a
trainer can log each part. ``info["reward_error"]`` means the *environment*
failed to score (a verifier crashed, gold could not be parsed); such a reward
must not be trusted or trained on.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["RewardResult", "RewardFn", "as_result", "WeightedSum", "Gate", "call_reward", "attempt_discounted"]


@dataclass
class RewardResult:
    """A scored response: ``score`` (the reward), ``components`` (named parts,
    each a float), ``info`` (reasons, diagnostics; ``info["reward_error"]``
    marks an environment failure)."""

    score: float
    components: dict[str, float] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def error(self) -> str | None:
        """The environment-side failure, if any."""
        return self.info.get("reward_error")


RewardFn = Callable[[Any, Any], "float | RewardResult"]


def as_result(value: float | RewardResult | bool | int, name: str | None = None) -> RewardResult:
    """Normalise a reward function's return value to a :class:`RewardResult`.

    A bare number becomes a result whose only component is ``name`` (when given).
    """
    if isinstance(value, RewardResult):
        return value
    score = float(value)
    return RewardResult(score, {name: score} if name else {})


def call_reward(fn: RewardFn, task: Any, response: Any, name: str | None = None) -> RewardResult:
    """Call ``fn`` and turn any exception into a zero reward with
    ``info["reward_error"]`` (the environment failed, not the model)."""
    try:
        return as_result(fn(task, response), name)
    except Exception as e:  # a verifier bug must never take the trainer down
        return RewardResult(
            0.0, {name: 0.0} if name else {}, {"reward_error": f"{type(e).__name__}: {e}"}
        )


def _merge(result: RewardResult, name: str, into: RewardResult) -> None:
    into.components[name] = result.score
    for k, v in result.components.items():
        if k != name:
            into.components.setdefault(f"{name}/{k}" if k in into.components else k, v)
    for k, v in result.info.items():
        if k == "reward_error":
            prev = into.info.get("reward_error")
            into.info["reward_error"] = f"{prev}; {name}: {v}" if prev else f"{name}: {v}"
        else:
            into.info.setdefault(k, v)


def attempt_discounted(score_formula: str, discount: float) -> str:
    """A reward formula (:meth:`~gym_llm.envs.core.LLMEnv.reward_formula`)
    whose attempt ``k`` (0-based) earns ``discount ** k`` times one attempt's
    ``score_formula``: the one wording for every env with retries."""
    return f"({score_formula}) * {discount:g}^k on attempt k = 0, 1, ..."


class WeightedSum:
    """``score = sum(weight[name] * part(task, response).score)``.

    >>> rubric = WeightedSum({"format": has_box, "correct": is_right},
    ...                      weights={"format": 0.1, "correct": 0.9})
    """

    def __init__(self, parts: Mapping[str, RewardFn], weights: Mapping[str, float] | None = None):
        if not parts:
            raise ValueError("WeightedSum needs at least one part")
        weights = dict(weights or {})
        unknown = set(weights) - set(parts)
        if unknown:
            raise ValueError(f"weights name unknown parts: {sorted(unknown)}")
        self.parts = dict(parts)
        self.weights = {name: float(weights.get(name, 1.0)) for name in parts}

    @property
    def formula(self) -> str:
        """The sum as text, e.g. ``"0.1 * format + 0.9 * correct"`` (what
        :meth:`~gym_llm.envs.core.SingleTurnEnv.score_formula` states)."""
        return " + ".join(f"{weight:g} * {name}" for name, weight in self.weights.items())

    def __call__(self, task: Any, response: Any) -> RewardResult:
        out = RewardResult(0.0)
        total = 0.0
        for name, fn in self.parts.items():
            part = call_reward(fn, task, response, name)
            total += self.weights[name] * part.score
            _merge(part, name, out)
        out.score = total
        return out


class Gate:
    """``then`` counts only when ``condition`` scores at least ``threshold``;
    otherwise the score is ``otherwise`` and ``info["gated"]`` says why.

    >>> Gate(has_box, then=is_right, name="format")
    """

    def __init__(
        self,
        condition: RewardFn,
        then: RewardFn,
        *,
        name: str = "gate",
        then_name: str = "correct",
        threshold: float = 1.0,
        otherwise: float = 0.0,
    ):
        self.condition, self.then = condition, then
        self.name, self.then_name = name, then_name
        self.threshold, self.otherwise = threshold, otherwise

    def __call__(self, task: Any, response: Any) -> RewardResult:
        out = RewardResult(self.otherwise)
        gate = call_reward(self.condition, task, response, self.name)
        _merge(gate, self.name, out)
        if gate.score < self.threshold or gate.error:
            out.components[self.then_name] = 0.0
            out.info.setdefault("gated", f"{self.name} scored {gate.score} < {self.threshold}")
            return out
        result = call_reward(self.then, task, response, self.then_name)
        _merge(result, self.then_name, out)
        out.score = result.score
        return out
