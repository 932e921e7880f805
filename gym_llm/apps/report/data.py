"""What a run report shows, read from a run directory (training or eval).

Contract: :func:`load_run` never raises on what it finds in the directory.
A missing file, a malformed or torn JSONL line (a run still being written),
a record of an older gym-llm (no ``hack_signals`` / ``strict_reward``) or a
record whose fields have the wrong types is skipped or shown without the
missing parts, and said in :attr:`RunData.notes`. Only an ``OSError`` on the
directory itself (it does not exist) propagates, as ``FileNotFoundError``.

Bounded size: at most ``max_trajectories`` episodes are kept for the browser
(sampled evenly over the trajectory files, with a fixed seed, so the same
directory gives the same report; a run with more than ``max_trajectories //
4`` files of one split is read from that many, evenly spaced), each message
cut to ``max_chars`` characters; :attr:`RunData.total_trajectories` says how
many the files read held.
"""

from __future__ import annotations

import json
import math
import random
import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gym_llm.apps.runs import (
    ERRORS_FILE,
    EVAL_REPORT_FILE,
    METRICS_FILE,
    RESULTS_FILE,
    SAMPLES_FILE,
    checkpoint_step,
    trajectory_files,
)
from gym_llm.envs.parsing import message_text

__all__ = ["RunData", "load_run", "read_jsonl_tolerant", "charts", "axis", "tick_labels"]


#: Held-out tasks shown side by side (first eval vs last), per environment.
FIRST_LAST_PER_ENV = 20


