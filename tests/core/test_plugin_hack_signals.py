"""A third-party plugin's env class declares its own hack signal
(``hack_signals``): the example plugin (tests/plugins/gym-llm-example,
installed as its own distribution) is the example docs/monitoring.md shows."""

from __future__ import annotations

from pathlib import Path

import gym_llm
from gym_llm.envs.registry import list_envs, spec
from gym_llm.runtime.monitoring import detect, hack_fractions, signals_for
from gym_llm.runtime.rollout import Trajectory

ENV_ID = "example/Reverse-v0"


def episode(answer_of) -> Trajectory:
    env = gym_llm.make(ENV_ID)
    _, info = env.reset(seed=5)
    word = env.unwrapped.task.answer[::-1]  # the word as the prompt gives it
    _, reward, *_ = env.step(answer_of(word))
    return Trajectory(ENV_ID, info["task_id"], "g", messages=env.unwrapped.messages, reward=reward)


def test_the_plugins_signal_is_found_through_its_entry_point():
    (signal,) = signals_for(ENV_ID)
    assert (signal.name, signal.threshold) == ("unreversed", 0.2)
    assert signals_for(ENV_ID) == type(gym_llm.make(ENV_ID).unwrapped).hack_signals
    assert "unreversed" not in {s.name for s in signals_for("math/Arithmetic-v0")}


def test_the_plugins_signal_fires_on_the_gaming_answer_only():
    honest, copied = episode(lambda word: word[::-1]), episode(lambda word: word)
    assert (honest.reward, detect(honest)) == (1.0, [])
    assert (copied.reward, detect(copied)) == (0.0, ["unreversed"])
    for t in (honest, copied):
        t.hack_signals = detect(t)
    assert hack_fractions([honest, copied]) == {f"hacks/{ENV_ID}/unreversed": 0.5}


DOC = Path(__file__).resolve().parents[2] / "docs" / "monitoring.md"


def test_monitoring_doc_lists_every_signal_with_its_threshold_and_every_strict_grader():
    """docs/monitoring.md has a table row for each signal the domain plugins'
    envs declare, with its default threshold, and names every env's strict grader."""
    text = DOC.read_text()
    assert 'hack_signals = (HackSignal("unreversed"' in text  # the example plugin's, shown as code
    rows = {line.split("|")[1].strip(): line for line in text.splitlines() if line.startswith("| `")}
    # the domain plugins' envs (not the example plugin's, nor ids other test modules register in this process)
    shipped = [e for e in list_envs() if spec(e).plugin and not e.startswith("example/")]
    assert len(shipped) >= 16
    for env_id in shipped:
        for s in signals_for(env_id):
            row = rows.get(f"`{s.name}`")
            assert row is not None, f"{s.name} ({env_id}) has no row in docs/monitoring.md"
            assert f"| {s.threshold:g} |" in row, (s.name, s.threshold, row)
    graders = text[text.index("## Every strict grader"):text.index("## Adding a signal")]
    # a row names an env (`Algebra-v0`) or a whole domain (`reasoning/*`, one grader for every family)
    missing = [e for e in shipped if f"{e.split('/')[1]}`" not in graders and f"`{e.split('/')[0]}/*`" not in graders]
    assert missing == []
