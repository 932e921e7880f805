"""tool/Shell-v0: gold replay in the real sandbox, the target-state check,
a work dir that persists within an episode and dies with it, isolation
between episodes, sandbox failures reported as reward_error."""

from __future__ import annotations

import json
import os

import pytest
from gym_llm_sandbox import FileState
from gym_llm_tools.shell import KINDS, SHELL_POLICY, verify_shell_state

import gym_llm
from tests.tools.conftest import needs_jail

ENV_ID = "tool/Shell-v0"



def bash(command: str) -> str:
    return f'<tool_call>{json.dumps({"name": "bash", "arguments": {"command": command}})}</tool_call>'


def test_registered_and_made_without_touching_the_sandbox():
    spec = gym_llm.spec(ENV_ID)
    assert spec.plugin == "gym-llm-tools" and spec.kwargs == {"difficulty": 0.5, "max_turns": 10}
    env = gym_llm.make(ENV_ID).unwrapped
    assert env._sandbox is None and env.shell.session is None


def test_difficulty_zero_is_one_obvious_command():
    env = gym_llm.make(ENV_ID, difficulty=0.0).unwrapped
    for i in range(30):
        task = env.task_set.get("train", i)
        assert len(task.answer) == 1 and not any(op in task.answer[0]["arguments"]["command"] for op in "|;&")
        assert task.metadata["kinds"][0] in {"create", "mkdir", "rename", "copy", "delete"}
        assert len(task.metadata["files"]) <= 1  # no distractor files
    env = gym_llm.make(ENV_ID, difficulty=1.0).unwrapped
    hard = {k for i in range(80) for k in env.task_set.get("train", i).metadata["kinds"]}
    assert hard == {k.name for k in KINDS}


@needs_jail
@pytest.mark.parametrize("difficulty", [0.0, 0.5, 1.0])
def test_gold_commands_reach_the_target_and_doing_nothing_does_not(fmt, replay, difficulty):
    env = gym_llm.make(ENV_ID, difficulty=difficulty)
    for i in range(10):
        obs, info = env.reset(options={"task_index": i})
        task = env.unwrapped.task
        assert [t["function"]["name"] for t in info["tools"]] == ["bash"]
        assert json.dumps(info["tools"][0], sort_keys=True) in obs[0]["content"]
        total, step_info = replay(env, task.answer, fmt, "Done.")
        assert total == 1.0, (step_info, task.answer)
        env.reset(options={"task_index": i})
        _, r, term, _, step_info = env.step("Done.")
        assert r == 0.0 and term and step_info["reason"]


@needs_jail
def test_work_dir_persists_across_turns_and_dies_with_the_episode():
    env = gym_llm.make(ENV_ID, difficulty=0.0, max_turns=5)
    env.reset(options={"task_index": 0})
    path = env.unwrapped.shell.session.path
    obs, *_ = env.step(bash("echo one > scratch && pwd"))
    assert obs[0]["content"] == "exit code: 0\nstdout:\n/work\n"
    obs, *_ = env.step(bash("cat scratch; ls nope"))
    assert obs[0]["content"].startswith("exit code: 2\nstdout:\none\n\nstderr:\n")
    _, r, term, _, info = env.step("Done.")
    assert term and r == 0.0 and "unexpected scratch" in info["problems"]
    assert not os.path.exists(path)


@needs_jail
def test_episodes_are_isolated_from_each_other_and_from_the_host():
    env = gym_llm.make(ENV_ID, difficulty=0.0, max_turns=5)
    env.reset(options={"task_index": 0})
    first = env.unwrapped.shell.session.path
    env.step(bash("echo secret > leak.txt"))
    env.reset(options={"task_index": 0})  # a new episode mid-way: the old dir is removed
    assert not os.path.exists(first) and env.unwrapped.shell.session.path != first
    obs, *_ = env.step(bash(f"ls -a; cat leak.txt; ls {os.getcwd()} /root"))
    assert "leak.txt" not in obs[0]["content"].split("stderr")[0]
    assert "No such file" in obs[0]["content"] and "pyproject.toml" not in obs[0]["content"]
    env.close()
    assert env.unwrapped.shell.session is None


@needs_jail
def test_permissions_names_and_contents_are_all_checked():
    env = gym_llm.make(ENV_ID, difficulty=0.6)
    task = next(t for t in (env.unwrapped.task_set.get("train", i) for i in range(200))
                if t.metadata["kinds"] == ["chmod"])
    command = task.answer[0]["arguments"]["command"]
    src = command.split()[-1]
    for action, ok in [(command, True), (f"chmod 777 {src}", False), (f"{command} && touch extra", False),
                       (f"echo changed >> {src} && {command}", False), (f"{command} && mv {src} x", False)]:
        env.reset(options={"task_index": task.metadata["index"]})
        env.step(bash(action))
        _, r, *_ = env.step("Done.")
        assert r == float(ok), action


