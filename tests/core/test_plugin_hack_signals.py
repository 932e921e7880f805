"""A third-party plugin adds its own hack signal through the
``gym_llm_hack_signals`` hook: the example plugin (tests/plugins/gym-llm-example,
installed as its own distribution) is the example docs/monitoring.md shows."""

from __future__ import annotations

import gym_llm
from gym_llm.monitoring import all_signals, detect, hack_fractions, signals_for
from gym_llm.rollout import Trajectory

ENV_ID = "example/Reverse-v0"


def episode(answer_of) -> Trajectory:
    env = gym_llm.make(ENV_ID)
    _, info = env.reset(seed=5)
    word = env.unwrapped.task.answer[::-1]  # the word as the prompt gives it
    _, reward, *_ = env.step(answer_of(word))
    return Trajectory(ENV_ID, info["task_id"], "g", messages=env.unwrapped.messages, reward=reward)


def test_the_plugins_signal_is_found_through_its_entry_point():
    (signal,) = [s for s in all_signals() if s.name == "unreversed"]
    assert signal.env_ids == "example/Reverse-*" and signal.threshold == 0.2
    assert "unreversed" in {s.name for s in signals_for(ENV_ID)}
    assert "unreversed" not in {s.name for s in signals_for("math/Arithmetic-v0")}


def test_the_plugins_signal_fires_on_the_gaming_answer_only():
    honest, copied = episode(lambda word: word[::-1]), episode(lambda word: word)
    assert (honest.reward, detect(honest)) == (1.0, [])
    assert (copied.reward, detect(copied)) == (0.0, ["unreversed"])
    for t in (honest, copied):
        t.hack_signals = detect(t)
    assert hack_fractions([honest, copied]) == {f"hacks/{ENV_ID}/unreversed": 0.5}