@dataclass
class RunData:
    """Everything the report page draws.

    ``kind``: ``"train"`` (metrics.jsonl / trajectories/), ``"eval"``
    (results.json / samples.jsonl) or ``"empty"``; ``metrics``: the numeric
    values of each metrics.jsonl row, by step; ``charts``: the curves
    (:func:`charts`); ``trajectories``: the sampled episodes, each a plain
    dict (``env``, ``step``, ``split``, ``reward``, ``strict``, ``signals``,
    ``components``, ``turns`` ...); ``axes``: the y axis (:func:`axis`) of
    each metric drawn alone (the page's "any metric" chart); ``first_last``:
    held-out tasks with the answer at the first eval and at the last, those
    whose reward changed most first; ``results``: an eval's
    results.json; ``links``: files of the run a reader may open; ``notes``:
    what was missing or skipped, one sentence each.
    """

    run_dir: Path
    kind: str = "empty"
    metrics: list[dict[str, Any]] = field(default_factory=list)
    charts: list[dict[str, Any]] = field(default_factory=list)
    axes: dict[str, dict[str, Any]] = field(default_factory=dict)
    trajectories: list[dict[str, Any]] = field(default_factory=list)
    total_trajectories: int = 0
    first_last: list[dict[str, Any]] = field(default_factory=list)
    first_last_steps: tuple[int, int] | None = None
    results: dict[str, Any] = field(default_factory=dict)
    links: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _number(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    return float(v) if math.isfinite(v) else None


def _read_text(path: Path) -> tuple[str, bool]:
    """``path``'s text, gunzipped if it ends in ``.gz``, and whether it was whole
    (a compressed file cut short gives what it holds up to the cut). A corrupt
    compressed stream raises ``zlib.error``."""
    data = path.read_bytes()
    if not path.name.endswith(".gz"):
        return data.decode("utf-8", errors="replace"), True
    out, whole = [], True
    while data:  # one member after another (``cat a.gz b.gz`` is a gzip file too)
        member = zlib.decompressobj(16 + zlib.MAX_WBITS)
        out.append(member.decompress(data))
        if not member.eof:
            whole = False
            break
        data = member.unused_data
    return b"".join(out).decode("utf-8", errors="replace"), whole


def read_jsonl_tolerant(path: Path, notes: list[str],
                        pick: Callable[[int], set[int] | None] | None = None) -> Iterator[tuple[int, dict]]:
    """``(line_index, object)`` of each JSON object line of ``path``
    (indices count non-blank lines). ``pick``, given the number of lines,
    may name the only indices to parse. A torn last line (no newline: still
    being written) and malformed or non-object lines are skipped with one
    note per file."""
    try:
        text, whole = _read_text(path)
    except (OSError, zlib.error) as e:
        notes.append(f"{path.name}: could not be read ({getattr(e, 'strerror', None) or e}); skipped.")
        return
    if not whole:  # being written, or copied in part
        notes.append(f"{path.name}: the compressed file is cut short; the episodes before the cut were read.")
    lines = [line for line in text.splitlines() if line.strip()]
    wanted = pick(len(lines)) if pick is not None else None
    torn = bool(lines) and not text.endswith("\n")
    bad = 0
    for i, line in enumerate(lines):
        last = i == len(lines) - 1
        if wanted is not None and i not in wanted and not (last and torn):
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            if last and torn:
                notes.append(f"{path.name}: the last line is incomplete (the run is still being written?); "
                             "it was skipped.")
            else:
                bad += 1
            continue
        if not isinstance(obj, dict):
            bad += 1
            continue
        if wanted is None or i in wanted:
            yield i, obj
    if bad:
        notes.append(f"{path.name}: {bad} malformed line(s) skipped.")


# ------------------------------------------------------------------ episodes
def _text(value: Any, max_chars: int) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= max_chars else text[:max_chars] + f" ... [{len(text) - max_chars} more characters]"


def _turns(row: dict[str, Any], max_chars: int) -> list[dict[str, Any]]:
    """Each message with who wrote it: ``policy`` (assistant) or the
    environment's side (``prompt``: the messages before the first policy
    turn; ``env``: the ones after it, feedback and tool results); policy
    turn ``j`` carries ``turn_rewards[j]`` (one per environment step)."""
    messages = row.get("messages")
    if not isinstance(messages, list):
        raise TypeError("messages is not a list")
    rewards = row.get("turn_rewards") if isinstance(row.get("turn_rewards"), list) else []
    out, j, seen_policy = [], 0, False
    for m in messages:
        if not isinstance(m, dict):
            raise TypeError("a message is not an object")
        role = str(m.get("role") or "?")
        text = message_text(m)
        if m.get("tool_calls"):
            text += ("\n" if text else "") + "tool calls: " + json.dumps(m["tool_calls"], ensure_ascii=False,
                                                                         default=str)
        turn: dict[str, Any] = {"role": role, "text": _text(text, max_chars)}
        if m.get("name"):
            turn["name"] = str(m["name"])
        if role == "assistant":
            seen_policy = True
            turn["side"] = "policy"
            turn["reward"] = _number(rewards[j]) if j < len(rewards) else None
            j += 1
        else:
            turn["side"] = "env" if seen_policy else "prompt"
        out.append(turn)
    return out


def _episode(row: dict[str, Any], *, step: int | None, source: str, max_chars: int) -> dict[str, Any]:
    """The browser's record of one trajectory row (``TypeError`` /
    ``ValueError`` when a field has the wrong type)."""
    info = row.get("info") if isinstance(row.get("info"), dict) else {}
    components = row.get("reward_components") if isinstance(row.get("reward_components"), dict) else {}
    signals = row.get("hack_signals")
    if signals is not None and not isinstance(signals, list):
        raise TypeError("hack_signals is not a list")
    reasons = {k: _text(info[k], max_chars) for k in ("reason", "strict_reason", "strict_error") if info.get(k)}
    for k in ("error", "reward_error", "truncated_reason"):
        if row.get(k):
            reasons[k] = _text(row[k], max_chars)
    return {
        "env": str(row.get("eval_key") or row["env_id"]),
        "env_id": str(row["env_id"]),
        "task": str(row.get("task_id", "")),
        "group": str(row.get("group_id", "")),
        "sample": int(row.get("sample_index") or 0),
        "step": step,
        "split": str(row.get("split") or "train"),
        "source": source,
        "reward": _number(row.get("reward")),
        "strict": _number(row.get("strict_reward")),
        "correct": row.get("correct") if isinstance(row.get("correct"), bool) else None,
        "signals": [str(s) for s in signals] if signals else [],
        "components": {str(k): _number(v) for k, v in components.items()},
        "reasons": reasons,
        "truncated": bool(row.get("truncated")),
        "ok": not row.get("error") and not row.get("reward_error"),
        "turns": _turns(row, max_chars),
        "old": "hack_signals" not in row or "strict_reward" not in row,
    }


def _episodes(path: Path, *, step: int | None, quota: int | None, rng: random.Random, max_chars: int,
              notes: list[str]) -> tuple[list[dict[str, Any]], int]:
    """Up to ``quota`` episodes of one JSONL file (all when ``None``) and how many it holds."""
    count = 0

    def pick(n: int) -> set[int] | None:
        nonlocal count
        count = n
        return None if quota is None or n <= quota else set(rng.sample(range(n), quota))

    out, broken = [], 0
    for _, row in read_jsonl_tolerant(path, notes, pick):
        try:
            out.append(_episode(row, step=step, source=path.name, max_chars=max_chars))
        except (KeyError, TypeError, ValueError, AttributeError):
            broken += 1
    if broken:
        notes.append(f"{path.name}: {broken} record(s) without the trajectory fields (env_id, messages) skipped.")
    return out, count


def _spread(files: list[Path], n: int) -> list[Path]:
    """``n`` of ``files``, evenly spaced, the first and last among them."""
    if len(files) <= n:
        return files
    return [files[round(i * (len(files) - 1) / (n - 1))] for i in range(n)]


# ------------------------------------------------------------------- metrics
def _metrics(path: Path, notes: list[str]) -> list[dict[str, Any]]:
    rows = []
    for _, row in read_jsonl_tolerant(path, notes):
        step = _number(row.get("step"))
        if step is None:
            continue
        values = {k: v for k, v in ((k, _number(v)) for k, v in row.items() if k != "step") if v is not None}
        rows.append({"step": int(step), **values})
    return sorted(rows, key=lambda r: r["step"])


def tick_labels(marks: list[float], step: float) -> list[str]:
    """Labels of ticks ``marks``, ``step`` apart, with just the digits that
    tell them apart: fixed point when the largest is between 0.001 and
    100,000 and 6 decimals suffice ("0.25", "120", "8.29165"), otherwise
    scientific with one exponent for all ("0.25e-9", "1.00e-9"); zero is "0"."""
    step_exp = math.floor(math.log10(step))
    extra = 0 if round(step / 10 ** step_exp, 6) in (1, 2, 5) else 1  # 2.5 x 10^k needs one digit more
    top = max(abs(v) for v in marks)
    decimals = max(0, extra - step_exp)
    if 1e-3 <= top < 1e5 and decimals <= 6:
        return ["0" if abs(v) < step / 2 else f"{v:.{decimals}f}" for v in marks]
    exp = math.floor(math.log10(top))
    return ["0" if abs(v) < step / 2 else f"{v / 10 ** exp:.{max(0, exp - step_exp + extra)}f}e{exp}" for v in marks]


def axis(values: list[float], ticks: int = 4) -> dict[str, Any]:
    """The y axis of a chart of ``values``: ``{"min", "max", "ticks": [[value,
    label], ...]}``, at most ``ticks`` + 2 ticks 1, 2, 2.5 or 5 x 10^k apart,
    labelled by :func:`tick_labels`. It never suggests what the data do not
    say: it never crosses 0 that no value crosses (a reward that is never
    negative gets no negative axis), it takes in 0 when the values lie
    nearer 0 than apart (so KL at 1e-9 is drawn as the near-zero it is, not
    full height), a flat series sits on an axis from 0, and a series flat
    at 0 gets the axis 0..1."""
    lo, hi = min(values), max(values)
    if lo > 0 and (lo <= hi / 2 or lo == hi):
        lo = 0.0
    elif hi < 0 and (hi >= lo / 2 or lo == hi):
        hi = 0.0
    if lo == hi:  # both 0
        hi = 1.0
    raw = (hi - lo) / ticks
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw * (1 - 1e-9))
    first, last = math.floor(lo / step + 1e-9), math.ceil(hi / step - 1e-9)
    marks = [i * step for i in range(first, last + 1)]
    return {"min": marks[0], "max": marks[-1], "ticks": [list(t) for t in zip(marks, tick_labels(marks, step),
                                                                                strict=True)]}


