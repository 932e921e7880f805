"""The environment base: :class:`LLMEnv` (multi-turn) and :class:`SingleTurnEnv`.

An episode is a conversation. ``reset`` picks a task and returns the prompt
messages; each ``step`` takes one assistant turn and returns only the messages
the environment appends (tool results, feedback), the turn's reward, and the
usual Gymnasium flags. Subclasses write one method, :meth:`LLMEnv.respond`
(or its async twin :meth:`LLMEnv.arespond`); the base class keeps the
conversation, turn count, truncation, reward bookkeeping and the ``info``
contract, so every environment reports the same keys.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import gymnasium
from gym_llm_sandbox.aio import run_sync
from gymnasium.error import ResetNeeded

from gym_llm.envs.grading import HackSignal
from gym_llm.envs.jsonio import utf8_text
from gym_llm.envs.parsing import (
    MAX_TOOL_CALL_DEPTH,
    MAX_TOOL_CALLS,
    message_text,
    refused_arguments,
)
from gym_llm.envs.rewards import (
    RewardFn,
    RewardResult,
    WeightedSum,
    as_result,
    attempt_discounted,
    call_reward,
)
from gym_llm.envs.spaces import AssistantTurn, ChatMessages
from gym_llm.envs.tasks import Task, TaskSet, as_task_set, check_split

__all__ = [
    "LLMEnv", "SingleTurnEnv", "Turn", "as_assistant_message",
    "MAX_ACTION_CHARS", "MAX_TOOL_CALL_CHARS", "MAX_TOOL_CALLS", "MAX_TOOL_CALL_DEPTH",
]

# The bounds on one assistant turn, applied where every action is normalised
# (:func:`as_assistant_message`); what is over them is cut or refused and reported as
# ``info["action_problem"]``. The parser owns two of them, as it applies them to
# every message it reads, in the env or not: MAX_TOOL_CALLS (calls a turn may make)
# and MAX_TOOL_CALL_DEPTH (levels a call's arguments may nest).

#: Longer assistant turns are cut here (and the cut is reported): a policy that
#: emits megabytes must not make a reward function quadratic.
MAX_ACTION_CHARS = 1_000_000

#: Characters the OpenAI ``tool_calls`` of one turn may hold in all (ids, names and
#: arguments, counted about as their JSON: a string its length and quotes, a list or
#: dict its brackets and a separator an item, any other value one), as many as its
#: text: one call with 8 MB of arguments was kept whole and copied into the env's
#: conversation on every turn. A call that would pass the bound is refused.
MAX_TOOL_CALL_CHARS = MAX_ACTION_CHARS

#: Ids and names a refused call keeps (longer ones are dropped): enough to answer it.
_REFUSED_LABEL_CHARS = 256


class _OverBound(Exception):
    """A tool call past one of the bounds on a turn; the message says which."""


def _copy_call(entry: Any, chars: int) -> tuple[Any, int]:
    """A copy of one ``tool_calls`` entry (dicts, lists and tuples copied, other
    values shared) and the characters it holds. Raises :class:`_OverBound` past
    ``chars`` characters, or past :data:`MAX_TOOL_CALL_DEPTH` levels of arguments
    (two more for the entry and its ``function``): the copy stops there, so it
    costs at most the bound, and never recurses near Python's limit."""
    used = 0

    def copy_value(value: Any, depth: int) -> Any:
        nonlocal used
        container = isinstance(value, dict | list | tuple)
        # about its JSON's length; a container's separators count before its items
        # are copied, so one of too many items is refused at once
        used += 2 + len(value) if isinstance(value, str) or container else 1
        if used > chars:
            raise _OverBound(f"over the {MAX_TOOL_CALL_CHARS} characters a turn's tool calls may hold")
        if not container:
            return value
        if depth > MAX_TOOL_CALL_DEPTH + 2:
            raise _OverBound(f"arguments nested too deeply (over {MAX_TOOL_CALL_DEPTH} levels)")
        if isinstance(value, dict):
            return {copy_value(k, depth + 1): copy_value(v, depth + 1) for k, v in value.items()}
        copied = [copy_value(v, depth + 1) for v in value]
        return copied if isinstance(value, list) else tuple(copied)

    return copy_value(entry, 1), used


