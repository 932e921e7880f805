"""The run's reward-hacking monitors (``trainer.monitoring``, :mod:`gym_llm.runtime.monitoring`).

Per step: :meth:`RunMonitor.start` annotates every collected episode with
its hack signals and starts strict-grading a sample of them in a background
thread (sandboxed graders then run while the step trains);
:meth:`RunMonitor.finish` waits for it and returns
``hacks/<env_id>/<signal>``, ``strict/<env_id>/mean`` and ``gap/<env_id>``
with the alarm's alerts. Metric keys are the mixture's (the env id unless two
entries share it), as for ``reward/<env_id>/mean``.
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import Future, ThreadPoolExecutor

from gym_llm_sandbox.aio import run_sync

from gym_llm.envs.taskref import TaskRef
from gym_llm.runtime.mixture import step_rng
from gym_llm.runtime.monitoring import (
    HackAlarm,
    HackAlert,
    StrictGrader,
    annotate,
    hack_fractions,
    strict_metrics,
)
from gym_llm.runtime.rollout import Trajectory

from .collection import Batch
from .config import MonitoringConfig

__all__ = ["RunMonitor"]

log = logging.getLogger("gym_llm_trainers")


class RunMonitor:
    """Hack signals, the strict-grader sample and the alarm of one run.

    ``keys``: mixture entry -> metric key; ``seed``, ``rank``: what the
    strict sample's draw depends on (with the step), so a resumed run grades
    what the uninterrupted one did.
    """

    def __init__(self, cfg: MonitoringConfig, keys: dict[str, str], *, seed: int, rank: int = 0):
        self.cfg = cfg
        self.keys = keys
        self.seed, self.rank = seed, rank
        self.alarm = HackAlarm(cfg.thresholds, min_trajectories=cfg.min_trajectories, patience=cfg.patience)
        self.grader = StrictGrader()
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="gym_llm-strict")
        self._pending: Future | None = None
        self._runner: asyncio.Runner | None = None

    def key_of(self, t: Trajectory) -> str:
        """The metric key of an episode: its mixture entry's."""
        return self.keys.get(t.info.get("group_env") or "", t.env_id)

    def sample(self, step: int, trajs: list[Trajectory]) -> list[Trajectory]:
        """The episodes of ``trajs`` to strict-grade this step: a
        ``strict_fraction`` share drawn per env (at least
        ``strict_min_per_env``), of those that ran and were scored."""
        cfg = self.cfg
        if cfg.strict_fraction <= 0:
            return []
        rng = step_rng(self.seed, "strict", step, self.rank)
        by_key: dict[str, list[Trajectory]] = {}
        for t in trajs:
            if t.ok and t.messages:
                by_key.setdefault(self.key_of(t), []).append(t)
        chosen: list[Trajectory] = []
        for key in sorted(by_key):
            group = by_key[key]
            n = min(len(group), max(cfg.strict_min_per_env, round(cfg.strict_fraction * len(group))))
            chosen += rng.sample(group, n)
        return chosen

    def start(self, step: int, batch: Batch) -> None:
        """Annotate ``batch``'s episodes and start grading its strict sample."""
        trajs = batch.trajectories_all
        if self.cfg.signals:
            annotate(trajs)
        todo = self.sample(step, trajs)
        if todo:
            self._pending = self._thread.submit(self._grade, todo, batch.episodes)

    def _grade(self, todo: list[Trajectory], episodes: dict[str, TaskRef]) -> None:
        async def all_of() -> None:
            await asyncio.gather(*(self.grader.grade(t, episodes[t.group_id]) for t in todo))

        # one loop for the thread's whole life: the pooled envs' async state is bound to it
        if self._runner is None:
            self._runner = asyncio.Runner()
        run_sync(all_of(), self._runner)

    def finish(self, batch: Batch) -> tuple[dict[str, float], list[HackAlert]]:
        """Wait for the strict sample; the step's monitoring metrics and the
        alarm's new alerts (none when ``alarm=off``)."""
        if self._pending is not None:
            self._pending.result()
            self._pending = None
        trajs = batch.trajectories_all
        metrics = hack_fractions(trajs, self.key_of) if self.cfg.signals else {}
        metrics.update(strict_metrics(trajs, self.key_of))
        measured = self.cfg.signals and self.cfg.alarm != "off"
        return metrics, self.alarm.update(trajs, self.key_of) if measured else []

    def close(self) -> None:
        if self._pending is not None:
            self._pending.cancel()
        self._thread.submit(self._close_in_thread).result()
        self._thread.shutdown(wait=True)

    def _close_in_thread(self) -> None:
        self.grader.close()
        if self._runner is not None:
            self._runner.close()
            self._runner = None
