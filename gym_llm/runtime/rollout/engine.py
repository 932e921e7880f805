"""The rollout engine: drives a policy through vectorised environments and
returns token-exact :class:`~gym_llm.runtime.rollout.Trajectory` records.

Every episode is its own coroutine holding one slot of the vector env. It
asks the policy for a turn with ``await policy.agenerate(...)`` the moment
its environment is ready, so requests from episodes at different turns reach
the policy together and the policy batches whatever is pending; nothing
waits for the slowest environment. Episodes queue for free slots.

Groups: ``num_groups`` tasks, each sampled ``group_size`` times, planned by
:meth:`gym_llm.runtime.mixture.Mixture.plan_groups`: the groups' environments are
allocated from the mixture with low variance and their reset seeds drawn,
both from ``step_rng(seed)``; a group's members reset with its seed, which
gives the same task (the environment determinism contract). The group id is
``"{seed}-{group index}"``; pass a different ``seed`` per training step.
"""

from __future__ import annotations

import asyncio
import time
import zlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from gym_llm_sandbox.aio import run_sync

from gym_llm.runtime.chat import ChatFormat
from gym_llm.runtime.mixture import EpisodeSpec, Mixture
from gym_llm.runtime.policies.base import Generation, GenerationRequest, Policy, SamplingParams
from gym_llm.runtime.rollout.trajectory import Trajectory
from gym_llm.runtime.vector import VectorLLMEnv, make_vec

__all__ = ["EpisodeSpec", "RolloutStats", "plan_groups", "collect", "acollect"]


@dataclass
class RolloutStats:
    """What a :func:`collect` call did. Timings live here, never in a
    trajectory's env info."""

    episodes: int = 0
    failed: int = 0
    generated_tokens: int = 0
    policy_calls: int = 0
    wall_time_s: float = 0.0
    env_time_s: float = 0.0
    policy_time_s: float = 0.0

    @property
    def tokens_per_s(self) -> float:
        return self.generated_tokens / self.wall_time_s if self.wall_time_s else 0.0