_ENV_PATTERNS = (re.compile(r"reward/(.+)/mean"), re.compile(r"heldout/(.+)/reward/mean"),
                 re.compile(r"strict/(.+)/mean"), re.compile(r"gap/(.+)"), re.compile(r"hacks/(.+)/[^/]+"))


def charts(metrics: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The report's curves from metrics.jsonl rows, named as the trainer
    logs them: the overall reward (train ``reward/mean``, held-out
    ``heldout/reward/mean``); per env key, its training reward
    (``reward/<env>/mean``), held-out reward (``heldout/<env>/reward/mean``)
    and strict score (``strict/<env>/mean``); ``kl*``, ``entropy*``,
    ``response_length/*`` and ``episode_tokens/*``, ``clip/*``; the gap
    (``gap/<env>``, all envs on one chart); each env's hack signals
    (``hacks/<env>/<signal>``) and the alarm's ``hacks/alerts``; the
    schedule: each env's and each domain's sampling weight
    (``schedule/<env>/weight``, ``schedule_domain/<domain>/weight``), the
    held-out reward per domain (``heldout_domain/<domain>/reward/mean``),
    the forgetting drops (``forgetting/<env>/drop``,
    ``forgetting_domain/<domain>/drop``) and ``forgetting/alerts``. Charts
    with no data are left out, and a series identical to one before it in
    its chart (``kl`` is ``kl/update`` without a reference model) is shown
    once, named for both. Each chart: ``{"id", "title", "group", "axis"
    (:func:`axis`), "series": [{"name", "metric", "points": [[step, value],
    ...]}]}``."""
    names = sorted({k for r in metrics for k in r if k != "step"})
    envs = sorted({m.group(1) for n in names for p in _ENV_PATTERNS if (m := p.fullmatch(n))
                   and n not in ("hacks/alerts",)})

    def series(label: str, metric: str) -> dict[str, Any]:
        return {"name": label, "metric": metric,
                "points": [[r["step"], r[metric]] for r in metrics if metric in r]}

    out: list[dict[str, Any]] = []

    def add(group: str, title: str, parts: list[tuple[str, str]]) -> None:
        found: list[dict[str, Any]] = []
        for label, metric in parts:
            if metric not in names:
                continue
            new = series(label, metric)
            same = next((s for s in found if s["points"] == new["points"]), None)
            if same is None:
                found.append(new)
            else:
                same["name"] += f" (= {label})"
        if found:
            values = [v for s in found for _, v in s["points"]]
            out.append({"id": f"chart-{len(out)}", "group": group, "title": title, "axis": axis(values),
                        "series": found})

    add("reward", "Reward (all environments)", [("train", "reward/mean"), ("held-out", "heldout/reward/mean"),
                                                ("held-out macro", "heldout/reward/macro_mean")])
    for env in envs:
        add("reward", f"Reward: {env}", [("train", f"reward/{env}/mean"), ("held-out", f"heldout/{env}/reward/mean"),
                                         ("strict (train sample)", f"strict/{env}/mean")])
    add("training", "KL", [(n, n) for n in names if n == "kl" or n.startswith("kl/")])
    add("training", "Entropy", [(n, n) for n in names if n == "entropy" or n.startswith("entropy/")])
    add("training", "Length (tokens)", [(n, n) for n in names
                                        if n.startswith(("response_length/", "episode_tokens/"))])
    add("training", "Clip fraction", [(n, n) for n in names if n.startswith("clip/")])
    add("monitoring", "Gap: training reward - strict score", [(env, f"gap/{env}") for env in envs])
    for env in envs:
        prefix = f"hacks/{env}/"
        add("monitoring", f"Hack signals: {env}",
            [(n[len(prefix):], n) for n in names if n.startswith(prefix) and "/" not in n[len(prefix):]])
    add("monitoring", "Hack alarm alerts", [("alerts", "hacks/alerts")])
    # the schedule (docs/training.md#schedules-task-ratios-that-adapt): sampling weights, held-out by domain, forgetting
    add("schedule", "Sampling weight per environment", [(n.split("/", 1)[1].rsplit("/", 1)[0], n) for n in names
                                                         if n.startswith("schedule/") and n.endswith("/weight")])
    add("schedule", "Sampling weight per domain", [(n.split("/")[1], n) for n in names
                                                   if n.startswith("schedule_domain/") and n.endswith("/weight")])
    add("schedule", "Held-out reward per domain", [(n.split("/")[1], n) for n in names
                                                   if n.startswith("heldout_domain/") and n.endswith("/reward/mean")])
    add("schedule", "Held-out drop from its best (forgetting)",
        [(n.split("/", 1)[1].rsplit("/", 1)[0], n) for n in names
         if n.startswith(("forgetting/", "forgetting_domain/")) and n.endswith("/drop")])
    add("schedule", "Forgetting alarm alerts", [("alerts", "forgetting/alerts")])
    return out


# ------------------------------------------------------------ first vs last
def _first_last(run_dir: Path, files: list[Path], max_chars: int, notes: list[str],
                ) -> tuple[list[dict[str, Any]], tuple[int, int] | None]:
    """Held-out tasks of the first eval beside the same tasks (group and
    sample index) at the last: the last policy answer and reward of each,
    those whose reward changed most first (up to
    :data:`FIRST_LAST_PER_ENV` of each env: its biggest changes)."""
    heldout = sorted(((checkpoint_step(p.name[len("heldout_"):].split(".")[0]), p) for p in files
                      if p.name.startswith("heldout_")), key=lambda sp: sp[0] if sp[0] is not None else -1)
    heldout = [(s, p) for s, p in heldout if s is not None]
    if len(heldout) < 2:
        return [], None
    (s0, p0), (s1, p1) = heldout[0], heldout[-1]

    def answers(path: Path) -> dict[tuple[str, int], dict[str, Any]]:
        out = {}
        for _, row in read_jsonl_tolerant(path, notes):
            messages = row.get("messages")
            if not isinstance(messages, list):
                continue
            said = [message_text(m) for m in messages if isinstance(m, dict) and m.get("role") == "assistant"]
            prompt = next((message_text(m) for m in messages if isinstance(m, dict) and m.get("role") == "user"), "")
            out[(str(row.get("group_id")), int(row.get("sample_index") or 0))] = {
                "env": str(row.get("env_id")), "task": str(row.get("task_id", "")),
                "prompt": _text(prompt, max_chars), "answer": _text(said[-1] if said else "", max_chars),
                "reward": _number(row.get("reward"))}
        return out

    first, last = answers(p0), answers(p1)
    pairs: list[dict[str, Any]] = []
    per_env: dict[str, int] = {}
    def change(k: tuple[str, int]) -> float:
        a, b = first[k]["reward"], last[k]["reward"]
        return abs(b - a) if a is not None and b is not None else 0.0

    for key in sorted(first.keys() & last.keys(), key=lambda k: (-change(k), first[k]["env"], k)):
        a, b = first[key], last[key]
        if a["task"] != b["task"] or per_env.get(a["env"], 0) >= FIRST_LAST_PER_ENV:
            continue
        per_env[a["env"]] = per_env.get(a["env"], 0) + 1
        pairs.append({"env": a["env"], "task": a["task"], "prompt": a["prompt"], "first": a["answer"],
                      "first_reward": a["reward"], "last": b["answer"], "last_reward": b["reward"]})
    return pairs, (s0, s1)


# --------------------------------------------------------------------- all
def load_run(run_dir: str | Path, *, max_trajectories: int = 400, max_chars: int = 2000) -> RunData:
    """Read what a run directory holds (see the module doc)."""

    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise FileNotFoundError(f"{run_dir} is not a directory")
    data = RunData(run_dir)
    notes = data.notes
    metrics_path, samples_path, results_path = (run_dir / METRICS_FILE, run_dir / SAMPLES_FILE,
                                                run_dir / RESULTS_FILE)
    traj_files = trajectory_files(run_dir)
    if results_path.exists() or samples_path.exists():
        data.kind = "eval"
    elif metrics_path.exists() or traj_files:
        data.kind = "train"
    else:
        notes.append(f"{run_dir} holds no {METRICS_FILE}, trajectories/, {RESULTS_FILE} or {SAMPLES_FILE}: "
                     "nothing to report yet.")
        return data
    rng = random.Random(0)
    if data.kind == "train":
        if metrics_path.exists():
            data.metrics = _metrics(metrics_path, notes)
            data.charts = charts(data.metrics)
            data.axes = {name: axis([r[name] for r in data.metrics if name in r])
                         for name in sorted({k for r in data.metrics for k in r if k != "step"})}
            if not data.metrics:
                notes.append(f"{METRICS_FILE} holds no step yet.")
        else:
            notes.append(f"no {METRICS_FILE}: no curves.")
        if not traj_files:
            notes.append("no trajectories/ (logging.save_trajectories=false?): no episodes to browse.")
        # a long run: episodes from an even spread of the steps' files, so the report stays quick to write
        max_files = max(2, max_trajectories // 4)
        train = [p for p in traj_files if not p.name.startswith("heldout_")]
        held = [p for p in traj_files if p.name.startswith("heldout_")]
        chosen = sorted(_spread(train, max_files) + _spread(held, max_files))
        if len(chosen) < len(traj_files):
            notes.append(f"episodes are sampled from {len(chosen)} of the {len(traj_files)} trajectory files "
                         "(evenly spaced steps); the episode count is theirs.")
        quota = max(1, max_trajectories // max(1, len(chosen)))
        for path in chosen:
            name = path.name.split(".")[0]
            step = checkpoint_step(name[len("heldout_"):] if name.startswith("heldout_") else name)
            found, n = _episodes(path, step=step, quota=quota, rng=rng, max_chars=max_chars, notes=notes)
            data.trajectories += found
            data.total_trajectories += n
        data.first_last, data.first_last_steps = _first_last(run_dir, traj_files, max_chars, notes)
        if data.first_last_steps is None:
            notes.append("fewer than two held-out evals in trajectories/: no first-vs-last comparison.")
    else:
        if results_path.exists():
            try:
                results = json.loads(results_path.read_text(encoding="utf-8"))
                data.results = results if isinstance(results, dict) else {}
                if not isinstance(results, dict):
                    notes.append(f"{RESULTS_FILE} is not a JSON object; ignored.")
            except (OSError, ValueError) as e:
                notes.append(f"{RESULTS_FILE} could not be read ({e}); the results table is missing.")
        else:
            notes.append(f"no {RESULTS_FILE} yet (the eval is still running?): no results table.")
        if samples_path.exists():
            found, n = _episodes(samples_path, step=None, quota=max_trajectories, rng=rng, max_chars=max_chars,
                                 notes=notes)
            data.trajectories, data.total_trajectories = found, n
        else:
            notes.append(f"no {SAMPLES_FILE}: no episodes to browse.")
        if data.results and not any(isinstance(r, dict) and "strict_mean" in r for r in data.results.values()):
            notes.append(f"{RESULTS_FILE} has no strict_mean (written by an older gym-llm-eval): "
                         "no strict-grader column.")
    old = sum(t["old"] for t in data.trajectories)
    if old:
        notes.append(f"{old} episode(s) predate the hack_signals / strict_reward fields (an older gym-llm): "
                     "they are shown without them.")
    data.links = [name for name in (RESULTS_FILE, SAMPLES_FILE, EVAL_REPORT_FILE, METRICS_FILE, ERRORS_FILE,
                                    "reward_by_env.png", "reward_curve.png") if (run_dir / name).exists()]
    return data