def _refused_call(entry: Any, why: str) -> dict[str, Any]:
    """What stands for a refused ``tool_calls`` entry: its id and name (when short
    strings) and arguments that no tool runs, which the parser answers with ``why``."""
    fn = entry.get("function", entry) if isinstance(entry, dict) else None
    name = fn.get("name") if isinstance(fn, dict) else None
    call_id = entry.get("id") if isinstance(entry, dict) else None
    function = {"arguments": refused_arguments(why)}
    if isinstance(name, str) and len(name) <= _REFUSED_LABEL_CHARS:
        function = {"name": name, **function}
    stub: dict[str, Any] = {"type": "function", "function": function}
    if isinstance(call_id, str) and len(call_id) <= _REFUSED_LABEL_CHARS:
        stub = {"id": call_id, **stub}
    return stub


def _bounded_tool_calls(raw: Any) -> tuple[Any, str | None]:
    """An action's ``tool_calls`` within the bounds on a turn (the first
    :data:`MAX_TOOL_CALLS` entries; an entry past :data:`MAX_TOOL_CALL_CHARS` in
    all or nested too deeply refused, see :func:`_refused_call`), and what was cut
    or refused (``None``: nothing). ``None`` for the calls when not even a stand-in
    could be kept (``tool_calls`` not a list, and over a bound)."""
    if not isinstance(raw, list):  # the parser reports it as malformed
        try:
            return _copy_call(raw, MAX_TOOL_CALL_CHARS)[0], None
        except _OverBound as e:
            return None, f"tool_calls {e}; dropped"
    kept, refused = [], []
    left = MAX_TOOL_CALL_CHARS
    for i, entry in enumerate(raw[:MAX_TOOL_CALLS]):
        try:
            copied, used = _copy_call(entry, left)
        except _OverBound as e:
            refused.append(f"tool call {i}: {e}")
            kept.append(_refused_call(entry, str(e)))
            continue
        kept.append(copied)
        left -= used
    problems = []
    if len(raw) > MAX_TOOL_CALLS:
        problems.append(f"{len(raw)} tool calls cut to the first {MAX_TOOL_CALLS}")
    if refused:
        more = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
        problems.append(f"{refused[0]}{more}; refused")
    return kept, "; ".join(problems) or None


def as_assistant_message(action: Any, keep: Literal["head", "tail"] = "head") -> tuple[dict[str, Any], str | None]:
    """Normalise any action to an assistant message dict.

    Returns ``(message, problem)``: ``problem`` says why the action was not a
    well-formed turn (it is then scored as what could be read of it, usually
    nothing). Text longer than :data:`MAX_ACTION_CHARS` is cut to its first
    (``keep="head"``) or last (``keep="tail"``) ``MAX_ACTION_CHARS``
    characters. OpenAI ``tool_calls`` are copied within their bounds
    (:func:`_bounded_tool_calls`: at most :data:`MAX_TOOL_CALLS` calls,
    :data:`MAX_TOOL_CALL_CHARS` characters and :data:`MAX_TOOL_CALL_DEPTH`
    levels), the cut or refusal in ``problem`` too. Never raises.
    """
    problem = calls_problem = None
    if isinstance(action, str):
        msg: dict[str, Any] = {"role": "assistant", "content": action}
    elif isinstance(action, dict):
        msg = {"role": "assistant", "content": action.get("content")}
        if msg["content"] is not None and not isinstance(msg["content"], str):
            text = message_text(action)
            if not text:
                problem = f"message content of type {type(msg['content']).__name__} is not text"
            msg["content"] = text
        if action.get("tool_calls"):
            calls, calls_problem = _bounded_tool_calls(action["tool_calls"])
            if calls is not None:
                msg["tool_calls"] = calls
        if action.get("role", "assistant") != "assistant":
            problem = f"action has role {action.get('role')!r}, expected 'assistant'"
    elif isinstance(action, bytes | bytearray):
        msg = {"role": "assistant", "content": bytes(action).decode("utf-8", "replace")}
        problem = "action was bytes, decoded as UTF-8"
    elif action is None:
        msg, problem = {"role": "assistant", "content": ""}, "action was None"
    else:
        msg = {"role": "assistant", "content": ""}
        problem = f"action of type {type(action).__name__} is not a string or message dict"
    content = msg.get("content")
    if problem is None and not content and not msg.get("tool_calls"):
        problem = "empty response"
    if isinstance(content, str) and len(content) > MAX_ACTION_CHARS:
        msg["content"] = content[-MAX_ACTION_CHARS:] if keep == "tail" else content[:MAX_ACTION_CHARS]
        end = "last" if keep == "tail" else "first"
        problem = f"action of {len(content)} characters cut to its {end} {MAX_ACTION_CHARS}"
    return msg, "; ".join(p for p in (problem, calls_problem) if p) or None