def plan_groups(
    mixture: str | Sequence[str] | Mapping[str, float] | Mixture, num_groups: int, group_size: int,
    seed: int = 0, *, split: str = "train", kwargs: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[EpisodeSpec]:
    """``num_groups * group_size`` specs, group-major, with group ids
    ``"{seed}-{g}"`` (:meth:`Mixture.plan_groups` with ``step_rng(seed)``;
    ``split`` and the entries' make ``kwargs`` as there)."""
    return Mixture.of(mixture).plan_groups(num_groups, group_size, seed=seed, group_prefix=f"{seed}-",
                                           split=split, kwargs=kwargs)


def _turn_seed(seed: int, spec: EpisodeSpec, turn: int) -> int:
    """A per-request sampling seed: reproducible, yet different for each
    member of a group and each turn (one seed for all would make a group's
    samples identical)."""
    return zlib.crc32(f"{seed}|{spec.group_id}|{spec.sample_index}|{turn}".encode()) & 0x7FFFFFFF


class _Episode:
    """Mutable state of one running episode."""

    def __init__(self, spec: EpisodeSpec):
        self.spec = spec
        self.traj = Trajectory(env_id=spec.env_id, task_id="", group_id=spec.group_id,
                               sample_index=spec.sample_index)
        self.generated_stop: str | None = None
        self.policy_turns: list[dict[str, Any]] = []


class _Runner:
    def __init__(self, policy: Policy, vec: VectorLLMEnv, sampling: SamplingParams,
                 max_turns: int | None, max_tokens: int | None, env_timeout_s: float | None,
                 template_kwargs: dict[str, Any] | None, on_trajectory: Callable[[Trajectory], Any] | None):
        self.policy, self.vec, self.sampling = policy, vec, sampling
        self.max_turns, self.max_tokens = max_turns, max_tokens
        self.env_timeout_s = env_timeout_s
        self.on_trajectory = on_trajectory
        tok = getattr(policy, "tokenizer", None)
        self.fmt = ChatFormat(tok, template_kwargs) if tok is not None else None
        self.stats = RolloutStats()

    async def _env(self, aw: Awaitable[Any]) -> Any:
        t0 = time.perf_counter()
        try:
            if self.env_timeout_s is None:
                return await aw
            return await asyncio.wait_for(aw, self.env_timeout_s)
        finally:
            self.stats.env_time_s += time.perf_counter() - t0

    async def run(self, specs: Sequence[EpisodeSpec]) -> list[Trajectory]:
        free: asyncio.Queue[int] = asyncio.Queue()
        for i in range(self.vec.num_envs):
            free.put_nowait(i)

        async def one(spec: EpisodeSpec) -> Trajectory:
            slot = await free.get()
            try:
                traj = await self.episode(slot, spec)
            finally:
                self.vec.release(slot)
                free.put_nowait(slot)
            if self.on_trajectory is not None:
                result = self.on_trajectory(traj)
                if asyncio.iscoroutine(result):
                    await result
            return traj

        t0 = time.perf_counter()
        out = list(await asyncio.gather(*(one(s) for s in specs)))
        self.stats.wall_time_s += time.perf_counter() - t0
        return out

    async def episode(self, slot: int, spec: EpisodeSpec) -> Trajectory:
        ep = _Episode(spec)
        t = ep.traj
        try:
            await self._play(slot, ep)
        except Exception as e:  # never lose the episode: mark it and move on
            t.error = f"{type(e).__name__}: {e}"
            self.vec.discard(slot)
        t.info["policy_turns"] = ep.policy_turns
        self.stats.episodes += 1
        self.stats.failed += t.error is not None
        self.stats.generated_tokens += t.num_generated_tokens if self.fmt else 0
        t.reward = float(sum(t.turn_rewards))
        return t

    async def _play(self, slot: int, ep: _Episode) -> None:
        t, spec, fmt = ep.traj, ep.spec, self.fmt
        obs, info = await self._env(self.vec.areset_at(slot, task=spec.task))
        t.task_id = str(info.get("task_id", ""))
        t.split = info.get("split", self.vec.split)
        t.difficulty = float(info.get("difficulty") or 0.0)
        t.tools = info.get("tools")
        t.messages = list(obs)
        if fmt is not None:
            t.prompt_token_ids = fmt.prompt_ids(t.messages, t.tools)
        while True:
            if self.max_turns is not None and t.num_turns >= self.max_turns:
                t.truncated, t.truncated_reason = True, f"rollout max_turns={self.max_turns} reached"
                break
            params = self.sampling
            if fmt is not None and self.max_tokens is not None:
                room = self.max_tokens - len(t.prompt_token_ids) - len(t.response_token_ids)
                if room <= 0:
                    t.truncated, t.truncated_reason = True, f"max_tokens={self.max_tokens} reached"
                    break
                params = params.with_max_new_tokens(min(params.max_new_tokens, room))
            if params.seed is not None:
                params = replace(params, seed=_turn_seed(params.seed, spec, t.num_turns))
            gen = await self._generate(t, params)
            message = self._take_turn(ep, gen)
            obs, reward, terminated, truncated, info = await self._env(self.vec.astep_at(slot, message))
            t.turn_rewards.append(float(reward))
            t.reward_components.update(info.get("reward_components") or {})
            if info.get("reward_error"):
                t.reward_error = str(info["reward_error"])
            t.info = {k: v for k, v in info.items() if k != "reward_components"}
            if terminated or truncated:
                t.terminated, t.truncated = bool(terminated), bool(truncated)
                if truncated:
                    t.truncated_reason = info.get("truncated_reason", "environment truncated")
                if fmt is not None:
                    self._append(t, fmt.closing_ids(t.messages, t.tools, ep.generated_stop), 0)
                break
            if fmt is not None:
                env_ids = fmt.env_turn_ids(t.messages, list(obs), t.tools, ep.generated_stop)
                if self.max_tokens is not None and (
                        len(t.prompt_token_ids) + len(t.response_token_ids) + len(env_ids) >= self.max_tokens):
                    # No room to answer: stop here rather than append tokens no turn follows.
                    t.messages.extend(obs)
                    t.truncated, t.truncated_reason = True, f"max_tokens={self.max_tokens} reached"
                    t.info["dropped_env_tokens"] = len(env_ids)
                    break
                self._append(t, env_ids, 0)
            t.messages.extend(obs)

    async def _generate(self, t: Trajectory, params: SamplingParams) -> Generation:
        request = GenerationRequest(
            prompt_token_ids=(t.prompt_token_ids + t.response_token_ids) if self.fmt else None,
            messages=[dict(m) for m in t.messages], tools=t.tools, params=params,
        )
        t0 = time.perf_counter()
        try:
            return await self.policy.agenerate(request)
        finally:
            self.stats.policy_calls += 1
            self.stats.policy_time_s += time.perf_counter() - t0

    def _take_turn(self, ep: _Episode, gen: Generation) -> dict[str, Any]:
        """Record a generated turn; return the assistant message for the env."""
        t, fmt = ep.traj, self.fmt
        t.num_turns += 1
        turn: dict[str, Any] = {"finish_reason": gen.finish_reason}
        ep.policy_turns.append(turn)
        if fmt is None:
            message = dict(gen.message) if gen.message else {"role": "assistant", "content": gen.text}
            # a server's own count (OpenAIPolicy: usage.completion_tokens): no loss mask to sum here
            turn["generated_tokens"] = int(gen.info.get("completion_tokens", len(gen.token_ids)))
            self.stats.generated_tokens += turn["generated_tokens"]
            if gen.token_ids:  # a server's own ids: kept for inspection, not token-exact across turns
                turn["token_ids"] = list(gen.token_ids)
            if gen.logprobs is not None:
                turn["logprobs"] = list(gen.logprobs)
            t.messages.append(message)
            return message
        ids = list(gen.token_ids)
        if gen.logprobs is None or len(gen.logprobs) != len(ids):
            raise RuntimeError(f"policy returned {len(ids)} tokens with "
                               f"{None if gen.logprobs is None else len(gen.logprobs)} log-probs")
        message = fmt.assistant_message(ids, gen.finish_reason, t.messages, t.tools)
        ep.generated_stop = fmt.stop_text(ids, gen.finish_reason)
        start = len(t.response_token_ids)
        self._append(t, ids, 1)
        t.logprobs.extend(float(x) for x in gen.logprobs)
        t.turn_spans.append([start, len(t.response_token_ids)])
        t.messages.append(message)
        return message

    @staticmethod
    def _append(t: Trajectory, ids: list[int], mask: int) -> None:
        t.response_token_ids.extend(ids)
        t.loss_mask.extend([mask] * len(ids))


async def acollect(
    policy: Policy,
    envs: VectorLLMEnv | str | Sequence[str] | Mapping[str, float],
    *,
    num_groups: int | None = None,
    group_size: int = 1,
    episodes: Sequence[EpisodeSpec] | None = None,
    sampling: SamplingParams | None = None,
    seed: int = 0,
    num_envs: int | None = None,
    split: str | None = None,
    env_kwargs: Mapping[str, Any] | None = None,
    max_turns: int | None = None,
    max_tokens: int | None = None,
    env_timeout_s: float | None = None,
    template_kwargs: dict[str, Any] | None = None,
    on_trajectory: Callable[[Trajectory], Any] | None = None,
    stats: RolloutStats | None = None,
) -> list[Trajectory]:
    """Run episodes and return their trajectories, in plan order (group-major).

    ``envs``: a :class:`~gym_llm.runtime.vector.VectorLLMEnv` (its slots bound the
    number of concurrent episodes) or ids/mixture for :func:`gym_llm.make_vec`
    (``num_envs`` slots, default: every episode at once; ``seed``, ``split``
    (default ``"train"``) and ``env_kwargs`` go to it). What to run:
    ``num_groups`` groups of ``group_size`` (see :func:`plan_groups`: the
    vector env's split and kwargs), or explicit ``episodes``, each played on
    its task as its :class:`~gym_llm.envs.taskref.TaskRef` names it (id,
    split, kwargs: passing ``split`` or ``env_kwargs`` too is a ``ValueError``).
    Limits: ``max_turns`` policy turns and ``max_tokens`` prompt + response
    tokens per trajectory (``truncated`` with ``truncated_reason`` when hit;
    a turn is cut to the remaining room), ``env_timeout_s`` per env call
    (a timeout marks the trajectory's ``error``). ``sampling.seed``, if set,
    seeds each request with a hash of (seed, group, sample, turn), so runs
    repeat on backends with per-request seeds (vLLM) while group members still
    differ. ``on_trajectory`` is called
    (or awaited) with each trajectory as soon as it finishes. ``stats``, if
    given, is filled with counters and timings.
    """
    own_vec = not isinstance(envs, VectorLLMEnv)
    if episodes is None and num_groups is None:
        raise ValueError("pass num_groups (with group_size) or episodes")
    if episodes is not None and (split is not None or env_kwargs is not None):
        raise ValueError("explicit episodes name their split and env kwargs in their TaskRef; "
                         "pass split and env_kwargs only with num_groups")
    if own_vec:
        slots = len(episodes) if episodes is not None else num_groups * group_size  # type: ignore[operator]
        vec = make_vec(envs, num_envs=num_envs or max(1, slots), seed=seed, split=split or "train",  # type: ignore[arg-type]
                       env_kwargs=env_kwargs)
    else:
        vec = envs  # type: ignore[assignment]
    if episodes is None:
        episodes = plan_groups(vec.mixture, num_groups, group_size, seed, split=vec.split,  # type: ignore[arg-type]
                               kwargs={e: vec.entry_kwargs(e) for e in vec.mixture.entries})
    episodes = list(episodes)
    runner = _Runner(policy, vec, sampling or SamplingParams(), max_turns, max_tokens,
                     env_timeout_s, template_kwargs, on_trajectory)
    try:
        return await runner.run(episodes)
    finally:
        if stats is not None:
            for k, v in vars(runner.stats).items():
                setattr(stats, k, getattr(stats, k) + v)
        if own_vec:
            vec.close()


def collect(policy: Policy, envs: Any, **kwargs: Any) -> list[Trajectory]:
    """Synchronous :func:`acollect` (same arguments)."""
    return run_sync(acollect(policy, envs, **kwargs))