def test_verifier_on_snapshots():
    target = {"d": {"kind": "dir"}, "d/a.txt": {"kind": "file", "content": "x\n", "mode": 0o600}}
    good = {"d": FileState("dir", 0o755, 0), "d/a.txt": FileState("file", 0o600, 1, content=b"x")}
    assert verify_shell_state(target, good).score == 1.0  # the final newline is optional
    bad = {
        "wrong mode": {**good, "d/a.txt": FileState("file", 0o644, 2, content=b"x\n")},
        "wrong content": {**good, "d/a.txt": FileState("file", 0o600, 2, content=b"y\n")},
        "not utf-8": {**good, "d/a.txt": FileState("file", 0o600, 2, content=b"\xff\n")},
        "too big to read": {**good, "d/a.txt": FileState("file", 0o600, 1 << 30, content=None)},
        "a link": {**good, "d/a.txt": FileState("symlink", 0o777, 1, target="/etc/passwd")},
        "missing": {"d": good["d"]},
        "extra": {**good, "e": FileState("dir", 0o755, 0)},
    }
    for name, snapshot in bad.items():
        r = verify_shell_state(target, snapshot)
        assert r.score == 0.0 and r.info["reason"], name


def test_a_broken_sandbox_is_a_reward_error_not_a_model_failure():
    env = gym_llm.make(ENV_ID, sandbox={"extra_ro_mounts": ["/nonexistent/path"]})
    _, info = env.reset(seed=0)
    assert info["tools"][0]["function"]["name"] == "bash"
    obs, r, *_ = env.step(bash("ls"))
    assert obs[0]["content"].startswith("Error: SandboxError")
    _, r, term, _, info = env.step("Done.")
    assert term and r == 0.0 and "does not exist" in info["reward_error"]


@needs_jail
def test_astep_runs_commands_concurrently_without_blocking_the_loop():
    import asyncio
    import time

    envs = [gym_llm.make(ENV_ID, difficulty=0.0, max_turns=3) for _ in range(2)]  # the pool has >= 2 slots

    async def main():
        for env in envs:
            await env.unwrapped.areset(options={"task_index": 0})
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                await asyncio.sleep(0.05)
                ticks += 1

        tick = asyncio.create_task(ticker())
        start = time.perf_counter()
        steps = await asyncio.gather(*(env.unwrapped.astep(bash("sleep 1 && echo up")) for env in envs))
        elapsed = time.perf_counter() - start
        tick.cancel()
        return steps, elapsed, ticks

    steps, elapsed, ticks = asyncio.run(main())
    assert all(s[0][0]["content"] == "exit code: 0\nstdout:\nup\n" for s in steps)
    assert elapsed < 1.7 and ticks >= 10  # 2 x 1 s ran side by side while the loop kept ticking
    for env in envs:
        env.close()


@needs_jail
def test_a_work_dir_past_its_quota_stops_the_episode():
    from gym_llm_tools.shell import WORKDIR_MAX_ENTRIES

    env = gym_llm.make(ENV_ID, difficulty=0.0, max_turns=4)
    env.reset(options={"task_index": 0})
    cap_mb = SHELL_POLICY.limits.tmpfs_mb
    obs, *_ = env.step(bash(f"for i in $(seq {cap_mb // 4 + 2}); do head -c 4M /dev/zero > f$i; done"))
    assert "No space left on device" in obs[0]["content"]  # the session's size cap refused the writes
    total = sum(e.stat().st_size for e in os.scandir(env.unwrapped.shell.session.path))
    assert total <= cap_mb << 20
    env.reset(options={"task_index": 0})
    obs, *_ = env.step(bash(f"mkdir d && cd d && seq {WORKDIR_MAX_ENTRIES + 10} | xargs touch"))
    assert "exceeded its quota" in obs[0]["content"]
    obs, *_ = env.step(bash("rm -rf d"))
    assert obs[0]["content"].startswith("Error: RuntimeError: no more commands")
    _, r, term, _, info = env.step("Done.")
    assert term and r == 0.0 and "quota" in info["reason"] and "reward_error" not in info


@needs_jail
def test_doctor_row_runs_a_real_command():
    from gym_llm_tools.plugin import gym_llm_doctor

    (row,) = gym_llm_doctor()
    assert row["name"] == "tools: bash sandbox (tool/Shell-v0)" and row["ok"], row
