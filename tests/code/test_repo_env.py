"""code/Repo-v0: every task kind's reference earns 1.0 and the untouched project 0.0
(kinds x difficulties x seeds), the tools, the token budget, the persistent kernel."""

from __future__ import annotations

import json

import pytest
from gym_llm_code.repo.projects import KINDS

import gym_llm


def calls(*pairs: tuple[str, dict]) -> str:
    return "".join(f"<tool_call>{json.dumps({'name': n, 'arguments': a})}</tool_call>" for n, a in pairs)


def write_answer(task) -> str:
    return calls(*[("write_file", {"path": p, "content": c}) for p, c in task.answer.items()], ("submit", {}))


@pytest.fixture(scope="module", params=KINDS)
def kind(request, sandbox):
    return request.param


@pytest.mark.parametrize("difficulty", [0.0, 0.5, 1.0])
def test_reference_earns_one_untouched_zero(kind, difficulty):
    env = gym_llm.make("code/Repo-v0", kind=kind, difficulty=difficulty)
    for seed in (0, 1):
        env.reset(seed=seed)
        task = env.unwrapped.task
        assert task.metadata["kind"] == kind and task.answer
        _, reward, terminated, _, info = env.step(write_answer(task))
        assert (reward, terminated) == (1.0, True), info
        assert info["reward_components"] == {"hidden": 1.0, "visible": 1.0, "import": 1.0}
        env.reset(seed=seed)
        _, reward, terminated, _, info = env.step(calls(("submit", {})))
        assert reward == 0.0 and terminated and info["hidden_total"] >= 2, info
    env.close()


def test_strict_grader_reference_and_partial(kind):
    env = gym_llm.make("code/Repo-v0", kind=kind, difficulty=0.5)
    env.reset(seed=2)
    _, reward, *_ = env.step(write_answer(env.unwrapped.task))
    assert env.unwrapped.strict_score(env.unwrapped.messages, reward).score == 1.0
    env.reset(seed=2)
    _, reward, *_ = env.step(calls(("submit", {})))
    assert env.unwrapped.strict_score(env.unwrapped.messages, reward).score == 0.0
    env.close()


def test_strict_grader_replays_the_episode_in_another_env(sandbox):
    """Pooled strict grading resets another env: the final sources come from replaying the calls."""
    from gym_llm_code.repo import env as repo_env

    env = gym_llm.make("code/Repo-v0", kind="bug", difficulty=0.3)
    env.reset(seed=4)
    _, reward, *_ = env.step(write_answer(env.unwrapped.task))
    messages = env.unwrapped.messages
    repo_env._FINAL_SOURCES.clear()
    other = gym_llm.make("code/Repo-v0", kind="bug", difficulty=0.3)
    other.reset(seed=4)
    assert other.unwrapped.strict_score(messages, reward).score == 1.0
    env.close(), other.close()


def test_tasks_are_deterministic_and_splits_disjoint():
    a = gym_llm.make("code/Repo-v0", seed=3)
    b = gym_llm.make("code/Repo-v0", seed=3)
    assert a.reset(seed=3)[0] == b.reset(seed=3)[0]
    assert a.unwrapped.task.answer == b.unwrapped.task.answer
    held = gym_llm.make("code/Repo-v0", split="heldout")
    train_ids = {a.reset(options={"task_index": i})[1]["task_id"] for i in range(4)}
    held_ids = {held.reset(options={"task_index": i})[1]["task_id"] for i in range(4)}
    assert len(train_ids) == len(held_ids) == 4 and not train_ids & held_ids


def test_tools(sandbox):
    env = gym_llm.make("code/Repo-v0", kind="bug", difficulty=0.5, max_output_chars=300)
    _, info = env.reset(seed=5)
    assert {t["function"]["name"] for t in info["tools"]} >= {"list_files", "read_file", "grep", "write_file",
                                                             "edit_file", "run", "python", "submit"}
    pkg = env.unwrapped.task.metadata["package"]
    obs, reward, terminated, truncated, info = env.step(calls(
        ("list_files", {}),
        ("read_file", {"path": f"{pkg}/models.py", "start_line": 2, "end_line": 3}),
        ("grep", {"pattern": "def parse_records"}),
        ("edit_file", {"path": "README.md", "old": "# ", "new": "# the "}),
        ("edit_file", {"path": "README.md", "old": "no such text", "new": ""}),
        ("run", {"command": "python3 -m unittest discover -s tests 2>&1 | tail -1; head -c 2000 /dev/zero | tr '\\0' a"}),
        ("read_file", {"path": "../etc/passwd"}),
        ("python", {"code": "import os\nn = len(os.listdir('.'))"}),
        ("python", {"code": "n"}),
    ))
    out = [m["content"] for m in obs]
    assert f"{pkg}/models.py" in out[0] and "tests/" in out[0]
    assert out[1].splitlines()[0].lstrip().startswith("2 ") and len(out[1].splitlines()) == 2
    assert f"{pkg}/models.py:" in out[2] and "def parse_records" in out[2]
    assert out[3] == "edited README.md" and "occurs 0 times" in out[4]
    assert "exit code: 0" in out[5] and "OK" in out[5] and "more characters of the output cut" in out[5]
    assert out[6].startswith("Error:") and "outside the repository" in out[6]
    assert out[8].strip() == "3"  # the package dir, tests/ and README.md
    assert not terminated and not truncated and reward == 0.0
    env.close()


def test_token_budget_truncates_and_scores_the_project(sandbox):
    env = gym_llm.make("code/Repo-v0", kind="feature", token_budget=3000)
    env.reset(seed=1)
    task = env.unwrapped.task
    # the prompt is ~1,500 estimated tokens; reading every file passes 3,000
    _, reward, terminated, truncated, info = env.step(calls(
        *[("write_file", {"path": p, "content": c}) for p, c in task.answer.items()],
        *[("read_file", {"path": p}) for p in task.metadata["files"]]))
    assert truncated and not terminated and reward == 1.0
    assert "token budget of 3000" in info["truncated_reason"]
    env.reset(seed=1)  # the next episode has its turns back
    assert env.unwrapped.max_turns == 30
    env.close()


def test_persistent_kernel_in_math_python_tool(sandbox):
    env = gym_llm.make("math/PythonTool-v0", persistent=True)
    env.reset(seed=0)
    env.step(calls(("python", {"code": "import math\nx = 6"})))
    obs, *_ = env.step(calls(("python", {"code": "print(math.factorial(x))"})))
    assert obs[0]["content"] == "720"
    env.reset(seed=0)  # a new episode starts empty
    obs, *_ = env.step(calls(("python", {"code": "print(x)"})))
    assert "NameError" in obs[0]["content"]
    env.close()


def test_python_tool_keeps_state_like_a_notebook(sandbox):
    env = gym_llm.make("code/Repo-v0", kind="bug")
    env.reset(seed=0)
    obs, *_ = env.step(calls(
        ("python", {"code": "a = 1\nraise ValueError('boom')"}),   # a cell that raised leaves its state
        ("python", {"code": "a"}),
        ("python", {"code": "def broken(:"}),                      # a syntax error leaves nothing
        ("python", {"code": "print(a + 1)\n_ = open('made.txt', 'a').write('x')"}),
        ("python", {"code": "open('made.txt').read()"}),
    ))
    out = [m["content"] for m in obs]
    assert "ValueError: boom" in out[0] and "<cell>" in out[0]
    assert out[1].strip() == "1" and out[3].strip() == "2"
    assert "SyntaxError" in out[2] and "ast.py" not in out[2]
    assert out[4].strip() == "'xx'"  # documented: an earlier cell's file side effect happens again
    env.close()
