"""gym_llm.apps.integrations.skyrl with the real skyrl-gym: every gym-llm id is a
skyrl_gym env, and an episode played through it equals the same actions
played through ``env.step`` directly."""

from __future__ import annotations

import json

import gymnasium
import pytest
import skyrl_gym  # the [skyrl] extra: a missing peer fails here, it is not skipped
from omegaconf import OmegaConf

import gym_llm
from gym_llm.apps.integrations import skyrl as gsk
from gym_llm.envs.registry import plugin_manager

from .completions import KINDS, turns

N_TASKS = 2
# The installed plugins' ids: test modules register fixture envs (test/*) at import,
# which collection order would otherwise add here.
PLUGIN_ENV_IDS = [i for i in gym_llm.list_envs() if gym_llm.spec(i).plugin]


def extras_of(row: dict) -> dict:
    """What SkyRL's dataset hands the env: the row less prompt and env_class,
    plus the ``max_turns`` its generator injects."""
    extras = {k: v for k, v in row.items() if k not in ("prompt", "env_class")}
    extras["max_turns"] = 1
    return extras


def direct_episode(row: dict, actions: list) -> list[tuple]:
    env = gym_llm.make(row["env_id"], split=row["split"], seed=row["seed"], **json.loads(row["env_kwargs"]))
    try:
        obs, _ = env.reset(seed=row["seed"], options={"task_index": row["task_index"]})
        out = [("init", obs)]
        for action in actions:
            obs, reward, term, trunc, info = env.step(action)
            out.append((obs, reward, term or trunc, info.get("reason"), info["reward_components"],
                        info.get("reward_error")))
            if term or trunc:
                break
        return out
    finally:
        env.close()


def skyrl_episode(row: dict, actions: list) -> list[tuple]:
    env = skyrl_gym.make(row["env_class"], env_config=OmegaConf.create({}), extras=extras_of(row))
    try:
        obs, _ = env.init(row["prompt"])
        out = [("init", obs)]
        for action in actions:
            step = env.step(action)
            meta = step["metadata"]
            out.append((step["observations"], step["reward"], step["done"], meta.get("reason"),
                        meta["reward_components"], meta.get("reward_error")))
            if step["done"]:
                break
        return out
    finally:
        env.close()


@pytest.mark.parametrize("env_id", PLUGIN_ENV_IDS)
@pytest.mark.parametrize("kind", KINDS)
def test_episodes_equal_env_step(env_id: str, kind: str) -> None:
    for row in gsk.dataset_rows(env_id, n=N_TASKS, seed=11):
        actions = turns(env_id, kind, row["seed"], row["task_index"])
        ours, theirs = direct_episode(row, actions), skyrl_episode(row, actions)
        assert theirs == ours
        assert theirs[0][1] == row["prompt"]  # the env's prompt is the row's
        if kind == "right" and env_id.split("/")[0] in ("math", "code"):
            assert theirs[-1][1] == 1.0, theirs[-1]  # the reference answer is right
        if kind != "right":
            assert theirs[-1][1] == 0.0 and theirs[-1][3], theirs[-1]  # lowest reward, with a reason


def test_every_id_is_registered_and_later_ids_too() -> None:
    # the mirror is a plugin of the gym_llm_env_registered hook: pluggy replayed the past ids to it
    assert plugin_manager().is_registered(gsk)
    for env_id in gym_llm.list_envs():
        assert gsk.skyrl_name(env_id) in skyrl_gym.registry
    new_id = "skyrltest/Arithmetic-v0"
    gym_llm.register(new_id, gym_llm.spec("math/Arithmetic-v0").entry_point)
    try:
        env = skyrl_gym.make(gsk.skyrl_name(new_id), extras={"seed": 0, "task_index": 3})
        assert isinstance(env, gsk.GymLLMTextEnv) and env.ref.env_id == new_id
        obs, info = env.init([])
        assert info["env_id"] == new_id and info["task_index"] == 3 and obs
        env.close()
    finally:
        gym_llm.registry.specs.pop(new_id, None)
        gymnasium.registry.pop(new_id, None)
        skyrl_gym.registry.pop(gsk.skyrl_name(new_id), None)


def test_generic_name_reads_env_id_from_extras() -> None:
    row = gsk.dataset_rows("math/Arithmetic-v0", n=1, seed=5)[0]
    env = skyrl_gym.make(gsk.GENERIC_NAME, extras=extras_of(row))
    obs, info = env.init(row["prompt"])
    assert obs == row["prompt"] and info["task_id"] == row["task_id"]
    env.close()


