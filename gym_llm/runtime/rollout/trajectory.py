"""The :class:`Trajectory` record and its JSONL format (one object per episode).

The JSON keys are exactly the dataclass fields, so a trajectory written by any
version of the rollout engine is read back by :func:`read_jsonl` with unknown
keys kept in ``info`` rather than dropped.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from gym_llm.envs.jsonio import dumps_utf8, finite

__all__ = ["Trajectory", "write_jsonl", "read_jsonl", "append_jsonl"]


@dataclass
class Trajectory:
    """One episode of a policy in an environment, token-exact.

    Identity: ``env_id``, ``task_id``, ``group_id`` (the episodes of one GRPO
    group share it: the same task sampled ``group_size`` times),
    ``sample_index`` (position in the group), ``split``, ``difficulty``.

    Conversation: ``messages`` is the whole chat (prompt, assistant turns as
    the policy wrote them, environment messages).

    Tokens (empty for message-level policies such as a remote server that
    returns no token ids): ``prompt_token_ids`` is the chat template's
    rendering of the prompt with the generation prompt; ``response_token_ids``
    is every token after it, policy and environment turns alike;
    ``loss_mask[i]`` is 1 where ``response_token_ids[i]`` was sampled by the
    policy and 0 for environment/template tokens; ``logprobs`` has one entry
    per masked-in token (the sampling distribution's log-probability of that
    token), in order; ``turn_spans`` gives ``[start, end)`` of each policy
    turn in ``response_token_ids``.

    Outcome: ``turn_rewards`` (one per environment step), ``reward`` (their
    sum), ``reward_components`` (the named parts; a later step's value for a
    name replaces an earlier one), ``num_turns`` (policy turns),
    ``terminated`` / ``truncated`` (Gymnasium meaning; ``truncated_reason``
    says which limit: the env's ``max_turns``, the rollout's ``max_turns`` or
    ``max_tokens``).

    Failures: ``error`` is set when the episode could not run to its end (the
    environment or the policy raised, a step timed out): never train on it.
    ``reward_error`` is set when the environment failed to score (the
    environment's own ``info["reward_error"]``): the reward must not be
    trusted either. :attr:`ok` is true when neither is set.

    Monitoring (:mod:`gym_llm.runtime.monitoring`): ``hack_signals``, the names of
    the hack signals the episode shows (empty until annotated);
    ``strict_reward``, the env's strict grader's score of it
    (:meth:`gym_llm.LLMEnv.astrict_score`; ``None`` when not strict-graded).

    ``info``: the last environment step's info (minus ``reward_components``)
    plus ``policy_turns``, one dict per policy turn with its
    ``finish_reason`` (``"stop"``/``"length"``) and, for message-level
    policies, ``generated_tokens`` (the server's count) and, where the server
    returned them, that turn's ``token_ids`` and ``logprobs``.
    """

    env_id: str
    task_id: str
    group_id: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    prompt_token_ids: list[int] = field(default_factory=list)
    response_token_ids: list[int] = field(default_factory=list)
    loss_mask: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    turn_rewards: list[float] = field(default_factory=list)
    reward: float = 0.0
    reward_components: dict[str, float] = field(default_factory=dict)
    num_turns: int = 0
    terminated: bool = False
    truncated: bool = False
    truncated_reason: str | None = None
    error: str | None = None
    reward_error: str | None = None
    sample_index: int = 0
    split: str = "train"
    difficulty: float = 0.0
    turn_spans: list[list[int]] = field(default_factory=list)
    tools: list[dict[str, Any]] | None = None
    hack_signals: list[str] = field(default_factory=list)
    strict_reward: float | None = None
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when the episode ran to its end and its reward can be trusted."""
        return self.error is None and self.reward_error is None

    @property
    def token_ids(self) -> list[int]:
        """Prompt and response ids, concatenated."""
        return self.prompt_token_ids + self.response_token_ids

    @property
    def num_generated_tokens(self) -> int:
        """Tokens sampled by the policy (``sum(loss_mask)``)."""
        return sum(self.loss_mask)

    def check(self) -> None:
        """Raise ``ValueError`` if the token fields are inconsistent."""
        if len(self.loss_mask) != len(self.response_token_ids):
            raise ValueError(
                f"loss_mask has {len(self.loss_mask)} entries for {len(self.response_token_ids)} response tokens"
            )
        if len(self.logprobs) != sum(self.loss_mask):
            raise ValueError(f"{len(self.logprobs)} logprobs for {sum(self.loss_mask)} masked-in tokens")
        if any(m not in (0, 1) for m in self.loss_mask):
            raise ValueError("loss_mask must hold only 0 and 1")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict with exactly the dataclass fields."""
        d = dataclasses.asdict(self)
        d["reward"] = finite(d["reward"])
        d["turn_rewards"] = finite(d["turn_rewards"])
        d["strict_reward"] = finite(d["strict_reward"])
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Trajectory:
        """Inverse of :meth:`to_dict`; unknown keys go to ``info``."""
        names = {f.name for f in dataclasses.fields(cls)}
        known = {k: v for k, v in d.items() if k in names}
        extra = {k: v for k, v in d.items() if k not in names}
        traj = cls(**known)
        if extra:
            traj.info = {**traj.info, **extra}
        return traj


def _open(path: str | os.PathLike, mode: str, gz: bool | None = None) -> IO[str]:
    if str(path).endswith(".gz") if gz is None else gz:
        return gzip.open(path, mode + "t", encoding="utf-8")
    return open(path, mode, encoding="utf-8")


def write_jsonl(trajectories: Iterable[Trajectory], path: str | os.PathLike) -> int:
    """Write ``trajectories`` to ``path`` (``.gz`` compresses), one JSON object
    per line, atomically (a reader never sees a half-written file). Returns the
    number written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    n = 0
    with _open(tmp, "w", gz=path.name.endswith(".gz")) as f:
        for t in trajectories:
            f.write(dumps_utf8(t.to_dict()) + "\n")
            n += 1
    os.replace(tmp, path)
    return n


def append_jsonl(trajectories: Iterable[Trajectory], path: str | os.PathLike) -> int:
    """Append ``trajectories`` to ``path`` (for streaming writers). Returns the
    number written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with _open(path, "a") as f:
        for t in trajectories:
            f.write(dumps_utf8(t.to_dict()) + "\n")
            n += 1
    return n


def read_jsonl(path: str | os.PathLike) -> Iterator[Trajectory]:
    """Yield the trajectories of a JSONL file (blank lines skipped)."""
    with _open(path, "r") as f:
        for line in f:
            if line.strip():
                yield Trajectory.from_dict(json.loads(line))
