"""The gym-llm command line, run as a user runs it (a subprocess)."""

import json
import subprocess
import sys

import gym_llm


def gym_llm_cli(*args, stdin=""):
    return subprocess.run([sys.executable, "-m", "gym_llm.apps.cli", *args], input=stdin,
                          capture_output=True, text=True, timeout=120)


def test_list_json_matches_the_registry():
    out = gym_llm_cli("list", "--json")
    assert out.returncode == 0
    rows = json.loads(out.stdout)
    # ids registered from test code (plugin None) exist only in this process
    assert [r["id"] for r in rows] == [i for i in gym_llm.list_envs() if gym_llm.spec(i).plugin]
    assert all(set(r) == {"id", "domain", "plugin", "description"} for r in rows)


def test_describe_and_unknown_id():
    out = gym_llm_cli("describe", "example/Reverse-v0")
    assert out.returncode == 0
    for needle in ("Reverse a short word", "default kwargs", "split sizes", "sample prompt", "Reverse the word"):
        assert needle in out.stdout
    out = gym_llm_cli("describe", "example/Revers-v0")
    assert out.returncode == 2 and "did you mean" in out.stdout


def test_play_reads_assistant_turns_from_the_terminal():
    env = gym_llm.make("example/Reverse-v0")
    env.reset(seed=0)
    answer = env.unwrapped.task.answer
    out = gym_llm_cli("play", "example/Reverse-v0", "--seed", "0", stdin=f"{answer}\n.\n")
    assert out.returncode == 0 and "reward 1.000" in out.stdout and "terminated" in out.stdout
    out = gym_llm_cli("play", "example/Reverse-v0", "--seed", "0", stdin="")
    assert out.returncode == 1 and "abandoned" in out.stdout


def test_doctor_reports_every_component():
    out = gym_llm_cli("doctor", "--json")
    rows = {r["name"]: r for r in json.loads(out.stdout)}
    for name in ("python", "torch", "gpu", "vllm", "flash-attn", "plugins"):
        assert name in rows
    assert any("nsjail" in name for name in rows)
    assert all(r["ok"] or r["fix"] for r in rows.values())
    assert out.returncode == (0 if all(r["ok"] for r in rows.values()) else 1)


def test_serve_subcommand_hands_its_arguments_to_the_server():
    out = gym_llm_cli("serve", "--help")
    assert out.returncode == 0
    assert out.stdout.startswith("usage: gym-llm serve") and "--max-sessions" in out.stdout
    out = gym_llm_cli("serve", "math/Arithmetc-v0", "--port", "0")
    assert out.returncode == 2 and "did you mean 'math/Arithmetic-v0'" in out.stdout
