"""``tool/FunctionCalling-v0``: single-turn function calling.

The prompt is a system message listing the offered tools (also in
``info["tools"]``) and a user request; the answer is the call or calls that
fulfil it, as ``<tool_call>`` text or OpenAI ``tool_calls``. Tasks are drawn
from the 43-tool :mod:`~gym_llm_tools.catalog`:

* ``single``: one tool offered, one call;
* ``multiple``: several tools offered (distractors), one right call;
* ``parallel``: several calls in one turn, order-free (the same tool with
  different values, or different tools).

``difficulty`` (0..1) sets everything at once: at 0 a single obvious call
with one or two arguments and no distractor; as it grows, more distractors
(up to 7, increasingly from the same domain: ``turn_on_lights`` beside
``turn_off_lights``), wordier templates that name optional parameters, and
more parallel requests (up to three calls).
"""

from __future__ import annotations

import random
from typing import Any

from gym_llm import Draft, ProceduralTasks, RewardResult, SingleTurnEnv
from gym_llm.envs.grading import assistant_messages
from gym_llm.envs.tools import render_tools_prompt

from .catalog import CASES, Case, schema_of
from .checker import score_tool_calls
from .signals import SIGNALS

__all__ = ["FunctionCallingEnv", "generate_request", "SYSTEM_PROMPT"]

SYSTEM_PROMPT = (
    "You are an assistant that acts by calling tools. Fulfil the user's request with the right "
    "tool call(s) and the argument values the user gave; leave out optional arguments the user did "
    "not mention. When the request needs several calls, make all of them in this one reply."
)

#: Cases plain enough for difficulty 0: the first template names one or two arguments.
_EASY = tuple(c for c in CASES if 1 <= c.templates[0].count("{") <= 2)
_MAX_DISTRACTORS = 7


def _template_index(case: Case, rng: random.Random, difficulty: float) -> int:
    reachable = 1 + int(difficulty * (len(case.templates) - 1) + 0.5)
    return rng.randrange(min(reachable, len(case.templates)))


def _distractors(rng: random.Random, difficulty: float, chosen: list[Case]) -> list[Case]:
    n = int(difficulty * _MAX_DISTRACTORS + 0.5)
    names = {c.name for c in chosen}
    domains = {c.domain for c in chosen}
    near = [c for c in CASES if c.domain in domains and c.name not in names]
    far = [c for c in CASES if c.domain not in domains]
    rng.shuffle(near)
    rng.shuffle(far)
    picked: list[Case] = []
    while len(picked) < n and (near or far):
        pool = near if near and (not far or rng.random() < difficulty) else far
        picked.append(pool.pop())
    return picked


def generate_request(rng: random.Random, difficulty: float) -> Draft:
    """One FunctionCalling task (a :class:`~gym_llm.Draft`): the prompt
    messages, the gold calls in order, and ``metadata`` with ``tools`` (the
    offered schemas) and ``kind`` (single, multiple or parallel)."""
    pool = _EASY if difficulty == 0 else CASES
    first = rng.choice(pool)
    n_calls = 1
    if rng.random() < 0.6 * difficulty:
        n_calls = 3 if rng.random() < difficulty - 0.5 else 2
    chosen = [first]
    if n_calls > 1:
        if rng.random() < 0.5:  # "weather in Paris and in Lima": one tool, several values
            chosen += [first] * (n_calls - 1)
        else:
            chosen += rng.sample([c for c in CASES if c is not first], n_calls - 1)
    requests: list[str] = []
    gold: list[dict[str, Any]] = []
    for case in chosen:
        for _ in range(20):  # the same tool twice must differ in its values
            text, args = case.draw(rng, _template_index(case, rng, difficulty))
            if all(g["name"] != case.name or g["arguments"] != args for g in gold):
                break
        requests.append(text)
        gold.append({"name": case.name, "arguments": args})
    offered = list(dict.fromkeys(chosen)) + _distractors(rng, difficulty, chosen)
    rng.shuffle(offered)
    tools = [schema_of(c.name) for c in offered]
    request = requests[0] if len(requests) == 1 else " Also: ".join(requests)
    kind = "parallel" if n_calls > 1 else ("multiple" if len(offered) > 1 else "single")
    prompt = [
        {"role": "system", "content": SYSTEM_PROMPT + "\n\n" + render_tools_prompt(tools)},
        {"role": "user", "content": request},
    ]
    return Draft(prompt, gold, {"tools": tools, "kind": kind})


class FunctionCallingEnv(SingleTurnEnv):
    """Call the right tool(s) with the right arguments (single turn)."""

    hack_signals = SIGNALS

    def __init__(
        self,
        *,
        split: str = "train",
        seed: int | None = None,
        max_turns: int = 1,
        difficulty: float = 0.5,
        partial_credit: bool = True,
        heldout_size: int = 500,
        feedback: str = "That is not the right call. Try again.",
        attempt_discount: float = 1.0,
        render_mode: str | None = None,
    ):
        """
        Args:
            split, seed, max_turns: as every env (``max_turns > 1`` allows
                retries after a wrong call, with ``feedback`` and
                ``attempt_discount`` as in :class:`~gym_llm.SingleTurnEnv`).
            difficulty: 0..1, see the module docstring.
            partial_credit: score ``matched / max(#gold, #calls)``; ``False``
                gives 1.0 only for exactly the gold calls.
            heldout_size: number of held-out tasks.
        """
        tasks = ProceduralTasks(
            "tool-fc", generate_request, difficulty=difficulty, sizes={"heldout": heldout_size}
        )
        self.partial_credit = bool(partial_credit)
        super().__init__(
            tasks, self._reward, split=split, seed=seed, max_turns=max_turns,
            feedback=feedback, attempt_discount=attempt_discount, render_mode=render_mode,
        )

    def score_formula(self) -> str:
        """:func:`~gym_llm_tools.checker.score_tool_calls`'s score: with partial
        credit the gold calls matched over the larger of the gold calls and the
        calls made (``matched`` is the share of gold calls matched)."""
        return "matched * gold_calls / max(gold_calls, calls)" if self.partial_credit else "1 * exact"

    def _reward(self, task: Any, response: Any) -> RewardResult:
        return score_tool_calls(response, task.answer, task.metadata["tools"], partial_credit=self.partial_credit)

    @property
    def tools(self) -> list[dict[str, Any]] | None:
        return self.task.metadata["tools"] if self.task is not None else None

    async def astrict_score(self, messages: list[dict[str, Any]], reward: float) -> RewardResult:
        """The strict grader: exactly the gold calls in the final turn (no
        partial credit for a share of them among extras), discounted by its
        attempt as training is."""
        turns = assistant_messages(messages)
        result = score_tool_calls(turns[-1] if turns else "", self.task.answer, self.task.metadata["tools"],
                                  partial_credit=False)
        result.score *= self.attempt_discount ** (len(turns) - 1)
        return result

    def respond(self, message: dict[str, Any]) -> Any:
        # Score the whole message, not its text: OpenAI ``tool_calls`` live beside the content.
        return self._judge(self.score(self._reward, message))
