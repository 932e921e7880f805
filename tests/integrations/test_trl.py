"""A real TRL ``GRPOTrainer`` (trl 1.16) on the tiny model through each of
the three ways in: reward_funcs, environment_factory (tool env), rollout_func
(multi-turn feedback env). Each run's rewards are checked against env.step."""

from __future__ import annotations

import json
import os

import pytest

import gym_llm
from gym_llm.apps.integrations import trl as gtrl
from gym_llm.apps.integrations._tasks import completion_turn

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")


@pytest.fixture(scope="module")
def tiny_path() -> str:
    from gym_llm.runtime.models import tiny_model_path

    return tiny_model_path()


def _trainer(tiny_path, tmp_path, **kwargs):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    with gtrl.pinned_vllm_warning_silenced():
        from trl import GRPOConfig, GRPOTrainer

    tokenizer = kwargs.pop("tokenizer", None) or AutoTokenizer.from_pretrained(tiny_path)
    args = GRPOConfig(output_dir=str(tmp_path / "out"), per_device_train_batch_size=4, num_generations=2,
                      max_completion_length=kwargs.pop("max_completion_length", 12), max_steps=2, logging_steps=1,
                      use_cpu=True, report_to="none", save_strategy="no", bf16=False, seed=0)
    return GRPOTrainer(model=AutoModelForCausalLM.from_pretrained(tiny_path), args=args,
                       processing_class=tokenizer, **kwargs)


def _recording(reward):
    calls = []

    def wrapped(prompts, completions, **columns):
        out = reward(prompts, completions, **columns)
        calls.append((completions, {k: v for k, v in columns.items() if isinstance(v, list)}, out))
        return out

    wrapped.__name__ = reward.__name__
    return wrapped, calls


def _env_step(env_id, kwargs, columns, i, completion):
    env = gym_llm.make(env_id, split=columns["split"][i], **kwargs)
    env.reset(seed=columns["seed"][i], options={"task_index": columns["task_index"][i]})
    _, reward, _, _, info = env.step(completion_turn(completion))
    env.close()
    return reward, info


def test_reward_funcs_path(tiny_path, tmp_path):
    env_id = "math/Arithmetic-v0"
    reward, calls = _recording(gtrl.reward_function(env_id))
    trainer = _trainer(tiny_path, tmp_path, reward_funcs=[reward], train_dataset=gtrl.dataset(env_id, n=8))
    trainer.train()
    assert trainer.state.global_step == 2 and len(calls) == 2
    for completions, columns, out in calls:
        assert len(out) == 4
        for i, completion in enumerate(completions):
            expected, info = _env_step(env_id, {}, columns, i, completion)
            assert out[i] == expected, (completion, info)
    logged = trainer.state.log_history[0]
    # the reward components reached TRL's logs through log_metric
    assert {"gym_llm/format", "gym_llm/correct", "gym_llm/reward_error"} <= set(logged)
    assert f"rewards/{reward.__name__}/mean" in logged


def test_environment_factory_methods_match_the_env_tools():
    from transformers.utils import get_json_schema

    env_id = "math/PythonTool-v0"
    cls = gtrl.environment_factory(env_id)
    env = gym_llm.make(env_id)
    _, info = env.reset(seed=0)
    for tool in info["tools"]:
        fn = tool["function"]
        schema = get_json_schema(getattr(cls(), fn["name"]))["function"]
        assert schema["name"] == fn["name"]
        assert set(schema["parameters"]["properties"]) == set(fn["parameters"]["properties"])
        assert set(schema["parameters"].get("required", [])) == set(fn["parameters"].get("required", []))
    with pytest.raises(ValueError, match="rollout_func"):
        gtrl.environment_factory("math/Arithmetic-v0")


def test_environment_episode_equals_env_step():
    env_id = "math/PythonTool-v0"
    row = gtrl.dataset(env_id, n=1, seed=3)[0]
    instance = gtrl.environment_factory(env_id)()
    instance.reset(**row)
    reply = instance.python(code="print(6 * 7)")
    env = gym_llm.make(env_id)
    env.reset(seed=row["seed"], options={"task_index": row["task_index"]})
    call = {"id": "call_1", "type": "function", "function": {"name": "python", "arguments": json.dumps(
        {"code": "print(6 * 7)"})}}
    obs, *_ = env.step({"role": "assistant", "content": "", "tool_calls": [call]})
    assert reply == obs[0]["content"] and "42" in reply
    answer = f"\\boxed{{{env.unwrapped.task.answer}}}"
    _, expected, *_ = env.step(answer)
    assert expected == 1.0
    # the final answer reaches the env through reward_function (environments kwarg)
    out = gtrl.reward_function(env_id)([row["prompt"]], [[{"role": "assistant", "content": answer}]],
                                        environments=[instance], **{k: [row[k]] for k in row})
    assert out == [None] and instance.get_reward() == expected


def test_environment_factory_path(tiny_path, tmp_path):
    from transformers import AutoTokenizer
    from trl.chat_template_utils import qwen3_template

    env_id = "math/PythonTool-v0"
    tokenizer = AutoTokenizer.from_pretrained(tiny_path)
    tokenizer.response_template = qwen3_template  # the tiny template writes Hermes/Qwen tool calls
    reward, calls = _recording(gtrl.reward_function(env_id))
    factory = gtrl.environment_factory(env_id)
    trainer = _trainer(tiny_path, tmp_path, tokenizer=tokenizer, reward_funcs=[reward],
                       environment_factory=factory, train_dataset=gtrl.dataset(env_id, n=8))
    trainer.train()
    assert trainer.state.global_step == 2 and len(calls) == 2
    logged = trainer.state.log_history[0]
    assert f"rewards/{factory.__name__}/mean" in logged  # the env's get_reward is a reward source
    assert "tools/call_frequency" in logged
    for env in trainer.environments:
        assert env.score is not None  # every episode was finished and scored by the env


def test_rollout_func_path(tiny_path, tmp_path):
    from transformers import AutoTokenizer

    env_id, kwargs = "math/Arithmetic-v0", {"max_turns": 3}
    tokenizer = AutoTokenizer.from_pretrained(tiny_path)
    rollout = gtrl.rollout_func(env_id, **kwargs)
    outputs = []

    def recording(prompts, trainer):
        out = rollout(prompts, trainer)
        outputs.append(out)
        return out

    reward, calls = _recording(gtrl.reward_function(env_id, **kwargs))
    trainer = _trainer(tiny_path, tmp_path, reward_funcs=[reward], rollout_func=recording,
                       train_dataset=gtrl.dataset(env_id, n=8, **kwargs), max_completion_length=6)
    trainer.train()
    assert trainer.state.global_step == 2 and len(outputs) == 2
    for out in outputs:
        for ids, mask, logprobs in zip(out["completion_ids"], out["env_mask"], out["logprobs"], strict=True):
            assert len(ids) == len(mask) == len(logprobs)
            env_text = tokenizer.decode([t for t, m in zip(ids, mask, strict=True) if m == 0])
            # wrong answers (the untrained model's) get the env's feedback as a user turn, masked out
            assert "<|im_start|>user" in env_text and "try again" in env_text
            assert all(lp == 0.0 for lp, m in zip(logprobs, mask, strict=True) if m == 0)
            assert all(lp <= 0.0 for lp in logprobs)
    for (_, _, out), rolled in zip(calls, outputs, strict=True):
        assert out == rolled["gym_llm_reward"]
    assert "gym_llm/format" in trainer.state.log_history[0]
