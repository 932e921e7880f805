"""gym-llm environments in verl (tested with verl 0.9.1).

* :func:`compute_score`, for ``custom_reward_function``:
  ``compute_score(data_source, solution_str, ground_truth, extra_info=None)``
  scores ``solution_str`` with ``env.step`` on the task ``extra_info`` names
  (``data_source`` is the env id). It returns verl's dict form,
  ``{"score", "reason", "reward_error"}`` (the same keys for every env, so a
  mixture's extra reward info lines up).
* :func:`write_parquet` / :func:`rows`: the rows verl's ``RLHFDataset``
  reads: ``data_source`` (the env id), ``prompt`` (chat messages),
  ``ability`` (the domain), ``reward_model`` (``{"style": "rule",
  "ground_truth": task id}``: the environment owns the answer, which never
  leaves it), ``extra_info`` (the task identity: ``env_id``, ``split``,
  ``seed``, ``task_index``, ``env_kwargs``, ``task_id``, ``index``) and
  ``agent_name`` (``"gym_llm"`` by default).
* ``GymLLMAgentLoop``, registered with verl as agent loop ``gym_llm``: plays
  the row's task as a whole episode (multi-turn feedback and tool envs
  alike) token-in/token-out through verl's server manager, with gym-llm's
  rollout engine: the policy's tokens are exactly what the server sampled;
  only the environment's new messages are tokenized (the chat template's
  delta), and they get ``response_mask`` 0. The episode's reward is the
  output's ``reward_score``, so verl does not re-score the decoded text.

verl is imported only by ``GymLLMAgentLoop`` (on first access); the score
and the exporter need only pyarrow.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gym_llm.apps.integrations._tasks import Score, TaskRef, score_row, task_rows
from gym_llm.envs.registry import spec

__all__ = ["compute_score", "rows", "write_parquet", "AGENT_NAME", "agent_loop_config"]  # and GymLLMAgentLoop (lazy)

#: The name the agent loop is registered under.
AGENT_NAME = "gym_llm"


def _verl_result(s: Score) -> dict[str, Any]:
    return {"score": float(s.reward), "reason": s.reason or "", "reward_error": s.reward_error or ""}


def compute_score(data_source: str, solution_str: Any, ground_truth: Any = None,
                  extra_info: Mapping[str, Any] | None = None, **_: Any) -> dict[str, Any]:
    """verl's ``custom_reward_function``: ``env.step``'s reward for
    ``solution_str`` on the task ``extra_info`` names, as
    ``{"score", "reason", "reward_error"}``. ``data_source`` is the env id;
    ``ground_truth`` is not read (the env scores against its own task).
    Missing task fields, an unknown env id or a task the env does not have
    (a ``task_index`` out of range, ``env_kwargs`` it rejects) score 0.0 with
    ``reward_error`` naming them, never raising; extra keyword arguments verl
    may pass are ignored."""
    return _verl_result(score_row(dict(extra_info or {}), solution_str, env_id=data_source))


def rows(env_id: str, split: str = "train", n: int = 256, seed: int = 0, *,
         agent_name: str = AGENT_NAME, **env_kwargs: Any) -> list[dict[str, Any]]:
    """``n`` verl dataset rows of ``env_id`` (see the module doc for the
    columns); row ``i`` is the task ``env.reset(seed=seed + i)`` gives."""
    domain = spec(env_id).domain
    out = []
    for i, row in enumerate(task_rows(env_id, split, n, seed, **env_kwargs)):
        identity = {k: row[k] for k in ("env_id", "split", "seed", "task_index", "env_kwargs")}
        out.append({
            "data_source": env_id,
            "prompt": row["prompt"],
            "ability": domain,
            "reward_model": {"style": "rule", "ground_truth": row["task_id"]},
            "extra_info": {**identity, "task_id": row["task_id"], "index": i},
            "agent_name": agent_name,
        })
    return out


def write_parquet(path: str | Path, env_id: str, split: str = "train", n: int = 256, seed: int = 0, *,
                  agent_name: str = AGENT_NAME, **env_kwargs: Any) -> Path:
    """Write :func:`rows` to the Parquet file ``path`` (for verl's
    ``data.train_files``/``data.val_files``); returns the path."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows(env_id, split, n, seed, agent_name=agent_name, **env_kwargs)), path)
    return path


