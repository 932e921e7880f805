"""Stopping a training run by signal without losing its steps.

While :class:`StopOnSignal` is active (the trainer's loop), the first SIGINT
or SIGTERM only records the request: the trainer finishes the step in
progress, writes a checkpoint and raises
:class:`gym_llm.apps.hydra_app.Interrupted` (exit status ``128 + signal``). A
second signal raises :class:`~gym_llm.apps.hydra_app.Interrupted` at once, from
wherever the main thread is, with no checkpoint of the step in progress.
Handlers can only be set from the main thread; elsewhere (a run started from
a worker thread) the signals keep their previous handlers.

The same path stops a run from inside: :meth:`StopOnSignal.request` (the
hack alarm of ``trainer.monitoring.alarm=stop``, the forgetting alarm of
``trainer.monitoring.forgetting=stop``) records a reason; the trainer
checkpoints the step and raises :class:`AlarmStop` (exit status 3).
"""

from __future__ import annotations

import signal
import sys
import threading
from types import FrameType, TracebackType
from typing import Any

from gym_llm.apps.hydra_app import Interrupted

__all__ = ["StopOnSignal", "AlarmStop", "STOP_SIGNALS"]

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class AlarmStop(Interrupted):
    """A run stopped by its own alarm (a hack signal past its threshold with
    ``trainer.monitoring.alarm=stop``) after checkpointing the step: the apps
    exit with status 3 and the message, as for a stop signal."""

    exit_code_alarm = 3

    def __init__(self, message: str):
        super().__init__(signal.SIGTERM, message)
        self.exit_code = self.exit_code_alarm


class StopOnSignal:
    """Context manager: SIGINT/SIGTERM become a stop request (:attr:`signum`),
    the second one an immediate :class:`~gym_llm.apps.hydra_app.Interrupted`."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self.reason: str | None = None
        self._previous: dict[int, Any] = {}

    @property
    def requested(self) -> bool:
        """A signal arrived or :meth:`request` was called: stop after the step in progress."""
        return self.signum is not None or self.reason is not None

    def request(self, reason: str) -> None:
        """Ask for a stop after the step in progress, for ``reason`` (no signal)."""
        self.reason = self.reason or reason

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        if self.signum is not None:
            raise Interrupted(signum, f"second {name}: stopped at once, without a checkpoint of the step "
                                      f"in progress (rerun the same command to resume from the last one)")
        self.signum = signum
        # stderr, not the log only: the user pressing Ctrl-C is watching the terminal
        print(f"gym-llm-train: {name} received: finishing the current step, then writing a checkpoint "
              f"(send it again to stop at once)", file=sys.stderr, flush=True)

    def install(self) -> None:
        """Take over SIGINT and SIGTERM (main thread only)."""
        if threading.current_thread() is threading.main_thread():
            for s in STOP_SIGNALS:
                self._previous[s] = signal.signal(s, self._handle)

    def restore(self) -> None:
        """Give the signals their previous handlers back."""
        for s, handler in self._previous.items():
            signal.signal(s, handler)
        self._previous.clear()

    def __enter__(self) -> StopOnSignal:
        self.install()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.restore()
