"""gym-llm-eval's `sandbox` group (the same conf/sandbox/ as gym-llm-train)
reaches every evaluated environment that runs code."""

from __future__ import annotations

from pathlib import Path

import pytest

import gym_llm
from gym_llm.apps.evaluate import EvalEnv, with_sandbox
from gym_llm.apps.evaluate.app import CONFIG_DIR, eval_envs

PARITY_ID = "evaltest/Parity-v0"  # registered by conftest.py; takes no sandbox
CODE_ID = "code/PythonFunctions-v0"


def _compose(*overrides: str):
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=CONFIG_DIR, version_base="1.3"):
        return compose(config_name="eval", overrides=list(overrides))


def _by_id(envs: list[EvalEnv]) -> dict[str, EvalEnv]:
    return {e.id: e for e in envs}


def test_sandbox_strict_reaches_the_code_env() -> None:
    envs = _by_id(eval_envs(_compose("sandbox=strict")))
    sandbox = envs[CODE_ID].kwargs["sandbox"]
    assert sandbox["memory_mb"] == 256 and sandbox["wall_time_s"] == 5
    assert None not in sandbox.values()
    # environments that run no code are made exactly as before
    assert "sandbox" not in envs["math/Arithmetic-v0"].kwargs
    assert "sandbox" not in envs["longctx/Needle-v0"].kwargs
    made = gym_llm.make(CODE_ID, split="heldout", seed=0, **dict(envs[CODE_ID].kwargs))
    try:
        assert made.unwrapped.sandbox.limits.memory_mb == 256
    finally:
        made.close()


def test_the_default_group_drops_nulls() -> None:
    """null means "keep the domain's own": only the keys the group sets are passed."""
    import yaml

    group = yaml.safe_load((Path(CONFIG_DIR) / "sandbox" / "default.yaml").read_text())
    sandbox = _by_id(eval_envs(_compose()))[CODE_ID].kwargs["sandbox"]
    assert sandbox == {k: v for k, v in group.items() if v is not None and k != "defaults"}
    assert sandbox["isolation"] == "nsjail"


def test_an_entrys_own_sandbox_kwarg_wins() -> None:
    cfg = _compose("sandbox=strict", "+envs.envs.functions.kwargs.sandbox.memory_mb=512")
    assert _by_id(eval_envs(cfg))[CODE_ID].kwargs["sandbox"] == {"memory_mb": 512}
    envs = [EvalEnv(CODE_ID, {"sandbox": None}), EvalEnv(PARITY_ID), EvalEnv("tool/Shell-v0")]
    out = with_sandbox(envs, {"memory_mb": 256, "cpu_time_s": None})
    assert out[0] == envs[0] and out[1] == envs[1]  # explicit None kept; no sandbox kwarg taken
    assert out[2].kwargs == {"sandbox": {"memory_mb": 256}}
    with pytest.raises(gym_llm.UnknownEnvError):
        with_sandbox([EvalEnv("nope/Missing-v0")], {})
