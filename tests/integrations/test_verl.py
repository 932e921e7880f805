"""verl (0.9.1): the Parquet rows its RLHFDataset reads, compute_score on
them, and the ``gym_llm`` agent loop driven the way verl's AgentLoopWorker
drives it (hydra-instantiated from the registry, ``await run(...)`` with the
row's fields), with a server manager backed by our own HF policy.

What this cannot run on CPU: verl's Ray trainer (its FSDP/Megatron workers and
vLLM/SGLang servers need GPUs); everything the agent loop itself does runs.
"""

from __future__ import annotations

import asyncio

import pytest

# make test installs verl (the Makefile's PEERS_NO_DEPS): a missing verl fails here
import verl.experimental.agent_loop  # noqa: F401

import gym_llm
from gym_llm.apps.integrations import verl as gverl

#: Most tokens the test server returns per call, as a server with a short
#: max_model_len would: keeps episodes multi-turn without a trained model.
SERVER_MAX_TOKENS = 8


class HFServerManager:
    """verl's server-manager interface (``await generate(request_id, *,
    prompt_ids, sampling_params) -> TokenOutput``) over our HFPolicy."""

    def __init__(self, policy):
        self.policy = policy
        self.calls: list[tuple[str, list[int], dict]] = []

    async def generate(self, request_id, *, prompt_ids, sampling_params, **kwargs):
        from verl.workers.rollout.replica import TokenOutput

        from gym_llm.runtime.policies.base import GenerationRequest, SamplingParams

        self.calls.append((request_id, list(prompt_ids), dict(sampling_params)))
        params = SamplingParams(temperature=float(sampling_params["temperature"]),
                                max_new_tokens=min(SERVER_MAX_TOKENS, int(sampling_params["max_tokens"])))
        gen = await self.policy.agenerate(GenerationRequest(prompt_token_ids=list(prompt_ids), params=params))
        return TokenOutput(token_ids=gen.token_ids, log_probs=gen.logprobs, stop_reason="completed")


@pytest.fixture(scope="module")
def tiny():
    from transformers import AutoTokenizer

    from gym_llm.runtime.models import tiny_model_path
    from gym_llm.runtime.policies.hf import HFPolicy

    path = tiny_model_path()
    policy = HFPolicy(path, device="cpu", seed=0)
    yield AutoTokenizer.from_pretrained(path), policy
    policy.close()


def test_parquet_rows_load_in_rlhf_dataset(tmp_path, tiny):
    from omegaconf import OmegaConf
    from verl.utils.dataset.rl_dataset import RLHFDataset

    tokenizer, _ = tiny
    path = gverl.write_parquet(tmp_path / "train.parquet", "math/Arithmetic-v0", n=4, seed=5, max_turns=2)
    config = OmegaConf.create({"prompt_key": "prompt", "max_prompt_length": 512, "filter_overlong_prompts": False,
                               "return_raw_chat": True, "truncation": "error", "cache_dir": str(tmp_path / "cache")})
    ds = RLHFDataset(data_files=[str(path)], tokenizer=tokenizer, config=config)
    assert len(ds) == 4
    item = ds[0]
    assert item["data_source"] == "math/Arithmetic-v0" and item["agent_name"] == "gym_llm"
    row = gverl.rows("math/Arithmetic-v0", n=4, seed=5, max_turns=2)[0]
    assert list(item["raw_prompt"]) == row["prompt"]
    # the identity survives the Parquet round trip and scores as env.step does
    env = gym_llm.make("math/Arithmetic-v0", max_turns=2)
    env.reset(seed=item["extra_info"]["seed"], options={"task_index": item["extra_info"]["task_index"]})
    answer = f"\\boxed{{{env.unwrapped.task.answer}}}"
    _, reward, *_ = env.step(answer)
    # loaded as verl loads custom_reward_function.path=pkg://gym_llm.apps.integrations.verl
    from verl.utils.import_utils import load_extern_object

    compute_score = load_extern_object("pkg://gym_llm.apps.integrations.verl", "compute_score")
    got = compute_score(data_source=item["data_source"], solution_str=answer,
                        ground_truth=item["reward_model"]["ground_truth"], extra_info=item["extra_info"])
    assert got["score"] == reward == 1.0