@dataclass
class Turn:
    """What :meth:`LLMEnv.respond` returns for one assistant turn.

    ``messages``: the new messages the environment appends (tool results,
    feedback); ``reward``: this turn's reward; ``done``: the episode ended
    (terminated); ``info``: extra keys merged into the step's ``info``.
    """

    messages: list[dict[str, Any]] = field(default_factory=list)
    reward: float | RewardResult = 0.0
    done: bool = False
    info: dict[str, Any] = field(default_factory=dict)


def _utf8_message(message: dict[str, Any]) -> dict[str, Any]:
    """A copy of an environment's message whose text is valid UTF-8: a lone
    surrogate (bytes a jailed program wrote or named a file with that are not UTF-8,
    kept by ``surrogateescape``) becomes U+FFFD, where a tokenizer would raise."""
    out = dict(message)
    content = out.get("content")
    if isinstance(content, str):
        out["content"] = utf8_text(content)
    elif isinstance(content, list):
        out["content"] = [{**p, "text": utf8_text(p["text"])}
                          if isinstance(p, dict) and isinstance(p.get("text"), str) else p for p in content]
    return out


class LLMEnv(gymnasium.Env[list, Any]):
    """A multi-turn chat environment over a :class:`~gym_llm.TaskSet`.

    Subclasses implement :meth:`respond` (sync) and/or :meth:`arespond` (async;
    environments that run sandboxed code implement it natively so they never
    block the event loop). Optionally :meth:`initial_messages`,
    :meth:`on_reset`, :attr:`tools`.

    Grading is declared here, on the env class (:mod:`gym_llm.envs.grading`):
    the training reward is what :meth:`respond` returns in ``Turn.reward``;
    the strict grader is :meth:`astrict_score`; the signatures of gaming the
    grader that an episode can show are :attr:`hack_signals`.

    Contract: ``step`` never raises on a bad action (it earns the lowest reward
    with ``info["reason"]``); what was wrong with the action itself (None,
    bytes, a non-assistant role, cut for length, tool calls cut or refused at
    their bounds) is ``info["action_problem"]``
    and leads ``info["reason"]``, before the environment's own reason;
    ``info["reward_components"]`` is on every step;
    ``info["reward_error"]`` is set when the environment failed to score. After
    ``max_turns`` assistant turns an unfinished episode is truncated.
    """

    metadata = {"render_modes": ["ansi"]}

    #: Default for ``info["domain"]`` when the registry does not say.
    domain: str = ""

    #: Which end of an over-long action (more than :data:`MAX_ACTION_CHARS`)
    #: is kept: ``"head"`` by default; an env that scores the final answer
    #: (math's last ``\\boxed{}``) keeps ``"tail"``.
    action_cut_keeps: Literal["head", "tail"] = "head"

    #: The signatures of gaming this env's grader that a finished episode can
    #: show (:class:`~gym_llm.envs.grading.HackSignal`): monitoring logs the
    #: share of each env's episodes showing each (``hacks/<env_id>/<name>``)
    #: and alarms on them (:mod:`gym_llm.runtime.monitoring`).
    hack_signals: ClassVar[tuple[HackSignal, ...]] = ()

    def __init__(
        self,
        tasks: TaskSet | Sequence[Task],
        *,
        split: str = "train",
        seed: int | None = None,
        max_turns: int = 1,
        system_prompt: str | None = None,
        render_mode: str | None = None,
    ):
        if max_turns < 1:
            raise ValueError(f"max_turns must be >= 1, got {max_turns}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"unsupported render_mode {render_mode!r}")
        self.task_set = as_task_set(tasks)
        self.split = check_split(split)
        if self.task_set.size(self.split) == 0:
            raise ValueError(f"{type(self).__name__} has no tasks in split {self.split!r}")
        self.max_turns = int(max_turns)
        self.system_prompt = system_prompt
        self.render_mode = render_mode
        self.observation_space = ChatMessages()
        self.action_space = AssistantTurn()
        self.env_id: str = type(self).__name__
        self._init_seed = seed
        self.task: Task | None = None
        self.messages: list[dict[str, Any]] = []
        self.turn = 0
        self.done = True
        self._sync_runner: asyncio.Runner | None = None

    # ------------------------------------------------------------------ hooks
    @property
    def tools(self) -> list[dict[str, Any]] | None:
        """OpenAI function schemas offered in this episode, or ``None``."""
        return None

    def initial_messages(self, task: Task) -> list[dict[str, Any]]:
        """The prompt of ``task`` as chat messages (the system prompt first)."""
        return task.messages(self.system_prompt)

    def on_reset(self, task: Task) -> dict[str, Any]:
        """Set up per-episode state for ``task`` (called first at reset, before
        :meth:`initial_messages` and the tools are read); returns extra reset info."""
        return {}

    def respond(self, message: dict[str, Any]) -> Turn:
        """React to one assistant turn (already normalised). Must not raise on
        anything the model can write. By default runs :meth:`arespond`."""
        if type(self).arespond is LLMEnv.arespond:
            raise NotImplementedError(f"{type(self).__name__} implements neither respond nor arespond")
        # one loop per env for all its sync steps: a fresh loop's set-up and
        # tear-down would cost more than a typical tool call
        if self._sync_runner is None:
            self._sync_runner = asyncio.Runner()
        return run_sync(self.arespond(message), self._sync_runner)

    def reward_formula(self) -> str | None:
        """How this env computes its reward, one line naming each reward
        component (the keys of ``info["reward_components"]``) with its weight,
        e.g. ``"0.8 * correct + 0.2 * format"``, and what scales it (attempt
        discounts, penalties); ``gym-llm describe`` shows it. ``None`` (the
        default): the env does not state it. An env states it for the kwargs
        it was made with, so it can differ between instances."""
        return None

    def close(self) -> None:
        if self._sync_runner is not None:
            self._sync_runner.close()
            self._sync_runner = None
        super().close()

    async def arespond(self, message: dict[str, Any]) -> Turn:
        """Async :meth:`respond`; by default runs it in a worker thread.
        Implement at least one of the two."""
        return await asyncio.to_thread(self.respond, message)

    async def astrict_score(self, messages: list[dict[str, Any]], reward: float) -> RewardResult:
        """Score a finished episode of the current task with a grader stricter
        than the training reward: the independent check that a rising training
        reward is real (:mod:`gym_llm.runtime.monitoring`; ``gap/<env_id>`` is the
        training reward minus this score).

        Called on an env reset to the episode's task (same seed and options),
        with ``messages``, the episode's whole conversation (prompt, assistant
        turns, environment messages), and ``reward``, its training reward.
        Must not raise on anything the model wrote; an env failure is
        ``info["reward_error"]`` (the score is then not used). Score on the
        same scale as the training reward (an answer both graders accept
        scores the same), so the gap is 0 for an honest policy. Sandboxed work
        is awaited, never blocking the loop.

        Default: ``reward`` itself (``info["strict_grader"] = "training
        reward"``), so an env with no stricter grader shows no gap."""
        return RewardResult(float(reward), {"strict": float(reward)}, {"strict_grader": "training reward"})

    def strict_score(self, messages: list[dict[str, Any]], reward: float) -> RewardResult:
        """Sync :meth:`astrict_score`."""
        if self._sync_runner is None:
            self._sync_runner = asyncio.Runner()
        return run_sync(self.astrict_score(messages, reward), self._sync_runner)

    # --------------------------------------------------------------- helpers
    @property
    def is_last_turn(self) -> bool:
        """True while the turn being answered is the last one allowed."""
        return self.turn + 1 >= self.max_turns

    @property
    def num_tasks(self) -> int:
        return self.task_set.size(self.split)

    def score(self, reward_fn: RewardFn, response: Any) -> RewardResult:
        """Call a reward function on the current task; exceptions become
        ``info["reward_error"]`` with a zero score."""
        return call_reward(reward_fn, self.task, response)

    # -------------------------------------------------------------- gym API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        if seed is None and self._np_random is None:
            seed = self._init_seed
        super().reset(seed=seed)
        options = options or {}
        if "task_index" in options:
            index = int(options["task_index"])
        else:
            index = int(self.np_random.integers(self.num_tasks))
        self.task = self.task_set.get(self.split, index)
        self.turn = 0
        self.done = False
        extra = self.on_reset(self.task)
        self.messages = self.initial_messages(self.task)
        info = {
            "task_id": self.task.id,
            "task_index": index,
            "env_id": self.env_id,
            "domain": self.domain,
            "split": self.split,
            "difficulty": self.task.difficulty,
            "max_turns": self.max_turns,
            "tools": copy.deepcopy(self.tools),
            **extra,
        }
        return copy.deepcopy(self.messages), info

    def step(self, action: Any) -> tuple[list[dict[str, Any]], float, bool, bool, dict[str, Any]]:
        message, problem = self._begin(action)
        if message is None:
            return self._after_end()
        try:
            turn = self.respond(message)
        except Exception as e:  # an env bug must not kill the trainer
            turn = Turn(reward=RewardResult(0.0, info={"reward_error": f"{type(e).__name__}: {e}"}), done=True)
        return self._finish(turn, problem)

    async def areset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Async :meth:`reset` (task generation is cheap by contract)."""
        return self.reset(seed=seed, options=options)

    async def astep(self, action: Any) -> tuple[list[dict[str, Any]], float, bool, bool, dict[str, Any]]:
        """Async :meth:`step`: same contract, never blocks the event loop."""
        message, problem = self._begin(action)
        if message is None:
            return self._after_end()
        try:
            turn = await self.arespond(message)
        except Exception as e:
            turn = Turn(reward=RewardResult(0.0, info={"reward_error": f"{type(e).__name__}: {e}"}), done=True)
        return self._finish(turn, problem)

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        return "\n".join(f"[{m['role']}] {message_text(m)}" for m in self.messages)

    # ------------------------------------------------------------- internals
    def _begin(self, action: Any) -> tuple[dict[str, Any] | None, str | None]:
        if self.task is None:
            raise ResetNeeded("call reset() before step()")
        if self.done:
            return None, None
        message, problem = as_assistant_message(action, self.action_cut_keeps)
        self.messages.append(message)
        return message, problem

    def _after_end(self) -> tuple[list, float, bool, bool, dict[str, Any]]:
        return [], 0.0, True, False, {
            "reward_components": {},
            "reason": "episode already ended: call reset()",
            "turn": self.turn,
        }

    def _finish(self, turn: Turn, problem: str | None) -> tuple[list, float, bool, bool, dict[str, Any]]:
        self.turn += 1
        result = as_result(turn.reward)
        terminated = bool(turn.done)
        truncated = not terminated and self.turn >= self.max_turns
        self.done = terminated or truncated
        new_messages = [] if self.done else [_utf8_message(m) for m in turn.messages]
        self.messages.extend(new_messages)
        info: dict[str, Any] = {**turn.info, **result.info}
        info["reward_components"] = dict(result.components)
        info["turn"] = self.turn
        info["task_id"] = self.task.id if self.task else None
        if problem:
            # the action's own problem is the root cause: it leads, the env's
            # reason (what it made of the repaired action) follows
            info["action_problem"] = problem
            info["reason"] = f"{problem}; {info['reason']}" if info.get("reason") else problem
        if truncated:
            info.setdefault("truncated_reason", f"max_turns={self.max_turns} reached")
        reward = float(result.score)
        if reward != reward:  # NaN from a broken verifier
            reward = 0.0
            info.setdefault("reward_error", "reward was NaN")
        if self.done and reward <= 0.0 and "reason" not in info:
            # every zero must be explainable; envs give a better reason when they can
            parts = ", ".join(f"{k}={v:g}" for k, v in result.components.items())
            info["reason"] = f"no credit ({parts})" if parts else "no credit"
        return copy.deepcopy(new_messages), reward, terminated, truncated, copy.deepcopy(info)


class SingleTurnEnv(LLMEnv):
    """Answer-and-score: the assistant answers, ``reward_fn(task, text)`` scores.

    With ``max_turns > 1`` a wrong answer (score below ``success_threshold``)
    gets ``feedback`` as a user message and another attempt; the reward of
    attempt ``k`` (0-based) is ``score * attempt_discount ** k``.

    >>> env = SingleTurnEnv(tasks, reward_fn=lambda task, response: float(task.answer in response))
    """

    def __init__(
        self,
        tasks: TaskSet | Sequence[Task],
        reward_fn: RewardFn,
        *,
        split: str = "train",
        seed: int | None = None,
        max_turns: int = 1,
        system_prompt: str | None = None,
        feedback: str = "Incorrect, try again.",
        attempt_discount: float = 1.0,
        success_threshold: float = 1.0,
        render_mode: str | None = None,
    ):
        super().__init__(
            tasks, split=split, seed=seed, max_turns=max_turns,
            system_prompt=system_prompt, render_mode=render_mode,
        )
        self.reward_fn = reward_fn
        self.feedback_text = feedback
        self.attempt_discount = float(attempt_discount)
        self.success_threshold = float(success_threshold)

    def feedback(self, result: RewardResult) -> str:
        """The user message sent after a failed attempt."""
        return self.feedback_text

    def score_formula(self) -> str | None:
        """One attempt's score as :meth:`reward_formula` states it, before the
        attempt discount: a :class:`~gym_llm.envs.rewards.WeightedSum`
        ``reward_fn`` states its own; ``None`` otherwise (subclasses override)."""
        return self.reward_fn.formula if isinstance(self.reward_fn, WeightedSum) else None

    def reward_formula(self) -> str | None:
        """:meth:`score_formula`, times ``attempt_discount ** k`` for attempt k
        when attempts are discounted."""
        score = self.score_formula()
        if score is None or self.max_turns == 1 or self.attempt_discount == 1.0:
            return score
        return attempt_discounted(score, self.attempt_discount)

    def respond(self, message: dict[str, Any]) -> Turn:
        return self._judge(self.score(self.reward_fn, message_text(message)))

    def _judge(self, result: RewardResult) -> Turn:
        """Turn a scored attempt into the step's outcome (shared by subclasses
        whose scoring is async)."""
        solved = result.score >= self.success_threshold
        if result.error or solved or self.is_last_turn:
            if self.turn > 0 and self.attempt_discount != 1.0:
                result.score *= self.attempt_discount**self.turn
            result.info.setdefault("attempts", self.turn + 1)
            return Turn(reward=result, done=True)
        return Turn(
            messages=[{"role": "user", "content": self.feedback(result)}],
            reward=RewardResult(0.0, dict(result.components), dict(result.info)),
        )