def agent_loop_config(path: str | Path) -> Path:
    """Write the agent-loop config file that makes verl's workers (Ray actors
    that never import this module on their own) find ``gym_llm``: pass it as
    ``actor_rollout_ref.rollout.agent.agent_loop_config_path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"- name: {AGENT_NAME}\n  _target_: {__name__}.GymLLMAgentLoop\n")
    return path


# --------------------------------------------------------------- agent loop

class _ServerPolicy:
    """A gym-llm token-level :class:`~gym_llm.runtime.policies.Policy` over verl's
    server manager (``await generate(request_id, prompt_ids=...,
    sampling_params=...)`` -> ``TokenOutput``). One request id per episode
    keeps verl's sticky session (prefix cache) on one server."""

    def __init__(self, server_manager: Any, tokenizer: Any, request_id: str,
                 sampling_params: Mapping[str, Any]):
        from gym_llm.runtime.policies.base import stop_token_ids

        self.server_manager = server_manager
        self.tokenizer = tokenizer
        self.request_id = request_id
        self.sampling_params = dict(sampling_params)
        self.stop_ids = frozenset(stop_token_ids(tokenizer))

    async def agenerate(self, request: Any) -> Any:
        from gym_llm.runtime.policies.base import Generation

        params = {**self.sampling_params, "max_tokens": request.params.max_new_tokens, "logprobs": True}
        out = await self.server_manager.generate(request_id=self.request_id, prompt_ids=request.prompt_token_ids,
                                                 sampling_params=params)
        ids = [int(t) for t in out.token_ids]
        logprobs = [float(x) for x in out.log_probs] if out.log_probs else None
        if logprobs is None:
            raise RuntimeError("verl's server returned no log-probs (set actor_rollout_ref.rollout."
                               "calculate_log_probs=True): token-exact training needs them")
        finish = "stop" if ids and ids[-1] in self.stop_ids else "length"
        return Generation(ids, logprobs, self.tokenizer.decode(ids, skip_special_tokens=True), finish)

    def close(self) -> None:
        pass


_AGENT_LOOP: type | None = None


def _agent_loop_class() -> type:
    """Define (once) and register the verl agent loop; imports verl."""
    global _AGENT_LOOP
    if _AGENT_LOOP is not None:
        return _AGENT_LOOP
    from uuid import uuid4

    from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopOutput, register

    from gym_llm.runtime.mixture import EpisodeSpec
    from gym_llm.runtime.policies.base import SamplingParams
    from gym_llm.runtime.rollout import acollect

    class GymLLMAgentLoop(AgentLoopBase):
        """verl agent loop ``gym_llm``: one gym-llm episode per sample, on the
        task the row's ``extra_info`` names (``data_source`` is the env id).
        Each policy turn is at most ``rollout.response_length`` tokens, the
        whole sequence at most ``prompt_length + response_length``; the
        response is cut to ``response_length`` tokens as verl requires."""

        def __init__(self, *args: Any, **kwargs: Any):
            super().__init__(*args, **kwargs)
            self.prompt_length = int(self.rollout_config.prompt_length)
            self.response_length = int(self.rollout_config.response_length)

        async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> Any:
            ref = TaskRef.from_row(dict(kwargs.get("extra_info") or {}), env_id=kwargs.get("data_source"))
            sp = dict(sampling_params)
            top_k = int(sp.get("top_k", -1) or -1)
            params = SamplingParams(temperature=float(sp.get("temperature", 1.0)),
                                    top_p=float(sp.get("top_p", 1.0)), top_k=max(0, top_k),
                                    max_new_tokens=self.response_length)
            policy = _ServerPolicy(self.server_manager, self.tokenizer, uuid4().hex, sp)
            (t,) = await acollect(policy, ref.env_id, episodes=[EpisodeSpec(ref)],
                                  sampling=params, max_tokens=self.prompt_length + self.response_length,
                                  template_kwargs=dict(self.apply_chat_template_kwargs or {}))
            logprobs = iter(t.logprobs)  # one per policy token; environment tokens get 0.0
            response_logprobs = [next(logprobs) if m else 0.0 for m in t.loss_mask]
            n = self.response_length
            error = t.error or t.reward_error
            return AgentLoopOutput(
                prompt_ids=list(t.prompt_token_ids),
                response_ids=list(t.response_token_ids)[:n],
                response_mask=list(t.loss_mask)[:n],
                response_logprobs=response_logprobs[:n],
                reward_score=0.0 if t.error else float(t.reward),
                num_turns=1 + 2 * t.num_turns,  # verl counts messages: the prompt, then each turn and its reply
                metrics={},
                extra_fields={"turn_scores": list(t.turn_rewards), "tool_rewards": [],
                              "reward_components": dict(t.reward_components),
                              "reason": t.info.get("reason") or t.truncated_reason or "",
                              "reward_error": error or ""},
            )

    GymLLMAgentLoop.__module__ = __name__
    GymLLMAgentLoop.__qualname__ = "GymLLMAgentLoop"
    _AGENT_LOOP = register(AGENT_NAME)(GymLLMAgentLoop)
    return _AGENT_LOOP


def __getattr__(name: str) -> Any:
    # GymLLMAgentLoop subclasses verl's AgentLoopBase: built (and registered)
    # on first access, so the rest of this module works without verl
    if name == "GymLLMAgentLoop":
        return _agent_loop_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
