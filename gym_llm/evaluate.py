"""Held-out evaluation: environments reused as benchmarks (``gym-llm-eval``).

    gym-llm-eval                                         # tiny model, four domains, held-out split
    gym-llm-eval checkpoint=runs/2026-01-01/12-00-00     # a trained run (its latest checkpoint)
    gym-llm-eval policy=vllm model=qwen2.5-0.5b-instruct num_tasks=200 k=8
    gym-llm-eval policy=openai policy.base_url=http://localhost:8000/v1 policy.model=my-model
    gym-llm-eval -m model.path=/ckpt/a,/ckpt/b envs=math,tool   # sweep models x env sets

For every environment of the env set (``conf/envs/``), the first
``num_tasks`` tasks of the split (``task_index`` 0..n-1, the same tasks for
every model) are each sampled ``k`` times through the rollout engine
(:func:`gym_llm.rollout.acollect`, one GRPO-style group per task). A sample
is *correct* when its reward reaches ``success_threshold``; per environment
we report the mean reward, pass@1, pass@k (the unbiased estimator of Chen et
al. 2021, :func:`pass_at_k`), the mean of each reward component and a
breakdown by task difficulty.

The output directory holds ``samples.jsonl`` (one trajectory per line, the
rollout JSONL format plus ``eval_key``, ``task_index`` and ``correct``),
``results.json`` (``{env_key: {"n", "mean_reward", "pass@1", "pass@k", "k",
...}}``), ``report.md``, ``reward_by_env.png``, ``reward_by_difficulty.png``
and ``eval_config.json``. A task's ``k`` samples are appended together as
soon as they finish, so a rerun into the same directory skips every task
already in ``samples.jsonl`` and evaluates only the rest; a rerun whose
model, sampling or environment settings differ from the recorded ones is
refused rather than mixed.

Contamination guard: evaluating ``split=train`` needs
``allow_train_split=true``; when a training run directory is known
(``train_run=...``, or implied by ``checkpoint=<run dir>``) a warning names
every environment whose training split that run sampled when asked to
evaluate that split, and any evaluated task id that appears in the run's
``trajectories/``.
"""

from __future__ import annotations

import asyncio
import datetime
import json
import logging
import math
import os
import platform
import re
import sys
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .policies.base import Policy, SamplingParams, run_sync
from .registry import list_envs, make, spec
from .rollout import EpisodeSpec, RolloutStats, Trajectory, acollect
from .tasks import check_split

__all__ = [
    "pass_at_k", "EvalEnv", "env_set", "resolve_checkpoint", "SampleStore", "aggregate",
    "contamination_warnings", "evaluate", "write_report", "plot_results", "main", "slug",
    "difficulty_labels", "training_mixture", "run_config",
    "ContaminationError", "guard_split",
]

log = logging.getLogger("gym_llm.evaluate")

SAMPLES_FILE = "samples.jsonl"
RESULTS_FILE = "results.json"
REPORT_FILE = "report.md"
CONFIG_FILE = "eval_config.json"
ERRORS_FILE = "errors.jsonl"


class ContaminationError(RuntimeError):
    """Evaluating the training split without ``allow_train_split``."""


def guard_split(split: str, allow_train_split: bool) -> str:
    """The canonical split name; :class:`ContaminationError` for ``train``
    unless ``allow_train_split``."""
    split = check_split(split)
    if split == "train" and not allow_train_split:
        raise ContaminationError(
            "refusing to evaluate split=train: training tasks measure memorisation, not "
            "generalisation. Pass allow_train_split=true if that is what you want.")
    return split


