"""The per-turn time budget of tool envs (``ToolEnv.turn_time_budget_s``): the
tool calls of one assistant turn share it, a call running when it is spent is
stopped, later ones are not run, and the turn is answered and scored. Sixteen
Shell commands of up to 10 s each once took 160 s, past the Ray backend's
120 s step deadline, and the episode was lost instead of scored."""

from __future__ import annotations

import asyncio
import inspect
import json
import time

import pytest
from gym_llm_tools.shell import SHELL_POLICY

import gym_llm
from gym_llm import Task, Tool, ToolEnv
from tests.tools.conftest import needs_jail

SPENT = "Error: turn time budget spent"


def calls(*commands: str) -> str:
    """One assistant turn calling ``bash`` once per command."""
    return "".join(f'<tool_call>{json.dumps({"name": "bash", "arguments": {"command": c}})}</tool_call>'
                   for c in commands)


def test_the_default_budget_keeps_a_shell_turn_inside_the_ray_step_deadline():
    """The reason for the budget, from the owners of each number: a turn's calls at
    their longest overrun the deadline, the budget does not."""
    ray_vec = pytest.importorskip("gym_llm.runtime.distributed.ray_vec")  # the [ray] extra
    deadline = inspect.signature(ray_vec.RayVectorLLMEnv).parameters["step_timeout_s"].default
    shell = type(gym_llm.make("tool/Shell-v0").unwrapped)
    assert shell.max_calls_per_turn * SHELL_POLICY.limits.wall_time_s > deadline
    assert shell.turn_time_budget_s is not None and shell.turn_time_budget_s <= deadline / 2


class NapEnv(ToolEnv):
    """A tool env whose one async tool sleeps (no sandbox needed)."""

    turn_time_budget_s = 0.5

    def episode_tools(self, task):
        async def nap(seconds: float) -> str:
            """Sleep.

            Args:
                seconds: How long.
            """
            await asyncio.sleep(seconds)
            return f"slept {seconds}"

        return [Tool.from_function(nap)]

    def score_episode(self, final_message):
        return 1.0 if final_message is not None else 0.25


def nap_turn(*seconds: float) -> str:
    return "".join(f'<tool_call>{json.dumps({"name": "nap", "arguments": {"seconds": s}})}</tool_call>'
                   for s in seconds)


def test_calls_of_a_turn_share_the_budget_the_running_one_is_stopped_the_rest_not_run():
    env = NapEnv([Task(id="t", prompt="nap", answer=None)], max_turns=3)
    env.reset(seed=0)
    t0 = time.monotonic()
    obs, r, term, trunc, info = env.step(nap_turn(*[0.2] * 16))
    elapsed = time.monotonic() - t0
    assert elapsed < 1.5  # the 16 naps would take 3.2 s
    contents = [m["content"] for m in obs]
    assert contents[0] == contents[1] == "slept 0.2"
    stopped = [c for c in contents if c.endswith("this call was stopped")]
    unrun = [c for c in contents if c.endswith("this call was not run")]
    assert len(stopped) == 1 and stopped[0].startswith(SPENT)
    assert len(unrun) >= 12 and all(c.startswith(SPENT) for c in unrun)
    assert not (term or trunc) and r == 0.0 and info["reason"].startswith(SPENT)
    # one long call is cut at the budget, not at its own end; the next turn has a fresh budget
    t0 = time.monotonic()
    obs, *_ = env.step(nap_turn(30.0))
    assert time.monotonic() - t0 < 1.5 and obs[0]["content"].endswith("this call was stopped")
    _, r, term, trunc, info = env.step(nap_turn(0.1))
    assert trunc and r == 0.25 and "reason" not in info  # the last turn: within its budget, scored


def test_the_last_turn_past_the_budget_is_scored_and_no_budget_means_none():
    env = NapEnv([Task(id="t", prompt="nap", answer=None)], max_turns=1)
    env.reset(seed=0)
    _, r, term, trunc, info = env.step(nap_turn(5.0, 0.1))
    assert trunc and r == 0.25 and not info.get("reward_error")  # score_episode(None): scored as usual
    env = NapEnv([Task(id="t", prompt="nap", answer=None)], max_turns=2)
    env.turn_time_budget_s = None
    env.reset(seed=0)
    obs, *_ = env.step(nap_turn(0.3, 0.3))
    assert [m["content"] for m in obs] == ["slept 0.3", "slept 0.3"]


@needs_jail
def test_a_shell_turn_of_sixteen_sleeps_ends_at_the_budget_and_the_episode_is_scored():
    """A real Shell episode: 16 ``sleep`` commands in one turn stop at the budget
    (their jails killed), the work dir survives for the next turn, the episode scores."""
    env = gym_llm.make("tool/Shell-v0", difficulty=0.0, max_turns=3)
    env.unwrapped.turn_time_budget_s = 2.0
    env.reset(options={"task_index": 0})
    gold = env.unwrapped.task.answer[0]["arguments"]["command"]
    t0 = time.monotonic()
    obs, r, term, trunc, info = env.step(calls(*[f"sleep 1; echo {i} >> slept" for i in range(16)]))
    elapsed = time.monotonic() - t0
    assert elapsed < 5.0, elapsed  # not 16 s
    contents = [m["content"] for m in obs]
    assert contents[0].startswith("exit code: 0") and sum(c.startswith(SPENT) for c in contents) >= 12
    assert not (term or trunc) and info["reason"].startswith(SPENT)
    obs, *_ = env.step(calls("rm -f slept", gold))
    assert [m["content"][:12] for m in obs] == ["exit code: 0"] * 2  # the session outlived the cut
    _, r, term, _, info = env.step("Done.")
    assert term and r == 1.0 and not info.get("reward_error")


@needs_jail
def test_a_shell_turn_on_its_last_turn_is_scored_at_the_budget():
    env = gym_llm.make("tool/Shell-v0", difficulty=0.0, max_turns=1)
    env.unwrapped.turn_time_budget_s = 1.0
    env.reset(options={"task_index": 0})
    t0 = time.monotonic()
    _, r, term, trunc, info = env.step(calls("sleep 8", "sleep 8"))
    assert time.monotonic() - t0 < 4.0
    assert trunc and r == 0.0 and not info.get("reward_error") and info["reason"]  # scored, with a reason
