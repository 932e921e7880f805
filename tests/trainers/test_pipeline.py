"""The async pipeline's staleness bound, with a producer that records which
weight version each batch was generated with."""

from __future__ import annotations

import threading
import time

import pytest
from gym_llm_trainers.pipeline import AsyncRollout


def _drive(max_staleness: int, steps: int = 8, update_s: float = 0.02, produce_s: float = 0.005):
    loaded = {"version": 0}
    lock = threading.Lock()

    def produce(step):
        time.sleep(produce_s)
        with lock:
            return {"generated_with": loaded["version"]}

    def apply(weights):
        with lock:
            loaded["version"] = weights

    pipe = AsyncRollout(produce, apply, first_step=1, last_step=steps, version=0, max_staleness=max_staleness)
    seen = []
    try:
        for step in range(1, steps + 1):
            item, _ = pipe.get(step, timeout=10)
            assert item.payload["generated_with"] == item.version
            seen.append((step - 1) - item.version)
            time.sleep(update_s)  # the update of this step
            pipe.publish(step, step)
    finally:
        pipe.close()
    return seen


@pytest.mark.parametrize("k", [0, 1, 2])
def test_staleness_never_exceeds_the_bound(k):
    seen = _drive(k)
    assert all(0 <= s <= k for s in seen), seen
    if k:
        assert max(seen) == k  # a fast producer runs ahead as far as allowed


def test_zero_staleness_is_synchronous():
    assert _drive(0) == [0] * 8


def test_producer_errors_surface_in_the_trainer():
    def produce(step):
        raise ValueError("env down")

    pipe = AsyncRollout(produce, lambda w: None, first_step=1, last_step=3, version=0)
    with pytest.raises(ValueError, match="env down"):
        pipe.get(1, timeout=5)
    pipe.close()
