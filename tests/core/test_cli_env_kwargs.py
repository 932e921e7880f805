"""What first-day users reached for in ``gym-llm`` (issue 38, item 10):
``list --domain``, env kwargs for ``play`` and ``describe`` (read by the
one reader ``serve`` uses), and ``describe`` stating how the reward is
computed, for a third-party plugin's env too. Each failed on bc6474d."""

from __future__ import annotations

import json

import pytest

import gym_llm
from gym_llm.apps import env_kwargs, serve
from gym_llm.apps.cli import main


def run(capsys, *argv: str, stdin: str | None = None, monkeypatch=None) -> tuple[int, str]:
    if stdin is not None:
        import io

        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = main(list(argv))
    out = capsys.readouterr()
    return code, " ".join((out.out + out.err).split())  # rich wraps long lines


def test_list_domain(capsys):
    code, out = run(capsys, "list", "--domain", "math", "--json")
    rows = json.loads(capsys.readouterr().out or out)
    assert code == 0 and rows and {r["domain"] for r in rows} == {"math"}
    assert [r["id"] for r in rows] == [i for i in gym_llm.list_envs()
                                       if gym_llm.spec(i).domain == "math" and gym_llm.spec(i).plugin]
    code, out = run(capsys, "list", "--domain", "mth")
    assert code == 2 and "no domain 'mth'" in out and "math" in out and "Traceback" not in out


def test_play_takes_env_kwargs_anywhere_after_the_id(capsys, monkeypatch):
    env = gym_llm.make("example/Reverse-v0", length=7)
    env.reset(seed=0)
    answer = env.unwrapped.task.answer
    assert len(answer) == 7  # not the registered length=4
    code, out = run(capsys, "play", "example/Reverse-v0", "length=7", "--seed", "0", stdin=f"{answer}\n.\n",
                    monkeypatch=monkeypatch)
    assert code == 0 and "reward 1.000" in out
    code, out = run(capsys, "play", "example/Reverse-v0", "--seed", "0", "length=7", stdin=f"{answer}\n.\n",
                    monkeypatch=monkeypatch)
    assert code == 0 and "reward 1.000" in out


@pytest.mark.parametrize(("argv", "says"), [
    (["play", "example/Reverse-v0", "nope=1"], "unexpected keyword argument 'nope'"),
    (["play", "example/Reverse-v0", "length"], "'length' is not KEY=VALUE"),
    (["play", "example/Reverse-v0", "split=heldout"], "use --split"),
    (["describe", "example/Reverse-v0", "seed=3"], "use --seed"),
])
def test_bad_env_kwargs_exit_2_naming_them(capsys, monkeypatch, argv, says):
    code, out = run(capsys, *argv, stdin="", monkeypatch=monkeypatch)
    assert code == 2 and says in out and "Traceback" not in out


def test_serve_reads_env_kwargs_with_the_same_reader():
    assert serve.parse_env_kwargs is env_kwargs.parse_env_kwargs
    assert env_kwargs.parse_env_kwargs(["difficulty=0.5", "max_turns=3", "name=", "flag=true"]) == {
        "difficulty": 0.5, "max_turns": 3, "name": "", "flag": True}


@pytest.mark.parametrize(("argv", "formula"), [
    (["example/Reverse-v0"], "reward: 1 * exact"),  # a third-party plugin's env (tests/plugins)
    (["math/Arithmetic-v0"], "reward: 1 * correct + 0 * format"),
    (["math/Arithmetic-v0", "format_weight=0.2", "max_attempts=3"],
     "reward: (0.8 * correct + 0.2 * format) * 0.5^k on attempt k = 0, 1, ..."),
    (["math/PythonTool-v0", "format_weight=0.25"], "reward: 0.75 * correct + 0.25 * format"),
    (["code/Stdio-v0", "reward=pass_rate"], "reward: 1 * pass_rate + 0 * passed"),
    (["longctx/Needle-v0"], "reward: max(0, 1 * recall - 1 * hedging_penalty)"),
    (["instruct/Multi-v0"], "reward: min(constraint verdicts, read strict) * request"),
    (["instruct/MultiTurn-v0", "reward=partial", "loose=true"],
     "reward: (mean(constraint verdicts, read loose) * request) * 0.7^k on attempt k"),
    (["reasoning/Maze-v0"], "reward: 1 * correct + 0 * format"),
    (["longctx/DocNavigator-v0"], "reward: max(0, 1 * recall - 1 * hedging_penalty)"),
    (["tool/FunctionCalling-v0"], "reward: matched * gold_calls / max(gold_calls, calls)"),
    (["tool/FunctionCalling-v0", "partial_credit=false", "max_turns=2", "attempt_discount=0.5"],
     "reward: (1 * exact) * 0.5^k on attempt k"),
    (["tool/Shell-v0"], "reward: 1 * state"),
    (["tool/Orders-v0"], "reward: policy * state * (outputs == 1)"),
    (["code/Repo-v0"], "reward: 1 * hidden + 0 * visible + 0 * import"),
])
def test_describe_states_how_the_reward_is_computed(capsys, argv, formula):
    code, out = run(capsys, "describe", *argv)
    assert code == 0 and formula in out


def test_describe_says_when_an_env_does_not_state_its_reward(capsys):
    """A plain function as the reward: nothing states how it is computed."""
    env_id = "test/UnstatedReward-v0"
    if env_id not in gym_llm.list_envs():
        gym_llm.register(env_id, lambda **kw: gym_llm.SingleTurnEnv(
            gym_llm.ProceduralTasks("test-unstated", lambda rng, d: gym_llm.Draft("Say hi.", "hi")),
            reward_fn=lambda task, response: float(response == task.answer), **kw))
    code, out = run(capsys, "describe", env_id)
    assert code == 0 and "reward: not stated by the env (LLMEnv.reward_formula); its components are []" in out


@pytest.mark.parametrize("env_id", [i for i in gym_llm.list_envs() if (gym_llm.spec(i).plugin or "").startswith("gym-llm-")])
def test_every_env_of_our_plugins_states_its_reward(env_id):
    env = gym_llm.make(env_id, seed=0)
    try:
        assert env.unwrapped.reward_formula()
    finally:
        env.close()
