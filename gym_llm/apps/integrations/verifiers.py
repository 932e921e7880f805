"""gym-llm environments as verifiers (prime-rl) environments (tested with
verifiers 0.4.0, its ``verifiers.v1`` API).

This module is a verifiers taskset package: its ``__all__`` exports one
``Taskset``, one ``Env`` and one ``Harness`` subclass, so verifiers' own
entry points load it by its taskset id :data:`TASKSET_ID`
(``gym_llm_verifiers``, the top-level module that re-exports this one)::

    vf-eval gym_llm_verifiers --env.taskset.env-id math/Arithmetic-v0 \\
        --env.taskset.n 20 -m MODEL --client.base-url http://127.0.0.1:8000/v1

and :func:`load_environment` builds the same environment in Python.

* :class:`GymLLMTaskset` yields ``n`` tasks of one env id; task ``i`` is the
  task ``env.reset(seed=seed + i)`` picks, its data the prompt messages plus
  the task identity (env id, split, seed, task index, env kwargs).
* :class:`GymLLMEnv` plays each episode with the gym-llm env as the
  conversation's user (as verifiers' TextArena env plays its game engine):
  the model answers the prompt, each answer is one ``env.step``, the env's new
  messages (feedback, tool results) are the next user turn, until the env
  ends the episode. The episode's return (the sum of its step rewards, i.e.
  the final step's reward for every bundled env) is recorded as the trace's
  ``gym_llm`` reward; its components as ``gym_llm/<name>`` metrics; the
  env's ``reason`` and ``reward_error`` in ``trace.info``.
* :class:`GymLLMChatHarness`, the taskset's default harness, runs in-process:
  one chat completion per segment through verifiers' interception endpoint
  (so the trace records every model call), no tools offered: tool envs teach
  ``<tool_call>`` JSON blocks in their system prompt and read them from the
  text, exactly as in our own rollouts.

Unknown env ids raise at once (:class:`~gym_llm.envs.registry.UnknownEnvError`,
naming close matches); so do invalid taskset values (pydantic's error names
the field).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from typing import Any, Literal

import verifiers.v1 as vf
from pydantic import Field
from verifiers.v1.dialects.chat import message_to_wire
from verifiers.v1.runtimes import ProgramResult

from gym_llm.apps.integrations._tasks import (
    Score,
    TaskRef,
    _as_score,
    aon_row_task,
    canonical_kwargs,
    completion_turn,
    task_rows,
)
from gym_llm.envs.core import LLMEnv
from gym_llm.envs.registry import spec

__all__ = [
    "load_environment", "GymLLMTasksetConfig", "GymLLMData", "GymLLMTask", "GymLLMTaskset",
    "GymLLMEnvConfig", "GymLLMEnv", "GymLLMChatHarnessConfig", "GymLLMChatHarness", "REWARD_NAME",
    "TASKSET_ID", "play",
]

#: The trace reward an episode's return is recorded under.
REWARD_NAME = "gym_llm"
#: verifiers' taskset id of this module: the top-level :mod:`gym_llm_verifiers`
#: re-exports it (verifiers imports tasksets by top-level module name only).
TASKSET_ID = "gym_llm_verifiers"


class GymLLMTasksetConfig(vf.TasksetConfig):
    """Which tasks: ``n`` tasks of ``env_id`` on ``split`` from ``seed``
    (``--env.taskset.env-id`` etc. on verifiers' CLI), the env made with
    ``env_kwargs``."""

    env_id: str = ""
    split: Literal["train", "heldout"] = "train"
    n: int = Field(64, ge=0)
    seed: int = 0
    env_kwargs: dict[str, Any] = Field(default_factory=dict)


class GymLLMData(vf.TaskData):
    """A task's wire data: the prompt (verifiers' ``prompt``) and the task
    identity columns every gym-llm adapter reads."""

    env_id: str
    split: str = "train"
    seed: int
    task_index: int
    env_kwargs: str = "{}"


class GymLLMTask(vf.Task[GymLLMData, vf.State, vf.TaskConfig]):
    """One gym-llm task; scored by :class:`GymLLMEnv` (the env is the judge)."""

    @property
    def ref(self) -> TaskRef:
        """The task identity in :class:`~gym_llm.apps.integrations.TaskRef` form."""
        return TaskRef.from_row(self.data.model_dump())


class GymLLMTaskset(vf.Taskset[GymLLMTask, GymLLMTasksetConfig]):
    """``n`` tasks of one gym-llm env id (see :class:`GymLLMTasksetConfig`)."""

    def __init__(self, config: GymLLMTasksetConfig) -> None:
        if config.system_prompt is not None:
            # the env plays the episode on its own prompt: the model must see that one
            raise ValueError("gym_llm taskset: --env.taskset.system-prompt is not supported (the gym-llm env "
                             "owns its prompt); pass the env's own system_prompt kwarg in --env.taskset.env-kwargs")
        super().__init__(config)
        if not config.env_id:
            raise ValueError("gym_llm taskset needs an env id: --env.taskset.env-id ENV_ID")
        spec(config.env_id)  # an unknown id fails here, naming close matches

    def load(self) -> Iterator[GymLLMTask]:
        c = self.config
        for row in task_rows(c.env_id, c.split, c.n, c.seed, **c.env_kwargs):
            data = GymLLMData(id=row["task_id"], name=f"{c.env_id}#{row['seed']}", prompt=row["prompt"],
                              env_id=row["env_id"], split=row["split"], seed=row["seed"],
                              task_index=row["task_index"], env_kwargs=row["env_kwargs"])
            yield GymLLMTask(data, c.task)


class GymLLMChatHarnessConfig(vf.HarnessConfig):
    """No knobs beyond verifiers' own (sampling comes from the run's config)."""


class GymLLMChatHarness(vf.Harness[GymLLMChatHarnessConfig]):
    """One chat completion per segment, in-process, through the interception
    endpoint (verifiers' contract: every model call goes through it)."""

    APPENDS_SYSTEM_PROMPT = True
    SUPPORTS_RESUME = True
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def launch(self, ctx: vf.ModelContext, trace: vf.Trace, runtime: vf.Runtime, endpoint: str,
                     secret: str, mcp_urls: dict[str, str], data: vf.TaskData) -> ProgramResult:
        from openai import AsyncOpenAI

        system, prompt = self.resolve_prompt(data)
        messages = [{"role": "system", "content": system}] if system else []
        if isinstance(prompt, str):
            messages.append({"role": "user", "content": prompt})
        else:
            messages += [message_to_wire(m) for m in prompt or []]
        async with AsyncOpenAI(base_url=endpoint, api_key=secret) as client:
            await client.chat.completions.create(model=ctx.model, messages=messages)
        return ProgramResult(exit_code=0, stdout="", stderr="")


class GymLLMEnvConfig(vf.EnvConfig):
    """The one seat: ``agent``, the policy under evaluation or training. Its
    runtime defaults to a local subprocess: the in-process harness runs no
    program, so a remote sandbox would be provisioned for nothing."""

    agent: vf.AgentConfig = vf.AgentConfig(runtime=vf.SubprocessConfig())


Reply = Callable[[list[dict[str, Any]] | None], Awaitable[dict[str, Any] | None]]


async def play(ref: TaskRef, reply: Reply) -> dict[str, Any]:
    """Play one episode of ``ref``'s task: ``reply(new_messages)`` gives the
    assistant's next message (``None`` for the opening turn; it returns
    ``None`` when the conversation was ended on verifiers' side), each one
    ``env.astep``. Returns ``reward`` (the return), the last step's
    ``components``, ``reason``, ``reward_error``, ``turns`` and ``done``."""
    outcome: dict[str, Any] = {"reward": 0.0, "components": {}, "reason": None, "reward_error": None,
                               "turns": 0, "done": False}

    async def episode(env: LLMEnv, _: dict[str, Any]) -> dict[str, Any]:
        new: list[dict[str, Any]] | None = None
        while True:
            message = await reply(new)
            if message is None:
                outcome["reason"] = "the conversation ended before the env ended the episode"
                return outcome
            score = _as_score(await env.astep(completion_turn(message)))
            outcome["reward"] += score.reward
            outcome.update(components=score.components, reason=score.reason, reward_error=score.reward_error,
                           turns=outcome["turns"] + 1)
            if score.terminated or score.truncated:
                outcome["done"] = True
                return outcome
            new = score.messages

    def bad_task(s: Score) -> dict[str, Any]:  # the adapters' one rule: no raise, the lowest reward
        outcome.update(reason=s.reason, reward_error=s.reward_error, done=True)
        return outcome

    return await aon_row_task(ref, episode, bad_task)


def _assistant_message(segment: Any) -> dict[str, Any] | None:
    """The segment's final assistant message as a chat dict (its text as
    sampled, not stripped), or ``None`` for a terminated segment."""
    if segment.terminated:
        return None
    for message in reversed(segment.messages):
        if isinstance(message, vf.AssistantMessage):
            return {"role": "assistant", "content": message.content or ""}
    return {"role": "assistant", "content": ""}


class GymLLMEnv(vf.Env[GymLLMEnvConfig]):
    """Plays each task with the gym-llm env as the user (see the module doc)."""

    async def run(self, task: GymLLMTask, agents: vf.Agents) -> None:
        async with agents.agent.interaction(task) as interaction:
            async def reply(new: list[dict[str, Any]] | None) -> dict[str, Any] | None:
                segment = await (interaction.turn() if new is None else interaction.turn(new))
                return _assistant_message(segment)

            outcome = await play(task.ref, reply)
        trace = interaction.trace
        trace.record_reward(REWARD_NAME, outcome["reward"], 1.0)
        for name, value in outcome["components"].items():
            trace.record_metric(f"{REWARD_NAME}/{name}", value)
        trace.record_metric(f"{REWARD_NAME}/turns", outcome["turns"])
        trace.info["gym_llm"] = {k: outcome[k] for k in ("reason", "reward_error", "done")}


def load_environment(env_id: str, *, split: str = "train", n: int = 64, seed: int = 0,
                     model: str | None = None, **env_kwargs: Any) -> GymLLMEnv:
    """A verifiers environment over ``n`` tasks of ``env_id`` (made with
    ``env_kwargs``), the same one ``vf-eval gym_llm_verifiers`` builds. ``model`` sets the agent's model id. Unknown ids raise
    :class:`~gym_llm.envs.registry.UnknownEnvError`."""
    spec(env_id)
    canonical_kwargs(env_kwargs)  # kwargs travel in task data: non-JSON ones fail here
    taskset = GymLLMTasksetConfig(id=TASKSET_ID, env_id=env_id, split=split, n=n, seed=seed, env_kwargs=env_kwargs)
    agent = GymLLMEnvConfig().agent.model_copy(update={"model": model})
    config = vf.resolve_env_config({"taskset": taskset.model_dump(), "agent": agent.model_dump()})
    return vf.load_environment(config)