def test_multi_turn_feedback_and_env_config_kwargs() -> None:
    """A feedback env (math with max_turns=2 from SkyRL's env_config): a wrong
    first answer gets the env's feedback as the observation, not done."""
    row = gsk.dataset_rows("math/Arithmetic-v0", n=1, seed=3)[0]
    env = skyrl_gym.make(row["env_class"], env_config=OmegaConf.create({"max_turns": 2}), extras=extras_of(row))
    assert env.ref.kwargs == {"max_turns": 2} and env.max_turns == 2
    env.init(row["prompt"])
    first = env.step("\\boxed{-1}")
    assert not first["done"] and first["observations"] and first["observations"][0]["role"] == "user"
    answer = env.env.unwrapped.task.answer
    second = env.step(f"\\boxed{{{answer}}}")
    direct = direct_episode({**row, "env_kwargs": '{"max_turns": 2}'}, ["\\boxed{-1}", f"\\boxed{{{answer}}}"])
    assert second["done"] and second["reward"] > 0 and second["reward"] == direct[-1][1]  # the retry's discount
    assert env.get_metrics()["turns"] == 2
    env.close()


@pytest.mark.parametrize(("extras", "named"), [
    ({"env_id": "math/Arithmetic-v0", "seed": 0}, "task_index"),
    ({"env_id": "math/Arithmetic-v0", "seed": "x", "task_index": 0}, "'seed'"),
    ({"env_id": "math/Arithmetic-v0", "seed": 0, "task_index": 0, "env_kwargs": "{not json"}, "env_kwargs"),
    ({"env_id": "math/NoSuchEnv-v0", "seed": 0, "task_index": 0}, "math/NoSuchEnv-v0"),
    ({"seed": 0, "task_index": 0}, "env_id"),
])
def test_rows_that_name_no_task_score_lowest_with_the_column(extras: dict, named: str) -> None:
    with pytest.warns(RuntimeWarning, match=named):
        env = skyrl_gym.make(gsk.GENERIC_NAME, extras=extras)
    prompt = [{"role": "user", "content": "q"}]
    assert env.init(prompt)[0] == prompt
    step = env.step("\\boxed{4}")
    assert step["done"] and step["reward"] == 0.0 and step["observations"] == []
    assert named in step["metadata"]["reward_error"] and named in step["metadata"]["reason"]
    env.close()


def _generic(extras: dict, env_config: dict) -> gsk.GymLLMTextEnv:
    return skyrl_gym.make(gsk.GENERIC_NAME, env_config=OmegaConf.create(env_config), extras=extras)


@pytest.mark.parametrize("row_names_it", [False, True])
def test_env_config_names_the_env_id_of_rows_that_name_none(row_names_it: bool) -> None:
    """One env per dataset: SkyRL's env_config names the id, the rows only seed
    and task index; the episode is the id's own (not a missing-column zero)."""
    row = gsk.dataset_rows("math/Arithmetic-v0", n=1, seed=8)[0]
    extras = extras_of(row)
    if not row_names_it:
        del extras["env_id"]
    env = _generic(extras, {"env_id": "math/Arithmetic-v0"})
    assert env.task_error is None and env.ref.env_id == "math/Arithmetic-v0" and env.ref.kwargs == {}
    obs, info = env.init(row["prompt"])
    assert obs == row["prompt"] and info["task_id"] == row["task_id"]
    step = env.step(f"\\boxed{{{env.env.unwrapped.task.answer}}}")
    assert step["done"] and step["reward"] == 1.0 and not step["metadata"].get("reward_error")
    env.close()


def test_env_config_id_and_kwargs_together_and_the_row_s_id_wins() -> None:
    math_row = gsk.dataset_rows("math/Arithmetic-v0", n=1, seed=2)[0]
    extras = {k: v for k, v in extras_of(math_row).items() if k != "env_id"}
    env = _generic(extras, {"env_id": "math/Arithmetic-v0", "max_turns": 2})
    assert env.ref.env_id == "math/Arithmetic-v0" and env.ref.kwargs == {"max_turns": 2} and env.max_turns == 2
    env.close()
    other = gsk.dataset_rows("tool/Shell-v0", n=1, seed=2)[0]  # a row naming its own id keeps it
    env = _generic(extras_of(other), {"env_id": "math/Arithmetic-v0"})
    assert env.task_error is None and env.ref.env_id == "tool/Shell-v0"
    assert env.init(other["prompt"])[0] == other["prompt"]
    env.close()


@pytest.mark.parametrize(("name", "env_config", "named"), [
    (gsk.skyrl_name("math/Arithmetic-v0"), {"env_id": "tool/Shell-v0"}, "tool/Shell-v0"),  # conflicts with the name
    (gsk.GENERIC_NAME, {"env_id": 7}, "env_config 'env_id'"),
    (gsk.GENERIC_NAME, {"env_id": "math/NoSuchEnv-v0"}, "math/NoSuchEnv-v0"),
])
def test_a_bad_env_config_id_scores_lowest_with_the_reason(name: str, env_config: dict, named: str) -> None:
    with pytest.warns(RuntimeWarning, match=named):
        env = skyrl_gym.make(name, env_config=OmegaConf.create(env_config), extras={"seed": 0, "task_index": 0})
    env.init([])
    step = env.step("\\boxed{4}")
    assert step["done"] and step["reward"] == 0.0 and named in step["metadata"]["reward_error"]
    env.close()