# ----------------------------------------------------------------- metrics
def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased estimator of pass@k from ``n`` samples of which ``c`` are
    correct: ``1 - C(n - c, k) / C(n, k)`` (Chen et al. 2021), computed as a
    product so large ``n`` neither overflows nor loses precision.

    Raises ``ValueError`` unless ``0 <= c <= n`` and ``1 <= k <= n``.
    """
    if not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n, got n={n}, c={c}")
    if not 1 <= k <= n:
        raise ValueError(f"need 1 <= k <= n, got n={n}, k={k}")
    if n - c < k:
        return 1.0
    prod = 1.0
    for i in range(n - c + 1, n + 1):
        prod *= 1.0 - k / i
    return 1.0 - prod


def _ks(k: int) -> list[int]:
    """1, 2, 4, ... up to ``k``, and ``k`` itself: the points of the pass@j curve."""
    ks = [j for j in (2**i for i in range(k.bit_length())) if j <= k]
    return ks if k in ks else [*ks, k]


def _mean(xs: Sequence[float]) -> float:
    return float(sum(xs) / len(xs)) if xs else float("nan")


def _stderr(xs: Sequence[float]) -> float:
    if len(xs) < 2:
        return 0.0
    m = _mean(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1) / len(xs))


def _summary(groups: Mapping[str, list[dict[str, Any]]], k: int) -> dict[str, Any]:
    """Reward and pass@j over task groups (``group_id -> its samples``)."""
    task_means, p1, pk = [], [], []
    curve: dict[int, list[float]] = defaultdict(list)
    rewards: list[float] = []
    for rows in groups.values():
        n = len(rows)
        c = sum(bool(r["correct"]) for r in rows)
        rs = [float(r["reward"] or 0.0) for r in rows]
        rewards += rs
        task_means.append(_mean(rs))
        p1.append(pass_at_k(n, c, 1))
        pk.append(pass_at_k(n, c, min(k, n)))
        for j in _ks(k):
            if j <= n:
                curve[j].append(pass_at_k(n, c, j))
    return {
        "n": len(groups),
        "k": k,
        "mean_reward": _mean(rewards),
        "reward_stderr": _stderr(task_means),
        "pass@1": _mean(p1),
        "pass@k": _mean(pk),
        "pass_at": {str(j): _mean(v) for j, v in sorted(curve.items())},
    }


#: More distinct task difficulties than this are reported in bins of
#: :data:`DIFFICULTY_BIN` (datasets whose tasks each carry their own difficulty).
MAX_DIFFICULTY_LEVELS = 6
DIFFICULTY_BIN = 0.25


def difficulty_labels(values: Iterable[float]) -> dict[float, str]:
    """The ``by_difficulty`` key of each difficulty: the value itself
    (``"0.5"``) when there are at most :data:`MAX_DIFFICULTY_LEVELS` distinct
    values, else its bin (``"0.25-0.5"``; the last bin includes 1.0)."""
    distinct = sorted(set(values))
    if len(distinct) <= MAX_DIFFICULTY_LEVELS:
        return {d: f"{d:g}" for d in distinct}
    bins = round(1 / DIFFICULTY_BIN)
    out = {}
    for d in distinct:
        i = min(int(d / DIFFICULTY_BIN), bins - 1)
        out[d] = f"{i * DIFFICULTY_BIN:g}-{(i + 1) * DIFFICULTY_BIN:g}"
    return out


def _bucket_start(label: str) -> float:
    return float(label.split("-")[0])


def aggregate(samples: Iterable[dict[str, Any]], k: int) -> dict[str, dict[str, Any]]:
    """``results.json`` from sample rows (each with ``eval_key``, ``env_id``,
    ``group_id`` (one per task), ``difficulty``, ``reward``, ``correct``, ``reward_components``,
    ``reward_error``, ``num_turns``, ``truncated``, ``loss_mask``).

    Per ``eval_key`` (the environment id unless an env set names two variants
    of one id): ``n`` tasks, ``k``, ``num_samples``, ``mean_reward`` (over
    samples) and ``reward_stderr`` (standard error over task means),
    ``pass@1``, ``pass@k`` and ``pass_at`` (``{j: pass@j}`` for j = 1, 2,
    4, ... k), ``reward_components`` (mean of each named part over the samples
    that report it), ``by_difficulty`` (the same reward/pass figures per task
    difficulty, keyed by :func:`difficulty_labels`), ``mean_turns``, ``mean_generated_tokens``,
    ``truncated_fraction`` and ``reward_errors`` (samples whose environment
    failed to score; their reward is not trustworthy).
    """
    by_key: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in samples:
        by_key[row["eval_key"]].append(row)
    results: dict[str, dict[str, Any]] = {}
    for key in sorted(by_key):
        rows = by_key[key]
        groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
        by_diff: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
        components: dict[str, list[float]] = defaultdict(list)
        label = difficulty_labels([float(r.get("difficulty") or 0.0) for r in rows])
        for r in rows:
            groups[r["group_id"]].append(r)
            by_diff[label[float(r.get("difficulty") or 0.0)]][r["group_id"]].append(r)
            for name, value in (r.get("reward_components") or {}).items():
                if isinstance(value, int | float) and math.isfinite(value):
                    components[name].append(float(value))
        res = {"env_id": rows[0]["env_id"], "split": rows[0].get("split"), **_summary(groups, k)}
        res.update(
            num_samples=len(rows),
            reward_components={name: _mean(v) for name, v in sorted(components.items())},
            by_difficulty={
                d: {key_: v for key_, v in _summary(g, k).items() if key_ not in ("k", "pass_at")}
                for d, g in sorted(by_diff.items(), key=lambda item: _bucket_start(item[0]))
            },
            mean_turns=_mean([float(r.get("num_turns") or 0) for r in rows]),
            mean_generated_tokens=_mean([float(sum(r.get("loss_mask") or [])) for r in rows]),
            truncated_fraction=_mean([float(bool(r.get("truncated"))) for r in rows]),
            reward_errors=sum(1 for r in rows if r.get("reward_error")),
        )
        results[key] = res
    return results


# ------------------------------------------------------------ environments
@dataclass(frozen=True)
class EvalEnv:
    """One environment to evaluate: ``id``, keyword arguments for
    :func:`gym_llm.make` and the results key (``key``, the id by default)."""

    id: str
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    key: str = ""

    def __post_init__(self) -> None:
        if not self.key:
            object.__setattr__(self, "key", self.id)


def env_set(entries: Mapping[str, Any] | Sequence[Any] | str | None) -> list[EvalEnv]:
    """The environments of an env set config.

    Accepts ``"all"`` (every registered id, default kwargs), a list of ids,
    or a mapping ``name -> {id, kwargs, difficulties, key}`` as in
    ``conf/envs/*.yaml`` (the same shape as a training mixture's ``envs``, so
    one can be pasted into the other; ``weight`` and ``heldout_kwargs`` are
    accepted, ``heldout_kwargs`` overriding ``kwargs`` as the trainer's eval
    does). ``difficulties: [a, b, ...]`` evaluates the env at each
    ``difficulty`` (one results entry, broken down by difficulty). Results
    keys must be unique: two entries of one id need distinct ``key``\\ s.
    """
    if entries is None or entries == "all":
        return [EvalEnv(i) for i in list_envs()]
    if isinstance(entries, str):
        entries = [entries]
    if not isinstance(entries, Mapping):
        return [EvalEnv(str(i)) for i in entries]
    out: list[EvalEnv] = []
    seen: dict[tuple[str, str], str] = {}
    keys: dict[str, str] = {}
    for name, entry in entries.items():
        entry = dict(entry or {})
        unknown = set(entry) - {"id", "kwargs", "heldout_kwargs", "difficulties", "key", "weight"}
        if unknown:
            raise ValueError(f"env set entry {name!r}: unknown keys {sorted(unknown)}")
        env_id = str(entry.get("id") or name)
        kwargs = {**dict(entry.get("kwargs") or {}), **dict(entry.get("heldout_kwargs") or {})}
        key = str(entry.get("key") or env_id)
        if key in keys and keys[key] != name:
            raise ValueError(
                f"env set entries {keys[key]!r} and {name!r} both report as {key!r}: give one a "
                f"distinct `key` (or use `difficulties` to sweep one environment)")
        keys[key] = name
        for d in entry.get("difficulties") or [None]:
            kw = dict(kwargs) if d is None else {**kwargs, "difficulty": float(d)}
            ident = (key, json.dumps(kw, sort_keys=True, default=str))
            if ident in seen:
                raise ValueError(f"env set entry {name!r} repeats {ident}")
            seen[ident] = name
            out.append(EvalEnv(env_id, kw, key))
    return out


# -------------------------------------------------------- checkpoints, runs
def resolve_checkpoint(path: str | os.PathLike) -> tuple[Path, Path | None]:
    """``(model_dir, run_dir)`` for ``checkpoint=<path>``.

    ``path`` may be a ``save_pretrained`` directory (has ``config.json``), a
    trainer checkpoint ``checkpoints/step_<N>/`` (its ``model/``; for LoRA
    runs ``model/merged``), or a training run directory (its latest
    checkpoint). ``run_dir`` is the training run the checkpoint belongs to,
    when it can be told (used by the contamination guard). Raises
    ``FileNotFoundError`` naming what was looked for.
    """
    p = Path(path).expanduser().resolve()
    run_dir: Path | None = None
    if (p / "checkpoints").is_dir():
        run_dir = p
        steps = sorted(
            (int(m.group(1)), c) for c in (p / "checkpoints").iterdir()
            if (m := re.fullmatch(r"step_(\d+)", c.name)) and c.is_dir()
        )
        if not steps:
            raise FileNotFoundError(f"{p} is a run directory with no complete checkpoint in checkpoints/")
        p = steps[-1][1]
    if (p / "model").is_dir():
        if run_dir is None and p.parent.name == "checkpoints":
            run_dir = p.parent.parent
        p = p / "model"
    if (p / "merged" / "config.json").is_file():  # LoRA: adapter + merged weights
        p = p / "merged"
    if not (p / "config.json").is_file():
        raise FileNotFoundError(
            f"checkpoint={path!r}: no config.json in {p} (expected a save_pretrained directory, "
            f"a checkpoints/step_<N> directory or a training run directory)")
    if run_dir is None and p.parent.parent.name == "checkpoints" and p.name == "model":
        run_dir = p.parent.parent.parent
    return p, run_dir


def run_config(run_dir: str | os.PathLike) -> dict[str, Any]:
    """A training run's config: ``config.yaml`` (gym-llm-train writes it,
    resolved), else Hydra's ``.hydra/config.yaml``; ``{}`` when neither exists."""
    run_dir = Path(run_dir)
    for path in (run_dir / "config.yaml", run_dir / ".hydra" / "config.yaml"):
        if path.is_file():
            from omegaconf import OmegaConf

            return OmegaConf.to_container(OmegaConf.load(path), resolve=False) or {}
    return {}


def training_mixture(run_dir: str | os.PathLike) -> dict[str, dict[str, Any]]:
    """The environments a training run sampled: its ``mixture.envs`` entries
    (``name -> {id, weight, kwargs, heldout_kwargs}``; the trainer's own keys
    such as ``sft_examples`` or ``turn_credit`` are left out) whose weight
    times their domain's weight is positive. Two entries of one id get
    distinct results keys (``<id>#<name>``, as gym-llm-train names their
    held-out metrics)."""
    mixture = run_config(run_dir).get("mixture") or {}
    weights = mixture.get("weights") or {}
    entries = {}
    for name, entry in (mixture.get("envs") or {}).items():
        env_id = str((entry or {}).get("id") or "")
        weight = float(entry.get("weight", 1.0)) * float(weights.get(env_id.split("/")[0], 1.0))
        if env_id and weight > 0:
            entries[name] = {k: v for k, v in entry.items() if k in ("id", "weight", "kwargs", "heldout_kwargs")}
    ids = [e["id"] for e in entries.values()]
    for name, entry in entries.items():
        if ids.count(entry["id"]) > 1:
            entry.setdefault("key", f"{entry['id']}#{name}")
    return entries


def _training_footprint(run_dir: Path) -> tuple[set[str], set[tuple[str, str]]]:
    """What a training run trained on: the env ids of its mixture and of its
    train-split trajectories, and the ``(env_id, task_id)`` pairs of those
    trajectories (its held-out eval trajectories, which gym-llm-train also
    keeps in ``trajectories/``, are not training data)."""
    envs = {e["id"] for e in training_mixture(run_dir).values()}
    seen: set[tuple[str, str]] = set()
    for path in sorted((run_dir / "trajectories").glob("*.jsonl*")):
        try:
            from .rollout import read_jsonl

            for t in read_jsonl(path):
                if t.split == "train":
                    envs.add(t.env_id)
                    seen.add((t.env_id, t.task_id))
        except (OSError, ValueError) as e:
            log.warning("could not read %s for the contamination check: %s", path, e)
    return envs, seen


def contamination_warnings(
    run_dir: str | os.PathLike, evaluated: Sequence[tuple[EvalEnv, Sequence[str]]], split: str,
) -> list[str]:
    """Warnings for evaluating ``evaluated`` (each env with the task ids to be
    evaluated) on ``split`` after training run ``run_dir``: environments whose
    train split the run sampled (when ``split`` is ``train``), and evaluated
    task ids that appear in the run's training trajectories (on any split: on
    ``heldout`` that is a leak between splits)."""
    trained_envs, trained_tasks = _training_footprint(Path(run_dir))
    out = []
    if split == "train":
        for env_id in sorted({e.id for e, _ in evaluated} & trained_envs):
            out.append(f"{env_id}: training run {run_dir} trained on its train split; "
                       f"these scores measure memorisation, not generalisation")
    for env, ids in evaluated:
        leaked = sorted({i for i in ids if (env.id, i) in trained_tasks})
        if leaked:
            out.append(f"{env.key}: {len(leaked)} evaluated task(s) appear in the training "
                       f"trajectories of {run_dir} (e.g. {leaked[0]}): these tasks were trained on")
    return out


# ----------------------------------------------------------------- storage
class SampleStore:
    """``samples.jsonl`` of an eval directory, appended one task at a time.

    Opening it keeps the complete tasks already there (``k`` rows, all
    parseable) and drops the rest, rewriting the file if it had to (a run
    killed mid-write leaves at most a partial last line).
    """

    def __init__(self, path: str | os.PathLike, k: int, resume: bool = True):
        self.path = Path(path)
        self.k = k
        self.rows: list[dict[str, Any]] = []
        if resume and self.path.exists():
            self._load()
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text("")  # exists even when no task completes

    def _load(self) -> None:
        groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        dropped = 0
        for line in self.path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                groups[(row["group_id"], row["task_id"])].append(row)
            except (ValueError, KeyError, TypeError):
                dropped += 1
        for rows in groups.values():
            if len(rows) == self.k:
                self.rows += rows
            else:
                dropped += len(rows)
        if dropped:
            log.warning("%s: dropped %d incomplete sample row(s); their tasks run again", self.path, dropped)
            self._rewrite()

    def _rewrite(self) -> None:
        tmp = self.path.with_name(f".{self.path.name}.tmp")
        tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in self.rows), encoding="utf-8")
        os.replace(tmp, self.path)

    def done(self) -> set[tuple[str, str]]:
        """``(group_id, task_id)`` of every complete task."""
        return {(r["group_id"], r["task_id"]) for r in self.rows}

    def append(self, rows: list[dict[str, Any]]) -> None:
        """Append one task's rows with a single write (all or nothing on a
        clean kill; a torn write is dropped by the next open)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        blob = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(blob)
            f.flush()
        self.rows += rows


# -------------------------------------------------------------- evaluation
@dataclass
class EvalOutcome:
    """What :func:`evaluate` did: ``results`` (as in ``results.json``),
    ``warnings``, ``failed_tasks`` (tasks whose episodes could not run; rerun
    to retry them), ``skipped_tasks`` (already in ``samples.jsonl``),
    ``wall_time_s`` and the rollout ``stats``."""

    results: dict[str, dict[str, Any]]
    warnings: list[str]
    failed_tasks: int
    skipped_tasks: int
    wall_time_s: float
    stats: RolloutStats


def _kwargs_id(kwargs: Mapping[str, Any]) -> str:
    return json.dumps(dict(kwargs), sort_keys=True, default=str)


#: Settings that must match for a rerun to resume into the same directory
#: (env kwargs need not: samples carry theirs, and other kwargs are new tasks).
_RESUME_KEYS = ("policy", "sampling", "k", "split", "seed", "max_episode_tokens")


def _fingerprint(identity: Mapping[str, Any], sampling: SamplingParams, k: int, split: str,
                 max_episode_tokens: int | None, seed: int) -> dict[str, Any]:
    return {
        "policy": json.loads(json.dumps(dict(identity), default=str)),
        "sampling": {k_: v for k_, v in asdict(sampling).items() if k_ != "stop_token_ids"},
        "k": k,
        "split": split,
        "seed": seed,
        "max_episode_tokens": max_episode_tokens,
    }


def _check_resume(out_dir: Path, fp: dict[str, Any]) -> None:
    """Refuse to mix samples of a different model or sampling setting."""
    path = out_dir / CONFIG_FILE
    if not path.exists():
        return
    old = json.loads(path.read_text())
    diffs = [f"{name}: {old.get(name)} before, {fp[name]} now" for name in _RESUME_KEYS
             if old.get(name) != fp[name]]
    if diffs:
        raise ValueError(
            f"{out_dir} holds an evaluation with other settings ({'; '.join(diffs)}): evaluate into "
            f"a new directory, or pass resume=false to start this one over")


async def _aevaluate(policy: Policy, plan: list[_Planned], *, k: int, split: str,
                     sampling: SamplingParams, seed: int, max_episode_tokens: int | None,
                     concurrency: int, success_threshold: float, store: SampleStore,
                     errors_path: Path, stats: RolloutStats) -> int:
    """Run the planned tasks concurrently (one acollect per env variant on one
    event loop, so a batching policy batches across environments); append each
    finished task to ``store``. Returns the number of failed tasks."""
    total = sum(len(p.todo) for p in plan) * k
    failed = finished = 0
    pending: dict[str, list[Trajectory]] = defaultdict(list)
    last_log = time.monotonic()

    def handler(planned: _Planned):
        def handle(t: Trajectory) -> None:
            nonlocal failed, finished, last_log
            finished += 1
            group = pending[t.group_id]
            group.append(t)
            if len(group) < k:
                return
            del pending[t.group_id]
            group.sort(key=lambda x: x.sample_index)
            rows = [_row(x, planned.env, success_threshold) for x in group]
            if any(x.error for x in group):
                failed += 1
                with open(errors_path, "a", encoding="utf-8") as f:
                    f.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
                log.warning("%s task %d could not run: %s", planned.env.key, rows[0]["task_index"],
                            next(x.error for x in group if x.error))
            else:
                store.append(rows)
            if time.monotonic() - last_log > 10:
                last_log = time.monotonic()
                log.info("%d/%d episodes", finished, total)
        return handle

    jobs = []
    for planned in plan:
        if not planned.todo:
            continue
        env = planned.env
        episodes = [
            EpisodeSpec(env.id, seed=seed + i, options={"task_index": i},
                        group_id=_group_id(env, i), sample_index=s)
            for i in planned.todo for s in range(k)
        ]
        # Concurrency shared out in proportion to each variant's episodes.
        slots = max(1, min(len(episodes), round(concurrency * len(episodes) / max(1, total))))
        jobs.append(acollect(
            policy, env.id, episodes=episodes, sampling=sampling, seed=seed, num_envs=slots,
            split=split, env_kwargs={env.id: dict(env.kwargs)}, max_tokens=max_episode_tokens,
            on_trajectory=handler(planned), stats=stats,
        ))
    await asyncio.gather(*jobs)
    return failed


@dataclass
class _Planned:
    env: EvalEnv
    task_ids: list[str]  # of task_index 0..n-1
    todo: list[int]      # task indices not yet in samples.jsonl


def _group_id(env: EvalEnv, task_index: int) -> str:
    """One group per (results key, env kwargs, task): what resume and pass@k count by."""
    return f"{env.key}|{_kwargs_id(env.kwargs)}|{task_index}"


def _row(t: Trajectory, env: EvalEnv, success_threshold: float) -> dict[str, Any]:
    row = t.to_dict()
    row.update(eval_key=env.key, env_kwargs=dict(env.kwargs),
               task_index=int(t.group_id.rsplit("|", 1)[1]),
               correct=bool(t.reward is not None and t.reward >= success_threshold))
    return row


def _finite(obj: Any) -> Any:
    """Non-finite floats as ``None`` (JSON has no NaN)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_finite(v) for v in obj]
    return obj


def write_json(path: Path, obj: Any) -> None:
    """Write JSON atomically (temp file, then rename)."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(_finite(obj), indent=1, allow_nan=False))
    os.replace(tmp, path)


def evaluate(
    policy: Policy,
    envs: Sequence[EvalEnv] | Sequence[str],
    out_dir: str | os.PathLike,
    *,
    num_tasks: int = 8,
    k: int = 4,
    split: str = "heldout",
    sampling: SamplingParams | None = None,
    max_episode_tokens: int | None = None,
    seed: int = 0,
    success_threshold: float = 1.0,
    concurrency: int = 64,
    resume: bool = True,
    allow_train_split: bool = False,
    train_run: str | os.PathLike | None = None,
    policy_identity: Mapping[str, Any] | None = None,
) -> EvalOutcome:
    """Evaluate ``policy`` on the first ``num_tasks`` tasks of ``split`` of
    each of ``envs``, ``k`` samples per task; write ``samples.jsonl``,
    ``results.json`` and ``eval_config.json`` into ``out_dir`` (see the
    module doc; :func:`write_report` and :func:`plot_results` add the report).

    ``split="train"`` raises :class:`ContaminationError` unless
    ``allow_train_split``. ``train_run``: a training run directory to check
    for overlap (warnings in the outcome and the log). ``resume``: keep the
    tasks already in ``out_dir/samples.jsonl`` and run only the others
    (``ValueError`` if that directory was evaluated with a different
    ``policy_identity``, sampling, ``k``, ``split``, ``seed`` or
    ``max_episode_tokens``); ``False`` starts over. ``policy_identity`` names
    the model for that check (path, backend, ...). ``concurrency``: episodes
    in flight at once. Results cover exactly the requested tasks, resumed
    ones included.
    """
    start = time.perf_counter()
    split = guard_split(split, allow_train_split)
    if num_tasks < 1 or k < 1:
        raise ValueError(f"num_tasks and k must be >= 1, got num_tasks={num_tasks}, k={k}")
    envs = [e if isinstance(e, EvalEnv) else EvalEnv(str(e)) for e in envs]
    if not envs:
        raise ValueError("no environments to evaluate")
    sampling = sampling or SamplingParams()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    fp = _fingerprint(policy_identity or {"class": type(policy).__name__}, sampling, k, split,
                      max_episode_tokens, seed)
    if resume:
        _check_resume(out, fp)
    else:
        (out / ERRORS_FILE).unlink(missing_ok=True)
    store = SampleStore(out / SAMPLES_FILE, k, resume=resume)
    done = store.done()

    plan: list[_Planned] = []
    for env in envs:
        base = make(env.id, split=split, seed=seed, **dict(env.kwargs)).unwrapped
        n = min(num_tasks, base.num_tasks)
        if n < num_tasks:
            log.warning("%s has only %d %s tasks; evaluating all of them", env.key, n, split)
        ids = [base.task_set.get(split, i).id for i in range(n)]
        base.close()
        plan.append(_Planned(env, ids, [i for i in range(n) if (_group_id(env, i), ids[i]) not in done]))
    skipped = sum(len(p.task_ids) - len(p.todo) for p in plan)

    warnings: list[str] = []
    if train_run is not None:
        warnings = contamination_warnings(train_run, [(p.env, p.task_ids) for p in plan], split)
        for w in warnings:
            log.warning("contamination: %s", w)
    write_json(out / CONFIG_FILE, {**fp, "envs": [asdict(e) for e in envs]})
    if skipped:
        log.info("resuming: %d task(s) already in %s", skipped, store.path)
    stats = RolloutStats()
    failed = run_sync(_aevaluate(
        policy, plan, k=k, split=split, sampling=sampling, seed=seed,
        max_episode_tokens=max_episode_tokens, concurrency=concurrency,
        success_threshold=success_threshold, store=store, errors_path=out / ERRORS_FILE, stats=stats,
    ))

    wanted = {(_group_id(p.env, i), task_id) for p in plan for i, task_id in enumerate(p.task_ids)}
    found = aggregate((r for r in store.rows if (r["group_id"], r["task_id"]) in wanted), k)
    results = {}
    for key in dict.fromkeys(e.key for e in envs):  # the env set's order
        if key in found:
            results[key] = {**found[key], "success_threshold": success_threshold}
            if found[key]["mean_turns"] == 0:
                warnings.append(f"{key}: no sample got to generate a turn (prompts longer than "
                                f"max_episode_tokens={max_episode_tokens}?)")
    write_json(out / RESULTS_FILE, results)
    return EvalOutcome(results, warnings, failed, skipped, time.perf_counter() - start, stats)


# ------------------------------------------------------------- report, plots
def _fmt(x: Any, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    return f"{x:.{digits}f}" if isinstance(x, float) else str(x)


def plot_results(out_dir: str | os.PathLike, results: Mapping[str, Mapping[str, Any]]) -> list[Path]:
    """``reward_by_env.png`` (mean reward, pass@1, pass@k per environment) and
    ``reward_by_difficulty.png`` (mean reward and pass@1 against task
    difficulty, one line per environment); returns the files written."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display on servers and CI
    import matplotlib.pyplot as plt

    out = Path(out_dir)
    keys = list(results)
    if not keys:
        return []
    written = []
    k = max(int(r["k"]) for r in results.values())
    fig, ax = plt.subplots(figsize=(max(6.0, 1.4 * len(keys) + 2), 4.2))
    width = 0.27
    for j, (metric, label) in enumerate(
            [("mean_reward", "mean reward"), ("pass@1", "pass@1"), ("pass@k", f"pass@{k}")]):
        xs = [i + (j - 1) * width for i in range(len(keys))]
        ys = [results[key][metric] or 0.0 for key in keys]
        ax.bar(xs, ys, width, label=label)
    ax.set_xticks(range(len(keys)))
    ax.set_xticklabels(keys, rotation=20, ha="right", fontsize=8)
    means = [results[key]["mean_reward"] or 0.0 for key in keys]
    ax.set_ylim(min(0.0, *means), 1.05 * max(1.0, *means))
    ax.set_title("Held-out reward by environment" if _split_of(results) == "heldout"
                 else f"Reward by environment ({_split_of(results)} split)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = out / "reward_by_env.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    written.append(path)

    fig, (ax_r, ax_p) = plt.subplots(1, 2, figsize=(10, 4), sharex=True)
    rewards = [0.0, 1.0]  # the axis spans [0, 1] at least: small differences are not magnified
    for key in keys:
        by = results[key].get("by_difficulty") or {}
        ds = sorted(by, key=_bucket_start)
        xs = [sum(map(float, d.split("-"))) / len(d.split("-")) for d in ds]  # a bin's middle
        ys = [by[d]["mean_reward"] or 0.0 for d in ds]
        rewards += ys
        ax_r.plot(xs, ys, marker="o", label=key)
        ax_p.plot(xs, [by[d]["pass@1"] or 0.0 for d in ds], marker="o", label=key)
    pad = 0.02 * (max(rewards) - min(rewards))
    ax_r.set_ylim(min(rewards) - pad, max(rewards) + pad)
    ax_r.set_xlabel("task difficulty")
    ax_p.set_xlabel("task difficulty")
    ax_r.set_ylabel("mean reward")
    ax_p.set_ylabel("pass@1")
    ax_p.set_ylim(-0.02, 1.02)
    ax_r.legend(fontsize=7)
    fig.suptitle("Reward by difficulty")
    fig.tight_layout()
    path = out / "reward_by_difficulty.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    written.append(path)
    return written


def _split_of(results: Mapping[str, Mapping[str, Any]]) -> str:
    return str(next(iter(results.values())).get("split") or "heldout")


def write_report(out_dir: str | os.PathLike, results: Mapping[str, Mapping[str, Any]],
                 meta: Mapping[str, Any], warnings: Sequence[str] = (),
                 plots: Sequence[Path] = ()) -> Path:
    """``report.md``: what was evaluated (``meta``: model, policy, split,
    tasks, samples, command, date, ...), the results table, pass@j curve,
    reward components, per-difficulty breakdown, warnings and plots."""
    out = Path(out_dir)
    lines = ["# Evaluation report", ""]
    lines += [f"- {name}: {value}" for name, value in meta.items()]
    if warnings:
        lines += ["", "## Warnings", ""] + [f"- {w}" for w in warnings]
    if not results:
        lines += ["", "No results (every task failed; see errors.jsonl)."]
    else:
        k = max(int(r["k"]) for r in results.values())
        lines += ["", "## Results", "",
                  f"| environment | tasks | samples | mean reward (± s.e.) | pass@1 | pass@{k} | turns "
                  "| generated tokens | truncated | reward errors |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for key, r in results.items():
            lines.append(
                f"| {key} | {r['n']} | {r['num_samples']} | {_fmt(r['mean_reward'])} ± "
                f"{_fmt(r['reward_stderr'])} | {_fmt(r['pass@1'])} | {_fmt(r['pass@k'])} | "
                f"{_fmt(r['mean_turns'], 2)} | {_fmt(r['mean_generated_tokens'], 1)} | "
                f"{_fmt(r['truncated_fraction'], 2)} | {r['reward_errors']} |")
        js = sorted({j for r in results.values() for j in r["pass_at"]}, key=int)
        lines += ["", "### pass@j", "", "| environment | " + " | ".join(f"pass@{j}" for j in js) + " |",
                  "|---|" + "---|" * len(js)]
        for key, r in results.items():
            lines.append(f"| {key} | " + " | ".join(_fmt(r["pass_at"].get(j)) for j in js) + " |")
        lines += ["", "### Reward components (mean over samples)", ""]
        for key, r in results.items():
            parts = ", ".join(f"{name} {_fmt(v)}" for name, v in r["reward_components"].items())
            lines.append(f"- {key}: {parts or '(none reported)'}")
        lines += ["", "### By difficulty", "", "| environment | difficulty | tasks | mean reward | pass@1 "
                  f"| pass@{k} |", "|---|---|---|---|---|---|"]
        for key, r in results.items():
            for d, b in r["by_difficulty"].items():
                lines.append(f"| {key} | {d} | {b['n']} | {_fmt(b['mean_reward'])} | "
                             f"{_fmt(b['pass@1'])} | {_fmt(b['pass@k'])} |")
    if plots:
        lines += ["", "## Plots", ""] + [f"![{p.stem}]({p.name})" for p in plots]
    path = out / REPORT_FILE
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# ----------------------------------------------------------------- Hydra app
def model_path(cfg: Any) -> str:
    """The checkpoint directory (or hub id) a config evaluates:
    ``checkpoint`` (resolved by :func:`resolve_checkpoint`), else
    ``model.path``, else the locally built tiny model."""
    if cfg.get("checkpoint"):
        return str(resolve_checkpoint(cfg.checkpoint)[0])
    if cfg.model.get("path"):
        return str(cfg.model.path)
    if cfg.model.get("tiny"):
        raise ValueError("model.tiny overrides name a custom tiny build: build it with "
                         "gym_llm.models.build_tiny_model(dir, ...) and pass model.path=dir")
    from .models import tiny_model_path

    return tiny_model_path()


def served_models(base_url: str, api_key: str | None = None, timeout_s: float = 30.0) -> list[str]:
    """Model names an OpenAI-compatible server lists at ``{base_url}/models``
    (``RuntimeError`` when it lists none or cannot be reached)."""
    import httpx

    key = api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY"
    try:
        resp = httpx.get(f"{base_url.rstrip('/')}/models", timeout=timeout_s,
                         headers={"Authorization": f"Bearer {key}"})
        resp.raise_for_status()
        names = [m["id"] for m in resp.json().get("data", [])]
    except (httpx.HTTPError, ValueError, KeyError) as e:
        raise RuntimeError(f"could not list the models of {base_url}: {e}; pass policy.model") from e
    if not names:
        raise RuntimeError(f"{base_url} serves no model")
    return names


def build_policy(cfg: Any) -> tuple[Policy, dict[str, Any]]:
    """The policy of ``cfg.policy.backend`` (``hf``, ``vllm`` or ``openai``)
    and its identity (what a resumed evaluation must match)."""
    from .policies import make_policy

    pc, mc = cfg.policy, cfg.model
    backend = pc.backend
    if backend == "openai":
        served = pc.get("model") or served_models(pc.base_url, pc.get("api_key"))[0]
        identity = {"backend": backend, "base_url": pc.base_url, "model": served}
        policy = make_policy("openai", model=served, base_url=pc.base_url, api_key=pc.get("api_key"),
                             max_concurrency=int(pc.max_concurrency), timeout_s=float(pc.timeout_s),
                             max_retries=int(pc.get("max_retries", 5)))
        return policy, identity
    path = model_path(cfg)
    identity = {"backend": backend, "model": path}
    if backend in ("hf", "transformers"):
        policy = make_policy(backend, path, dtype=_torch_dtype(mc.get("dtype")), seed=cfg.seed,
                             attn_implementation=mc.get("attn_implementation"),
                             trust_remote_code=bool(mc.get("trust_remote_code", False)))
    elif backend == "vllm":
        policy = make_policy(backend, path, dtype=mc.get("dtype") or "auto", seed=cfg.seed,
                             gpu_memory_utilization=pc.gpu_memory_utilization,
                             **dict(pc.get("vllm_kwargs") or {}))
    else:
        raise ValueError(f"policy.backend={backend!r}: expected hf, vllm or openai")
    return policy, identity


def _torch_dtype(name: str | None) -> Any:
    if not name:
        return None
    import torch

    return getattr(torch, name)


def _threads_for_sweep() -> None:
    """Parallel sweep jobs (``hydra/launcher=local``) share the machine: give
    each ``cores / n_jobs`` torch threads rather than oversubscribing."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode
    from omegaconf import OmegaConf

    hc = HydraConfig.get()
    n_jobs = OmegaConf.select(hc, "launcher.n_jobs")
    if hc.mode == RunMode.MULTIRUN and n_jobs and n_jobs > 1:
        import torch

        torch.set_num_threads(max(1, (os.cpu_count() or 1) // int(n_jobs)))


def _run(cfg: Any, out_dir: Path) -> EvalOutcome:
    import importlib

    from omegaconf import OmegaConf

    train_run = cfg.get("train_run")
    if train_run is None and cfg.get("checkpoint"):
        train_run = resolve_checkpoint(cfg.checkpoint)[1]
    imports = list(cfg.get("imports") or [])
    env_ids = cfg.get("env_ids")
    if OmegaConf.is_config(env_ids):
        env_ids = OmegaConf.to_container(env_ids, resolve=True)
    if env_ids == "mixture":
        if train_run is None:
            raise ValueError("env_ids=mixture evaluates a training run's mixture: pass "
                             "checkpoint=<run dir> or train_run=<run dir>")
        entries = training_mixture(train_run)
        if not entries:
            raise ValueError(f"{train_run} has no config.yaml with a mixture")
        imports += list(run_config(train_run).get("imports") or [])
        envs = env_set(entries)
    elif env_ids:
        envs = env_set(env_ids)
    else:
        envs = env_set(OmegaConf.to_container(cfg.envs.envs, resolve=True))
    for module in imports:  # modules that register environments on import
        importlib.import_module(module)
    split = guard_split(cfg.split, bool(cfg.allow_train_split))  # before a model loads
    for env in envs:  # an unknown id fails before a model loads
        spec(env.id)
    sampling = SamplingParams(temperature=float(cfg.policy.temperature), top_p=float(cfg.policy.top_p),
                              max_new_tokens=int(cfg.policy.max_new_tokens))
    policy, identity = build_policy(cfg)
    try:
        outcome = evaluate(
            policy, envs, out_dir, num_tasks=int(cfg.num_tasks), k=int(cfg.k), split=split,
            sampling=sampling, max_episode_tokens=cfg.policy.get("max_episode_tokens"),
            seed=int(cfg.seed), success_threshold=float(cfg.success_threshold),
            concurrency=int(cfg.concurrency), resume=bool(cfg.resume),
            allow_train_split=bool(cfg.allow_train_split), train_run=train_run,
            policy_identity=identity,
        )
    finally:
        policy.close()
    warnings = outcome.warnings
    plots: list[Path] = []
    if cfg.plots and outcome.results:
        try:
            plots = plot_results(out_dir, outcome.results)
        except ImportError as e:  # matplotlib ships with the [train] extra, not the core
            warnings.append(f"plots skipped ({e}): pip install matplotlib")
    if outcome.failed_tasks:
        warnings.append(f"{outcome.failed_tasks} task(s) could not run (see {ERRORS_FILE}); "
                        "rerun into this directory to retry them")
    errors = sum(r["reward_errors"] for r in outcome.results.values())
    if errors:
        warnings.append(f"{errors} sample(s) have reward_error: the environment failed to score them "
                        "(sandbox or verifier down?); their reward is 0 and not trustworthy")
    meta = {
        "model": f"`{identity.get('model')}`" + (f" (checkpoint=`{cfg.checkpoint}`)" if cfg.get("checkpoint") else ""),
        "policy": f"{identity['backend']}" + (f" at {identity['base_url']}" if identity.get("base_url") else ""),
        "sampling": f"temperature {sampling.temperature}, top_p {sampling.top_p}, "
                    f"max_new_tokens {sampling.max_new_tokens}, "
                    f"max_episode_tokens {cfg.policy.get('max_episode_tokens')}",
        "split": split,
        "tasks per env": int(cfg.num_tasks),
        "samples per task (k)": int(cfg.k),
        "correct when": f"reward >= {cfg.success_threshold}",
        "resumed tasks": outcome.skipped_tasks,
        "wall time": f"{outcome.wall_time_s:.1f} s ({outcome.stats.generated_tokens} tokens generated)",
        "command": f"`{' '.join(['gym-llm-eval', *sys.argv[1:]])}`",
        "machine": f"{os.cpu_count()} cores, {_cpu_model()}, Python {platform.python_version()}",
        "date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
    }
    write_report(out_dir, outcome.results, meta, warnings, plots)
    return outcome


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _print_summary(outcome: EvalOutcome, out_dir: Path) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"gym-llm-eval: {out_dir}")
    table.add_column("environment", overflow="fold")
    for col in ("tasks", "mean reward", "pass@1", "pass@k"):
        table.add_column(col, no_wrap=True)
    for key, r in outcome.results.items():
        table.add_row(key, str(r["n"]), _fmt(r["mean_reward"]), _fmt(r["pass@1"]),
                      f"{_fmt(r['pass@k'])} (k={r['k']})")
    console = Console(stderr=True)
    console.print(table)
    for w in outcome.warnings:
        console.print(f"[yellow]warning:[/yellow] {w}", markup=True, highlight=False)
    console.print(f"results, samples and report.md in {out_dir} ({outcome.wall_time_s:.1f} s)")


def slug(text: str, limit: int = 200) -> str:
    """``text`` (a Hydra override string) as one safe path component: path
    separators and other odd characters become ``_``; cut at ``limit``."""
    return re.sub(r"[^A-Za-z0-9._=,+@-]+", "_", str(text)).strip("_")[:limit]


def _register_resolvers() -> None:
    """``${gym_llm_slug:...}``, used by conf/eval.yaml's sweep subdirs (a
    checkpoint path or env id in an override would otherwise nest folders)."""
    from omegaconf import OmegaConf

    if not OmegaConf.has_resolver("gym_llm_slug"):
        OmegaConf.register_new_resolver("gym_llm_slug", slug)


def main() -> None:
    """Console entry point ``gym-llm-eval`` (Hydra; config ``conf/eval.yaml``)."""
    import hydra
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode
    from omegaconf import DictConfig

    # The configs are package data found by file path (no __init__.py needed).
    @hydra.main(config_path=str(Path(__file__).parent / "conf"), config_name="eval", version_base="1.3")
    def app(cfg: DictConfig) -> float | None:
        hc = HydraConfig.get()
        _threads_for_sweep()
        out_dir = Path(cfg.output_dir or hc.runtime.output_dir)
        outcome = _run(cfg, out_dir)
        _print_summary(outcome, out_dir)
        if outcome.failed_tasks and hc.mode == RunMode.RUN:
            sys.exit(1)
        rewards = [r["mean_reward"] for r in outcome.results.values()]
        return _mean(rewards) if rewards else None  # a sweeper's objective

    app()


# At import, not in main(): launcher workers (joblib) resolve the sweep subdir
# after unpickling the job, which imports this module but never calls main().
_register_resolvers()

if __name__ == "__main__":
    main()