def _agent_loop(tiny, response_length=256):
    import hydra
    from omegaconf import OmegaConf
    from verl.experimental.agent_loop.agent_loop import DictConfigWrap, _agent_loop_registry
    from verl.utils.dataset.rl_dataset import RLHFDataset

    tokenizer, policy = tiny
    gverl.GymLLMAgentLoop  # noqa: B018  (first access registers it)
    config = OmegaConf.create({"actor_rollout_ref": {"rollout": {"prompt_length": 4096,
                                                                 "response_length": response_length}},
                               "data": {"apply_chat_template_kwargs": {}}})
    server = HFServerManager(policy)
    # as AgentLoopWorker._run_agent_loop does
    loop = hydra.utils.instantiate(config=_agent_loop_registry["gym_llm"], trainer_config=DictConfigWrap(config),
                                   server_manager=server, tokenizer=tokenizer, processor=None,
                                   dataset_cls=RLHFDataset, data_config=DictConfigWrap(config.data))
    return loop, server


def _run(loop, row):
    return asyncio.run(loop.run({"temperature": 1.0, "top_p": 1.0, "top_k": -1, "logprobs": True},
                                raw_prompt=row["prompt"], extra_info=row["extra_info"],
                                data_source=row["data_source"], reward_model=row["reward_model"]))


def test_agent_loop_plays_multi_turn_token_in_token_out(tiny):
    tokenizer, _ = tiny
    loop, server = _agent_loop(tiny)
    row = gverl.rows("math/Arithmetic-v0", n=1, seed=2, max_turns=3)[0]
    out = _run(loop, row)
    assert len(server.calls) == 3 and out.num_turns == 7  # three wrong attempts: prompt + 3 x (answer, reply)
    assert len(out.response_ids) == len(out.response_mask) == len(out.response_logprobs) <= 256
    # each call's prompt is the previous context plus exactly what was sampled and the env's new tokens
    first_prompt = server.calls[0][1]
    assert out.prompt_ids == first_prompt
    full = out.prompt_ids + out.response_ids
    for _, prompt, _ in server.calls[1:]:
        assert full[:len(prompt)] == prompt
    env_text = tokenizer.decode([t for t, m in zip(out.response_ids, out.response_mask, strict=True) if m == 0])
    assert "<|im_start|>user" in env_text and "try again" in env_text
    policy_text = tokenizer.decode([t for t, m in zip(out.response_ids, out.response_mask, strict=True) if m == 1])
    assert "try again" not in policy_text
    assert all(lp == 0.0 for lp, m in zip(out.response_logprobs, out.response_mask, strict=True) if m == 0)
    assert out.reward_score == 0.0 and out.extra_fields["turn_scores"] == [0.0, 0.0, 0.0]
    assert out.extra_fields["reason"]


def test_agent_loop_reward_equals_env_step_on_its_turns(tiny):
    tokenizer, _ = tiny
    loop, server = _agent_loop(tiny)
    row = gverl.rows("tool/FunctionCalling-v0", n=1, seed=4)[0]
    out = _run(loop, row)
    # replay the sampled turn (decoded as the rollout engine decodes it) through env.step
    from gym_llm.runtime.chat import ChatFormat

    ids = out.response_ids[: sum(out.response_mask)]
    message = ChatFormat(tokenizer).assistant_message(ids, "length", list(row["prompt"]), None)
    env = gym_llm.make("tool/FunctionCalling-v0")
    env.reset(seed=row["extra_info"]["seed"], options={"task_index": row["extra_info"]["task_index"]})
    _, reward, *_, info = env.step(message)
    assert out.reward_score == reward
    assert out.extra_fields["reward_components"] == info["reward_components"]


def test_agent_loop_config_file(tmp_path):
    path = gverl.agent_loop_config(tmp_path / "agent_loops.yaml")
    from omegaconf import OmegaConf

    (entry,) = OmegaConf.load(path)
    assert entry.name == "gym_llm" and entry._target_ == "gym_llm.apps.integrations.verl.GymLLMAgentLoop"
    import hydra

    assert hydra.utils.get_class(entry._target_) is gverl.GymLLMAgentLoop
