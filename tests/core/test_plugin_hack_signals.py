"""A third-party plugin adds its own hack signal through the
``gym_llm_hack_signals`` hook: the example plugin (tests/plugins/gym-llm-example,
installed as its own distribution) is the example docs/monitoring.md shows."""

from __future__ import annotations

from pathlib import Path

import gym_llm
from gym_llm.envs.registry import list_envs, plugin_manager, spec
from gym_llm.runtime.monitoring import all_signals, detect, hack_fractions, signals_for
from gym_llm.runtime.rollout import Trajectory

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


DOC = Path(__file__).resolve().parents[2] / "docs" / "monitoring.md"


def test_monitoring_doc_lists_every_signal_with_its_threshold_and_every_strict_grader():
    """docs/monitoring.md has a table row for each signal of the domain
    plugins, with its default threshold, and names every env's strict grader."""
    text = DOC.read_text()
    rows = {line.split("|")[1].strip(): line for line in text.splitlines() if line.startswith("| `")}
    for impl in plugin_manager().hook.gym_llm_hack_signals.get_hookimpls():
        if impl.plugin_name == "gym-llm-example":  # shown as code, the hook itself
            assert "gym_llm_hack_signals" in text and 'HackSignal("unreversed"' in text
            continue
        for s in impl.function():
            row = rows.get(f"`{s.name}`")
            assert row is not None, f"{s.name} ({impl.plugin_name}) has no row in docs/monitoring.md"
            assert f"| {s.threshold:g} |" in row, (s.name, s.threshold, row)
    graders = text[text.index("## Every strict grader"):text.index("## Adding a signal")]
    # the domain plugins' envs (not the example plugin's, nor ids other test modules register in this process)
    shipped = [e for e in list_envs() if spec(e).plugin and not e.startswith("example/")]
    assert len(shipped) >= 16
    missing = [e for e in shipped if f"{e.split('/')[1]}`" not in graders]
    assert missing == []
