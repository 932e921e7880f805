"""The asynchronous rollout pipeline: generation of step t+1 overlaps the
update of step t, with a hard bound on staleness.

A producer thread generates batches in step order. Before it starts the batch
of step ``s`` it applies the newest published weights and waits until their
version (the number of finished updates) is at least ``s - 1 - max_staleness``;
the batch trained at step ``s`` would be on-policy with version ``s - 1``, so
its staleness ``(s - 1) - version`` never exceeds ``max_staleness``. The
trainer consumes batches in order, publishing weights after each update. The
off-policy gap is corrected by the PPO ratio against recomputed old
log-probs and the truncated importance weight against the generating ones.

Idle time is measured on both sides: ``trainer_idle_s`` (the update waited
for a batch) and ``rollout_idle_s`` (the producer waited for weights).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["AsyncRollout", "Produced"]


@dataclass
class Produced:
    """One batch from the producer: ``step`` it is for, the weight
    ``version`` that generated it, the ``payload`` and the producer's idle
    time before it (waiting for weights)."""

    step: int
    version: int
    payload: Any
    rollout_idle_s: float


class AsyncRollout:
    """Run ``produce(step)`` in a background thread, ahead of the trainer.

    ``apply_weights(weights)`` runs in the producer thread, between batches,
    whenever :meth:`publish` made a newer version available (so the engine is
    never updated mid-generation). ``first_step`` is the first step to
    produce; ``version`` the weight version already loaded in the engine.
    """

    def __init__(
        self,
        produce: Callable[[int], Any],
        apply_weights: Callable[[Any], None],
        *,
        first_step: int,
        last_step: int,
        version: int,
        max_staleness: int = 1,
    ):
        if max_staleness < 0:
            raise ValueError("max_staleness must be >= 0")
        self.produce, self.apply_weights = produce, apply_weights
        self.first_step, self.last_step = first_step, last_step
        self.max_staleness = max_staleness
        self._loaded_version = version
        self._published: tuple[int, Any] | None = None
        self._cond = threading.Condition()
        self._out: queue.Queue = queue.Queue(maxsize=max_staleness + 1)
        self._stop = False
        self._thread = threading.Thread(target=self._run, name="gym_llm-async-rollout", daemon=True)
        self._thread.start()

    def publish(self, version: int, weights: Any) -> None:
        """Make weights of ``version`` (updates finished) available to the producer."""
        with self._cond:
            self._published = (version, weights)
            self._cond.notify_all()

    def get(self, step: int, timeout: float | None = None) -> tuple[Produced, float]:
        """The batch of ``step`` and how long the trainer waited for it.
        Re-raises an exception of the producer."""
        t0 = time.perf_counter()
        item = self._out.get(timeout=timeout)
        waited = time.perf_counter() - t0
        if isinstance(item, BaseException):
            raise item
        if item.step != step:
            raise RuntimeError(f"async rollout out of order: expected step {step}, got {item.step}")
        return item, waited

    def close(self) -> None:
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        while self._thread.is_alive():  # unblock a producer stuck on a full queue
            try:
                self._out.get_nowait()
            except queue.Empty:
                pass
            self._thread.join(timeout=0.05)

    # ------------------------------------------------------------------
    def _await_version(self, needed: int) -> float:
        t0 = time.perf_counter()
        with self._cond:
            while not self._stop:
                pub = self._published
                if pub is not None and pub[0] > self._loaded_version:
                    self._published = None
                    self._cond.release()
                    try:
                        self.apply_weights(pub[1])
                    finally:
                        self._cond.acquire()
                    self._loaded_version = pub[0]
                    continue
                if self._loaded_version >= needed:
                    break
                self._cond.wait()
        return time.perf_counter() - t0

    def _run(self) -> None:
        try:
            for step in range(self.first_step, self.last_step + 1):
                idle = self._await_version(step - 1 - self.max_staleness)
                if self._stop:
                    return
                payload = self.produce(step)
                item = Produced(step, self._loaded_version, payload, idle)
                while not self._stop:
                    try:
                        self._out.put(item, timeout=0.1)
                        break
                    except queue.Full:
                        continue
        except BaseException as e:  # surfaced by get()
            self._out.put(e)
