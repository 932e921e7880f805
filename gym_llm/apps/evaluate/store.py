"""An evaluation's output directory: its file names, the resumable sample
store, and the settings a resumed run must match.

Contract:

* ``samples.jsonl`` (:class:`SampleStore`) holds whole tasks only: a task's
  ``k`` rows are appended with one write, and opening the store drops any
  task that has fewer (a run killed mid-write), so a rerun redoes exactly
  the unfinished tasks. A task is identified by ``(group_id, task_id)``.
* ``eval_config.json`` records :func:`fingerprint`; :func:`check_resume`
  refuses to add samples to a directory recorded with other settings
  (:data:`RESUME_KEYS`), rather than mix two models' samples.
"""

from __future__ import annotations

import json
import logging
import os
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

from gym_llm.apps.runs import EVAL_CONFIG_FILE
from gym_llm.envs.jsonio import dumps_utf8
from gym_llm.runtime.policies.base import SamplingParams

__all__ = ["SampleStore", "append_errors", "fingerprint", "check_resume", "RESUME_KEYS"]

log = logging.getLogger(__name__)

#: Settings that must match for a rerun to resume into the same directory
#: (env kwargs need not: samples carry theirs, and other kwargs are new tasks).
RESUME_KEYS = ("policy", "sampling", "k", "split", "seed", "max_episode_tokens")


def _jsonl(rows: list[dict[str, Any]]) -> str:
    return "".join(dumps_utf8(r) + "\n" for r in rows)


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
        tmp.write_text(_jsonl(self.rows), encoding="utf-8")
        os.replace(tmp, self.path)

    def done(self) -> set[tuple[str, str]]:
        """``(group_id, task_id)`` of every complete task."""
        return {(r["group_id"], r["task_id"]) for r in self.rows}

    def sort(self, key: Callable[[dict[str, Any]], Any]) -> None:
        """Put the rows in ``key`` order and rewrite the file, so the same
        rows make the same file whatever order their tasks finished in
        (``concurrency``, backend, resume)."""
        self.rows.sort(key=key)
        self._rewrite()

    def append(self, rows: list[dict[str, Any]]) -> None:
        """Append one task's rows with a single write (all or nothing on a
        clean kill; a torn write is dropped by the next open)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(_jsonl(rows))
            f.flush()
        self.rows += rows


def append_errors(path: str | os.PathLike, rows: list[dict[str, Any]]) -> None:
    """Append the rows of a task that could not run to ``errors.jsonl``."""
    with open(path, "a", encoding="utf-8") as f:
        f.write(_jsonl(rows))


def fingerprint(identity: Mapping[str, Any], sampling: SamplingParams, k: int, split: str,
                max_episode_tokens: int | None, seed: int) -> dict[str, Any]:
    """What ``eval_config.json`` records of a run's settings (:data:`RESUME_KEYS`)."""
    return {
        "policy": json.loads(json.dumps(dict(identity), default=str)),
        "sampling": {k_: v for k_, v in asdict(sampling).items() if k_ != "stop_token_ids"},
        "k": k,
        "split": split,
        "seed": seed,
        "max_episode_tokens": max_episode_tokens,
    }


def check_resume(out_dir: str | os.PathLike, fp: Mapping[str, Any]) -> None:
    """Refuse (``ValueError``) to add samples of other settings to ``out_dir``."""
    out_dir = Path(out_dir)
    path = out_dir / EVAL_CONFIG_FILE
    if not path.exists():
        return
    old = json.loads(path.read_text())
    diffs = [f"{name}: {old.get(name)} before, {fp[name]} now" for name in RESUME_KEYS
             if old.get(name) != fp[name]]
    if diffs:
        raise ValueError(
            f"{out_dir} holds an evaluation with other settings ({'; '.join(diffs)}): evaluate into "
            f"a new directory, or pass resume=false to start this one over")
