"""Token-in/token-out: trajectories keep the exact sampled ids, environment
turns are the template's rendering, and the whole decodes to the template's
rendering of the final conversation (ChatML and Llama-3 styles); log-probs
are those of the sampling distribution."""

from __future__ import annotations

import pytest
import torch

from gym_llm.runtime.models import build_tokenizer
from gym_llm.runtime.policies import HFPolicy, SamplingParams
from gym_llm.runtime.policies.base import GenerationRequest
from gym_llm.runtime.rollout import ChatFormat, Trajectory, collect

from .conftest import processed_logprobs

MULTI_TURN = ["rollouttest/Echo-v0", "rollouttest/Observe-v0"]

LLAMA3_TEMPLATE = (
    "{{- bos_token }}{%- for m in messages %}"
    "{{- '<|start_header_id|>' + m['role'] + '<|end_header_id|>\\n\\n' + (m['content'] or '') + '<|eot_id|>' }}"
    "{%- endfor %}{%- if add_generation_prompt %}{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{%- endif %}"
)

# Qwen3-like: earlier assistant turns lose their reasoning, the last keeps it.
THINK_TEMPLATE = (
    "{%- for m in messages %}{%- set c = m['content'] or '' %}"
    "{%- if m['role'] == 'assistant' and not loop.last and '</think>' in c %}"
    "{%- set c = c.split('</think>')[-1].lstrip('\\n') %}{%- endif %}"
    "{{- '<|im_start|>' + m['role'] + '\\n' + c + '<|im_end|>\\n' }}{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)


class Recording:
    """Delegates to a policy and keeps every generation it returned."""

    def __init__(self, policy):
        self.policy, self.tokenizer, self.generations = policy, policy.tokenizer, []

    async def agenerate(self, request: GenerationRequest):
        gen = await self.policy.agenerate(request)
        self.generations.append((list(request.prompt_token_ids), gen))
        return gen

    def close(self):
        pass


@pytest.fixture(scope="module")
def llama3_tokenizer(tmp_path_factory):
    return build_tokenizer(
        tmp_path_factory.mktemp("llama3"), chat_template=LLAMA3_TEMPLATE,
        special_tokens=["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>",
                        "<|eot_id|>"],
        added_tokens=[], bos_token="<|begin_of_text|>", eos_token="<|eot_id|>", pad_token="<|end_of_text|>",
    )


def render(tokenizer, traj: Trajectory) -> str:
    return tokenizer.apply_chat_template(traj.messages, tools=traj.tools, tokenize=False)


def check_consistent(traj: Trajectory) -> None:
    traj.check()
    assert traj.ok, traj.error
    for start, end in traj.turn_spans:
        assert all(m == 1 for m in traj.loss_mask[start:end])
    assert sum(e - s for s, e in traj.turn_spans) == sum(traj.loss_mask)
    assert len(traj.turn_spans) == traj.num_turns


@pytest.mark.parametrize("env_id", MULTI_TURN)
def test_decoded_ids_equal_template_rendering_chatml(hf_policy, env_id):
    trajs = collect(hf_policy, env_id, num_groups=3, group_size=2, seed=1,
                    sampling=SamplingParams(max_new_tokens=24))
    tok = hf_policy.tokenizer
    stops = {"stop": 0, "length": 0}
    for t in trajs:
        check_consistent(t)
        assert t.num_turns >= 1 and (t.terminated or t.truncated)
        decoded = tok.decode(t.token_ids, skip_special_tokens=False)
        assert decoded == render(tok, t)
        for turn in t.info["policy_turns"]:
            stops[turn["finish_reason"]] += 1
    # Both ways a turn can end were exercised (EOS-stopped and cut at the limit).
    assert stops["stop"] > 0 and stops["length"] > 0
    # Multi-turn: environment tokens (mask 0) sit between policy turns.
    multi = [t for t in trajs if t.num_turns > 1]
    assert multi
    for t in multi:
        gap = t.loss_mask[t.turn_spans[0][1]:t.turn_spans[1][0]]
        assert gap and set(gap) == {0}


def test_decoded_ids_equal_template_rendering_llama3(taught_model, llama3_tokenizer):
    policy = HFPolicy(taught_model, llama3_tokenizer, seed=3)
    trajs = collect(policy, "rollouttest/Echo-v0", num_groups=4, group_size=1, seed=2,
                    sampling=SamplingParams(max_new_tokens=16, stop_token_ids=(llama3_tokenizer.eos_token_id,)))
    for t in trajs:
        check_consistent(t)
        assert t.prompt_token_ids[0] == llama3_tokenizer.convert_tokens_to_ids("<|begin_of_text|>")
        assert llama3_tokenizer.decode(t.token_ids, skip_special_tokens=False) == render(llama3_tokenizer, t)


def test_sampled_ids_are_never_retokenized(hf_policy):
    rec = Recording(hf_policy)
    trajs = collect(rec, "rollouttest/Echo-v0", num_groups=4, group_size=2, seed=5,
                    sampling=SamplingParams(max_new_tokens=24, temperature=1.3))
    by_prompt: dict[tuple, list] = {}
    for prompt, gen in rec.generations:
        by_prompt.setdefault(tuple(prompt), []).append(gen.token_ids)
    changed_by_retokenizing = 0
    fmt = ChatFormat(hf_policy.tokenizer)
    for t in trajs:
        for start, end in t.turn_spans:
            context = tuple(t.prompt_token_ids + t.response_token_ids[:start])
            sampled = t.response_token_ids[start:end]
            # The policy saw exactly the trajectory's ids so far, and returned these.
            assert sampled in by_prompt[context]
            if fmt.encode(fmt.decode(sampled)) != sampled:
                changed_by_retokenizing += 1
    # A random-ish model samples non-canonical splits; had the engine re-encoded
    # text, these turns would differ from what was sampled.
    assert changed_by_retokenizing > 0


def test_logprobs_are_the_sampling_distribution(hf_policy):
    params = SamplingParams(max_new_tokens=20, temperature=0.7, top_k=50, top_p=0.9)
    trajs = collect(hf_policy, "rollouttest/Observe-v0", num_groups=2, group_size=2, seed=7, sampling=params)
    for t in trajs:
        positions = [len(t.prompt_token_ids) + i for i, m in enumerate(t.loss_mask) if m]
        expected = processed_logprobs(hf_policy.model, t.token_ids, positions, params)
        assert torch.allclose(torch.tensor(expected), torch.tensor(t.logprobs), atol=1e-4)
        assert all(lp <= 0 for lp in t.logprobs)


def test_final_and_nonfinal_assistant_rendering_may_differ(taught_model, tmp_path):
    """With a template that strips reasoning from earlier assistant turns, the
    ids still hold what was sampled and the environment turns are exactly the
    template's text between assistant turns."""
    tok = build_tokenizer(tmp_path, chat_template=THINK_TEMPLATE)
    fmt = ChatFormat(tok)
    history = [{"role": "user", "content": "hi"},
               {"role": "assistant", "content": "<think>secret</think>\nanswer"}]
    new = [{"role": "user", "content": "again"}]
    env_text = fmt.decode(fmt.env_turn_ids(history, new, None, "<|im_end|>"))
    assert env_text == "\n<|im_start|>user\nagain<|im_end|>\n<|im_start|>assistant\n"
    assert fmt.decode(fmt.env_turn_ids(history, new, None, None)).startswith("<|im_end|>\n<|im_start|>user")
    assert fmt.decode(fmt.closing_ids(history, None, "<|im_end|>")) == "\n"

    policy = HFPolicy(taught_model, tok, seed=4)
    rec = Recording(policy)
    trajs = collect(rec, "rollouttest/Echo-v0", num_groups=3, seed=3, sampling=SamplingParams(max_new_tokens=12))
    for t in trajs:
        check_consistent(t)
        for i, (_, end) in enumerate(t.turn_spans):
            nxt = t.turn_spans[i + 1][0] if i + 1 < len(t.turn_spans) else len(t.response_token_ids)
            between = fmt.decode(t.response_token_ids[end:nxt])
            if i + 1 < len(t.turn_spans):
                assert between.endswith("Incorrect, try again.<|im_end|>\n<|im_start|>assistant\n")
            else:
                assert between in ("\n", "<|im_end|>\n")
