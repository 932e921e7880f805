"""gym_llm_sandbox.aio: running coroutines from sync code, inside or outside a running loop."""

from __future__ import annotations

import asyncio
import threading

import pytest
from gym_llm_sandbox.aio import BackgroundLoop, background_loop, run_sync


async def _thread_name() -> str:
    await asyncio.sleep(0)
    return threading.current_thread().name


async def _boom() -> None:
    raise KeyError("inside")


def test_run_sync_from_plain_code_and_from_inside_a_running_loop():
    assert run_sync(_thread_name()) == threading.current_thread().name  # asyncio.run, here

    async def caller() -> str:  # a sync API used from async code must not deadlock
        return run_sync(_thread_name())

    assert asyncio.run(caller()) == "gym_llm-run_sync"
    with pytest.raises(KeyError, match="inside"):
        run_sync(_boom())


def test_run_sync_reuses_a_runners_loop():

    async def loop_id() -> int:
        return id(asyncio.get_running_loop())

    with asyncio.Runner() as runner:
        loops = [run_sync(loop_id(), runner) for _ in range(3)]
    assert len(set(loops)) == 1


def test_background_loop_is_shared_and_safe_from_its_own_thread():
    assert background_loop() is background_loop()
    bg = BackgroundLoop(name="test-loop")
    assert bg.run(_thread_name()) == "test-loop"

    async def nested() -> str:  # a coroutine on the loop calling a sync API that uses the loop
        return bg.run(_thread_name())

    assert bg.run(nested()) == "gym_llm-run_sync"
    with pytest.raises(KeyError):
        bg.run(_boom())
